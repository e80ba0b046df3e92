//! Location ids made on a second thread while the first reads the
//! capture.
//!
//! Numbering a system-wide capture's million distinct locations is a hash
//! probe per sample and per callchain frame not found in the read's
//! caches, each a cache miss or two in tables of tens of megabytes: a
//! third of the read. The reading thread only numbers the keys by ticket
//! ([`TicketBook`]) and hands them over in batches; the second thread
//! interns them meanwhile ([`TicketIds`]), and the tickets become ids once
//! both are done. The read goes in passes ([`Tickets::cut`]): each pass's
//! tickets and ids start from 0 again.

use std::sync::mpsc::{sync_channel, Receiver, SyncSender};

use perfq_ids::handoff::{handoff, Down, Handoff, Inbox};
use perfq_ids::{Numbered, Numbering, TicketBook, TicketIds};

use crate::loc_key::LocKey;

/// One pass's locations by id, and each ticket's id.
pub(super) type LocationIds = Numbered<LocKey>;

/// Keys handed over at a time.
const BATCH: usize = 1 << 14;

/// Batches on their way to the interning thread at most (and emptied ones
/// on their way back): ~3 MB.
const IN_FLIGHT: usize = 4;

/// Slots of the interning thread's cache of the keys it met last (a
/// power of two; 8 MB, within a server CPU's last-level cache): the read
/// hands over every sample's own location, and most recur soon.
const RECENT: usize = 1 << 17;

/// The end of a pass, as the reading thread marks it between batches of
/// keys: the ids so far are sent back, and numbering starts again from
/// ticket 0 and id 0.
struct Cut;

/// The reading side: numbers keys by ticket and hands them to the
/// interning thread.
pub(super) struct Tickets {
    book: TicketBook<LocKey>,
    /// The keys, in ticket order, to the interning thread.
    to_ids: Handoff<Vec<LocKey>, Cut>,
    /// Each pass's ids, when it is cut.
    passes: Receiver<LocationIds>,
}

impl Numbering<LocKey> for Tickets {
    /// The ticket of `key`: the number of keys handed over before it in
    /// this pass. [`LocationIds::ids`] gives its id.
    #[inline]
    fn number(&mut self, key: LocKey) -> u32 {
        let ticket = self.book.number(key);
        if self.book.waiting() == BATCH {
            self.hand_over();
        }
        ticket
    }
}

impl Tickets {
    /// Tickets given in this pass.
    pub(super) fn len(&self) -> usize {
        self.book.len()
    }

    /// Ends the pass: returns its ids once the interning thread has
    /// numbered every key handed over, and starts the next pass's tickets
    /// and ids from 0.
    pub(super) fn cut(&mut self) -> LocationIds {
        self.hand_over();
        self.book.restart();
        let ids = match self.to_ids.mark(Cut) {
            true => self.passes.recv().ok(),
            false => None,
        };
        // Only a panic ends the interning thread early; it is raised
        // again when the thread is joined.
        ids.unwrap_or_else(|| panic!("the location-numbering thread stopped"))
    }

    fn hand_over(&mut self) {
        if self.book.waiting() == 0 {
            return;
        }
        let mut batch = self
            .to_ids
            .spare()
            .unwrap_or_else(|| Vec::with_capacity(BATCH));
        self.book.hand_over(&mut batch);
        // The receiver lives until the senders are gone unless its thread
        // panicked, which `with_location_ids` reports when joining it.
        let _ = self.to_ids.send(batch);
    }
}

/// Runs `read` on this thread, interning the keys it hands over on
/// another; returns what `read` returned and the ids of the last pass
/// (of all keys, if `read` never cuts).
pub(super) fn with_location_ids<R>(read: impl FnOnce(&mut Tickets) -> R) -> (R, LocationIds) {
    let (to_ids, batches) = handoff::<Vec<LocKey>, Cut>(IN_FLIGHT);
    let (pass_done, passes) = sync_channel::<LocationIds>(1);
    perfq_ids::beside(
        || {
            let mut tickets = Tickets {
                book: TicketBook::default(),
                to_ids,
                passes,
            };
            let r = read(&mut tickets);
            tickets.hand_over();
            // Dropping the sender ends the interning thread's loop.
            drop(tickets);
            r
        },
        move || intern(batches, pass_done),
    )
}

/// The interning thread: every key of every batch, in order, each pass's
/// ids sent back at its cut.
fn intern(batches: Inbox<Vec<LocKey>, Cut>, pass_done: SyncSender<LocationIds>) -> LocationIds {
    let mut ids = TicketIds::with_recent(RECENT);
    while let Some(handed) = batches.recv() {
        match handed {
            Down::Batch(mut batch) => {
                ids.add(&batch);
                batch.clear();
                // Refilled by the reader rather than allocated again.
                batches.give_back(batch);
            }
            Down::Mark(Cut) => {
                if pass_done.send(ids.restart()).is_err() {
                    break;
                }
            }
        }
    }
    ids.into_numbered()
}

#[cfg(test)]
mod tests {
    use super::*;
    use perfq_symbolize::Location;

    #[test]
    fn ids_are_first_come_first_numbered_across_batches() {
        let key = |a: u64| LocKey::new(Location::Unmapped { addr: a % 40_000 }, None, false);
        let (tickets, ids) = with_location_ids(|t| {
            (0..100_000u64)
                .map(|a| t.number(key(a)))
                .collect::<Vec<_>>()
        });
        assert_eq!(tickets, (0..100_000u32).collect::<Vec<_>>());
        assert_eq!(ids.keys.len(), 40_000);
        for (a, &ticket) in tickets.iter().enumerate() {
            let id = ids.ids[ticket as usize];
            assert_eq!(id as usize, a % 40_000);
            assert_eq!(ids.keys[id as usize], key(a as u64));
        }
    }

    #[test]
    fn each_pass_numbers_from_zero() {
        let key = |a: u64| LocKey::new(Location::Unmapped { addr: a % 30_000 }, None, false);
        let mut passes = Vec::new();
        let (_, last) = with_location_ids(|t| {
            for pass in 0..3u64 {
                let tickets: Vec<u32> = (0..50_000u64).map(|a| t.number(key(a + pass))).collect();
                assert_eq!(t.len(), 50_000);
                if pass < 2 {
                    passes.push((pass, tickets, t.cut()));
                    assert_eq!(t.len(), 0);
                }
            }
        });
        assert_eq!(last.ids.len(), 50_000);
        assert_eq!(last.keys.first(), Some(&key(2)));
        for (pass, tickets, ids) in passes {
            assert_eq!(tickets, (0..50_000u32).collect::<Vec<_>>());
            assert_eq!(ids.keys.len(), 30_000);
            for (a, &ticket) in tickets.iter().enumerate() {
                let id = ids.ids[ticket as usize];
                assert_eq!(ids.keys[id as usize], key(a as u64 + pass));
                assert_eq!(id as usize, a % 30_000);
            }
        }
    }
}
