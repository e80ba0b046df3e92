//! Row keys — (DSO, symbol) as a report's rows are keyed — numbered
//! densely as they are met.
//!
//! A system-wide capture has millions of locations and millions of keys
//! (every unresolved address is one). Each key is kept as two numbers:
//! the DSO's and the symbol's names are numbered once each, and a name
//! met again in the same shared string (the symbolizer hands out one per
//! function) is found by the string's address rather than by hashing and
//! comparing its text. Looking a key up then reads 16 bytes, not strings
//! scattered over the heap.

use std::sync::Arc;

use perfq_ids::IdTable;
use rustc_hash::FxHashMap;

use crate::shown::Sym;
use crate::Symbol;

/// A key's symbol as looked up: names shared with the resolutions.
#[derive(Clone, Copy, Debug)]
pub(super) enum KeySym<'a> {
    /// A resolved name.
    Name(&'a Arc<str>),
    /// A function inlined at an unwound frame (`name (inlined)`).
    Inlined(&'a Arc<str>),
    /// An unresolved address, as shown.
    Address(u64),
    /// No symbol (rows per DSO).
    Empty,
}

/// A key as kept: name ids ([`Names`]) and the address.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
enum Key {
    Name { dso: u32, name: u32 },
    Inlined { dso: u32, name: u32 },
    Address { dso: u32, addr: u64 },
    Empty { dso: u32 },
}

/// Texts numbered densely, each kept once.
#[derive(Default)]
struct Names {
    ids: IdTable,
    texts: Vec<Arc<str>>,
    /// By the address of a shared string met before (held here, so that
    /// the address cannot be reused by another string): its text's id.
    by_address: FxHashMap<usize, (Arc<str>, u32)>,
}

impl Names {
    /// The id of `s`, a string the symbolizer shares among the locations
    /// of one function or DSO: found again by its address.
    fn id_of_shared(&mut self, s: &Arc<str>) -> u32 {
        let address = address(s);
        if let Some(&(_, id)) = self.by_address.get(&address) {
            return id;
        }
        let id = self.id_of_text(s);
        self.by_address.insert(address, (s.clone(), id));
        id
    }

    /// The id of `s`'s text (a string made for this lookup, which holding
    /// by its address would only keep alive).
    fn id_of_text(&mut self, s: &Arc<str>) -> u32 {
        self.ids.find_or_add(
            IdTable::hash(&**s),
            &mut self.texts,
            |texts, id| *texts[id as usize] == **s,
            |texts| {
                texts.push(s.clone());
                (texts.len() - 1) as u32
            },
        )
    }

    fn done_numbering(&mut self) {
        self.ids = IdTable::new();
        self.by_address = FxHashMap::default();
    }
}

/// Where a shared string's text is stored.
fn address(s: &Arc<str>) -> usize {
    Arc::as_ptr(s) as *const u8 as usize
}

/// Row keys numbered densely as they are met.
pub(super) struct RowKeys {
    /// Key ids, hashed by their key (which is only in `keys`).
    ids: IdTable,
    /// By id.
    keys: Vec<Key>,
    dsos: Names,
    names: Names,
    /// Name keys by the addresses of their DSO's and symbol's shared
    /// strings (held by `dsos` and `names`): most locations resolve to a
    /// function met before, found so in one probe of a table of the
    /// functions met rather than three of the names and keys.
    by_addresses: FxHashMap<(usize, usize), u32>,
    /// The DSO of keys without one (rows per symbol only).
    no_dso: Arc<str>,
}

impl Default for RowKeys {
    fn default() -> Self {
        Self::new()
    }
}

impl std::fmt::Debug for RowKeys {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("RowKeys")
            .field("len", &self.keys.len())
            .finish_non_exhaustive()
    }
}

impl RowKeys {
    pub(super) fn new() -> Self {
        RowKeys {
            ids: IdTable::new(),
            keys: Vec::new(),
            dsos: Names::default(),
            names: Names::default(),
            by_addresses: FxHashMap::default(),
            no_dso: Arc::from(""),
        }
    }

    /// The id of the key (`dso`, `sym`); `None` for the DSO when rows are
    /// not per DSO. A key met for the first time gets the next id,
    /// [`RowKeys::len`] before the call.
    pub(super) fn id(&mut self, dso: Option<&Arc<str>>, sym: KeySym<'_>) -> u32 {
        let KeySym::Name(name) = sym else {
            return self.id_of(dso, sym);
        };
        let at = (address(dso.unwrap_or(&self.no_dso)), address(name));
        if let Some(&id) = self.by_addresses.get(&at) {
            return id;
        }
        let id = self.id_of(dso, sym);
        self.by_addresses.insert(at, id);
        id
    }

    /// [`RowKeys::id`], found by the names' ids; the names are held from
    /// then on.
    fn id_of(&mut self, dso: Option<&Arc<str>>, sym: KeySym<'_>) -> u32 {
        let dso = self.dsos.id_of_shared(dso.unwrap_or(&self.no_dso));
        let key = match sym {
            KeySym::Name(s) => Key::Name {
                dso,
                name: self.names.id_of_shared(s),
            },
            // Made per inlining level from DWARF's names: never shared.
            KeySym::Inlined(s) => Key::Inlined {
                dso,
                name: self.names.id_of_text(s),
            },
            KeySym::Address(addr) => Key::Address { dso, addr },
            KeySym::Empty => Key::Empty { dso },
        };
        self.ids.find_or_add(
            IdTable::hash(key),
            &mut self.keys,
            |keys, id| keys[id as usize] == key,
            |keys| {
                keys.push(key);
                (keys.len() - 1) as u32
            },
        )
    }

    /// Keys numbered so far.
    pub(super) fn len(&self) -> usize {
        self.keys.len()
    }

    /// Key `id`'s DSO (empty when rows are not per DSO).
    pub(super) fn dso(&self, id: usize) -> &Arc<str> {
        let (Key::Name { dso, .. }
        | Key::Inlined { dso, .. }
        | Key::Address { dso, .. }
        | Key::Empty { dso }) = self.keys[id];
        &self.dsos.texts[dso as usize]
    }

    /// Key `id`'s symbol, borrowed.
    pub(super) fn sym(&self, id: usize) -> Sym<'_> {
        match self.keys[id] {
            Key::Name { name, .. } => Sym::Name(&self.names.texts[name as usize]),
            Key::Inlined { name, .. } => Sym::Inlined(&self.names.texts[name as usize]),
            Key::Address { addr, .. } => Sym::Address(addr),
            Key::Empty { .. } => Sym::Empty,
        }
    }

    /// Key `id`'s symbol, for a row.
    pub(super) fn symbol(&self, id: usize) -> Symbol {
        match self.keys[id] {
            Key::Name { name, .. } => Symbol::Name(self.names.texts[name as usize].clone()),
            Key::Inlined { name, .. } => Symbol::Inlined(self.names.texts[name as usize].clone()),
            Key::Address { addr, .. } => Symbol::Address(addr),
            Key::Empty { .. } => Symbol::Empty,
        }
    }

    /// Drops what only numbering needs (the tables, and the strings held
    /// for their addresses).
    pub(super) fn done_numbering(&mut self) {
        self.ids = IdTable::new();
        self.by_addresses = FxHashMap::default();
        self.dsos.done_numbering();
        self.names.done_numbering();
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn equal_texts_in_other_strings_are_one_key() {
        let mut k = RowKeys::new();
        let (libc, libc2) = (Arc::<str>::from("libc.so.6"), Arc::<str>::from("libc.so.6"));
        let (f, f2, g) = (
            Arc::<str>::from("malloc"),
            Arc::<str>::from("malloc"),
            Arc::<str>::from("free"),
        );
        let a = k.id(Some(&libc), KeySym::Name(&f));
        assert_eq!(k.id(Some(&libc), KeySym::Name(&f)), a, "found by address");
        assert_eq!(k.id(Some(&libc2), KeySym::Name(&f2)), a);
        assert_eq!(k.id(Some(&libc), KeySym::Name(&f2)), a);
        let b = k.id(Some(&libc), KeySym::Name(&g));
        let c = k.id(Some(&libc), KeySym::Inlined(&f));
        let d = k.id(None, KeySym::Name(&f));
        let e = k.id(Some(&libc), KeySym::Address(0x10));
        assert_eq!(k.id(Some(&libc2), KeySym::Address(0x10)), e);
        let z = k.id(Some(&libc), KeySym::Empty);
        let ids = [a, b, c, d, e, z];
        assert_eq!(ids, [0, 1, 2, 3, 4, 5]);
        assert_eq!(k.len(), 6);
        assert_eq!(&**k.dso(3), "");
        assert_eq!(&**k.dso(4), "libc.so.6");
        assert_eq!(k.sym(2), Sym::Inlined("malloc"));
        assert_eq!(k.symbol(4), Symbol::Address(0x10));
        k.done_numbering();
        assert_eq!(k.sym(0), Sym::Name("malloc"));
        assert_eq!(k.symbol(1), Symbol::Name(Arc::from("free")));
    }
}
