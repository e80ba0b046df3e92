//! `PERF_SAMPLE_DATA_SRC` decoded into named parts, one row per distinct
//! value (samples keep the raw value and join on it).
//!
//! The word is the kernel's `union perf_mem_data_src` bitfield; the names
//! are perf's (`perf mem` / `perf script -F data_src`).

use crate::convert::schema::DATA_SRC;
use crate::{CaptureWriter, Cell, Error};

/// A field of `count` bits at `shift`.
fn bits(v: u64, shift: u32, count: u32) -> u64 {
    (v >> shift) & ((1 << count) - 1)
}

/// The names of the set bits of `v`, joined with " or " as perf does.
fn names(v: u64, table: &[&str]) -> Option<String> {
    let set: Vec<&str> = table
        .iter()
        .enumerate()
        .filter(|&(i, _)| v & (1 << i) != 0)
        .map(|(_, n)| *n)
        .collect();
    (!set.is_empty()).then(|| set.join(" or "))
}

const OP: &[&str] = &["N/A", "LOAD", "STORE", "PFETCH", "EXEC"];
/// `mem_lvl` without its HIT and MISS bits (1 and 2).
const LVL: &[&str] = &[
    "N/A",
    "",
    "",
    "L1",
    "LFB/MAB",
    "L2",
    "L3",
    "Local RAM",
    "Remote RAM (1 hop)",
    "Remote RAM (2 hops)",
    "Remote Cache (1 hop)",
    "Remote Cache (2 hops)",
    "I/O",
    "Uncached",
];
const SNOOP: &[&str] = &["N/A", "None", "Hit", "Miss", "HitM"];
const SNOOPX: &[&str] = &["Fwd", "Peer"];
/// `mem_dtlb` without its HIT and MISS bits.
const TLB: &[&str] = &["N/A", "", "", "L1", "L2", "Walker", "Fault"];
const BLK: &[&str] = &["N/A", "Data", "Addr"];

/// The `mem_lvl_num` name.
fn level_num(n: u64) -> Option<String> {
    Some(match n {
        0 => return None,
        1..=4 => format!("L{n}"),
        5 => "L2 MHB".into(),
        6 => "Memory-side Cache".into(),
        8 => "Uncached".into(),
        9 => "CXL".into(),
        0xa => "I/O".into(),
        0xb => "Any cache".into(),
        0xc => "LFB/MAB".into(),
        0xd => "RAM".into(),
        0xe => "PMEM".into(),
        0xf => "N/A".into(),
        n => format!("L{n}"),
    })
}

/// Hit (`Some(true)`), miss (`Some(false)`) or neither, from a field whose
/// bit 1 is HIT and bit 2 MISS.
fn hit(field: u64) -> Option<bool> {
    match (field & 2 != 0, field & 4 != 0) {
        (true, _) => Some(true),
        (false, true) => Some(false),
        _ => None,
    }
}

/// Writes one decoded row per value.
pub(crate) fn write(w: &CaptureWriter, values: impl Iterator<Item = u64>) -> Result<(), Error> {
    let mut t = w.table("data_src", DATA_SRC)?;
    let b = |v: Option<bool>| v.map_or(Cell::Null, |x| Cell::U(u64::from(x)));
    for v in values {
        let op = names(bits(v, 0, 5), OP);
        let lvl = bits(v, 5, 14);
        let level = names(lvl & !6, LVL);
        let snoop = {
            let mut s: Vec<String> = names(bits(v, 19, 5), SNOOP).into_iter().collect();
            s.extend(names(bits(v, 38, 2), SNOOPX));
            (!s.is_empty()).then(|| s.join(" or "))
        };
        let dtlb = bits(v, 26, 7);
        let lock = bits(v, 24, 2);
        let locked = if lock & 1 != 0 {
            None
        } else {
            Some(lock & 2 != 0)
        };
        let hops = bits(v, 43, 3);
        t.push(&[
            Cell::U(v),
            Cell::str(op.as_deref()),
            Cell::str(level.as_deref()),
            Cell::str(level_num(bits(v, 33, 4)).as_deref()),
            b(hit(lvl)),
            Cell::U(bits(v, 37, 1)),
            Cell::str(snoop.as_deref()),
            Cell::str(names(dtlb & !6, TLB).as_deref()),
            b(hit(dtlb)),
            b(locked),
            Cell::str(names(bits(v, 40, 3), BLK).as_deref()),
            if hops == 0 {
                Cell::Null
            } else {
                Cell::U(hops - 1)
            },
        ])?;
    }
    t.finish()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn fields_of_a_real_load() {
        // From a real capture: perf script shows
        // |OP LOAD|LVL LFB/MAB or LFB/MAB hit|SNP None|TLB L1 or L2 hit|LCK No|BLK  N/A
        let v = 0x11868100242u64;
        assert_eq!(names(bits(v, 0, 5), OP).as_deref(), Some("LOAD"));
        assert_eq!(names(bits(v, 5, 14) & !6, LVL).as_deref(), Some("LFB/MAB"));
        assert_eq!(level_num(bits(v, 33, 4)).as_deref(), Some("LFB/MAB"));
        assert_eq!(hit(bits(v, 5, 14)), Some(true));
        assert_eq!(names(bits(v, 19, 5), SNOOP).as_deref(), Some("None"));
        assert_eq!(names(bits(v, 26, 7) & !6, TLB).as_deref(), Some("L1 or L2"));
        assert_eq!(hit(bits(v, 26, 7)), Some(true));
        assert_eq!(bits(v, 24, 2), 0, "lock: neither N/A nor locked = No");
        assert_eq!(names(bits(v, 40, 3), BLK).as_deref(), Some("N/A"));
    }
}
