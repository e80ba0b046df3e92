//! The one trait numberers share, and the numberer that gives ids on the
//! spot.

use std::hash::Hash;

use crate::IdTable;

/// Gives keys numbers: an [`Interner`] gives a key's id, a
/// [`TicketBook`](crate::TicketBook) a ticket that a
/// [`TicketIds`](crate::TicketIds) turns into the same id later.
pub trait Numbering<K> {
    /// The number of `key`.
    fn number(&mut self, key: K) -> u32;
}

/// Each distinct key's id, in order of first appearance; the keys kept
/// once, by id.
#[derive(Debug)]
pub struct Interner<K> {
    table: IdTable,
    keys: Vec<K>,
}

impl<K> Default for Interner<K> {
    fn default() -> Self {
        Interner {
            table: IdTable::new(),
            keys: Vec::new(),
        }
    }
}

impl<K: Hash + Eq + Copy> Interner<K> {
    /// An empty interner.
    pub fn new() -> Self {
        Self::default()
    }

    /// The id of `key`, if it has one.
    pub fn get(&self, key: &K) -> Option<u32> {
        self.table
            .find(IdTable::hash(key), |id| self.keys[id as usize] == *key)
    }

    /// The keys, by id.
    pub fn keys(&self) -> &[K] {
        &self.keys
    }

    /// The keys, by id, taken out of the interner.
    pub fn into_keys(self) -> Vec<K> {
        self.keys
    }
}

impl<K: Hash + Eq + Copy> Numbering<K> for Interner<K> {
    /// The id of `key`, the next one if it is new.
    #[inline]
    fn number(&mut self, key: K) -> u32 {
        self.table.id_in(key, &mut self.keys)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn ids_in_order_of_first_appearance() {
        let mut i = Interner::new();
        let ids: Vec<u32> = [5u64, 7, 5, 9, 7]
            .into_iter()
            .map(|k| i.number(k))
            .collect();
        assert_eq!(ids, [0, 1, 0, 2, 1]);
        assert_eq!(i.keys(), [5, 7, 9]);
        assert_eq!(i.get(&9), Some(2));
        assert_eq!(i.get(&4), None);
    }
}
