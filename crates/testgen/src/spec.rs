//! What a capture holds before its first record: the recording machine,
//! its PMUs, and the events with their groups.

use crate::attr::{Attr, AttrSize};
use crate::features::BuildId;

/// One event (`perf_evsel`): its attr, the name perf writes in
/// `EVENT_DESC`, and the cpus it was opened on (one instance id each).
#[derive(Clone, Debug)]
pub struct EventSpec {
    /// The name, as perf writes it (`slots`, `cpu_core/topdown-retiring/`,
    /// `r1000001a0`).
    pub name: String,
    /// The attr.
    pub attr: Attr,
    /// The cpus it counts on; each gets its own instance id.
    pub cpus: Vec<u32>,
}

/// A group: `len` consecutive events starting at its leader, as perf
/// stores groups (`GROUP_DESC` names the leader's index and the count).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct GroupSpec {
    /// The group's name; `None` writes `{anon_group}`, as perf does for
    /// `{a,b}:S`.
    pub name: Option<String>,
    /// Index of the leader in [`CaptureSpec::events`].
    pub leader: usize,
    /// Members, leader included.
    pub len: usize,
}

impl GroupSpec {
    /// The member indices, leader first.
    pub fn members(&self) -> std::ops::Range<usize> {
        self.leader..self.leader + self.len
    }
}

/// Everything a capture says besides its records.
#[derive(Clone, Debug)]
pub struct CaptureSpec {
    /// `HOSTNAME`.
    pub hostname: String,
    /// `OSRELEASE` (`uname -r`).
    pub os_release: String,
    /// `VERSION`: the perf that recorded.
    pub perf_version: String,
    /// `ARCH` (`x86_64`, `aarch64`).
    pub arch: String,
    /// `CPUDESC`; `None` leaves it out, as perf does on arm64, whose
    /// `/proc/cpuinfo` has no model name.
    pub cpu_desc: Option<String>,
    /// `CPUID` (`GenuineIntel,6,143,8`; a MIDR on arm64).
    pub cpuid: String,
    /// `NRCPUS`: (available, online).
    pub nr_cpus: (u32, u32),
    /// `TOTAL_MEM` in kB.
    pub total_mem_kb: u64,
    /// `CMDLINE`: perf's path, then its arguments.
    pub cmdline: Vec<String>,
    /// `PMU_MAPPINGS`: (type, name).
    pub pmu_mappings: Vec<(u32, String)>,
    /// `CPU_PMU_CAPS`: the caps of the PMU named `cpu`; `None` where there
    /// is none (hybrid x86, arm64) and perf leaves the feature out.
    pub cpu_pmu_caps: Option<Vec<(String, String)>>,
    /// `PMU_CAPS`: (pmu, caps) of the other PMUs with caps; `None` leaves
    /// the feature out (perf before 6.0).
    pub pmu_caps: Option<Vec<PmuCaps>>,
    /// `HYBRID_TOPOLOGY`: (pmu, cpu list) on hybrid machines only.
    pub hybrid_topology: Option<Vec<(String, String)>>,
    /// The events, in attr order.
    pub events: Vec<EventSpec>,
    /// The groups of more than one event.
    pub groups: Vec<GroupSpec>,
    /// `BUILD_ID`: the DSOs with samples.
    pub build_ids: Vec<BuildId>,
    /// The attr size written.
    pub attr_size: AttrSize,
    /// The first event instance id; the others follow, event by event and
    /// cpu by cpu, as the kernel hands them out when perf opens them.
    pub first_id: u64,
}

impl CaptureSpec {
    /// A capture of a small x86_64 machine (two cpus, perf 6.1) whose
    /// only PMU is the software one, with `events` and no groups: for
    /// tests that want a few records of software events.
    pub fn software(events: Vec<EventSpec>) -> CaptureSpec {
        CaptureSpec {
            hostname: "h".into(),
            os_release: "6.1.0".into(),
            perf_version: "6.1.0".into(),
            arch: "x86_64".into(),
            cpu_desc: Some("a cpu".into()),
            cpuid: "GenuineIntel,6,85,7".into(),
            nr_cpus: (2, 2),
            total_mem_kb: 1 << 20,
            cmdline: vec!["perf".into(), "record".into()],
            pmu_mappings: vec![(1, "software".into())],
            cpu_pmu_caps: None,
            pmu_caps: None,
            hybrid_topology: None,
            events,
            groups: Vec::new(),
            build_ids: Vec::new(),
            attr_size: AttrSize::Ver7,
            first_id: 7,
        }
    }

    /// The group `event` belongs to, if any.
    pub fn group_of(&self, event: usize) -> Option<&GroupSpec> {
        self.groups.iter().find(|g| g.members().contains(&event))
    }
}

/// One PMU's capabilities (HEADER_PMU_CAPS): its name and (name, value)
/// pairs.
pub type PmuCaps = (String, Vec<(String, String)>);
