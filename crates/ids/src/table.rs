//! [`IdTable`]: ids of keys kept elsewhere (in a `Vec` indexed by id), a
//! hash table of ids alone, not a map holding every key a second time. Each
//! slot keeps its key's 32-bit hash beside the id, so that growing the
//! table rehashes without reading the keys (a million keys in random
//! places of their `Vec`: a cache miss each).
//!
//! The table is a flat array of such slots, probed linearly: a lookup
//! reads one slot's cache line, and a found id then its key. (A
//! `hashbrown` table of the same slots read its control bytes first, in
//! another line: the lookups of a system-wide capture's many new
//! locations waited for two cache misses each, one of the largest costs
//! of reading it.) At most three slots in four are used: a probe then
//! mostly stays within the line it starts in.

use std::hash::{BuildHasher, Hash};

use rustc_hash::FxBuildHasher;

/// Ids of keys stored by the caller; see the module documentation.
#[derive(Clone, Debug, Default)]
pub struct IdTable {
    /// [`EMPTY`], or a key's hash (high half) and its id (low half); a
    /// power of two long, or empty.
    slots: Vec<u64>,
    /// Slots used.
    len: usize,
    /// 64 minus the log2 of the slots: the shift that takes a slot index
    /// from a hash (multiplicative hashing).
    shift: u32,
}

/// An unused slot (no id is `u32::MAX`). Not 0: a new table is then
/// written through when made, a page fault each page in order, rather
/// than mapped to the zero page on its first read and faulted again, with
/// the other cores' TLBs flushed, on its first write.
const EMPTY: u64 = u64::MAX;
/// Slots of a table's first allocation.
const FIRST_SLOTS: usize = 16;

/// The hash a key is looked up by ([`IdTable::hash`]).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct KeyHash(u32);

impl KeyHash {
    /// The hash's bits, as a cache in front of the table may index by.
    pub fn bits(self) -> u32 {
        self.0
    }
}

impl IdTable {
    /// An empty table.
    pub fn new() -> Self {
        Self::default()
    }

    /// An empty table with room for `n` ids before it grows (a caller that
    /// knows about how many keys come saves the rehashes on the way).
    pub fn with_capacity(n: usize) -> Self {
        let mut t = Self::default();
        let slots = (n.saturating_mul(4) / 3 + 1)
            .next_power_of_two()
            .max(FIRST_SLOTS);
        t.slots = vec![EMPTY; slots];
        t.shift = 64 - slots.trailing_zeros();
        t
    }

    /// The hash of `key`, as every lookup of it must use.
    pub fn hash(key: impl Hash) -> KeyHash {
        KeyHash((FxBuildHasher.hash_one(key) >> 32) as u32)
    }

    /// Where the probe for `hash` starts.
    #[inline]
    fn home(&self, hash: KeyHash) -> usize {
        (u64::from(hash.0).wrapping_mul(0x9e37_79b9_7f4a_7c15) >> self.shift) as usize
    }

    /// The id of the key hashed `hash` for which `is(id)` holds.
    pub fn find(&self, hash: KeyHash, is: impl FnMut(u32) -> bool) -> Option<u32> {
        match self.slots.is_empty() {
            true => None,
            false => self.probe(hash, is).ok(),
        }
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
        if 4 * (self.len + 1) > 3 * self.slots.len() {
            self.grow();
        }
        match self.probe(hash, |id| is(keys, id)) {
            Ok(id) => id,
            Err(at) => {
                let id = add(keys);
                self.slots[at] = pack(hash, id);
                self.len += 1;
                id
            }
        }
    }

    /// The id of the key hashed `hash` for which `is(id)` holds, or the
    /// empty slot where it would go. The table has slots, and an empty
    /// one (it is never full).
    fn probe(&self, hash: KeyHash, mut is: impl FnMut(u32) -> bool) -> Result<u32, usize> {
        let mask = self.slots.len() - 1;
        let mut at = self.home(hash);
        loop {
            let slot = self.slots[at];
            if slot == EMPTY {
                return Err(at);
            }
            let id = slot as u32;
            if (slot >> 32) as u32 == hash.0 && is(id) {
                return Ok(id);
            }
            at = (at + 1) & mask;
        }
    }

    /// Doubles the slots, placing each id again by the hash it keeps.
    #[cold]
    fn grow(&mut self) {
        let n = (2 * self.slots.len()).max(FIRST_SLOTS);
        let old = std::mem::replace(&mut self.slots, vec![EMPTY; n]);
        self.shift = 64 - n.trailing_zeros();
        let mask = n - 1;
        for slot in old.into_iter().filter(|&s| s != EMPTY) {
            let mut at = self.home(KeyHash((slot >> 32) as u32));
            while self.slots[at] != EMPTY {
                at = (at + 1) & mask;
            }
            self.slots[at] = slot;
        }
    }

    /// Asks the processor for the slot a lookup of `hash` reads first, so
    /// that lookups of keys known ahead wait for memory together rather
    /// than in turn. Only a hint: lookups are the same without it.
    #[inline]
    pub fn prefetch(&self, hash: KeyHash) {
        if let Some(slot) = self.slots.get(self.home(hash)) {
            prefetch_line(slot);
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
        self.len
    }

    /// Whether there are none.
    pub fn is_empty(&self) -> bool {
        self.len == 0
    }
}

/// A slot holding `id` of a key hashed `hash`.
fn pack(hash: KeyHash, id: u32) -> u64 {
    // An id of u32::MAX could pack as an empty slot: ids are indexes of
    // keys in memory, fewer than that.
    debug_assert!(id != u32::MAX);
    u64::from(hash.0) << 32 | u64::from(id)
}

/// Asks for the cache line holding `t` (a hint; nothing on processors
/// without a prefetch instruction perfq uses).
#[inline]
pub fn prefetch_line<T>(t: &T) {
    #[cfg(target_arch = "x86_64")]
    {
        use std::arch::x86_64::{_mm_prefetch, _MM_HINT_T0};
        // SAFETY: SSE is part of x86_64's baseline, so the instruction
        // exists; a prefetch neither reads nor writes memory the program
        // sees, and the address is that of a live reference anyway.
        unsafe { _mm_prefetch::<_MM_HINT_T0>((t as *const T).cast::<i8>()) };
    }
    #[cfg(not(target_arch = "x86_64"))]
    let _ = t;
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
