//! A sorted function-symbol table built with perf's rules for symbol ends
//! and aliases, so that the same address gets the same name as in perf.

use std::borrow::Cow;

use perfq_reader::Endian;

use crate::binary::{FileBytes, SharedBytes};

/// One function symbol, borrowed from its table.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Symbol<'a> {
    /// Start address (ELF virtual address, or kernel address).
    pub start: u64,
    /// One past the end.
    pub end: u64,
    /// The name as stored (mangled).
    pub name: &'a str,
}

/// A symbol's ELF binding, which decides between aliases.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord)]
pub struct Rank {
    /// 2 global, 1 weak, 0 local.
    pub binding: u8,
}

/// A symbol as read, before ends are fixed and aliases removed.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct RawSymbol<'a> {
    /// Start address.
    pub start: u64,
    /// Size (0 when unknown).
    pub size: u64,
    /// Name: borrowed from the text or binary it was read from where it
    /// can be (the table copies names into its own buffer; a `String`
    /// each was an allocation per symbol of kallsyms' 120,000).
    pub name: Cow<'a, str>,
    /// Binding.
    pub rank: Rank,
    /// A kernel module symbol (kallsyms `[module]`).
    pub module: bool,
}

/// The layout's byte order, on every machine.
const LE: Endian = Endian::Little;
/// The layout's first bytes; a new layout gets a new magic.
pub(crate) const MAGIC: &[u8; 8] = b"PQSYMS02";
/// Magic, symbol count (u64), names' length (u64).
const HEADER: usize = 24;
/// Per symbol: start, end (u64), name offset and length (u32).
const ENTRY: usize = 24;

/// Function symbols sorted by address.
///
/// The table is one buffer, laid out as it is kept on disk
/// ([`crate::SymbolDisk`]): a header, fixed-size entries sorted by start,
/// then the names. A table read back from disk is the file mapped: a
/// binary's hundreds of thousands of symbols (`librustc_driver`,
/// `libLLVM`) cost the pages its lookups touch, not a `String` each.
#[derive(Clone, Default)]
pub struct SymbolTable {
    bytes: SharedBytes,
    count: usize,
}

impl std::fmt::Debug for SymbolTable {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("SymbolTable")
            .field("symbols", &self.count)
            .field("mapped", &matches!(self.bytes, SharedBytes::Mapped(_)))
            .finish()
    }
}

impl SymbolTable {
    /// Bytes the table holds (on the heap, or mapped).
    pub fn heap_bytes(&self) -> u64 {
        self.bytes.len() as u64
    }

    /// Builds the table as perf does (`symbols__fixup_end` then
    /// `symbols__fixup_duplicate`): symbols keep their input order among
    /// equal starts; a size-0 symbol reaches to the next symbol's start (so
    /// of size-0 aliases only the last gets a length), the last one to the
    /// next page; where a kallsyms run changes between kernel and module
    /// symbols, the earlier ends at the next page instead. Then at each
    /// address one alias stays, chosen by perf's `choose_best_symbol`.
    pub fn new(mut raw: Vec<RawSymbol<'_>>) -> SymbolTable {
        raw.sort_by_key(|r| r.start);
        let n = raw.len();
        let mut ends: Vec<u64> = raw.iter().map(|r| r.start.saturating_add(r.size)).collect();
        let page_after = |x: u64| x.saturating_add(4096).next_multiple_of(4096);
        for i in 1..n {
            if ends[i - 1] == raw[i - 1].start {
                ends[i - 1] = if raw[i - 1].module != raw[i].module {
                    page_after(raw[i - 1].start)
                } else {
                    raw[i].start
                };
            }
        }
        if let Some(last) = n.checked_sub(1) {
            if ends[last] == raw[last].start {
                ends[last] = raw[last].start.next_multiple_of(4096).saturating_add(4096);
            }
        }
        let mut kept: Vec<usize> = Vec::with_capacity(n);
        let mut best: Option<usize> = None;
        for i in 0..=n {
            let same = best.is_some_and(|b| i < n && raw[i].start == raw[b].start);
            if same {
                if let Some(b) = best {
                    if prefer_second(&raw[b], ends[b], &raw[i], ends[i]) {
                        best = Some(i);
                    }
                }
                continue;
            }
            kept.extend(best);
            best = (i < n).then_some(i);
        }
        SymbolTable::from_sorted(
            kept.into_iter()
                .map(|i| (raw[i].start, ends[i], &*raw[i].name)),
        )
        .unwrap_or_default()
    }

    /// A table of symbols already sorted by start, as (start, end, name):
    /// `None` if they are not sorted.
    pub fn from_sorted<'a>(
        syms: impl IntoIterator<Item = (u64, u64, &'a str)>,
    ) -> Option<SymbolTable> {
        let mut entries: Vec<u8> = Vec::new();
        let mut names: Vec<u8> = Vec::new();
        let mut count = 0usize;
        let mut last = 0u64;
        for (start, end, name) in syms {
            if start < last {
                return None;
            }
            last = start;
            // Names past 4 GiB in all (never seen) go without a name.
            let (off, len) = match (u32::try_from(names.len()), u32::try_from(name.len())) {
                (Ok(off), Ok(len)) if off.checked_add(len).is_some() => {
                    names.extend_from_slice(name.as_bytes());
                    (off, len)
                }
                _ => (0, 0),
            };
            entries.extend_from_slice(&start.to_le_bytes());
            entries.extend_from_slice(&end.to_le_bytes());
            entries.extend_from_slice(&off.to_le_bytes());
            entries.extend_from_slice(&len.to_le_bytes());
            count += 1;
        }
        let mut b = Vec::with_capacity(HEADER + entries.len() + names.len());
        b.extend_from_slice(MAGIC);
        b.extend_from_slice(&(count as u64).to_le_bytes());
        b.extend_from_slice(&(names.len() as u64).to_le_bytes());
        b.extend_from_slice(&entries);
        b.extend_from_slice(&names);
        Some(SymbolTable {
            bytes: SharedBytes::Owned(b.into()),
            count,
        })
    }

    /// The table in `bytes` (laid out as [`SymbolTable::bytes`] gives):
    /// `None` unless the header and the sizes agree. Entries are read as
    /// they are looked up; a damaged entry names nothing.
    pub(crate) fn from_mapped(map: &std::sync::Arc<memmap2::Mmap>) -> Option<SymbolTable> {
        let count = check_layout(map)?;
        Some(SymbolTable {
            bytes: SharedBytes::Mapped(FileBytes::new(map, 0, map.len() as u64)?),
            count,
        })
    }

    /// Hands the pages of a table read from the symbol disk back to the
    /// OS once a set of lookups is done: a large binary's table is tens
    /// of MB, mostly paged in by the lookups, and would otherwise stay
    /// resident while the frames those lookups named are written. A later
    /// lookup pages them in again from the page cache.
    pub(crate) fn release_pages(&self) {
        if let SharedBytes::Mapped(b) = &self.bytes {
            b.release_pages();
        }
    }

    /// The table's bytes, as kept on disk.
    pub(crate) fn bytes(&self) -> &[u8] {
        &self.bytes
    }

    /// The bytes of symbol `i`'s entry.
    fn entry(&self, i: usize) -> Option<&[u8]> {
        let at = HEADER.checked_add(i.checked_mul(ENTRY)?)?;
        self.bytes.get(at..at.checked_add(ENTRY)?)
    }

    /// Symbol `i`'s start and end.
    fn span(&self, i: usize) -> Option<(u64, u64)> {
        let e = self.entry(i)?;
        Some((LE.u64_at(e, 0)?, LE.u64_at(e, 8)?))
    }

    /// Symbol `i`, by start (as [`SymbolTable::find_index`] gives it).
    pub(crate) fn symbol(&self, i: usize) -> Option<Symbol<'_>> {
        let e = self.entry(i)?;
        let (start, end) = (LE.u64_at(e, 0)?, LE.u64_at(e, 8)?);
        let (off, len) = (LE.u32_at(e, 16)? as usize, LE.u32_at(e, 20)? as usize);
        let names = HEADER + self.count * ENTRY;
        let from = names.checked_add(off)?;
        let name = self.bytes.get(from..from.checked_add(len)?)?;
        Some(Symbol {
            start,
            end,
            name: std::str::from_utf8(name).ok()?,
        })
    }

    /// Symbol `i`'s start.
    fn start(&self, i: usize) -> u64 {
        self.entry(i)
            .and_then(|e| LE.u64_at(e, 0))
            .unwrap_or(u64::MAX)
    }

    /// The symbol containing `addr`.
    pub fn find(&self, addr: u64) -> Option<Symbol<'_>> {
        self.symbol(self.find_index(addr)?.0)
    }

    /// The index and start of the symbol containing `addr`, its name not
    /// read ([`SymbolTable::symbol`] reads it): the locations of one
    /// function, looked up one after another, need it once.
    pub(crate) fn find_index(&self, addr: u64) -> Option<(usize, u64)> {
        // partition_point over the entries' starts, read in place.
        let (mut lo, mut hi) = (0usize, self.count);
        while lo < hi {
            let mid = lo + (hi - lo) / 2;
            if self.start(mid) <= addr {
                lo = mid + 1;
            } else {
                hi = mid;
            }
        }
        let i = lo.checked_sub(1)?;
        let (start, end) = self.span(i)?;
        (addr < end).then_some((i, start))
    }

    /// The symbols, sorted by start.
    pub fn symbols(&self) -> impl Iterator<Item = Symbol<'_>> + '_ {
        (0..self.count).filter_map(|i| self.symbol(i))
    }

    /// Number of symbols.
    pub fn len(&self) -> usize {
        self.count
    }

    /// Whether there are none.
    pub fn is_empty(&self) -> bool {
        self.count == 0
    }
}

/// The symbol count of a table's bytes, if its magic is this layout's and
/// its length is what its header says.
fn check_layout(b: &[u8]) -> Option<usize> {
    if b.get(..8)? != MAGIC {
        return None;
    }
    let (count, names) = (LE.u64_at(b, 8)?, LE.u64_at(b, 16)?);
    let len = (HEADER as u64)
        .checked_add(count.checked_mul(ENTRY as u64)?)?
        .checked_add(names)?;
    (len == b.len() as u64).then(|| usize::try_from(count).ok())?
}

/// perf's `choose_best_symbol(a, b) == SYMBOL_B`: a non-zero length, then
/// not weak, then global, then fewer leading underscores, then the longer
/// name; a full tie keeps `a`.
pub(crate) fn prefer_second(a: &RawSymbol<'_>, a_end: u64, b: &RawSymbol<'_>, b_end: u64) -> bool {
    let underscores = |s: &str| s.bytes().take_while(|c| *c == b'_').count();
    let key = |s: &RawSymbol<'_>, end: u64| {
        (
            end > s.start,
            s.rank.binding != 1,
            s.rank.binding == 2,
            std::cmp::Reverse(underscores(&s.name)),
            s.name.len(),
        )
    };
    key(b, b_end) > key(a, a_end)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn raw(start: u64, size: u64, name: &str, binding: u8) -> RawSymbol<'_> {
        RawSymbol {
            start,
            size,
            name: name.into(),
            rank: Rank { binding },
            module: false,
        }
    }

    #[test]
    fn sizes_aliases_and_gaps() {
        let t = SymbolTable::new(vec![
            raw(0x100, 0x10, "a", 2),
            raw(0x200, 0x20, "__b", 2),
            raw(0x200, 0x20, "b", 1),
            raw(0x200, 0x20, "bb", 2),
            raw(0x300, 8, "c", 2),
        ]);
        assert_eq!(t.find(0x105).map(|s| s.name), Some("a"));
        assert_eq!(t.find(0x110), None);
        assert_eq!(t.find(0x21f).map(|s| s.name), Some("bb"));
        assert_eq!(t.find(0x220), None);
        assert_eq!(t.find(0x308), None);
        assert_eq!(t.len(), 3);
    }

    /// kallsyms aliases have no size: only the last at an address reaches
    /// the next symbol, so it wins (`__x86_indirect_thunk_rax` over
    /// `__x86_indirect_thunk_array`, as perf shows).
    #[test]
    fn last_sizeless_alias_wins() {
        let t = SymbolTable::new(vec![
            raw(0x1000, 0, "__x86_indirect_thunk_array", 2),
            raw(0x1000, 0, "__x86_indirect_thunk_rax", 2),
            raw(0x1020, 0, "__x86_indirect_thunk_rbx", 2),
        ]);
        assert_eq!(
            t.find(0x1010).map(|s| s.name),
            Some("__x86_indirect_thunk_rax")
        );
        assert_eq!(
            t.find(0x1fff).map(|s| s.name),
            Some("__x86_indirect_thunk_rbx")
        );
        assert_eq!(t.find(0x3000), None);
    }
}
