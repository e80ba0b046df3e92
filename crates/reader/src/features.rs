//! Header feature sections: host, CPU, command line, event descriptions,
//! groups, time range, compression.
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
