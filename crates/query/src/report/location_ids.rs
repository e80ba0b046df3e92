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
//! first key handed over is id 0, and so on.

use std::sync::mpsc::{sync_channel, Receiver, SyncSender};
use std::thread;

use perfq_symbolize::{prefetch_line, IdTable, KeyHash, Location};

/// A location as a report counts it: where it is, the address it shows
/// while unresolved (callchain entries), and whether its inlining levels
/// count (DWARF-unwound user frames).
pub(super) type LocKey = (Location, Option<u64>, bool);

/// Keys handed over at a time.
const BATCH: usize = 1 << 14;

/// Batches on their way to the interning thread at most (and emptied ones
/// on their way back): ~3 MB.
const IN_FLIGHT: usize = 4;

/// The reading side: hands keys to the interning thread.
pub(super) struct Tickets {
    batch: Vec<LocKey>,
    /// Keys handed over before `batch`.
    handed: u32,
    to_ids: SyncSender<Vec<LocKey>>,
    /// Batches the interning thread emptied, to fill again.
    spare: Receiver<Vec<LocKey>>,
}

impl Tickets {
    /// The ticket of `key`: the number of keys handed over before it.
    /// [`LocationIds::ticket_ids`] gives its id.
    #[inline]
    pub(super) fn push(&mut self, key: LocKey) -> u32 {
        let ticket = self.handed + self.batch.len() as u32;
        self.batch.push(key);
        if self.batch.len() == BATCH {
            self.hand_over();
        }
        ticket
    }

    fn hand_over(&mut self) {
        let next = self
            .spare
            .try_recv()
            .unwrap_or_else(|_| Vec::with_capacity(BATCH));
        let full = std::mem::replace(&mut self.batch, next);
        self.handed += full.len() as u32;
        // The receiver lives until the senders are gone unless its thread
        // panicked, which `with_location_ids` reports when joining it.
        let _ = self.to_ids.send(full);
    }
}

/// What the interning thread made.
pub(super) struct LocationIds {
    /// The distinct keys, by id.
    pub keys: Vec<LocKey>,
    /// By ticket: its key's id.
    pub ticket_ids: Vec<u32>,
}

/// Runs `read` on this thread, interning the keys it hands over on
/// another; returns what `read` returned and the ids.
pub(super) fn with_location_ids<R>(read: impl FnOnce(&mut Tickets) -> R) -> (R, LocationIds) {
    let (to_ids, batches) = sync_channel::<Vec<LocKey>>(IN_FLIGHT);
    let (give_back, spare) = sync_channel::<Vec<LocKey>>(IN_FLIGHT);
    thread::scope(|s| {
        let interner = s.spawn(move || intern(batches, give_back));
        let mut tickets = Tickets {
            batch: Vec::with_capacity(BATCH),
            handed: 0,
            to_ids,
            spare,
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
fn intern(batches: Receiver<Vec<LocKey>>, give_back: SyncSender<Vec<LocKey>>) -> LocationIds {
    let mut table = IdTable::new();
    let mut keys: Vec<LocKey> = Vec::new();
    let mut ticket_ids: Vec<u32> = Vec::new();
    let mut recent: Vec<Option<(LocKey, u32)>> = vec![None; RECENT];
    let mut hashes: Vec<KeyHash> = Vec::new();
    for mut batch in batches {
        hashes.clear();
        hashes.extend(batch.iter().map(IdTable::hash));
        let mut ahead = hashes.iter().skip(AHEAD);
        ticket_ids.extend(batch.drain(..).zip(&hashes).map(|(key, &hash)| {
            if let Some(&h) = ahead.next() {
                prefetch_line(&recent[h.bits() as usize & (RECENT - 1)]);
                table.prefetch(h);
            }
            let slot = &mut recent[hash.bits() as usize & (RECENT - 1)];
            match slot {
                Some((k, id)) if *k == key => *id,
                _ => {
                    let id = table.id_in_hashed(hash, key, &mut keys);
                    *slot = Some((key, id));
                    id
                }
            }
        }));
        // Refilled by the reader rather than allocated again; dropped if
        // enough are waiting.
        let _ = give_back.try_send(batch);
    }
    LocationIds { keys, ticket_ids }
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
}
