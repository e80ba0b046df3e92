//! How a row's symbol is shown and ordered: as perf prints it, compared
//! without formatting the millions of unresolved addresses a system-wide
//! capture has.

use std::sync::Arc;

use crate::row_keys::KeySym;
use crate::SortKey;

/// The first 16 bytes of a shown text, zero-padded, as two big-endian
/// numbers: unequal prefixes order as the texts do, since a symbol's text
/// holds no NUL byte (names come from C strings: ELF and DWARF string
/// tables, kallsyms, perf maps); equal ones say nothing.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, PartialOrd, Ord)]
pub(crate) struct TextPrefix(u64, u64);

impl TextPrefix {
    fn of<'b>(bytes: impl Iterator<Item = &'b u8>) -> TextPrefix {
        let mut b = [0u8; 16];
        for (d, s) in b.iter_mut().zip(bytes) {
            *d = *s;
        }
        let (hi, lo) = b.split_at(8);
        let word = |w: &[u8]| w.iter().fold(0u64, |n, &x| n << 8 | u64::from(x));
        TextPrefix(word(hi), word(lo))
    }
}

/// A row's symbol, as it is shown.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub(crate) enum Sym<'a> {
    /// A resolved name.
    Name(&'a str),
    /// A function inlined at an unwound frame: `name (inlined)`.
    Inlined(&'a str),
    /// An unresolved address, as perf prints it ([`address_text`]):
    /// hundreds of thousands of them on system-wide captures, formatted
    /// only for the rows printed.
    Address(u64),
    /// No symbol ([`SortKey::Dso`]).
    Empty,
}

impl Sym<'_> {
    /// The first bytes of the shown text ([`TextPrefix`]).
    pub(crate) fn text_prefix(&self) -> TextPrefix {
        match self {
            Sym::Name(s) => TextPrefix::of(s.as_bytes().iter()),
            Sym::Inlined(s) => TextPrefix::of(s.as_bytes().iter().chain(b" (inlined)")),
            Sym::Address(a) => TextPrefix::of(address_text(*a).iter()),
            Sym::Empty => TextPrefix::of([].iter()),
        }
    }

    /// Orders as the shown texts do.
    pub(crate) fn cmp_text(&self, other: &Sym<'_>) -> std::cmp::Ordering {
        match (self, other) {
            (Sym::Name(a), Sym::Name(b)) => a.cmp(b),
            // Sixteen hex digits after `0x`, and 0 as sixteen zeros
            // (before any `0x`): the order of the numbers.
            (Sym::Address(a), Sym::Address(b)) => a.cmp(b),
            // Names beside addresses (hundreds of thousands of rows of
            // equal sums on system-wide captures): compared without
            // allocating.
            (Sym::Name(a), Sym::Address(b)) => a.as_bytes().cmp(&address_text(*b)[..]),
            (Sym::Address(a), Sym::Name(b)) => address_text(*a)[..].cmp(b.as_bytes()),
            _ => self.to_string().cmp(&other.to_string()),
        }
    }
}

impl std::fmt::Display for Sym<'_> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            Sym::Name(s) => f.write_str(s),
            Sym::Inlined(s) => write!(f, "{s} (inlined)"),
            // Hex digits only: the bytes are ASCII.
            Sym::Address(a) => f.write_str(std::str::from_utf8(&address_text(*a)).unwrap_or("")),
            Sym::Empty => Ok(()),
        }
    }
}

/// An unresolved address as perf prints it (`%-#.*llx` with 16 digits:
/// `0x` then 16 digits, or 16 zeros for 0, which C prints without prefix),
/// as bytes, without allocating.
fn address_text(a: u64) -> AddressText {
    const HEX: &[u8; 16] = b"0123456789abcdef";
    let mut t = [b'0'; 18];
    t[1] = b'x';
    for (i, d) in t[2..].iter_mut().enumerate() {
        *d = HEX[((a >> (60 - 4 * i)) & 0xf) as usize];
    }
    // 0 is its sixteen zeros alone.
    AddressText {
        text: t,
        from: if a == 0 { 2 } else { 0 },
    }
}

/// The text of an address as perf prints it: `text[from..]`.
struct AddressText {
    text: [u8; 18],
    from: usize,
}

impl std::ops::Deref for AddressText {
    type Target = [u8];
    fn deref(&self) -> &[u8] {
        &self.text[self.from..]
    }
}

/// The row key of a location resolved to `dso` and `symbol` (at `addr`):
/// an unresolved one is named by the address perf shows (`show` for a
/// callchain entry). No DSO when rows are not per DSO.
pub(crate) fn row_key<'a>(
    dso: &'a Arc<str>,
    symbol: Option<&'a Arc<str>>,
    addr: u64,
    show: Option<u64>,
    sort: SortKey,
) -> (Option<&'a Arc<str>>, KeySym<'a>) {
    let sym = match symbol {
        Some(s) => KeySym::Name(s),
        None => KeySym::Address(show.unwrap_or(addr)),
    };
    match sort {
        SortKey::DsoSym => (Some(dso), sym),
        SortKey::Sym => (None, sym),
        SortKey::Dso => (Some(dso), KeySym::Empty),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::Symbol;

    #[test]
    fn addresses_print_and_order_as_perf_text() {
        for a in [0u64, 1, 0xabc, 0x7fff_1234_5678, u64::MAX] {
            let text = if a == 0 {
                "0".repeat(16)
            } else {
                format!("{a:#018x}")
            };
            assert_eq!(Symbol::Address(a).to_string(), text);
            for name in ["", "0", "0x", "0x0000ffff", "main", "0000000000000000x"] {
                assert_eq!(
                    Sym::Name(name).cmp_text(&Sym::Address(a)),
                    name.cmp(text.as_str()),
                    "{name} vs {text}"
                );
                assert_eq!(
                    Sym::Address(a).cmp_text(&Sym::Name(name)),
                    text.as_str().cmp(name)
                );
            }
        }
    }

    #[test]
    pub(crate) fn text_prefixes_order_as_the_texts_when_they_differ() {
        let syms = [
            Sym::Empty,
            Sym::Name(""),
            Sym::Name("a"),
            Sym::Name("ab"),
            Sym::Name("abcdefgh"),
            Sym::Name("abcdefghi"),
            Sym::Name("abcdefghijklmnop"),
            Sym::Name("abcdefghijklmnopq"),
            Sym::Name("abcdefghijklmnoz"),
            Sym::Name("0x00007f"),
            Sym::Name("\u{e9}t\u{e9}"),
            Sym::Inlined("abc"),
            Sym::Inlined("abcdefghijklmnop"),
            Sym::Address(0),
            Sym::Address(0x7f00_0000_0010),
            Sym::Address(0x7f00_0000_0020),
            Sym::Address(0x7f00_0000_1000),
            Sym::Address(u64::MAX),
        ];
        for a in &syms {
            for b in &syms {
                let text = a.to_string().cmp(&b.to_string());
                assert_eq!(a.cmp_text(b), text, "{a} vs {b}");
                let (pa, pb) = (a.text_prefix(), b.text_prefix());
                if pa != pb {
                    assert_eq!(pa.cmp(&pb), text, "{a} vs {b}");
                } else {
                    // Equal prefixes: texts equal for 16 bytes (or all).
                    let (ta, tb) = (a.to_string(), b.to_string());
                    let n = |t: &str| t.len().min(16);
                    assert_eq!(
                        ta.as_bytes()[..n(&ta)],
                        tb.as_bytes()[..n(&tb)],
                        "{a} vs {b}"
                    );
                }
            }
        }
    }
}
