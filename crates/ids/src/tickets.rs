//! Numbering by ticket: keys numbered on one thread in the order they
//! come, interned on another in that same order.
//!
//! A reading thread that every other thread waits for can number the keys
//! it meets without probing a table of millions: [`TicketBook`] gives
//! each key the count of keys before it and collects them, and
//! [`TicketIds`], wherever the batches are sent, interns them in ticket
//! order. The id a ticket gets is the one an [`Interner`](crate::Interner)
//! would have given its key on the reading thread: the first key is id 0,
//! and so on.

use std::hash::Hash;

use crate::{prefetch_line, IdTable, KeyHash, Numbering};

/// The reading side: each key's ticket, and the keys met since they were
/// last handed over.
#[derive(Debug)]
pub struct TicketBook<K> {
    /// Met since the last [`TicketBook::hand_over`], in ticket order.
    found: Vec<K>,
    /// Tickets handed over before `found`'s first.
    handed: u32,
    /// How many of `found` [`TicketBook::fresh`] gave out.
    seen: usize,
    /// Whether tickets ran out ([`TicketBook::exhausted`]).
    exhausted: bool,
}

impl<K> Default for TicketBook<K> {
    fn default() -> Self {
        TicketBook {
            found: Vec::new(),
            handed: 0,
            seen: 0,
            exhausted: false,
        }
    }
}

impl<K> Numbering<K> for TicketBook<K> {
    /// The ticket of `key`: the number of keys met before it, or
    /// `u32::MAX` once tickets have run out.
    #[inline]
    fn number(&mut self, key: K) -> u32 {
        match self.handed.checked_add(self.found.len() as u32) {
            Some(t) if t < u32::MAX => {
                self.found.push(key);
                t
            }
            _ => {
                self.exhausted = true;
                u32::MAX
            }
        }
    }
}

impl<K> TicketBook<K> {
    /// Tickets given since the start (or [`TicketBook::restart`]).
    pub fn len(&self) -> usize {
        self.handed as usize + self.found.len()
    }

    /// Whether none was.
    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }

    /// Keys met and not handed over yet.
    pub fn waiting(&self) -> usize {
        self.found.len()
    }

    /// The keys met since the last call (to prepare for them early).
    pub fn fresh(&mut self) -> &[K] {
        let from = std::mem::replace(&mut self.seen, self.found.len());
        self.found.get(from..).unwrap_or_default()
    }

    /// Moves the keys met so far into `into` (emptied first; a spare
    /// batch), to go where their [`TicketIds`] is.
    pub fn hand_over(&mut self, into: &mut Vec<K>) {
        into.clear();
        std::mem::swap(&mut self.found, into);
        self.handed = self.handed.saturating_add(into.len() as u32);
        self.seen = 0;
    }

    /// Tickets from 0 again, as after [`TicketIds::restart`]. Every key
    /// met must have been handed over.
    pub fn restart(&mut self) {
        debug_assert!(self.found.is_empty());
        self.handed = 0;
    }

    /// Whether tickets ran out: more than `u32::MAX` keys were met, and
    /// those past it all got `u32::MAX`.
    pub fn exhausted(&self) -> bool {
        self.exhausted
    }
}

/// The distinct keys numbered so far and, by ticket, each one's id.
#[derive(Debug)]
pub struct Numbered<K> {
    /// The distinct keys, by id.
    pub keys: Vec<K>,
    /// By ticket: its key's id.
    pub ids: Vec<u32>,
}

impl<K> Default for Numbered<K> {
    fn default() -> Self {
        Numbered {
            keys: Vec::new(),
            ids: Vec::new(),
        }
    }
}

/// The interning side: the keys of every batch handed over, interned in
/// ticket order.
#[derive(Debug)]
pub struct TicketIds<K> {
    table: IdTable,
    /// Ids given before the segment's first key ([`TicketIds::cut`]).
    base: u32,
    /// The segment's distinct keys (by id less `base`) and every
    /// ticket's id.
    numbered: Numbered<K>,
    /// The hashes of the batch being added (kept for the next one).
    hashes: Vec<KeyHash>,
    /// A direct-mapped cache of the keys met last, if asked for
    /// ([`TicketIds::with_recent`]): each slot a key, its id and the
    /// segment it was met in.
    recent: Vec<Option<(K, u32, u32)>>,
    /// The slots `recent` grows to as keys come ([`TicketIds::grow_recent`]).
    recent_max: usize,
    /// Keys added since `recent` last grew.
    since_growth: usize,
    /// Segments begun; a cut makes every `recent` slot stale without a
    /// write to each.
    segment: u32,
}

impl<K> Default for TicketIds<K> {
    fn default() -> Self {
        TicketIds {
            table: IdTable::new(),
            base: 0,
            numbered: Numbered::default(),
            hashes: Vec::new(),
            recent: Vec::new(),
            recent_max: 0,
            since_growth: 0,
            segment: 0,
        }
    }
}

/// How many keys ahead [`TicketIds::add`] asks for the lines a key's
/// lookup reads first.
const AHEAD: usize = 8;

/// The slots the cache of recent keys starts with: a small capture's keys
/// fit, and it does not pay for zeroing megabytes it never uses.
const RECENT_FIRST: usize = 1 << 10;

/// Keys added per slot before the cache of recent keys grows (eightfold):
/// by then the keys are many enough to fill the larger one.
const KEYS_PER_SLOT: usize = 4;

impl<K: Hash + Eq + Copy> TicketIds<K> {
    /// Interning with the table alone: for keys that are mostly new (a
    /// cache in front of the ticket book has already taken the recurring
    /// ones).
    pub fn new() -> Self {
        Self::default()
    }

    /// Interning with a cache of `slots` (a power of two) of the keys met
    /// last in front of the table: for keys that mostly recur, and soon,
    /// which the cache then answers without the table's two cache misses
    /// (its slot, then the key it names). The cache starts smaller and
    /// grows to `slots` as keys come.
    pub fn with_recent(slots: usize) -> Self {
        debug_assert!(slots.is_power_of_two());
        TicketIds {
            recent: vec![None; slots.min(RECENT_FIRST)],
            recent_max: slots,
            ..Self::default()
        }
    }

    /// A larger cache of recent keys, empty, once enough keys have come to
    /// fill it (the keys it held are found in the table).
    fn grow_recent(&mut self, added: usize) {
        self.since_growth += added;
        let slots = self.recent.len();
        if slots < self.recent_max && self.since_growth >= slots * KEYS_PER_SLOT {
            self.recent = vec![None; (slots * 8).min(self.recent_max)];
            self.since_growth = 0;
        }
    }

    /// Interns the keys of the next tickets, in order.
    ///
    /// A new key's first read, its slot in a table of millions, is a
    /// cache miss: the lines the key `AHEAD` places on reads first are
    /// asked for while this one is looked up, so that the misses overlap.
    pub fn add(&mut self, batch: &[K]) {
        self.numbered.ids.reserve(batch.len());
        self.hashes.clear();
        self.hashes.extend(batch.iter().map(IdTable::hash));
        self.grow_recent(batch.len());
        let mask = self.recent.len().wrapping_sub(1);
        for (i, (&key, &hash)) in batch.iter().zip(&self.hashes).enumerate() {
            if let Some(&ahead) = self.hashes.get(i + AHEAD) {
                if let Some(slot) = self.recent.get(ahead.bits() as usize & mask) {
                    prefetch_line(slot);
                }
                self.table.prefetch(ahead);
            }
            let id = match self.recent.get_mut(hash.bits() as usize & mask) {
                Some(Some((k, id, s))) if *s == self.segment && *k == key => *id,
                Some(slot) => {
                    let id = self.table.id_in_hashed(hash, key, &mut self.numbered.keys);
                    *slot = Some((key, id, self.segment));
                    id
                }
                None => self.table.id_in_hashed(hash, key, &mut self.numbered.keys),
            };
            self.numbered.ids.push(self.base.saturating_add(id));
        }
    }

    /// The id of ticket `t`, added before; `u32::MAX` for a ticket never
    /// added (the one a run-out [`TicketBook`] gives).
    #[inline]
    pub fn id(&self, t: u32) -> u32 {
        self.numbered
            .ids
            .get(t as usize)
            .copied()
            .unwrap_or(u32::MAX)
    }

    /// Tickets added so far.
    pub fn tickets(&self) -> usize {
        self.numbered.ids.len()
    }

    /// Ends the segment: returns its keys (ids from the last cut's on, in
    /// order); keys added from now on get ids after theirs, and none is
    /// looked up again (a key met again gets a new id). Tickets added
    /// before keep their ids.
    pub fn cut(&mut self) -> Vec<K> {
        let segment = std::mem::take(&mut self.numbered.keys);
        self.base = self.base.saturating_add(segment.len() as u32);
        self.forget();
        segment
    }

    /// Starts over: returns everything numbered so far, and numbers the
    /// next key handed over (ticket 0, as after [`TicketBook::restart`])
    /// id 0 again.
    pub fn restart(&mut self) -> Numbered<K> {
        self.base = 0;
        self.forget();
        std::mem::take(&mut self.numbered)
    }

    /// Forgets every key met: the table and the cache of recent keys.
    fn forget(&mut self) {
        self.table = IdTable::new();
        self.segment = self.segment.wrapping_add(1);
    }

    /// The id the segment's first key gets.
    pub fn first_id(&self) -> u32 {
        self.base
    }

    /// Keys in the segment so far.
    pub fn segment_len(&self) -> usize {
        self.numbered.keys.len()
    }

    /// Everything numbered: the last segment's keys and every ticket's id.
    pub fn into_numbered(self) -> Numbered<K> {
        self.numbered
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn interning(recent: bool) -> TicketIds<u64> {
        match recent {
            true => TicketIds::with_recent(64),
            false => TicketIds::new(),
        }
    }

    /// Ids come out as an interner on the reading thread would give them,
    /// whichever batches the tickets travelled in, with or without the
    /// cache of recent keys (smaller than the keys: slots taken over).
    #[test]
    fn ids_are_first_met_first_numbered_across_batches() {
        for recent in [false, true] {
            let mut ids = interning(recent);
            let mut book = TicketBook::default();
            let mut batch = Vec::new();
            let mut given = Vec::new();
            for a in 0..5_000u64 {
                given.push((a, book.number(a % 700)));
                if a % 333 == 0 {
                    book.hand_over(&mut batch);
                    ids.add(&batch);
                }
            }
            book.hand_over(&mut batch);
            ids.add(&batch);
            assert!(!book.exhausted());
            assert_eq!(book.len(), 5_000);
            for (a, t) in given {
                assert_eq!(t, a as u32);
                assert_eq!(ids.id(t), (a % 700) as u32);
            }
            assert_eq!(ids.into_numbered().keys, (0..700).collect::<Vec<_>>());
        }
    }

    /// After a cut, new keys (and ones met before it) get ids after the
    /// cut's; tickets given before it keep theirs.
    #[test]
    fn cuts_number_on_and_keep_earlier_tickets() {
        for recent in [false, true] {
            let mut ids = interning(recent);
            let mut book = TicketBook::default();
            let mut batch = Vec::new();
            let early = [book.number(1), book.number(2), book.number(1)];
            book.hand_over(&mut batch);
            ids.add(&batch);
            assert_eq!(early.map(|t| ids.id(t)), [0, 1, 0]);
            assert_eq!(ids.segment_len(), 2);
            assert_eq!(ids.cut(), vec![1, 2]);
            assert_eq!(ids.segment_len(), 0);
            assert_eq!(ids.first_id(), 2);
            let late = [book.number(2), book.number(3), book.number(2)];
            book.hand_over(&mut batch);
            ids.add(&batch);
            assert_eq!(late.map(|t| ids.id(t)), [2, 3, 2]);
            assert_eq!(
                early.map(|t| ids.id(t)),
                [0, 1, 0],
                "earlier tickets keep their ids"
            );
            assert_eq!(ids.into_numbered().keys, vec![2, 3]);
        }
    }

    /// After a restart, tickets and ids start from 0, and keys met
    /// before are new again.
    #[test]
    fn restarts_number_from_zero() {
        for recent in [false, true] {
            let mut ids = interning(recent);
            let mut book = TicketBook::default();
            let mut batch = Vec::new();
            for pass in 0..3u64 {
                let tickets: Vec<u32> = (0..500u64).map(|a| book.number(a % 300 + pass)).collect();
                assert_eq!(tickets, (0..500u32).collect::<Vec<_>>());
                book.hand_over(&mut batch);
                ids.add(&batch);
                book.restart();
                let numbered = ids.restart();
                assert_eq!(numbered.keys.len(), 300);
                assert_eq!(numbered.keys.first(), Some(&pass));
                for (a, &t) in tickets.iter().enumerate() {
                    assert_eq!(numbered.ids[t as usize] as usize, a % 300);
                }
            }
        }
    }

    /// `fresh` gives each key met once, also across a hand-over.
    #[test]
    fn fresh_gives_each_key_once() {
        let mut book = TicketBook::default();
        book.number(1u64);
        book.number(2);
        assert_eq!(book.fresh(), &[1, 2]);
        book.number(3);
        assert_eq!(book.fresh(), &[3]);
        assert!(book.fresh().is_empty());
        book.number(4);
        book.hand_over(&mut Vec::new());
        assert!(book.fresh().is_empty());
        assert_eq!(book.waiting(), 0);
    }
}
