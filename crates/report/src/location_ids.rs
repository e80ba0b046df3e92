//! Location ids made on a second thread while the first reads the
//! capture.
//!
//! Numbering a system-wide capture's million distinct locations is a hash
//! probe per sample and per callchain frame not found in the read's
//! caches, each a cache miss or two in tables of tens of megabytes: a
//! third of the read. The reading thread only hands the keys over and
//! numbers them by ticket (the order they were handed over); a second
//! thread interns them meanwhile, and the tickets become ids once both
//! are done. The ids are those the read would have given itself: the
//! first key handed over is id 0, and so on. The read goes in passes
//! ([`Tickets::cut`]): each pass's tickets and ids start from 0 again.

use std::sync::mpsc::{sync_channel, Receiver, SyncSender};
use std::thread;

use perfq_ids::{prefetch_line, IdTable, KeyHash};
use perfq_symbolize::Location;

/// A location as a report counts it: where it is, the address it shows
/// while unresolved (callchain entries), and whether its inlining levels
/// count (DWARF-unwound user frames).
pub(super) type LocKey = (Location, Option<u64>, bool);

/// Keys handed over at a time.
const BATCH: usize = 1 << 14;

/// Batches on their way to the interning thread at most (and emptied ones
/// on their way back): ~3 MB.
const IN_FLIGHT: usize = 4;

/// What the reading thread hands the interning thread.
enum Handed {
    /// The next keys, in ticket order.
    Keys(Vec<LocKey>),
    /// The end of a pass: the ids so far are sent back, and numbering
    /// starts again from ticket 0 and id 0.
    Cut,
}

/// The reading side: hands keys to the interning thread.
pub(super) struct Tickets {
    batch: Vec<LocKey>,
    /// Keys handed over before `batch` in this pass.
    handed: u32,
    to_ids: SyncSender<Handed>,
    /// Batches the interning thread emptied, to fill again.
    spare: Receiver<Vec<LocKey>>,
    /// Each pass's ids, when it is cut.
    passes: Receiver<LocationIds>,
}

impl Tickets {
    /// The ticket of `key`: the number of keys handed over before it in
    /// this pass. [`LocationIds::ticket_ids`] gives its id.
    #[inline]
    pub(super) fn push(&mut self, key: LocKey) -> u32 {
        let ticket = self.handed + self.batch.len() as u32;
        self.batch.push(key);
        if self.batch.len() == BATCH {
            self.hand_over();
        }
        ticket
    }

    /// Tickets given in this pass.
    pub(super) fn len(&self) -> usize {
        self.handed as usize + self.batch.len()
    }

    /// Ends the pass: returns its ids once the interning thread has
    /// numbered every key handed over, and starts the next pass's tickets
    /// and ids from 0.
    pub(super) fn cut(&mut self) -> LocationIds {
        self.hand_over();
        self.handed = 0;
        let ids = match self.to_ids.send(Handed::Cut) {
            Ok(()) => self.passes.recv().ok(),
            Err(_) => None,
        };
        // Only a panic ends the interning thread early; it is raised
        // again when the thread is joined.
        ids.unwrap_or_else(|| panic!("the location-numbering thread stopped"))
    }

    fn hand_over(&mut self) {
        if self.batch.is_empty() {
            return;
        }
        let next = self
            .spare
            .try_recv()
            .unwrap_or_else(|_| Vec::with_capacity(BATCH));
        let full = std::mem::replace(&mut self.batch, next);
        self.handed += full.len() as u32;
        // The receiver lives until the senders are gone unless its thread
        // panicked, which `with_location_ids` reports when joining it.
        let _ = self.to_ids.send(Handed::Keys(full));
    }
}

/// What the interning thread made of one pass.
#[derive(Default)]
pub(super) struct LocationIds {
    /// The distinct keys, by id.
    pub keys: Vec<LocKey>,
    /// By ticket: its key's id.
    pub ticket_ids: Vec<u32>,
}

/// Runs `read` on this thread, interning the keys it hands over on
/// another; returns what `read` returned and the ids of the last pass
/// (of all keys, if `read` never cuts).
pub(super) fn with_location_ids<R>(read: impl FnOnce(&mut Tickets) -> R) -> (R, LocationIds) {
    let (to_ids, batches) = sync_channel::<Handed>(IN_FLIGHT);
    let (give_back, spare) = sync_channel::<Vec<LocKey>>(IN_FLIGHT);
    let (pass_done, passes) = sync_channel::<LocationIds>(1);
    thread::scope(|s| {
        let interner = s.spawn(move || intern(batches, give_back, pass_done));
        let mut tickets = Tickets {
            batch: Vec::with_capacity(BATCH),
            handed: 0,
            to_ids,
            spare,
            passes,
        };
        let r = read(&mut tickets);
        tickets.hand_over();
        // Dropping the sender ends the interning thread's loop.
        drop(tickets);
        let ids = interner
            .join()
            .unwrap_or_else(|panic| std::panic::resume_unwind(panic));
        (r, ids)
    })
}

/// Slots of the interning thread's cache of the keys it met last (a
/// power of two; 8 MB, within a server CPU's last-level cache: on the 4×
/// build capture 2 MB left 28% of 24 M keys to the table, and 8 MB took
/// `report --children` 9.2–9.5 → 8.4–8.7 s; 16 MB was slower again).
const RECENT: usize = 1 << 17;

/// How many keys ahead the interning thread asks for the lines a key's
/// lookup reads first.
const AHEAD: usize = 8;

/// The interning thread: every key of every batch, in order.
///
/// Most keys recur (a system-wide capture's 18 M frames hold 3.6 M
/// locations), and many of them soon: a direct-mapped cache of the keys
/// met last, small enough to stay in the CPU's caches, answers those
/// without the table's two cache misses (its slot, then the key compared
/// in `keys`). The keys of a batch are known before it is interned: the
/// cache slot and the table slot of the key [`AHEAD`] places on are asked
/// for while this one is looked up, so that their misses overlap (the
/// table's even though most keys are then found in the cache). On the
/// build capture this thread, which bounds the read, took 0.35–0.37 s of
/// CPU instead of 0.59–0.62 s, its read ending at ~0.5 instead of
/// ~0.65 s; with the cache slot alone, 0.47–0.60 s.
fn intern(
    batches: Receiver<Handed>,
    give_back: SyncSender<Vec<LocKey>>,
    pass_done: SyncSender<LocationIds>,
) -> LocationIds {
    let mut table = IdTable::new();
    let mut ids = LocationIds::default();
    // Each slot: a key, its id and the pass it was met in (a cut makes
    // every slot stale without a write to each).
    let mut recent: Vec<Option<(LocKey, u32, u32)>> = vec![None; RECENT];
    let mut pass = 0u32;
    let mut hashes: Vec<KeyHash> = Vec::new();
    for handed in batches {
        let mut batch = match handed {
            Handed::Keys(batch) => batch,
            Handed::Cut => {
                // The next pass numbers from 0: nothing of this one is
                // found again.
                table = IdTable::new();
                pass = pass.wrapping_add(1);
                if pass_done.send(std::mem::take(&mut ids)).is_err() {
                    break;
                }
                continue;
            }
        };
        hashes.clear();
        hashes.extend(batch.iter().map(IdTable::hash));
        let mut ahead = hashes.iter().skip(AHEAD);
        let LocationIds { keys, ticket_ids } = &mut ids;
        ticket_ids.extend(batch.drain(..).zip(&hashes).map(|(key, &hash)| {
            if let Some(&h) = ahead.next() {
                prefetch_line(&recent[h.bits() as usize & (RECENT - 1)]);
                table.prefetch(h);
            }
            let slot = &mut recent[hash.bits() as usize & (RECENT - 1)];
            match slot {
                Some((k, id, p)) if *p == pass && *k == key => *id,
                _ => {
                    let id = table.id_in_hashed(hash, key, keys);
                    *slot = Some((key, id, pass));
                    id
                }
            }
        }));
        // Refilled by the reader rather than allocated again; dropped if
        // enough are waiting.
        let _ = give_back.try_send(batch);
    }
    ids
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn ids_are_first_come_first_numbered_across_batches() {
        let key = |a: u64| (Location::Unmapped { addr: a % 40_000 }, None, false);
        let (tickets, ids) =
            with_location_ids(|t| (0..100_000u64).map(|a| t.push(key(a))).collect::<Vec<_>>());
        assert_eq!(tickets, (0..100_000u32).collect::<Vec<_>>());
        assert_eq!(ids.keys.len(), 40_000);
        for (a, &ticket) in tickets.iter().enumerate() {
            let id = ids.ticket_ids[ticket as usize];
            assert_eq!(id as usize, a % 40_000);
            assert_eq!(ids.keys[id as usize], key(a as u64));
        }
    }

    #[test]
    fn each_pass_numbers_from_zero() {
        let key = |a: u64| (Location::Unmapped { addr: a % 30_000 }, None, false);
        let mut passes = Vec::new();
        let (_, last) = with_location_ids(|t| {
            for pass in 0..3u64 {
                let tickets: Vec<u32> = (0..50_000u64).map(|a| t.push(key(a + pass))).collect();
                assert_eq!(t.len(), 50_000);
                if pass < 2 {
                    passes.push((pass, tickets, t.cut()));
                    assert_eq!(t.len(), 0);
                }
            }
        });
        assert_eq!(last.ticket_ids.len(), 50_000);
        assert_eq!(last.keys.first(), Some(&key(2)));
        for (pass, tickets, ids) in passes {
            assert_eq!(tickets, (0..50_000u32).collect::<Vec<_>>());
            assert_eq!(ids.keys.len(), 30_000);
            for (a, &ticket) in tickets.iter().enumerate() {
                let id = ids.ticket_ids[ticket as usize];
                assert_eq!(ids.keys[id as usize], key(a as u64 + pass));
                assert_eq!(id as usize, a % 30_000);
            }
        }
    }
}
