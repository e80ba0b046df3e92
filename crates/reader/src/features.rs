//! Header feature sections: host, CPU, command line, event descriptions,
//! groups, time range, compression, PMUs (type numbers, capabilities,
//! hybrid CPU lists).
//!
//! In file mode they follow the data section, one `{offset, size}` per set
//! feature bit; in pipe mode each arrives as a `HEADER_FEATURE` record. A
//! feature that cannot be decoded is reported and skipped, never fatal.

use crate::attr::Attr;
use crate::endian::{c_str, Cursor, Endian};

/// Feature numbers (`HEADER_*` in perf's `header.h`, simpleperf's from 128).
pub mod id {
    #![allow(missing_docs)]
    pub const TRACING_DATA: u32 = 1;
    pub const BUILD_ID: u32 = 2;
    pub const HOSTNAME: u32 = 3;
    pub const OSRELEASE: u32 = 4;
    pub const VERSION: u32 = 5;
    pub const ARCH: u32 = 6;
    pub const NRCPUS: u32 = 7;
    pub const CPUDESC: u32 = 8;
    pub const CPUID: u32 = 9;
    pub const TOTAL_MEM: u32 = 10;
    pub const CMDLINE: u32 = 11;
    pub const EVENT_DESC: u32 = 12;
    pub const CPU_TOPOLOGY: u32 = 13;
    pub const NUMA_TOPOLOGY: u32 = 14;
    pub const BRANCH_STACK: u32 = 15;
    pub const PMU_MAPPINGS: u32 = 16;
    pub const GROUP_DESC: u32 = 17;
    pub const AUXTRACE: u32 = 18;
    pub const STAT: u32 = 19;
    pub const CACHE: u32 = 20;
    pub const SAMPLE_TIME: u32 = 21;
    pub const MEM_TOPOLOGY: u32 = 22;
    pub const CLOCKID: u32 = 23;
    pub const DIR_FORMAT: u32 = 24;
    pub const BPF_PROG_INFO: u32 = 25;
    pub const BPF_BTF: u32 = 26;
    pub const COMPRESSED: u32 = 27;
    pub const CPU_PMU_CAPS: u32 = 28;
    pub const CLOCK_DATA: u32 = 29;
    pub const HYBRID_TOPOLOGY: u32 = 30;
    pub const PMU_CAPS: u32 = 31;
    pub const SIMPLEPERF_FILE: u32 = 128;
    pub const SIMPLEPERF_META_INFO: u32 = 129;
    pub const SIMPLEPERF_DEBUG_UNWIND: u32 = 130;
    pub const SIMPLEPERF_DEBUG_UNWIND_FILE: u32 = 131;
    pub const SIMPLEPERF_FILE2: u32 = 132;
}

/// The name of a feature number, as perf's `--header` lists them.
pub fn feature_name(f: u32) -> String {
    let n = match f {
        id::TRACING_DATA => "tracing_data",
        id::BUILD_ID => "build_id",
        id::HOSTNAME => "hostname",
        id::OSRELEASE => "osrelease",
        id::VERSION => "version",
        id::ARCH => "arch",
        id::NRCPUS => "nrcpus",
        id::CPUDESC => "cpudesc",
        id::CPUID => "cpuid",
        id::TOTAL_MEM => "total_mem",
        id::CMDLINE => "cmdline",
        id::EVENT_DESC => "event_desc",
        id::CPU_TOPOLOGY => "cpu_topology",
        id::NUMA_TOPOLOGY => "numa_topology",
        id::BRANCH_STACK => "branch_stack",
        id::PMU_MAPPINGS => "pmu_mappings",
        id::GROUP_DESC => "group_desc",
        id::AUXTRACE => "auxtrace",
        id::STAT => "stat",
        id::CACHE => "cache",
        id::SAMPLE_TIME => "sample_time",
        id::MEM_TOPOLOGY => "mem_topology",
        id::CLOCKID => "clockid",
        id::DIR_FORMAT => "dir_format",
        id::BPF_PROG_INFO => "bpf_prog_info",
        id::BPF_BTF => "bpf_btf",
        id::COMPRESSED => "compressed",
        id::CPU_PMU_CAPS => "cpu_pmu_caps",
        id::CLOCK_DATA => "clock_data",
        id::HYBRID_TOPOLOGY => "hybrid_topology",
        id::PMU_CAPS => "pmu_caps",
        id::SIMPLEPERF_FILE => "simpleperf_file",
        id::SIMPLEPERF_META_INFO => "simpleperf_meta_info",
        id::SIMPLEPERF_DEBUG_UNWIND => "simpleperf_debug_unwind",
        id::SIMPLEPERF_DEBUG_UNWIND_FILE => "simpleperf_debug_unwind_file",
        id::SIMPLEPERF_FILE2 => "simpleperf_file2",
        _ => return format!("feature_{f}"),
    };
    n.to_string()
}

/// Reads a `perf_header_string`: `u32 len; char str[len]` (NUL-padded).
fn header_string(c: &mut Cursor<'_>) -> Option<String> {
    let len = c.u32()? as usize;
    Some(c_str(c.bytes(len)?))
}

/// A string feature (hostname, osrelease, version, arch, cpudesc, cpuid).
pub fn parse_string(b: &[u8], endian: Endian) -> Option<String> {
    header_string(&mut Cursor::new(b, endian))
}

/// `NRCPUS`: (available, online).
pub fn parse_nrcpus(b: &[u8], endian: Endian) -> Option<(u32, u32)> {
    let mut c = Cursor::new(b, endian);
    Some((c.u32()?, c.u32()?))
}

/// `CMDLINE`: the argv of `perf record`.
pub fn parse_cmdline(b: &[u8], endian: Endian) -> Option<Vec<String>> {
    let mut c = Cursor::new(b, endian);
    let nr = c.u32()?;
    // Each string needs at least 4 bytes; a larger count is corrupt.
    if nr as usize > c.remaining() / 4 {
        return None;
    }
    (0..nr).map(|_| header_string(&mut c)).collect()
}

/// `SAMPLE_TIME`: first and last sample time.
pub fn parse_sample_time(b: &[u8], endian: Endian) -> Option<(u64, u64)> {
    let mut c = Cursor::new(b, endian);
    Some((c.u64()?, c.u64()?))
}

/// One `EVENT_DESC` entry: an attr with its name and ids.
#[derive(Clone, Debug)]
pub struct EventDesc {
    /// The attr as perf stored it again here.
    pub attr: Attr,
    /// The event name (`cycles`, `sched:sched_switch`, `{...}` members).
    pub name: String,
    /// Event instance ids.
    pub ids: Vec<u64>,
}

/// `EVENT_DESC`: `u32 nr; u32 attr_size; { attr; u32 nr_ids; string name;
/// u64 ids[nr_ids] }[nr]`.
pub fn parse_event_desc(b: &[u8], endian: Endian) -> Option<Vec<EventDesc>> {
    let mut c = Cursor::new(b, endian);
    let nr = c.u32()? as usize;
    let attr_size = c.u32()? as usize;
    if attr_size < crate::attr::ATTR_SIZE_VER0 || nr > c.remaining() / attr_size {
        return None;
    }
    let mut out = Vec::with_capacity(nr);
    for _ in 0..nr {
        let attr = Attr::parse(c.bytes(attr_size)?, endian)?;
        let nr_ids = c.u32()? as usize;
        let name = header_string(&mut c)?;
        if nr_ids > c.remaining() / 8 {
            return None;
        }
        let ids = (0..nr_ids).map(|_| c.u64()).collect::<Option<Vec<_>>>()?;
        out.push(EventDesc { attr, name, ids });
    }
    Some(out)
}

/// One `GROUP_DESC` entry.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct GroupDesc {
    /// The group's name (`{cycles,instructions}` or a user-given name).
    pub name: String,
    /// Index of the leader among the attrs.
    pub leader: u32,
    /// Number of members, leader included.
    pub nr_members: u32,
}

/// `GROUP_DESC`: `u32 nr; { string name; u32 leader_idx; u32 nr_members }[nr]`.
pub fn parse_group_desc(b: &[u8], endian: Endian) -> Option<Vec<GroupDesc>> {
    let mut c = Cursor::new(b, endian);
    let nr = c.u32()? as usize;
    if nr > c.remaining() / 12 {
        return None;
    }
    (0..nr)
        .map(|_| {
            Some(GroupDesc {
                name: header_string(&mut c)?,
                leader: c.u32()?,
                nr_members: c.u32()?,
            })
        })
        .collect()
}

/// One `PMU_MAPPINGS` entry: a PMU and the `perf_event_attr.type` its
/// events carry (`cpu` = 4 on x86, dynamic for uncore, Arm and hybrid
/// E-core PMUs).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct PmuMapping {
    /// The type number.
    pub type_: u32,
    /// The PMU's name (`cpu`, `cpu_atom`, `armv8_pmuv3_0`, ...).
    pub name: String,
}

/// `PMU_MAPPINGS`: `u32 nr; { u32 type; string name }[nr]`.
pub fn parse_pmu_mappings(b: &[u8], endian: Endian) -> Option<Vec<PmuMapping>> {
    let mut c = Cursor::new(b, endian);
    let nr = c.u32()? as usize;
    // Each entry needs at least its type and its string's length.
    if nr > c.remaining() / 8 {
        return None;
    }
    (0..nr)
        .map(|_| {
            Some(PmuMapping {
                type_: c.u32()?,
                name: header_string(&mut c)?,
            })
        })
        .collect()
}

/// A PMU's capabilities (`CPU_PMU_CAPS`, `PMU_CAPS`): the files of its
/// `caps/` folder in sysfs, e.g. `pmu_name=icelake`, `slots=0x00000008`.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct PmuCaps {
    /// The PMU's name; `cpu` for `CPU_PMU_CAPS`.
    pub pmu: String,
    /// (name, value) pairs, in the order perf wrote them.
    pub caps: Vec<(String, String)>,
}

/// `nr` pairs of strings (`{ string name; string value }` for caps).
fn string_pairs(c: &mut Cursor<'_>, nr: usize) -> Option<Vec<(String, String)>> {
    // Each pair needs at least its two strings' lengths.
    if nr > c.remaining() / 8 {
        return None;
    }
    (0..nr)
        .map(|_| Some((header_string(c)?, header_string(c)?)))
        .collect()
}

/// `CPU_PMU_CAPS`: `u32 nr_caps; { string name; string value }[nr_caps]`,
/// the capabilities of the `cpu` PMU.
pub fn parse_cpu_pmu_caps(b: &[u8], endian: Endian) -> Option<PmuCaps> {
    let mut c = Cursor::new(b, endian);
    let nr = c.u32()? as usize;
    Some(PmuCaps {
        pmu: "cpu".to_string(),
        caps: string_pairs(&mut c, nr)?,
    })
}

/// `PMU_CAPS`: `u32 nr_pmus; { u32 nr_caps; { string name; string value
/// }[nr_caps]; string pmu_name }[nr_pmus]`, every PMU with capabilities but
/// `cpu` (hybrid `cpu_core`/`cpu_atom`, Arm core PMUs, `intel_pt`, ...).
pub fn parse_pmu_caps(b: &[u8], endian: Endian) -> Option<Vec<PmuCaps>> {
    let mut c = Cursor::new(b, endian);
    let nr = c.u32()? as usize;
    // Each PMU needs at least its caps count and its name's length.
    if nr > c.remaining() / 8 {
        return None;
    }
    (0..nr)
        .map(|_| {
            let n = c.u32()? as usize;
            let caps = string_pairs(&mut c, n)?;
            Some(PmuCaps {
                pmu: header_string(&mut c)?,
                caps,
            })
        })
        .collect()
}

/// `HYBRID_TOPOLOGY`: `u32 nr; { string pmu_name; string cpus }[nr]`, the
/// CPU list (`0-15`) of each core PMU of a hybrid machine.
pub fn parse_hybrid_topology(b: &[u8], endian: Endian) -> Option<Vec<(String, String)>> {
    let mut c = Cursor::new(b, endian);
    let nr = c.u32()? as usize;
    string_pairs(&mut c, nr)
}

/// `COMPRESSED`: how data records were compressed.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct CompressionInfo {
    /// Format version.
    pub version: u32,
    /// 1 = zstd.
    pub type_: u32,
    /// Compression level.
    pub level: u32,
    /// Achieved ratio.
    pub ratio: u32,
    /// Ring-buffer size used.
    pub mmap_len: u32,
}

/// Decodes `COMPRESSED`.
pub fn parse_compressed(b: &[u8], endian: Endian) -> Option<CompressionInfo> {
    let mut c = Cursor::new(b, endian);
    Some(CompressionInfo {
        version: c.u32()?,
        type_: c.u32()?,
        level: c.u32()?,
        ratio: c.u32()?,
        mmap_len: c.u32()?,
    })
}

/// simpleperf's `META_INFO`: NUL-separated key/value pairs.
pub fn parse_simpleperf_meta_info(b: &[u8]) -> Vec<(String, String)> {
    let mut parts = b.split(|&c| c == 0);
    let mut out = Vec::new();
    while let (Some(k), Some(v)) = (parts.next(), parts.next()) {
        if k.is_empty() {
            break;
        }
        out.push((
            String::from_utf8_lossy(k).into_owned(),
            String::from_utf8_lossy(v).into_owned(),
        ));
    }
    out
}

/// One entry of the `BUILD_ID` feature.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct BuildIdEntry {
    /// Process id (-1 for the kernel).
    pub pid: i32,
    /// `PERF_RECORD_MISC_*` cpu mode (kernel, user, guest).
    pub cpumode: u16,
    /// The build id bytes.
    pub build_id: Vec<u8>,
    /// The file path or kernel name.
    pub filename: String,
}

/// `BUILD_ID`: a sequence of `{header; i32 pid; u8 build_id[24]; char
/// filename[]}` records.
pub fn parse_build_ids(b: &[u8], endian: Endian) -> Option<Vec<BuildIdEntry>> {
    let mut out = Vec::new();
    let mut rest = b;
    while rest.len() >= 8 {
        let misc = endian.u16_at(rest, 4)?;
        let size = endian.u16_at(rest, 6)? as usize;
        if size < 8 + 4 + 24 || size > rest.len() {
            return None;
        }
        let rec = &rest[..size];
        let pid = endian.u32_at(rec, 8)? as i32;
        let id = &rec[12..36];
        let n = if misc & crate::record_type::misc::BUILD_ID_SIZE != 0 {
            (id[20] as usize).min(20)
        } else {
            20
        };
        out.push(BuildIdEntry {
            pid,
            cpumode: misc & crate::record_type::misc::CPUMODE_MASK,
            build_id: id[..n].to_vec(),
            filename: c_str(&rec[36..]),
        });
        rest = &rest[size..];
    }
    Some(out)
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A `perf_header_string`: length (padded to 8 as perf pads it), then
    /// the NUL-padded text.
    fn string(s: &str) -> Vec<u8> {
        let len = (s.len() + 1).next_multiple_of(8);
        let mut b = (len as u32).to_le_bytes().to_vec();
        b.extend_from_slice(s.as_bytes());
        b.resize(4 + len, 0);
        b
    }

    fn u32s(v: u32) -> Vec<u8> {
        v.to_le_bytes().to_vec()
    }

    #[test]
    fn pmu_mappings() {
        #[rustfmt::skip]
        let b = [
            u32s(2),                          // nr
            u32s(4), string("cpu"),           // type 4: cpu
            u32s(10), string("cpu_atom"),     // type 10: cpu_atom
        ]
        .concat();
        let m = parse_pmu_mappings(&b, Endian::Little).expect("valid");
        assert_eq!(
            m,
            [
                PmuMapping {
                    type_: 4,
                    name: "cpu".into()
                },
                PmuMapping {
                    type_: 10,
                    name: "cpu_atom".into()
                }
            ]
        );
        // Big-endian: the same entry with every number byte-swapped.
        let mut be = 1u32.to_be_bytes().to_vec();
        be.extend_from_slice(&7u32.to_be_bytes());
        be.extend_from_slice(&4u32.to_be_bytes());
        be.extend_from_slice(b"msr\0");
        let m = parse_pmu_mappings(&be, Endian::Big).expect("valid");
        assert_eq!((m[0].type_, m[0].name.as_str()), (7, "msr"));
    }

    #[test]
    fn cpu_pmu_caps_are_the_cpu_pmus() {
        #[rustfmt::skip]
        let b = [
            u32s(2),                                   // nr_caps
            string("branches"), string("32"),          // name, value
            string("pmu_name"), string("skylake"),
        ]
        .concat();
        let c = parse_cpu_pmu_caps(&b, Endian::Little).expect("valid");
        assert_eq!(c.pmu, "cpu");
        assert_eq!(
            c.caps,
            [
                ("branches".into(), "32".into()),
                ("pmu_name".into(), "skylake".into())
            ]
        );
        // No caps at all (perf writes this when the PMU has none).
        let none = parse_cpu_pmu_caps(&u32s(0), Endian::Little).expect("valid");
        assert!(none.caps.is_empty());
    }

    #[test]
    fn pmu_caps_name_follows_the_caps() {
        #[rustfmt::skip]
        let b = [
            u32s(2),                                           // nr_pmus
            u32s(1),                                           // pmu 0: nr_caps
            string("pmu_name"), string("alderlake_hybrid"),    //   cap
            string("cpu_core"),                                //   pmu name
            u32s(0),                                           // pmu 1: no caps
            string("cpu_atom"),                                //   pmu name
        ]
        .concat();
        let p = parse_pmu_caps(&b, Endian::Little).expect("valid");
        assert_eq!(p.len(), 2);
        assert_eq!(p[0].pmu, "cpu_core");
        assert_eq!(p[0].caps, [("pmu_name".into(), "alderlake_hybrid".into())]);
        assert_eq!(p[1].pmu, "cpu_atom");
        assert!(p[1].caps.is_empty());
    }

    #[test]
    fn hybrid_topology() {
        #[rustfmt::skip]
        let b = [
            u32s(2),                               // nr
            string("cpu_core"), string("0-3"),     // pmu, cpus
            string("cpu_atom"), string("4-11"),
        ]
        .concat();
        let h = parse_hybrid_topology(&b, Endian::Little).expect("valid");
        assert_eq!(
            h,
            [
                ("cpu_core".into(), "0-3".into()),
                ("cpu_atom".into(), "4-11".into())
            ]
        );
    }

    /// Every cut of a valid section, and counts far beyond the bytes there
    /// are, give `None`: no panic, no allocation sized by the count.
    #[test]
    fn truncated_or_oversized_sections_are_rejected() {
        let mappings = [u32s(1), u32s(4), string("cpu")].concat();
        let cpu_caps = [u32s(1), string("branches"), string("32")].concat();
        let caps = [
            u32s(1),
            u32s(1),
            string("slots"),
            string("8"),
            string("armv8"),
        ]
        .concat();
        let hybrid = [u32s(1), string("cpu_core"), string("0-3")].concat();
        type Parse = fn(&[u8]) -> bool;
        let parsers: [(&[u8], Parse); 4] = [
            (&mappings, |b| {
                parse_pmu_mappings(b, Endian::Little).is_some()
            }),
            (&cpu_caps, |b| {
                parse_cpu_pmu_caps(b, Endian::Little).is_some()
            }),
            (&caps, |b| parse_pmu_caps(b, Endian::Little).is_some()),
            (&hybrid, |b| {
                parse_hybrid_topology(b, Endian::Little).is_some()
            }),
        ];
        for (bytes, parse) in parsers {
            assert!(parse(bytes));
            for n in 0..bytes.len() {
                assert!(!parse(&bytes[..n]), "cut at {n} of {bytes:?}");
            }
            // A count of 2^32 - 1 entries in a few bytes.
            let mut huge = bytes.to_vec();
            huge[..4].copy_from_slice(&u32::MAX.to_le_bytes());
            assert!(!parse(&huge));
        }
        // A string length past the end of the section.
        let long = [u32s(1), u32s(4), u32s(1 << 30), b"cpu\0".to_vec()].concat();
        assert!(parse_pmu_mappings(&long, Endian::Little).is_none());
        // A PMU whose caps count is far beyond its bytes.
        let many = [u32s(1), u32s(u32::MAX), string("x")].concat();
        assert!(parse_pmu_caps(&many, Endian::Little).is_none());
    }
}
