//! Header feature sections, laid out as perf's `tools/perf/util/header.c`
//! writes them (`write_*` there; read back by the `process_*` functions).

/// Feature numbers (`HEADER_*` in perf's `header.h`).
pub mod id {
    /// `HEADER_BUILD_ID`.
    pub const BUILD_ID: u32 = 2;
    /// `HEADER_HOSTNAME`.
    pub const HOSTNAME: u32 = 3;
    /// `HEADER_OSRELEASE`.
    pub const OSRELEASE: u32 = 4;
    /// `HEADER_VERSION`.
    pub const VERSION: u32 = 5;
    /// `HEADER_ARCH`.
    pub const ARCH: u32 = 6;
    /// `HEADER_NRCPUS`.
    pub const NRCPUS: u32 = 7;
    /// `HEADER_CPUDESC`.
    pub const CPUDESC: u32 = 8;
    /// `HEADER_CPUID`.
    pub const CPUID: u32 = 9;
    /// `HEADER_TOTAL_MEM`.
    pub const TOTAL_MEM: u32 = 10;
    /// `HEADER_CMDLINE`.
    pub const CMDLINE: u32 = 11;
    /// `HEADER_EVENT_DESC`.
    pub const EVENT_DESC: u32 = 12;
    /// `HEADER_PMU_MAPPINGS`.
    pub const PMU_MAPPINGS: u32 = 16;
    /// `HEADER_GROUP_DESC`.
    pub const GROUP_DESC: u32 = 17;
    /// `HEADER_SAMPLE_TIME`.
    pub const SAMPLE_TIME: u32 = 21;
    /// `HEADER_CPU_PMU_CAPS`.
    pub const CPU_PMU_CAPS: u32 = 28;
    /// `HEADER_HYBRID_TOPOLOGY`.
    pub const HYBRID_TOPOLOGY: u32 = 30;
    /// `HEADER_PMU_CAPS`.
    pub const PMU_CAPS: u32 = 31;
}

/// perf pads every header string, NUL included, to this many bytes
/// (`NAME_ALIGN`).
const NAME_ALIGN: usize = 64;

/// `PERF_RECORD_MISC_BUILD_ID_SIZE`: the build id's length is in the
/// byte after its 20 bytes.
const MISC_BUILD_ID_SIZE: u16 = 1 << 15;

/// Appends a `perf_header_string`: `u32 len; char str[len]`, `len` the
/// string with its NUL rounded up to 64 (`do_write_string`).
pub fn put_string(out: &mut Vec<u8>, s: &str) {
    let len = (s.len() + 1).div_ceil(NAME_ALIGN) * NAME_ALIGN;
    out.extend_from_slice(&(len as u32).to_le_bytes());
    out.extend_from_slice(s.as_bytes());
    out.resize(out.len() + len - s.len(), 0);
}

fn put_u32(out: &mut Vec<u8>, v: u32) {
    out.extend_from_slice(&v.to_le_bytes());
}

/// A string feature (hostname, osrelease, version, arch, cpudesc, cpuid).
pub fn string(s: &str) -> Vec<u8> {
    let mut b = Vec::new();
    put_string(&mut b, s);
    b
}

/// `NRCPUS`: `u32 nr_cpus_available; u32 nr_cpus_online`.
pub fn nrcpus(available: u32, online: u32) -> Vec<u8> {
    let mut b = Vec::new();
    put_u32(&mut b, available);
    put_u32(&mut b, online);
    b
}

/// `TOTAL_MEM`: kB as a u64.
pub fn total_mem(kb: u64) -> Vec<u8> {
    kb.to_le_bytes().to_vec()
}

/// `CMDLINE`: `u32 nr; string argv[nr]`; perf's own path is `argv[0]`.
pub fn cmdline(argv: &[String]) -> Vec<u8> {
    let mut b = Vec::new();
    put_u32(&mut b, argv.len() as u32);
    for a in argv {
        put_string(&mut b, a);
    }
    b
}

/// One `EVENT_DESC` entry: the attr's bytes, its name and its ids.
pub struct EventDescEntry<'a> {
    /// The attr, as written in the attr section.
    pub attr: &'a [u8],
    /// The name perf gives the event (`evsel__name`).
    pub name: &'a str,
    /// Its instance ids.
    pub ids: &'a [u64],
}

/// `EVENT_DESC`: `u32 nr; u32 attr_size; { attr; u32 nr_ids; string name;
/// u64 ids[nr_ids] }[nr]`.
pub fn event_desc(attr_size: u32, events: &[EventDescEntry<'_>]) -> Vec<u8> {
    let mut b = Vec::new();
    put_u32(&mut b, events.len() as u32);
    put_u32(&mut b, attr_size);
    for e in events {
        b.extend_from_slice(e.attr);
        put_u32(&mut b, e.ids.len() as u32);
        put_string(&mut b, e.name);
        for id in e.ids {
            b.extend_from_slice(&id.to_le_bytes());
        }
    }
    b
}

/// One `GROUP_DESC` entry.
pub struct GroupDescEntry<'a> {
    /// The group's name; perf writes `{anon_group}` for `{a,b}:S`.
    pub name: &'a str,
    /// Index of the leader among the events.
    pub leader: u32,
    /// Members, leader included.
    pub nr_members: u32,
}

/// `GROUP_DESC`: `u32 nr; { string name; u32 leader_idx; u32 nr_members }[nr]`.
pub fn group_desc(groups: &[GroupDescEntry<'_>]) -> Vec<u8> {
    let mut b = Vec::new();
    put_u32(&mut b, groups.len() as u32);
    for g in groups {
        put_string(&mut b, g.name);
        put_u32(&mut b, g.leader);
        put_u32(&mut b, g.nr_members);
    }
    b
}

/// `PMU_MAPPINGS`: `u32 nr; { u32 type; string name }[nr]`.
pub fn pmu_mappings(pmus: &[(u32, String)]) -> Vec<u8> {
    let mut b = Vec::new();
    put_u32(&mut b, pmus.len() as u32);
    for (type_, name) in pmus {
        put_u32(&mut b, *type_);
        put_string(&mut b, name);
    }
    b
}

fn put_caps(b: &mut Vec<u8>, caps: &[(String, String)]) {
    put_u32(b, caps.len() as u32);
    for (name, value) in caps {
        put_string(b, name);
        put_string(b, value);
    }
}

/// `CPU_PMU_CAPS` (the `cpu` PMU): `u32 nr_caps; { string name; string
/// value }[nr_caps]`.
pub fn cpu_pmu_caps(caps: &[(String, String)]) -> Vec<u8> {
    let mut b = Vec::new();
    put_caps(&mut b, caps);
    b
}

/// `PMU_CAPS` (every other PMU with caps): `u32 nr_pmus; { u32 nr_caps;
/// { string name; string value }[nr_caps]; string pmu_name }[nr_pmus]`.
pub fn pmu_caps(pmus: &[(String, Vec<(String, String)>)]) -> Vec<u8> {
    let mut b = Vec::new();
    put_u32(&mut b, pmus.len() as u32);
    for (pmu, caps) in pmus {
        put_caps(&mut b, caps);
        put_string(&mut b, pmu);
    }
    b
}

/// `HYBRID_TOPOLOGY`: `u32 nr; { string pmu_name; string cpus }[nr]`.
pub fn hybrid_topology(nodes: &[(String, String)]) -> Vec<u8> {
    let mut b = Vec::new();
    put_u32(&mut b, nodes.len() as u32);
    for (pmu, cpus) in nodes {
        put_string(&mut b, pmu);
        put_string(&mut b, cpus);
    }
    b
}

/// `SAMPLE_TIME`: first and last sample time.
pub fn sample_time(first: u64, last: u64) -> Vec<u8> {
    let mut b = first.to_le_bytes().to_vec();
    b.extend_from_slice(&last.to_le_bytes());
    b
}

/// One DSO of the `BUILD_ID` feature.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct BuildId {
    /// The machine's pid: -1 (`HOST_KERNEL_ID`) for the host, as perf
    /// writes for user and kernel DSOs alike.
    pub pid: i32,
    /// `PERF_RECORD_MISC_USER` (2) or `PERF_RECORD_MISC_KERNEL` (1).
    pub cpumode: u16,
    /// The build id (at most 20 bytes).
    pub build_id: Vec<u8>,
    /// The DSO's path as the MMAP named it.
    pub filename: String,
}

/// `BUILD_ID`: one `perf_record_header_build_id` per DSO: `{ header; i32
/// pid; u8 build_id[20]; u8 size; u8 pad[3]; char filename[] }`, the name
/// NUL-padded to 64 (`write_buildid`).
pub fn build_ids(entries: &[BuildId]) -> Vec<u8> {
    let mut b = Vec::new();
    for e in entries {
        let name_len = (e.filename.len() + 1).div_ceil(NAME_ALIGN) * NAME_ALIGN;
        let size = 8 + 4 + 24 + name_len;
        let n = e.build_id.len().min(20);
        // A record type of 0: perf reads these by size and ignores the type.
        put_u32(&mut b, 0);
        b.extend_from_slice(&(e.cpumode | MISC_BUILD_ID_SIZE).to_le_bytes());
        b.extend_from_slice(&(size as u16).to_le_bytes());
        b.extend_from_slice(&e.pid.to_le_bytes());
        let mut id = [0u8; 24];
        id[..n].copy_from_slice(&e.build_id[..n]);
        id[20] = n as u8;
        b.extend_from_slice(&id);
        b.extend_from_slice(e.filename.as_bytes());
        b.resize(b.len() + name_len - e.filename.len(), 0);
    }
    b
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn strings_are_padded_to_64_with_their_nul() {
        let b = string("x86_64");
        assert_eq!(b.len(), 4 + 64);
        assert_eq!(u32::from_le_bytes(b[..4].try_into().expect("4")), 64);
        let long = "a".repeat(64);
        assert_eq!(string(&long).len(), 4 + 128);
    }

    #[test]
    fn pmu_caps_put_the_name_after_the_caps() {
        let b = pmu_caps(&[(
            "armv8_pmuv3_0".into(),
            vec![("slots".into(), "0x00000008".into())],
        )]);
        // nr_pmus, nr_caps, name, value, pmu name.
        assert_eq!(b.len(), 4 + 4 + 68 + 68 + 68);
        assert_eq!(&b[4..8], &1u32.to_le_bytes());
        assert_eq!(&b[12..17], b"slots");
        assert_eq!(&b[4 + 4 + 68 + 68 + 4..][..13], b"armv8_pmuv3_0");
    }
}
