//! A sorted function-symbol table built with perf's rules for symbol ends
//! and aliases, so that the same address gets the same name as in perf.

/// One function symbol.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Symbol {
    /// Start address (ELF virtual address, or kernel address).
    pub start: u64,
    /// One past the end.
    pub end: u64,
    /// The name as stored (mangled).
    pub name: String,
}

/// A symbol's ELF binding, which decides between aliases.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord)]
pub struct Rank {
    /// 2 global, 1 weak, 0 local.
    pub binding: u8,
}

/// A symbol as read, before ends are fixed and aliases removed.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct RawSymbol {
    /// Start address.
    pub start: u64,
    /// Size (0 when unknown).
    pub size: u64,
    /// Name.
    pub name: String,
    /// Binding.
    pub rank: Rank,
    /// A kernel module symbol (kallsyms `[module]`).
    pub module: bool,
}

/// Function symbols sorted by address.
#[derive(Clone, Debug, Default)]
pub struct SymbolTable {
    syms: Vec<Symbol>,
}

impl SymbolTable {
    /// Bytes the table holds on the heap (entries and names).
    pub fn heap_bytes(&self) -> u64 {
        let names: usize = self.syms.iter().map(|s| s.name.capacity()).sum();
        (self.syms.capacity() * std::mem::size_of::<Symbol>() + names) as u64
    }

    /// Builds the table as perf does (`symbols__fixup_end` then
    /// `symbols__fixup_duplicate`): symbols keep their input order among
    /// equal starts; a size-0 symbol reaches to the next symbol's start (so
    /// of size-0 aliases only the last gets a length), the last one to the
    /// next page; where a kallsyms run changes between kernel and module
    /// symbols, the earlier ends at the next page instead. Then at each
    /// address one alias stays, chosen by perf's `choose_best_symbol`.
    pub fn new(mut raw: Vec<RawSymbol>) -> SymbolTable {
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
        let mut syms: Vec<Symbol> = Vec::with_capacity(n);
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
            if let Some(b) = best {
                syms.push(Symbol {
                    start: raw[b].start,
                    end: ends[b],
                    name: std::mem::take(&mut raw[b].name),
                });
            }
            best = (i < n).then_some(i);
        }
        SymbolTable { syms }
    }

    /// The symbol containing `addr`.
    pub fn find(&self, addr: u64) -> Option<&Symbol> {
        let i = self.syms.partition_point(|s| s.start <= addr);
        let s = self.syms.get(i.checked_sub(1)?)?;
        (addr < s.end).then_some(s)
    }

    /// A table built before (see `new`), its symbols sorted by start:
    /// `None` if they are not.
    pub fn from_sorted(syms: Vec<Symbol>) -> Option<SymbolTable> {
        syms.windows(2)
            .all(|w| w[0].start <= w[1].start)
            .then_some(SymbolTable { syms })
    }

    /// The symbols, sorted by start.
    pub fn symbols(&self) -> &[Symbol] {
        &self.syms
    }

    /// Number of symbols.
    pub fn len(&self) -> usize {
        self.syms.len()
    }

    /// Whether there are none.
    pub fn is_empty(&self) -> bool {
        self.syms.is_empty()
    }
}

/// perf's `choose_best_symbol(a, b) == SYMBOL_B`: a non-zero length, then
/// not weak, then global, then fewer leading underscores, then the longer
/// name; a full tie keeps `a`.
fn prefer_second(a: &RawSymbol, a_end: u64, b: &RawSymbol, b_end: u64) -> bool {
    let underscores = |s: &str| s.bytes().take_while(|c| *c == b'_').count();
    let key = |s: &RawSymbol, end: u64| {
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

    fn raw(start: u64, size: u64, name: &str, binding: u8) -> RawSymbol {
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
        assert_eq!(t.find(0x105).map(|s| s.name.as_str()), Some("a"));
        assert_eq!(t.find(0x110), None);
        assert_eq!(t.find(0x21f).map(|s| s.name.as_str()), Some("bb"));
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
            t.find(0x1010).map(|s| s.name.as_str()),
            Some("__x86_indirect_thunk_rax")
        );
        assert_eq!(
            t.find(0x1fff).map(|s| s.name.as_str()),
            Some("__x86_indirect_thunk_rbx")
        );
        assert_eq!(t.find(0x3000), None);
    }
}
