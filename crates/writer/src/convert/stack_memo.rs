//! Whole callchains interned lately, by a hash of their frames: a stack
//! met again is found with one probe and a check of its frames, where
//! interning looks each frame up among its caller's callees.
//!
//! Interning already skips the callers a thread's sample shares with its
//! previous one; this is for the frames past them. Code whose samples
//! come back to a few thousand call paths in varied order (a benchmark's
//! loops, a server's request handlers, a generated top-down capture) then
//! costs a probe per sample instead of a lookup per frame.
//!
//! A cache of bounded size, two ways per set: a callchain goes in
//! first, and the one it pushes out of the set is the one that went in
//! before the other. A callchain no longer in its set is interned as
//! before (and goes in again). Its entries are stack indexes into the
//! tree, checked against the frames before use, so a stale or colliding
//! entry is never taken for a match.

use std::hash::Hasher;

use perfq_ids::prefetch_line;
use rustc_hash::FxHasher;

/// Slots: 1 MiB. Fewer made a generated capture's 30,000 call paths
/// evict each other.
const SLOTS: usize = 1 << 17;
/// Slots per set: the two of a set share a cache line. With one, call
/// paths that met in a slot pushed each other out in turn.
const WAYS: usize = 2;
// `put` names the two slots of a set, and `index` masks with
// `SLOTS - WAYS`: both hold for two ways only.
const _: () = assert!(WAYS == 2 && SLOTS.is_multiple_of(WAYS));

/// One remembered callchain: the hash bits the set's index does not
/// hold, and its stack (a tree index).
#[derive(Clone, Copy)]
struct Slot {
    check: u32,
    stack: u32,
}

/// "No stack" in a [`Slot`]: no tree index reaches it (the tree is
/// indexed by `u32` and the top values are its markers).
const EMPTY: Slot = Slot {
    check: 0,
    stack: u32::MAX,
};

#[derive(Default)]
pub(crate) struct StackMemo {
    /// Made at the first callchain remembered.
    slots: Vec<Slot>,
}

/// A callchain's hash, as [`StackMemo`] keys it.
#[derive(Clone, Copy)]
pub(crate) struct ChainHash(u64);

impl ChainHash {
    pub(crate) fn of(frames: &[u32]) -> ChainHash {
        let mut h = FxHasher::default();
        for &f in frames {
            h.write_u32(f);
        }
        // Fx's last step is a multiply: its high bits are the mixed ones.
        ChainHash(h.finish().rotate_left(32))
    }

    /// The first slot of its set.
    fn index(self) -> usize {
        (self.0 as usize) & (SLOTS - WAYS)
    }

    fn check(self) -> u32 {
        (self.0 >> 32) as u32
    }
}

impl StackMemo {
    /// The stack remembered for hash `h`, if any: a candidate, to be
    /// checked against the frames.
    #[inline]
    pub(crate) fn get(&self, h: ChainHash) -> Option<u32> {
        let set = self.slots.get(h.index()..h.index() + WAYS)?;
        set.iter()
            .find(|s| s.check == h.check() && s.stack != EMPTY.stack)
            .map(|s| s.stack)
    }

    /// Starts fetching the slot of hash `h` into the cache.
    #[inline]
    pub(crate) fn prefetch(&self, h: ChainHash) {
        if let Some(s) = self.slots.get(h.index()) {
            prefetch_line(s);
        }
    }

    /// Remembers `stack` as the callchain of hash `h`.
    #[inline]
    pub(crate) fn put(&mut self, h: ChainHash, stack: u32) {
        if self.slots.is_empty() {
            self.slots = vec![EMPTY; SLOTS];
        }
        let Some([first, second]) = self.slots.get_mut(h.index()..h.index() + WAYS) else {
            return;
        };
        let new = Slot {
            check: h.check(),
            stack,
        };
        // A callchain whose candidate was refused (stale, or another's
        // with the same check) takes its own slot back; otherwise the
        // newer of the set moves over for it.
        if first.check != new.check {
            *second = *first;
        }
        *first = new;
    }

    /// Forgets every callchain (their tree was written and cleared).
    pub(crate) fn clear(&mut self) {
        self.slots.fill(EMPTY);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A hash of set `set` with check `check`.
    fn hash(set: usize, check: u32) -> ChainHash {
        ChainHash((u64::from(check) << 32) | (set * WAYS) as u64)
    }

    /// Two call paths of one set are both remembered; a third pushes out
    /// the one that went in first; a path put again keeps one slot.
    #[test]
    fn a_set_keeps_the_two_latest_call_paths() {
        let mut m = StackMemo::default();
        let (a, b, c) = (hash(7, 1), hash(7, 2), hash(7, 3));
        assert_eq!(m.get(a), None, "nothing before the first put");
        m.put(a, 10);
        m.put(b, 20);
        assert_eq!((m.get(a), m.get(b)), (Some(10), Some(20)));
        m.put(c, 30);
        assert_eq!((m.get(a), m.get(b), m.get(c)), (None, Some(20), Some(30)));
        // Put again (its candidate refused): its slot, not both.
        m.put(c, 31);
        assert_eq!((m.get(b), m.get(c)), (Some(20), Some(31)));
        assert_eq!(m.get(hash(8, 2)), None, "another set");
        m.clear();
        assert_eq!((m.get(b), m.get(c)), (None, None));
    }
}
