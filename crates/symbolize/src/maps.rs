//! Per-process address spaces built from MMAP/MMAP2 records in time order,
//! inherited on FORK and reset on exec, plus the kernel's.

use rustc_hash::FxHashMap;

use crate::dso::DsoId;

/// One mapping of a DSO into an address space.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Mapping {
    /// First address.
    pub start: u64,
    /// One past the last address.
    pub end: u64,
    /// File offset of `start`.
    pub pgoff: u64,
    /// The DSO.
    pub dso: DsoId,
}

impl Mapping {
    /// The address perf calls `map_ip`: the file offset of `addr`.
    pub fn file_offset(&self, addr: u64) -> u64 {
        addr.wrapping_sub(self.start).wrapping_add(self.pgoff)
    }
}

/// The mappings of one address space, by start address.
///
/// A sorted vector rather than a tree: every callchain frame a sink does
/// not find in its caches is looked up here, and a binary search over one
/// block of memory costs fewer cache misses than a walk down a tree's
/// nodes. Mappings change far less often (an mmap record each) than they
/// are looked up, and a process has at most a few thousand.
#[derive(Clone, Debug, Default)]
pub struct Maps {
    /// Sorted by start; never overlapping, never empty (so their ends are
    /// sorted too).
    by_start: Vec<Mapping>,
}

impl Maps {
    /// Adds a mapping; whatever it overlaps is cut away, as a new mmap
    /// replaces the old pages.
    pub fn insert(&mut self, m: Mapping) {
        if m.end <= m.start {
            return;
        }
        // The mappings it overlaps: those from the first that ends past
        // its start to the last that starts before its end.
        let from = self.by_start.partition_point(|o| o.end <= m.start);
        let to = self.by_start.partition_point(|o| o.start < m.end);
        let mut kept = Vec::with_capacity(3);
        if let Some(first) = self.by_start.get(from).filter(|_| from < to) {
            if first.start < m.start {
                kept.push(Mapping {
                    end: m.start,
                    ..*first
                });
            }
        }
        kept.push(m);
        if let Some(last) = to.checked_sub(1).filter(|&l| l >= from) {
            let o = self.by_start[last];
            if o.end > m.end {
                kept.push(Mapping {
                    start: m.end,
                    pgoff: o.pgoff.wrapping_add(m.end - o.start),
                    ..o
                });
            }
        }
        self.by_start.splice(from..to.max(from), kept);
    }

    /// The mapping that contains `addr`.
    #[inline]
    pub fn find(&self, addr: u64) -> Option<&Mapping> {
        let after = self.by_start.partition_point(|m| m.start <= addr);
        let m = self.by_start.get(after.checked_sub(1)?)?;
        (addr < m.end).then_some(m)
    }

    /// Number of mappings.
    pub fn len(&self) -> usize {
        self.by_start.len()
    }

    /// The mappings, by start address.
    pub fn iter(&self) -> impl Iterator<Item = &Mapping> {
        self.by_start.iter()
    }

    /// Whether there are none.
    pub fn is_empty(&self) -> bool {
        self.by_start.is_empty()
    }
}

/// The address spaces of every process seen, and the kernel's.
#[derive(Clone, Debug, Default)]
pub struct AddressSpaces {
    processes: FxHashMap<u32, Maps>,
    kernel: Maps,
    /// Bumped whenever a user address space changes, so that what was built
    /// from one (unwinders) can tell it is stale.
    generation: u64,
    /// Per process, the generation of its last change: equal stamps mean
    /// the same mappings, so lookups cached under a stamp stay valid
    /// while other processes map and fork.
    stamps: FxHashMap<u32, u64>,
    /// The generation of the kernel's last change (stamps and this never
    /// share a value).
    kernel_stamp: u64,
}

impl AddressSpaces {
    /// Adds a mapping to process `pid` (`u32::MAX`, i.e. -1, is the kernel).
    pub fn mmap(&mut self, pid: u32, m: Mapping) {
        if pid == u32::MAX {
            self.kernel.insert(m);
            self.generation += 1;
            self.kernel_stamp = self.generation;
        } else {
            self.processes.entry(pid).or_default().insert(m);
            self.generation += 1;
            self.stamps.insert(pid, self.generation);
        }
    }

    /// A number that changes whenever the mappings of `pid` change (and is
    /// never reused for another state of any process); 0 for a process
    /// with no mappings yet.
    pub fn stamp(&self, pid: u32) -> u64 {
        self.stamps.get(&pid).copied().unwrap_or(0)
    }

    /// Like [`AddressSpaces::stamp`], for the kernel's mappings, which every
    /// process shares.
    pub fn kernel_stamp(&self) -> u64 {
        self.kernel_stamp
    }

    /// Changes so far to address spaces.
    pub fn generation(&self) -> u64 {
        self.generation
    }

    /// The user mappings of `pid`.
    pub fn user_maps(&self, pid: u32) -> Option<&Maps> {
        self.processes.get(&pid)
    }

    /// A new process `pid` forked from `ppid` starts with its parent's
    /// mappings. A new thread (same pid) changes nothing.
    pub fn fork(&mut self, pid: u32, ppid: u32) {
        if pid == ppid || self.processes.contains_key(&pid) {
            return;
        }
        if let Some(parent) = self.processes.get(&ppid).cloned() {
            self.processes.insert(pid, parent);
            self.generation += 1;
            self.stamps.insert(pid, self.generation);
        }
    }

    /// `pid` called exec. Its old mappings stay until the new image's
    /// mmaps replace them, as in perf: samples taken inside execve after
    /// the kernel switched images still carry return addresses into the old
    /// image (libc's `execve`), and only the old mappings name them. An
    /// address the new image maps always resolves to the new mapping.
    pub fn exec(&mut self, pid: u32) {
        let _ = pid;
    }

    /// The kernel's mappings (image and modules).
    pub fn kernel_maps(&self) -> &Maps {
        &self.kernel
    }

    /// The kernel mapping containing `addr`.
    pub fn find_kernel(&self, addr: u64) -> Option<&Mapping> {
        self.kernel.find(addr)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn m(start: u64, end: u64, pgoff: u64, dso: u32) -> Mapping {
        Mapping {
            start,
            end,
            pgoff,
            dso: DsoId(dso),
        }
    }

    #[test]
    fn overlapping_mmap_cuts_the_old_one() {
        let mut maps = Maps::default();
        maps.insert(m(0x1000, 0x5000, 0, 1));
        maps.insert(m(0x2000, 0x3000, 0, 2));
        assert_eq!(maps.find(0x1800).map(|x| x.dso), Some(DsoId(1)));
        assert_eq!(maps.find(0x2800).map(|x| x.dso), Some(DsoId(2)));
        let tail = maps.find(0x3800).copied().expect("tail kept");
        assert_eq!(
            (tail.dso, tail.start, tail.pgoff),
            (DsoId(1), 0x3000, 0x2000)
        );
        assert!(maps.find(0x5000).is_none());
        assert_eq!(maps.len(), 3);
    }

    /// Every address resolves as it would in a page-by-page model of the
    /// address space, after each of many overlapping mmaps.
    #[test]
    fn lookups_match_a_page_by_page_model() {
        let mut maps = Maps::default();
        // By address: (dso, file offset) of the mapping that holds it.
        let mut model: Vec<Option<(DsoId, u64)>> = vec![None; 104];
        let mut seed: u64 = 0x9e37_79b9_7f4a_7c15;
        let mut next = |n: u64| {
            seed ^= seed << 13;
            seed ^= seed >> 7;
            seed ^= seed << 17;
            seed % n
        };
        for dso in 0..400 {
            let start = next(90);
            let end = start + next(12);
            let pgoff = next(1000);
            maps.insert(m(start, end, pgoff, dso));
            for a in start..end {
                model[a as usize] = Some((DsoId(dso), a - start + pgoff));
            }
            for (a, want) in (0u64..).zip(&model) {
                let got = maps.find(a).map(|x| (x.dso, x.file_offset(a)));
                assert_eq!(got, *want, "address {a} after mmap #{dso}");
            }
            let starts: Vec<u64> = maps.iter().map(|x| x.start).collect();
            assert!(starts.windows(2).all(|w| w[0] < w[1]), "sorted: {starts:?}");
        }
    }

    /// The DSO of the user mapping of `pid` that contains `addr`.
    fn user_dso(a: &AddressSpaces, pid: u32, addr: u64) -> Option<DsoId> {
        a.user_maps(pid)?.find(addr).map(|x| x.dso)
    }

    #[test]
    fn fork_inherits_exec_replaces_where_mapped() {
        let mut a = AddressSpaces::default();
        a.mmap(10, m(0x1000, 0x2000, 0, 1));
        a.mmap(10, m(0x8000, 0x9000, 0, 3));
        a.fork(11, 10);
        assert!(user_dso(&a, 11, 0x1000).is_some());
        a.exec(11);
        a.mmap(11, m(0x1000, 0x3000, 0, 2));
        assert_eq!(user_dso(&a, 11, 0x1800), Some(DsoId(2)));
        assert_eq!(
            user_dso(&a, 11, 0x8800),
            Some(DsoId(3)),
            "old image still names old addresses"
        );
        assert_eq!(
            user_dso(&a, 10, 0x1800),
            Some(DsoId(1)),
            "the parent is untouched"
        );
    }
}
