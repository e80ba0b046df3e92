//! Batches handed from a reading thread to a worker thread, and given
//! back emptied for the reader to fill again: the few buffers go round
//! instead of new ones (and new pages) per batch. Between batches the
//! reader may send marks (the end of a report's pass). At most a fixed
//! number of batches are on their way, so a reader faster than its worker
//! waits rather than queueing without bound.
//!
//! perfq hands over [`TicketBook`](crate::TicketBook) keys this way: the
//! worker turns them into ids ([`TicketIds`](crate::TicketIds)) while the
//! reader reads on.

use std::sync::mpsc::{sync_channel, Receiver, SyncSender};

/// What goes down to the worker, in order.
#[derive(Debug)]
pub enum Down<B, M> {
    /// A batch.
    Batch(B),
    /// A mark between batches.
    Mark(M),
}

/// The reader's end.
#[derive(Debug)]
pub struct Handoff<B, M> {
    down: SyncSender<Down<B, M>>,
    spare: Receiver<B>,
}

/// The worker's end.
#[derive(Debug)]
pub struct Inbox<B, M> {
    down: Receiver<Down<B, M>>,
    back: SyncSender<B>,
}

/// A hand-off with at most `in_flight` batches on their way down (and as
/// many emptied ones on their way back).
pub fn handoff<B, M>(in_flight: usize) -> (Handoff<B, M>, Inbox<B, M>) {
    let (down, from_reader) = sync_channel(in_flight);
    let (back, spare) = sync_channel(in_flight);
    (
        Handoff { down, spare },
        Inbox {
            down: from_reader,
            back,
        },
    )
}

impl<B, M> Handoff<B, M> {
    /// A batch the worker gave back emptied, if one waits.
    pub fn spare(&self) -> Option<B> {
        self.spare.try_recv().ok()
    }

    /// Hands `batch` over (waiting while as many as the hand-off holds are
    /// on their way); false when the worker is gone.
    pub fn send(&self, batch: B) -> bool {
        self.down.send(Down::Batch(batch)).is_ok()
    }

    /// Sends a mark after the batches sent so far; false when the worker
    /// is gone.
    pub fn mark(&self, mark: M) -> bool {
        self.down.send(Down::Mark(mark)).is_ok()
    }
}

impl<B, M> Inbox<B, M> {
    /// The next batch or mark; `None` once the reader's end is dropped and
    /// everything sent was taken.
    pub fn recv(&self) -> Option<Down<B, M>> {
        self.down.recv().ok()
    }

    /// Gives an emptied batch back to be filled again (dropped when enough
    /// wait, or when the reader is gone).
    pub fn give_back(&self, batch: B) {
        let _ = self.back.try_send(batch);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn batches_and_marks_arrive_in_order_and_come_back() {
        let (reader, worker) = handoff::<Vec<u32>, &str>(2);
        let got = std::thread::scope(|s| {
            let w = s.spawn(move || {
                let mut got = Vec::new();
                while let Some(d) = worker.recv() {
                    match d {
                        Down::Batch(mut b) => {
                            got.push(format!("{b:?}"));
                            b.clear();
                            worker.give_back(b);
                        }
                        Down::Mark(m) => got.push(m.to_string()),
                    }
                }
                got
            });
            for i in 0..5u32 {
                let mut b = reader.spare().unwrap_or_default();
                assert!(b.is_empty());
                b.push(i);
                assert!(reader.send(b));
                if i == 2 {
                    assert!(reader.mark("cut"));
                }
            }
            drop(reader);
            w.join().unwrap()
        });
        assert_eq!(got, ["[0]", "[1]", "[2]", "cut", "[3]", "[4]"]);
    }

    #[test]
    fn a_gone_worker_is_said() {
        let (reader, worker) = handoff::<u8, ()>(1);
        drop(worker);
        assert!(!reader.send(1));
        assert!(!reader.mark(()));
        assert_eq!(reader.spare(), None);
    }
}
