//! A location as a report counts it, packed into 24 bytes: the numbering
//! thread hashes, compares and stores one per callchain frame not shared
//! with its thread's previous stack (millions on a system-wide capture),
//! and as a `Location` beside an `Option<u64>` and a flag it took 48.

use perfq_stream::{LocationKey, Role};
use perfq_symbolize::{DsoId, FrameLookup, Location};

/// A location as a report counts it: where it is, the address it shows
/// while unresolved (callchain entries), and whether its inlining levels
/// count (DWARF-unwound user frames).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub(super) struct LocKey {
    /// The kind of location ([`KIND`]), the shown address's and the
    /// expansion's flags, and the DSO or module id (the low 32 bits; 0
    /// without one).
    head: u64,
    /// The DSO's file offset, or the address.
    at: u64,
    /// The address shown, 0 without one: every field is the same for
    /// equal keys.
    show: u64,
}

/// Where a key's kind of location starts in its head.
const KIND: u32 = 32;
const DSO: u64 = 0;
const KERNEL: u64 = 1;
const MODULE: u64 = 2;
const UNMAPPED: u64 = 3;
/// Flags in the head.
const SHOWN: u64 = 1 << 34;
const EXPAND: u64 = 1 << 35;

impl LocKey {
    pub(super) fn new(location: Location, show: Option<u64>, expand: bool) -> Self {
        let (kind, id, at) = match location {
            Location::Dso { dso, offset } => (DSO, dso.0, offset),
            Location::Kernel { addr, module: None } => (KERNEL, 0, addr),
            Location::Kernel {
                addr,
                module: Some(m),
            } => (MODULE, m.0, addr),
            Location::Unmapped { addr } => (UNMAPPED, 0, addr),
        };
        let flags = if show.is_some() { SHOWN } else { 0 } | if expand { EXPAND } else { 0 };
        LocKey {
            head: kind << KIND | flags | u64::from(id),
            at,
            show: show.unwrap_or(0),
        }
    }

    /// Where it is.
    pub(super) fn location(&self) -> Location {
        let id = DsoId(self.head as u32);
        match self.head >> KIND & 3 {
            DSO => Location::Dso {
                dso: id,
                offset: self.at,
            },
            KERNEL => Location::Kernel {
                addr: self.at,
                module: None,
            },
            MODULE => Location::Kernel {
                addr: self.at,
                module: Some(id),
            },
            _ => Location::Unmapped { addr: self.at },
        }
    }

    /// The address it shows while unresolved.
    pub(super) fn show(&self) -> Option<u64> {
        (self.head & SHOWN != 0).then_some(self.show)
    }

    /// Whether its inlining levels count.
    pub(super) fn expand(&self) -> bool {
        self.head & EXPAND != 0
    }
}

impl LocationKey for LocKey {
    fn of(location: Location, frame: &FrameLookup, role: Role) -> Self {
        match role {
            Role::Stack { expand } => LocKey::new(location, Some(frame.addr), expand),
            Role::Own | Role::Branch => LocKey::new(location, None, false),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Every location, shown address and flag comes back as it went in,
    /// and keys are equal exactly when what they pack is.
    #[test]
    fn keys_give_back_what_they_pack() {
        let locations = [
            Location::Dso {
                dso: DsoId(0),
                offset: 0x1234,
            },
            Location::Dso {
                dso: DsoId(u32::MAX),
                offset: u64::MAX,
            },
            Location::Kernel {
                addr: 0xffff_ffff_8100_0000,
                module: None,
            },
            Location::Kernel {
                addr: 0xffff_ffff_8100_0000,
                module: Some(DsoId(0)),
            },
            Location::Kernel {
                addr: 0xffff_ffff_c000_0000,
                module: Some(DsoId(7)),
            },
            Location::Unmapped { addr: 0 },
            Location::Unmapped { addr: 0x1234 },
        ];
        let mut all = Vec::new();
        for &l in &locations {
            for show in [None, Some(0), Some(0x1235)] {
                for expand in [false, true] {
                    let k = LocKey::new(l, show, expand);
                    assert_eq!((k.location(), k.show(), k.expand()), (l, show, expand));
                    all.push(((l, show, expand), k));
                }
            }
        }
        for (a, ka) in &all {
            for (b, kb) in &all {
                assert_eq!(a == b, ka == kb, "{a:?} {b:?}");
            }
        }
        assert_eq!(std::mem::size_of::<LocKey>(), 24);
    }
}
