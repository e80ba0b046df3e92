//! Kernel symbols from a kallsyms file, and the running kernel's build id.

use std::path::Path;

use crate::symtab::{Rank, RawSymbol, SymbolTable};

/// Kernel and module text symbols with the module each belongs to.
#[derive(Clone, Debug, Default)]
pub struct Kallsyms {
    table: SymbolTable,
    /// The module of each module symbol, as (start, start + 1, module),
    /// and where `_text` and `_stext` are, as `\0_text` at its address:
    /// perf records one of them (its "ref_reloc_sym") with the kernel's
    /// mapping, which tells how far this kallsyms is moved from the
    /// recorded kernel (KASLR). A table like the names', so that both are
    /// kept on the symbol disk and read back mapped.
    aux: SymbolTable,
}

impl Kallsyms {
    /// Hands the pages of tables read from the symbol disk back to the
    /// OS once a set of lookups is done (see
    /// [`SymbolTable::release_pages`]).
    pub(crate) fn release_pages(&self) {
        self.table.release_pages();
        self.aux.release_pages();
    }

    /// Parses `/proc/kallsyms` text: `addr type name [module]` per line.
    /// Text symbols (t, T, w, W) are kept; each ends where the next begins.
    pub fn parse(text: &str) -> Kallsyms {
        let mut raw = Vec::new();
        let mut modules = Vec::new();
        let mut refs = Vec::new();
        // `split('\n')` finds line ends with memchr, and the fields are
        // split at ASCII blanks by byte: `lines()` with `split_whitespace()`
        // decoded and classified every character, which took longer over
        // a kernel's many lines.
        for line in text.split('\n') {
            let mut it = ascii_fields(line);
            let (Some(addr), Some(ty), Some(name)) = (it.next(), it.next(), it.next()) else {
                continue;
            };
            let Ok(addr) = u64::from_str_radix(addr, 16) else {
                continue;
            };
            if matches!(name, "_text" | "_stext") {
                refs.push((name.to_string(), addr));
            }
            // perf 6.1 keeps text, weak, data and bss symbols
            // (`symbol_type__filter`); data ends text symbols before it.
            let Some(t) = ty.chars().next() else { continue };
            if addr == 0 || !matches!(t.to_ascii_uppercase(), 'T' | 'W' | 'D' | 'B') {
                continue;
            }
            // `kallsyms2elf_binding`: W weak, other upper case global.
            let binding = if t == 'W' {
                1
            } else if t.is_ascii_uppercase() {
                2
            } else {
                0
            };
            let module = it
                .next()
                .map(|m| m.trim_matches(|c| c == '[' || c == ']').to_string());
            raw.push(RawSymbol {
                start: addr,
                size: 0,
                name: name.into(),
                rank: Rank { binding },
                module: module.is_some(),
            });
            if let Some(m) = module {
                modules.push((addr, m));
            }
        }
        modules.sort();
        modules.dedup_by_key(|m| m.0);
        let mut aux: Vec<(u64, String)> = modules;
        aux.extend(
            refs.into_iter()
                .map(|(name, addr)| (addr, format!("\0{name}"))),
        );
        aux.sort_by_key(|a| a.0);
        Kallsyms {
            table: SymbolTable::new(raw),
            aux: SymbolTable::from_sorted(
                aux.iter()
                    .map(|(addr, name)| (*addr, addr.saturating_add(1), name.as_str())),
            )
            .unwrap_or_default(),
        }
    }

    /// Kernel symbols from the tables [`Kallsyms::tables`] gave (read back
    /// from the symbol disk).
    pub(crate) fn from_tables(table: SymbolTable, aux: SymbolTable) -> Kallsyms {
        Kallsyms { table, aux }
    }

    /// The symbols' table and the modules' and reference symbols' one.
    pub(crate) fn tables(&self) -> (&SymbolTable, &SymbolTable) {
        (&self.table, &self.aux)
    }

    /// Reads a kallsyms file.
    pub fn load(path: &Path) -> std::io::Result<Kallsyms> {
        Ok(Kallsyms::parse(&std::fs::read_to_string(path)?))
    }

    /// The symbol containing `addr` and its module (`None` for the kernel
    /// image).
    pub fn find(&self, addr: u64) -> Option<(&str, Option<&str>)> {
        let s = self.table.find(addr)?;
        let module = self
            .aux
            .find(s.start)
            .filter(|m| m.start == s.start && !m.name.starts_with('\0'))
            .map(|m| m.name);
        Some((s.name, module))
    }

    /// The address of `_text` or `_stext` here.
    pub fn ref_address(&self, name: &str) -> Option<u64> {
        self.aux
            .symbols()
            .find(|r| r.name.strip_prefix('\0') == Some(name))
            .map(|r| r.start)
    }

    /// Number of symbols.
    pub fn len(&self) -> usize {
        self.table.len()
    }

    /// Whether there are none (e.g. addresses hidden by kptr_restrict).
    pub fn is_empty(&self) -> bool {
        self.table.is_empty()
    }
}

/// The blank-separated fields of `line` (spaces, tabs and a carriage
/// return, the only blanks kallsyms text has), found a byte at a time.
fn ascii_fields(line: &str) -> AsciiFields<'_> {
    AsciiFields { rest: line }
}

struct AsciiFields<'a> {
    rest: &'a str,
}

impl<'a> Iterator for AsciiFields<'a> {
    type Item = &'a str;

    fn next(&mut self) -> Option<&'a str> {
        let blank = |b: &u8| matches!(b, b' ' | b'\t' | b'\r');
        let bytes = self.rest.as_bytes();
        let start = bytes.iter().position(|b| !blank(b))?;
        let len = bytes[start..]
            .iter()
            .position(blank)
            .unwrap_or(bytes.len() - start);
        // Blanks are ASCII, so both ends are character boundaries.
        let field = self.rest.get(start..start + len)?;
        self.rest = self.rest.get(start + len..).unwrap_or_default();
        Some(field)
    }
}

/// The build id of the running kernel, from `/sys/kernel/notes`.
pub fn running_kernel_build_id() -> Option<Vec<u8>> {
    let notes = std::fs::read("/sys/kernel/notes").ok()?;
    let mut rest = &notes[..];
    let u32_at =
        |b: &[u8], o: usize| Some(u32::from_ne_bytes(b.get(o..o + 4)?.try_into().ok()?) as usize);
    while rest.len() >= 12 {
        let (namesz, descsz, ty) = (u32_at(rest, 0)?, u32_at(rest, 4)?, u32_at(rest, 8)?);
        let name_end = 12 + namesz.next_multiple_of(4);
        let desc_end = name_end + descsz.next_multiple_of(4);
        if desc_end > rest.len() {
            return None;
        }
        if ty == 3 && rest.get(12..12 + namesz)? == b"GNU\0" {
            return Some(rest[name_end..name_end + descsz].to_vec());
        }
        rest = &rest[desc_end..];
    }
    None
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn text_symbols_with_modules() {
        let k = Kallsyms::parse(
            "ffffffff81000000 T _text\nffffffff81000100 t helper\nffffffff81100000 D some_data\nffffffffc0000000 t mod_fn\t[xfs]\nffffffffc0000100 T mod_end\t[xfs]\n",
        );
        assert_eq!(k.find(0xffffffff81000050), Some(("_text", None)));
        assert_eq!(k.find(0xffffffff81000200), Some(("helper", None)));
        assert_eq!(k.find(0xffffffffc0000010), Some(("mod_fn", Some("xfs"))));
    }

    #[test]
    fn blanks_and_line_ends_as_split_whitespace_takes_them() {
        // CRLF line ends, runs of blanks, a trailing blank and a last line
        // without an end: a copy edited elsewhere still parses.
        let k = Kallsyms::parse(
            "ffffffff81000000 T _text\r\n  ffffffff81000100\t t  helper \nffffffffc0000000 t mod_fn \t[xfs]\r\n\nbad line\nffffffffc0000100 T mod_end\t[xfs]",
        );
        assert_eq!(k.len(), 4);
        assert_eq!(k.ref_address("_text"), Some(0xffffffff81000000));
        assert_eq!(k.find(0xffffffff81000200), Some(("helper", None)));
        assert_eq!(k.find(0xffffffffc0000010), Some(("mod_fn", Some("xfs"))));
        assert_eq!(k.find(0xffffffffc0000110), Some(("mod_end", Some("xfs"))));
    }

    #[test]
    fn tables_give_back_the_same_symbols() {
        let k = Kallsyms::parse(
            "ffffffff81000000 T _text\nffffffff81000000 T startup_64\nffffffff81000100 t helper\nffffffffc0000000 t mod_fn\t[xfs]\nffffffffc0000100 T mod_end\t[ext4]\n",
        );
        let (t, a) = k.tables();
        let back = |t: &SymbolTable| {
            SymbolTable::from_sorted(t.symbols().map(|s| (s.start, s.end, s.name))).expect("sorted")
        };
        let k2 = Kallsyms::from_tables(back(t), back(a));
        for addr in [
            0xffffffff81000000,
            0xffffffff81000050,
            0xffffffff81000200,
            0xffffffffc0000010,
            0xffffffffc0000110,
            0x1000,
        ] {
            assert_eq!(k.find(addr), k2.find(addr), "{addr:#x}");
        }
        assert_eq!(k2.find(0xffffffff81000050).map(|f| f.1), Some(None));
        assert_eq!(k2.find(0xffffffffc0000110), Some(("mod_end", Some("ext4"))));
        assert_eq!(k2.ref_address("_text"), Some(0xffffffff81000000));
        assert_eq!(k2.ref_address("_stext"), None);
        assert_eq!(k2.len(), k.len());
    }
}
