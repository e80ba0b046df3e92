//! Finding the number of a frame's location fast: a frame's location
//! depends on its process's mappings at the time, so finding it is an
//! address-space search; [`LocationCache`] remembers recent (process,
//! address) answers while the mappings stay the same. What a location's
//! number is comes from the caller's [`Numbering`]: an interner gives
//! its id (as `perfq dump --symbols` has it), a ticket book a ticket that
//! becomes its id on another thread (as perfq's conversion does).

use crate::tracker::{
    in_kernel_space, space_of, FrameLookup, Location, ProcessSpace, Tracker, KERNEL_SPACE,
};
use perfq_ids::{prefetch_line, IdTable, Numbering};

/// Sets of [`LocationCache`]: 2^17 sets of two entries, 8 MiB, a fixed
/// size whatever the capture.
const CACHE_SETS: usize = 1 << 17;

/// A remembered lookup: the frame's (address space, address, lookup bits)
/// and the space's stamp when it was looked up, and the number it got.
#[derive(Clone, Copy, Debug)]
struct CacheEntry {
    addr: u64,
    stamp: u64,
    space: u32,
    number: u32,
    /// [`FrameLookup::lookup_bits`], or [`CacheEntry::EMPTY_BITS`] for an
    /// entry never filled (lookup bits use three bits: never equal).
    bits: u8,
}

impl CacheEntry {
    const EMPTY_BITS: u8 = u8::MAX;
    const EMPTY: CacheEntry = CacheEntry {
        addr: 0,
        stamp: 0,
        space: 0,
        number: 0,
        bits: CacheEntry::EMPTY_BITS,
    };
}

/// Two entries in one cache line, the latest first: a lookup reads one
/// line, which [`LocationCache::prefetch`] can ask for ahead.
#[derive(Clone, Copy, Debug)]
#[repr(C, align(64))]
struct CacheSet([CacheEntry; 2]);

/// Remembers the number given to the location of recent (process,
/// address) lookups, so that recurring frames skip the address-space
/// search while their process's mappings stay the same.
///
/// Two-way set-associative by the hash of (space, address, lookup bits);
/// empty until the first lookup. A system-wide capture brings new
/// processes, hence new keys, all the time: a fixed-size cache that
/// forgets the older of two entries stays as useful as a map that grows
/// with the capture. Its lines are read in random order, a cache miss
/// each; a sample's frames are looked up one after the other, so their
/// lines are fetched ahead together ([`LocationCache::prefetch`]) rather
/// than waited for in turn.
#[derive(Debug, Default)]
pub struct LocationCache {
    sets: Vec<CacheSet>,
    /// The last process looked up, the address spaces' generation then,
    /// and its stamp: consecutive frames are mostly of one process, and
    /// its stamp is then not looked up again for each.
    last_stamp: Option<(u32, u64, u64)>,
}

impl LocationCache {
    /// An empty cache.
    pub fn new() -> Self {
        Self::default()
    }

    /// The cache set of a frame's key.
    fn set_of(space: u32, addr: u64, bits: u8) -> usize {
        (IdTable::hash((space, addr, bits)).bits() as usize) & (CACHE_SETS - 1)
    }

    /// Asks the processor for the cache lines that looking up `frames` of
    /// a sample of process `pid` will read, so that they arrive together.
    /// Only a hint: lookups are the same with or without it.
    pub fn prefetch(&self, pid: u32, frames: &[FrameLookup]) {
        if self.sets.is_empty() {
            return;
        }
        for f in frames {
            let set = Self::set_of(space_of(pid, f), f.addr, f.lookup_bits());
            if let Some(set) = self.sets.get(set) {
                prefetch_line(set);
            }
        }
    }

    /// The space frame `f` of process `pid` is looked up in
    /// ([`space_of`]) and that space's mappings stamp: the cache key's
    /// space, and what its entry is valid while. The last process's stamp
    /// is remembered.
    fn lookup_space(&mut self, tracker: &Tracker, pid: u32, f: &FrameLookup) -> (u32, u64) {
        let spaces = tracker.spaces();
        if in_kernel_space(f.lookup, f.kernel) {
            return (KERNEL_SPACE, spaces.kernel_stamp());
        }
        let generation = spaces.generation();
        match self.last_stamp {
            Some((p, g, stamp)) if p == pid && g == generation => (pid, stamp),
            _ => {
                let stamp = spaces.stamp(pid);
                self.last_stamp = Some((pid, generation, stamp));
                (pid, stamp)
            }
        }
    }

    /// The number of the location of frame `f` of a sample of the process
    /// `process` is the view of: remembered, or what `numbering` gives the
    /// location found now. The cache only gives back what `numbering` gave.
    #[inline]
    pub fn number(
        &mut self,
        process: ProcessSpace<'_>,
        f: &FrameLookup,
        numbering: &mut impl Numbering<Location>,
    ) -> u32 {
        if self.sets.is_empty() {
            self.sets = vec![CacheSet([CacheEntry::EMPTY; 2]); CACHE_SETS];
        }
        // Kernel addresses mean the same in every process: one cache entry
        // serves them all (a system-wide capture's kernel frames recur
        // across hundreds of processes).
        let (space, stamp) = self.lookup_space(process.tracker(), process.pid(), f);
        let bits = f.lookup_bits();
        let at = Self::set_of(space, f.addr, bits);
        let hit = |e: &CacheEntry| {
            e.addr == f.addr && e.space == space && e.bits == bits && e.stamp == stamp
        };
        if let Some(e) = self.sets.get(at).and_then(|s| s.0.iter().find(|e| hit(e))) {
            return e.number;
        }
        let n = numbering.number(process.locate(f.lookup, f.kernel));
        if let Some(set) = self.sets.get_mut(at) {
            set.0[1] = set.0[0];
            set.0[0] = CacheEntry {
                addr: f.addr,
                stamp,
                space,
                number: n,
                bits,
            };
        }
        n
    }
}

#[cfg(test)]
mod tests {
    use perfq_ids::Interner;
    use perfq_reader::{Mmap, RecordData};

    use super::*;

    /// Ids in order of first appearance, through a cache.
    #[derive(Default)]
    struct LocationInterner {
        cache: LocationCache,
        ids: Interner<Location>,
    }

    impl LocationInterner {
        fn intern(&mut self, tracker: &Tracker, pid: u32, f: &FrameLookup) -> u32 {
            self.cache
                .number(tracker.process_space(pid), f, &mut self.ids)
        }

        fn locations(&self) -> &[Location] {
            self.ids.keys()
        }
    }

    fn map(t: &mut Tracker, pid: u32, addr: u64, len: u64, path: &str) {
        t.observe(&RecordData::Mmap(Mmap {
            pid,
            tid: pid,
            addr,
            len,
            pgoff: 0,
            file_id: None,
            prot: None,
            flags: None,
            filename: path.to_string(),
            is_data: false,
        }));
    }

    fn user(addr: u64) -> FrameLookup {
        FrameLookup {
            addr,
            lookup: addr,
            is_return: false,
            kernel: Some(false),
            context: None,
        }
    }

    /// The cache answers as a lookup would: ids stay those of the first
    /// time across many more keys than the cache holds (every set taken
    /// over and over), and a process's new mapping is seen at once.
    #[test]
    fn cached_lookups_match_fresh_ones() {
        let mut t = Tracker::default();
        map(&mut t, 7, 0x10_0000, 0x100_0000, "/usr/lib/liba.so");
        let mut i = LocationInterner::default();
        let n = 3 * 2 * CACHE_SETS as u64;
        let addrs = || (0..n).map(|k| 0x10_0000 + k * 5);
        let first: Vec<u32> = addrs().map(|a| i.intern(&t, 7, &user(a))).collect();
        assert_eq!(i.locations().len() as u64, n);
        let pairs: Vec<(u64, u32)> = addrs().zip(first.iter().copied()).collect();
        for &(a, id) in pairs.iter().rev() {
            i.cache.prefetch(7, &[user(a)]);
            assert_eq!(i.intern(&t, 7, &user(a)), id);
        }
        // Another process, the same address: unmapped there.
        let other = i.intern(&t, 8, &user(0x10_0005));
        assert_eq!(
            i.locations()[other as usize],
            Location::Unmapped { addr: 0x10_0005 }
        );
        // liba replaced by libb: the address is found in libb, not cached.
        map(&mut t, 7, 0x10_0000, 0x100_0000, "/usr/lib/libb.so");
        let moved = i.intern(&t, 7, &user(0x10_0005));
        assert_ne!(moved, first[1]);
        match (
            i.locations()[first[1] as usize],
            i.locations()[moved as usize],
        ) {
            (Location::Dso { dso: a, offset: x }, Location::Dso { dso: b, offset: y }) => {
                assert_ne!(a, b);
                assert_eq!(x, y);
            }
            other => panic!("{other:?}"),
        }
    }
}
