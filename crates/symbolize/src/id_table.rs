//! Dense ids of keys kept elsewhere (in a `Vec` indexed by id): a hash
//! table of ids alone, not a map holding every key a second time. Each
//! slot keeps its key's 32-bit hash beside the id, so that growing the
//! table rehashes without reading the keys (a million keys in random
//! places of their `Vec`: a cache miss each).

use std::hash::{BuildHasher, Hash};

use hashbrown::hash_table::{Entry, HashTable};
use rustc_hash::FxBuildHasher;

/// Ids of keys stored by the caller; see the module documentation.
#[derive(Debug, Default)]
pub struct IdTable {
    /// (id, its key's hash).
    slots: HashTable<(u32, u32)>,
}

/// The hash a key is looked up by ([`IdTable::hash`]).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct KeyHash(u32);

impl KeyHash {
    /// The hash's bits, as a cache in front of the table may index by.
    pub fn bits(self) -> u32 {
        self.0
    }

    /// As hashbrown takes it: the 32 bits in both halves (it indexes by
    /// the low bits and tags by the top ones).
    fn wide(self) -> u64 {
        u64::from(self.0) << 32 | u64::from(self.0)
    }
}

impl IdTable {
    /// An empty table.
    pub fn new() -> Self {
        Self::default()
    }

    /// The hash of `key`, as every lookup of it must use.
    pub fn hash(key: impl Hash) -> KeyHash {
        KeyHash((FxBuildHasher.hash_one(key) >> 32) as u32)
    }

    /// The id of the key hashed `hash` for which `is(id)` holds.
    pub fn find(&self, hash: KeyHash, mut is: impl FnMut(u32) -> bool) -> Option<u32> {
        self.slots
            .find(hash.wide(), |&(id, h)| h == hash.0 && is(id))
            .map(|&(id, _)| id)
    }

    /// The id of the key hashed `hash` for which `is(keys, id)` holds; if
    /// there is none, `add(keys)` stores the key and returns its new id.
    pub fn find_or_add<K: ?Sized>(
        &mut self,
        hash: KeyHash,
        keys: &mut K,
        is: impl Fn(&K, u32) -> bool,
        add: impl FnOnce(&mut K) -> u32,
    ) -> u32 {
        let entry = self.slots.entry(
            hash.wide(),
            |&(id, h)| h == hash.0 && is(keys, id),
            |&(_, h)| KeyHash(h).wide(),
        );
        match entry {
            Entry::Occupied(e) => e.get().0,
            Entry::Vacant(e) => {
                let id = add(keys);
                e.insert((id, hash.0));
                id
            }
        }
    }

    /// The id of `key` among `keys` (indexed by id), pushed onto them if
    /// new: the common case of [`IdTable::find_or_add`], keys in one `Vec`.
    pub fn id_in<K: std::hash::Hash + Eq + Copy>(&mut self, key: K, keys: &mut Vec<K>) -> u32 {
        self.id_in_hashed(IdTable::hash(key), key, keys)
    }

    /// [`IdTable::id_in`] for a key whose hash the caller has already
    /// made (to index a cache of its own by it).
    pub fn id_in_hashed<K: Eq + Copy>(&mut self, hash: KeyHash, key: K, keys: &mut Vec<K>) -> u32 {
        self.find_or_add(
            hash,
            keys,
            |keys, id| keys[id as usize] == key,
            |keys| {
                keys.push(key);
                (keys.len() - 1) as u32
            },
        )
    }

    /// The number of ids.
    pub fn len(&self) -> usize {
        self.slots.len()
    }

    /// Whether there are none.
    pub fn is_empty(&self) -> bool {
        self.slots.is_empty()
    }
}

#[cfg(test)]
mod tests {
    use super::IdTable;

    #[test]
    fn ids_are_dense_and_found_again_after_growing() {
        let mut keys: Vec<u64> = Vec::new();
        let mut table = IdTable::new();
        for round in 0..2 {
            for k in 0..10_000u64 {
                let key = k * 7919;
                let id = table.find_or_add(
                    IdTable::hash(key),
                    &mut keys,
                    |keys, id| keys[id as usize] == key,
                    |keys| {
                        keys.push(key);
                        (keys.len() - 1) as u32
                    },
                );
                assert_eq!(id as u64, k, "round {round}");
            }
        }
        assert_eq!(table.len(), 10_000);
        assert_eq!(
            table.find(IdTable::hash(7919u64 * 3), |id| keys[id as usize]
                == 7919 * 3),
            Some(3)
        );
        assert_eq!(
            table.find(IdTable::hash(5u64), |id| keys[id as usize] == 5),
            None
        );
    }
}
