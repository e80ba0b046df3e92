//! The one trait numberers share, and the numberer that gives ids on the
//! spot.

use std::hash::Hash;

use crate::{IdTable, KeyHash};

/// Gives keys numbers: an [`Interner`] gives a key's id, a
/// [`TicketBook`](crate::TicketBook) a ticket that a
/// [`TicketIds`](crate::TicketIds) turns into the same id later.
pub trait Numbering<K> {
    /// The number of `key`.
    fn number(&mut self, key: K) -> u32;
}

/// Each distinct key's id, in order of first appearance; the keys kept
/// once, by id. Keys are looked up as they are ([`Numbering::number`],
/// [`Interner::get`]) or through a borrowed form of them
/// ([`Interner::id_by`]: a text, a struct of references), so that the
/// owned key is made only when it is new.
#[derive(Clone, Debug)]
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

impl<K> Interner<K> {
    /// An empty interner.
    pub fn new() -> Self {
        Self::default()
    }

    /// An empty interner with room for `n` keys before it grows.
    pub fn with_capacity(n: usize) -> Self {
        Interner {
            table: IdTable::with_capacity(n),
            keys: Vec::with_capacity(n),
        }
    }

    /// The id of the key hashed `hash` for which `is` holds; if there is
    /// none, `make()` is stored as the next id. `hash` must be the hash
    /// [`IdTable::hash`] gives the key's identity in every lookup of it
    /// (the key itself, or a borrowed form hashed alike).
    #[inline]
    pub fn id_by(
        &mut self,
        hash: KeyHash,
        is: impl Fn(&K) -> bool,
        make: impl FnOnce() -> K,
    ) -> u32 {
        self.table.find_or_add(
            hash,
            &mut self.keys,
            |keys, id| is(&keys[id as usize]),
            |keys| {
                keys.push(make());
                (keys.len() - 1) as u32
            },
        )
    }

    /// The id of the key hashed `hash` for which `is` holds, if any.
    pub fn find_by(&self, hash: KeyHash, is: impl Fn(&K) -> bool) -> Option<u32> {
        self.table.find(hash, |id| is(&self.keys[id as usize]))
    }

    /// The key of `id`.
    pub fn key(&self, id: u32) -> Option<&K> {
        self.keys.get(id as usize)
    }

    /// The number of keys.
    pub fn len(&self) -> usize {
        self.keys.len()
    }

    /// Whether there are none.
    pub fn is_empty(&self) -> bool {
        self.keys.is_empty()
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

impl<K: Hash + Eq> Interner<K> {
    /// The id of `key`, if it has one.
    pub fn get(&self, key: &K) -> Option<u32> {
        self.find_by(IdTable::hash(key), |k| k == key)
    }

    /// The id of `key`, moved in when new (dropped when found).
    pub fn id_owned(&mut self, key: K) -> u32 {
        let hash = IdTable::hash(&key);
        match self.find_by(hash, |k| *k == key) {
            Some(id) => id,
            None => self.id_by(hash, |_| false, || key),
        }
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

    #[test]
    fn owned_keys_are_looked_up_borrowed_and_made_when_new() {
        let mut i: Interner<(String, Option<String>)> = Interner::new();
        let mut made = 0;
        let mut id = |i: &mut Interner<_>, a: &str, b: Option<&str>| {
            i.id_by(
                IdTable::hash((a, b)),
                |k: &(String, Option<String>)| k.0 == a && k.1.as_deref() == b,
                || {
                    made += 1;
                    (a.to_string(), b.map(str::to_string))
                },
            )
        };
        assert_eq!(id(&mut i, "libc", None), 0);
        assert_eq!(id(&mut i, "libc", Some("ab")), 1);
        assert_eq!(id(&mut i, "libc", None), 0);
        assert_eq!(made, 2);
        assert_eq!(i.id_owned(("libc".into(), Some("ab".into()))), 1);
        assert_eq!(i.id_owned(("ld".into(), None)), 2);
        assert_eq!(i.key(2), Some(&("ld".to_string(), None)));
        assert_eq!(i.len(), 3);
    }
}
