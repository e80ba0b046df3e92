//! Machines and event lists as real top-down recordings have them: the
//! header strings, PMUs and caps of the recording machine, and the events
//! in the order, types, configs and flags `perf record` (>= 6.13) gives
//! them. Encodings are those of perf's event tables
//! (`tools/perf/pmu-events/arch/`) and the kernel's PMU event aliases;
//! `crates/record/tests/perf_parse.rs` checks the presets `perfq record`'s
//! lines map to against the attrs perf itself builds for those lines.
//!
//! One deliberate difference: attrs are written at 128 bytes (VER7) by
//! default, the largest size perf 6.1 reads; perf >= 6.3 writes 136 (set
//! [`CaptureSpec::attr_size`] to [`AttrSize::Ver8`] for that).

use crate::attr::{
    event_type, flags, read_format as rf, sample_type as st, Attr, AttrSize, Sampling,
};
use crate::model::{Family, Quantity};
use crate::spec::{CaptureSpec, EventSpec, GroupSpec};

/// The preset names [`get`] knows.
pub const NAMES: &[&str] = &[
    "icelake",
    "icelake-corrections",
    "sapphirerapids",
    "icelake-gp",
    "sapphirerapids-gp",
    "skylake",
    "skylake-l1",
    "skylake-l2-smt",
    "zen4",
    "zen4-l2",
    "zen4-watchdog",
    "zen4-watchdog-l2",
    "zen4-ris",
    "zen4-independent",
    "zen5",
    "zen5-l2",
    "gracemont",
    "gracemont-l2",
    "neoverse-v2",
    "alderlake-hybrid",
    "alderlake-hybrid-gp",
    "alderlake-hybrid-gp-l2",
    "lunarlake-hybrid-gp",
    "lunarlake-hybrid-gp-l2",
];

/// A sampling event with the events it reads, and how to count them.
#[derive(Clone, Debug, PartialEq)]
pub struct Sampler {
    /// The sampling event.
    pub event: usize,
    /// The events whose values its samples carry, in read order (the
    /// group, leader first); empty when it does not sample READ.
    pub reads: Vec<usize>,
    /// The counting model of its core type.
    pub family: Family,
    /// Pipeline width (slots per cycle) of its core type.
    pub width: u32,
    /// The cpus it samples on.
    pub cpus: Vec<u32>,
}

/// A recording machine with its event list.
#[derive(Clone, Debug)]
pub struct Preset {
    /// The preset's name.
    pub name: String,
    /// Header, PMUs and events.
    pub spec: CaptureSpec,
    /// What each event counts (same order as `spec.events`).
    pub counts: Vec<Quantity>,
    /// The sampling events. Groups on the same cpus take turns
    /// (multiplexing); independent events all count at once.
    pub samplers: Vec<Sampler>,
    /// Whether the events are sampled each on their own (`-e a,b,c`)
    /// rather than read as groups by one sampler.
    pub independent: bool,
}

/// The preset called `name` (see [`NAMES`]).
pub fn get(name: &str) -> Option<Preset> {
    Some(match name {
        "icelake" => icelake(false),
        "icelake-corrections" => icelake(true),
        "sapphirerapids" => sapphirerapids(),
        "icelake-gp" => general(false),
        "sapphirerapids-gp" => general(true),
        "skylake" => skylake(true),
        "skylake-l1" => skylake(false),
        "skylake-l2-smt" => skylake_l2_smt(),
        "zen4" => zen(Zen::Four, ZenEvents::L1),
        "zen4-l2" => zen(Zen::Four, ZenEvents::L1L2),
        "zen4-watchdog" => zen(Zen::Four, ZenEvents::L1Cut),
        "zen4-watchdog-l2" => zen(Zen::Four, ZenEvents::L1L2Cut),
        "zen4-ris" => zen(Zen::Four, ZenEvents::Ris),
        "zen4-independent" => zen(Zen::Four, ZenEvents::Independent),
        "zen5" => zen(Zen::Five, ZenEvents::L1),
        "zen5-l2" => zen(Zen::Five, ZenEvents::L1L2),
        "gracemont" => gracemont(false),
        "gracemont-l2" => gracemont(true),
        "neoverse-v2" => neoverse_v2(),
        "alderlake-hybrid" => alderlake_hybrid(),
        "alderlake-hybrid-gp" => hybrid_gp(Hybrid::AlderLake, false),
        "alderlake-hybrid-gp-l2" => hybrid_gp(Hybrid::AlderLake, true),
        "lunarlake-hybrid-gp" => hybrid_gp(Hybrid::LunarLake, false),
        "lunarlake-hybrid-gp-l2" => hybrid_gp(Hybrid::LunarLake, true),
        _ => return None,
    })
}

/// The program the presets' command lines record.
const PROGRAM: &str = "testdata/td-demo";
/// The sampler's period (`-c`).
const PERIOD: u64 = 2_000_003;

/// One event of a group being built.
struct Ev {
    name: String,
    type_: u32,
    config: u64,
    counts: Quantity,
}

fn ev(name: &str, type_: u32, config: u64, counts: Quantity) -> Ev {
    Ev {
        name: name.to_string(),
        type_,
        config,
        counts,
    }
}

/// A `{...}:S` group: `sampler` (index in `evs`) samples and reads them all.
struct Group {
    evs: Vec<Ev>,
    sampler: usize,
    family: Family,
    width: u32,
    cpus: Vec<u32>,
}

/// The machine part of a spec.
struct Machine {
    arch: &'static str,
    cpu_desc: Option<&'static str>,
    cpuid: &'static str,
    nr_cpus: u32,
    pmu_mappings: Vec<(u32, String)>,
    cpu_pmu_caps: Option<Vec<(String, String)>>,
    pmu_caps: Option<Vec<crate::spec::PmuCaps>>,
    hybrid_topology: Option<Vec<(String, String)>>,
}

fn caps(list: &[(&str, &str)]) -> Vec<(String, String)> {
    list.iter()
        .map(|(k, v)| (k.to_string(), v.to_string()))
        .collect()
}

fn pmus(list: &[(u32, &str)]) -> Vec<(u32, String)> {
    list.iter().map(|(t, n)| (*t, n.to_string())).collect()
}

/// The sample layout of a `:S` group recorded with `-c N -P --sample-cpu -g`.
const GROUP_SAMPLE_TYPE: u64 =
    st::IP | st::TID | st::TIME | st::READ | st::CALLCHAIN | st::ID | st::CPU | st::PERIOD;

/// The same without READ: events sampled on their own.
const SINGLE_SAMPLE_TYPE: u64 =
    st::IP | st::TID | st::TIME | st::CALLCHAIN | st::ID | st::CPU | st::PERIOD;

fn all_cpus(n: u32) -> Vec<u32> {
    (0..n).collect()
}

/// Builds a preset from groups of events.
fn build(name: &str, m: Machine, groups: Vec<Group>) -> Preset {
    let names: Vec<Vec<&str>> = groups.iter().map(|g| event_names(&g.evs)).collect();
    let event_arg = group_arg(&names.iter().map(Vec::as_slice).collect::<Vec<_>>());
    let mut events = Vec::new();
    let mut counts = Vec::new();
    let mut specs = Vec::new();
    let mut samplers = Vec::new();
    for g in groups {
        let leader = events.len();
        let n = g.evs.len();
        for (i, e) in g.evs.into_iter().enumerate() {
            let mut a = Attr::new(e.type_, e.config);
            a.sample_type = GROUP_SAMPLE_TYPE;
            a.read_format = rf::ID | rf::GROUP | rf::LOST;
            // perf >= 6.13 keeps inherit for sample-read groups.
            a.flags |= flags::INHERIT;
            if i == 0 {
                a.flags |= flags::DISABLED | flags::ENABLE_ON_EXEC;
            }
            if leader == 0 && i == 0 {
                a.flags |= flags::TRACKING;
            }
            // Only the sampler keeps a period; perf zeroes the others'.
            if i == g.sampler {
                a.sampling = Sampling::Period(PERIOD);
            }
            events.push(EventSpec {
                name: e.name,
                attr: a,
                cpus: g.cpus.clone(),
            });
            counts.push(e.counts);
        }
        if n > 1 {
            specs.push(GroupSpec {
                name: None,
                leader,
                len: n,
            });
        }
        samplers.push(Sampler {
            event: leader + g.sampler,
            reads: (leader..leader + n).collect(),
            family: g.family,
            width: g.width,
            cpus: g.cpus,
        });
    }
    let cmdline = [
        "/usr/bin/perf",
        "record",
        "-e",
        &event_arg,
        "-c",
        &PERIOD.to_string(),
        "-P",
        "--sample-cpu",
        "-g",
        "--",
        PROGRAM,
    ]
    .iter()
    .map(|s| s.to_string())
    .collect();
    Preset {
        name: name.to_string(),
        spec: machine_spec(m, events, specs, cmdline),
        counts,
        samplers,
        independent: false,
    }
}

fn machine_spec(
    m: Machine,
    events: Vec<EventSpec>,
    groups: Vec<GroupSpec>,
    cmdline: Vec<String>,
) -> CaptureSpec {
    CaptureSpec {
        hostname: "perfq-testgen".into(),
        os_release: "6.12.48-perfq".into(),
        perf_version: "6.13.0".into(),
        arch: m.arch.into(),
        cpu_desc: m.cpu_desc.map(str::to_string),
        cpuid: m.cpuid.into(),
        nr_cpus: (m.nr_cpus, m.nr_cpus),
        total_mem_kb: 32 * 1024 * 1024,
        cmdline,
        pmu_mappings: m.pmu_mappings,
        cpu_pmu_caps: m.cpu_pmu_caps,
        pmu_caps: m.pmu_caps,
        hybrid_topology: m.hybrid_topology,
        events,
        groups,
        build_ids: Vec::new(),
        attr_size: AttrSize::Ver7,
        first_id: 1000,
    }
}

/// The `{a,b,...}:S` argument perf was given for `groups`.
fn group_arg(groups: &[&[&str]]) -> String {
    groups
        .iter()
        .map(|g| format!("{{{}}}:S", g.join(",")))
        .collect::<Vec<_>>()
        .join(",")
}

fn intel_pmus(cpu: &str) -> Vec<(u32, String)> {
    pmus(&[
        (4, cpu),
        (1, "software"),
        (2, "tracepoint"),
        (5, "breakpoint"),
        (6, "kprobe"),
        (7, "uprobe"),
        (8, "intel_bts"),
        (9, "intel_pt"),
        (10, "msr"),
        (11, "power"),
    ])
}

/// The caps perf records for an Intel core PMU whose `pmu_name` is
/// `pmu_name`.
fn intel_caps(pmu_name: &str) -> Vec<(String, String)> {
    caps(&[
        ("branches", "32"),
        ("max_precise", "3"),
        ("pmu_name", pmu_name),
    ])
}

/// An Intel machine with one core PMU, `cpu`.
fn intel_machine(
    cpu_desc: &'static str,
    cpuid: &'static str,
    nr_cpus: u32,
    pmu_name: &str,
) -> Machine {
    Machine {
        arch: "x86_64",
        cpu_desc: Some(cpu_desc),
        cpuid,
        nr_cpus,
        pmu_mappings: intel_pmus("cpu"),
        cpu_pmu_caps: Some(intel_caps(pmu_name)),
        pmu_caps: Some(Vec::new()),
        hybrid_topology: None,
    }
}

/// An event of the core PMU named by its raw config (`r19c`).
fn raw(config: u64, counts: Quantity) -> Ev {
    ev(&format!("r{config:x}"), event_type::RAW, config, counts)
}

/// The slots leader, the cycles sampler and the topdown metric events:
/// `{slots,cycles,topdown-*}:S` (perf >= 6.13 keeps this order; older
/// perf re-sorts it: `arch_evlist__cmp` in
/// tools/perf/arch/x86/util/evlist.c). `prefix` is `cpu_core/` on hybrid
/// parts.
fn perf_metrics_group(metrics: u8, pmu: Option<(&str, u32)>) -> Vec<Ev> {
    const NAMES: [&str; 8] = [
        "topdown-retiring",
        "topdown-bad-spec",
        "topdown-fe-bound",
        "topdown-be-bound",
        "topdown-heavy-ops",
        "topdown-br-mispredict",
        "topdown-fetch-lat",
        "topdown-mem-bound",
    ];
    let name = |n: &str| match pmu {
        Some((p, _)) => format!("{p}/{n}/"),
        None => n.to_string(),
    };
    // Hybrid parts put the PMU type in the generic event's config 63:32.
    let cycles_config = pmu.map_or(0, |(_, t)| (t as u64) << 32);
    let mut v = vec![
        ev(&name("slots"), event_type::RAW, 0x400, Quantity::Slots),
        ev(
            &name("cycles"),
            event_type::HARDWARE,
            cycles_config,
            Quantity::Cycles,
        ),
    ];
    for i in 0..metrics {
        v.push(ev(
            &name(NAMES[i as usize]),
            event_type::RAW,
            0x8000 + 0x100 * i as u64,
            Quantity::PerfMetric(i),
        ));
    }
    v
}

fn event_names(evs: &[Ev]) -> Vec<&str> {
    evs.iter().map(|e| e.name.as_str()).collect()
}

fn icelake(corrections: bool) -> Preset {
    let mut evs = perf_metrics_group(4, None);
    if corrections {
        // ICL's FE and BE corrections (as perf's icl-metrics.json uses them).
        evs.push(ev(
            "int_misc.uop_dropping",
            event_type::RAW,
            0x100d,
            Quantity::UopDropping,
        ));
        evs.push(ev(
            "int_misc.clears_count",
            event_type::RAW,
            0x104_010d,
            Quantity::ClearsCount,
        ));
    }
    let m = intel_machine(
        "Intel(R) Core(TM) i7-1065G7 CPU @ 1.30GHz",
        "GenuineIntel,6,126,5",
        8,
        "icelake",
    );
    let name = if corrections {
        "icelake-corrections"
    } else {
        "icelake"
    };
    let g = Group {
        evs,
        sampler: 1,
        family: Family::IntelPerfMetrics,
        width: 5,
        cpus: all_cpus(8),
    };
    build(name, m, vec![g])
}

fn sapphirerapids() -> Preset {
    let evs = perf_metrics_group(8, None);
    let m = intel_machine(
        "Intel(R) Xeon(R) Platinum 8488C",
        "GenuineIntel,6,143,8",
        8,
        "sapphire_rapids",
    );
    let g = Group {
        evs,
        sampler: 1,
        family: Family::IntelPerfMetrics,
        width: 6,
        cpus: all_cpus(8),
    };
    build("sapphirerapids", m, vec![g])
}

/// Ice Lake (`golden_cove` false) or Sapphire Rapids counted on
/// general-purpose counters, as `perfq record` records them with a perf
/// that cannot open PERF_METRICS (methods.td `icl-gp`, `glc-gp`): the
/// cycles sampler and the `-gp` sets' events.
fn general(golden_cove: bool) -> Preset {
    use Quantity::*;
    let (uop_dropping, width) = if golden_cove {
        (0x10ad, 6)
    } else {
        (0x100d, 5)
    };
    let mut evs = vec![
        ev("cycles", event_type::HARDWARE, 0, Cycles),
        raw(0x1a4, Slots),
        raw(0x19c, FrontendSlots),
        raw(0x2a4, BackendSlots),
        raw(0x2c2, RetiredSlots),
        raw(uop_dropping, UopDropping),
    ];
    if !golden_cove {
        evs.push(raw(0x104_010d, ClearsCount));
    }
    let m = if golden_cove {
        intel_machine(
            "Intel(R) Xeon(R) Platinum 8488C",
            "GenuineIntel,6,143,8",
            8,
            "sapphire_rapids",
        )
    } else {
        intel_machine(
            "Intel(R) Core(TM) i7-1065G7 CPU @ 1.30GHz",
            "GenuineIntel,6,126,5",
            8,
            "icelake",
        )
    };
    let g = Group {
        evs,
        sampler: 0,
        family: Family::IntelGeneral,
        width,
        cpus: all_cpus(8),
    };
    let name = if golden_cove {
        "sapphirerapids-gp"
    } else {
        "icelake-gp"
    };
    build(name, m, vec![g])
}

/// Skylake's level-1 group (what `perfq record` records there), with
/// `level2_parts` the events of level 2's front-end and bad-speculation
/// splits as well.
fn skylake(level2_parts: bool) -> Preset {
    use Quantity::*;
    // perf's skylake event encodings (pmu-events/arch/x86/skylake/), the
    // events skl-metrics.json uses; cycles is CPU_CLK_UNHALTED.THREAD.
    let mut evs = vec![
        ev("cycles", event_type::HARDWARE, 0, Cycles),
        raw(0x19c, FrontendSlots),
        raw(0x10e, IssuedUops),
        raw(0x2c2, RetiredSlots),
        raw(0x10d, RecoveryCycles),
    ];
    if level2_parts {
        evs.extend([
            raw(0x400_019c, FetchLatencyCycles),
            raw(0xc5, BranchMisses),
            raw(0x104_01c3, MachineClears),
        ]);
    }
    // Four cores with SMT off: eight general counters per thread hold the
    // seven raw events; cycles takes fixed counter 1.
    let m = intel_machine(
        "Intel(R) Core(TM) i7-6700K CPU @ 4.00GHz",
        "GenuineIntel,6,94,3",
        4,
        "skylake",
    );
    let g = Group {
        evs,
        sampler: 0,
        family: Family::IntelSkylake,
        width: 4,
        cpus: all_cpus(4),
    };
    let name = if level2_parts {
        "skylake"
    } else {
        "skylake-l1"
    };
    build(name, m, vec![g])
}

/// Skylake-SP with SMT on, level 2 as `perfq record` records it: four
/// general-purpose counters a thread, so the method's three groups are
/// cut into four, each led by cycles (instructions on its fixed counter).
fn skylake_l2_smt() -> Preset {
    use Quantity::*;
    let cycles = || ev("cycles", event_type::HARDWARE, 0, Cycles);
    let groups = [
        vec![
            cycles(),
            raw(0x19c, FrontendSlots),
            raw(0x10e, IssuedUops),
            raw(0x2c2, RetiredSlots),
            raw(0x10d, RecoveryCycles),
        ],
        vec![
            cycles(),
            raw(0x400_019c, FetchLatencyCycles),
            raw(0xc5, BranchMisses),
            raw(0x104_01c3, MachineClears),
            raw(0x4c2, MacroFused),
            ev("instructions", event_type::HARDWARE, 1, InstRetired),
        ],
        vec![
            cycles(),
            raw(0x1400_14a3, StallsMemAny),
            raw(0x40a6, BoundOnStores),
            raw(0x400_04a3, StallsTotal),
            raw(0x2a6, PortsUtil1),
        ],
        vec![cycles(), raw(0x4a6, PortsUtil2)],
    ];
    let m = intel_machine(
        "Intel(R) Xeon(R) Gold 6154 CPU @ 3.00GHz",
        "GenuineIntel,6,85,4",
        8,
        "skylake",
    );
    let groups = groups
        .into_iter()
        .map(|evs| Group {
            evs,
            sampler: 0,
            family: Family::IntelSkylake,
            width: 4,
            cpus: all_cpus(8),
        })
        .collect();
    build("skylake-l2-smt", m, groups)
}

#[derive(Clone, Copy, PartialEq, Eq)]
enum Zen {
    Four,
    Five,
}

#[derive(Clone, Copy, PartialEq, Eq)]
enum ZenEvents {
    /// `{cycles, FE, BE, disp, ret, smt}:S`.
    L1,
    /// L1 plus the L2 events as two more groups taking turns with it.
    L1L2,
    /// L1 on five counters (an NMI watchdog holds the sixth): cut into
    /// two groups, each led by cycles, as `perfq record` records it.
    L1Cut,
    /// L1 and L2 on five counters: each of the three groups that does
    /// not fit cut in two, as `perfq record` records it.
    L1L2Cut,
    /// The RIS tool's raw spellings, with the ignored 0x43 byte.
    Ris,
    /// The L1 events, each sampled on its own.
    Independent,
}

fn zen(gen: Zen, which: ZenEvents) -> Preset {
    use Quantity::*;
    let (width, m) = zen_machine(gen);
    let nr = m.nr_cpus;
    let l1 = || {
        vec![
            ev("cycles", event_type::HARDWARE, 0, Cycles),
            raw(0x1_0000_01a0, FrontendSlots),
            raw(0x1_0000_1ea0, BackendSlots),
            raw(0x7aa, DispatchedOps),
            raw(0xc1, RetiredSlots),
            raw(0x1_0000_60a0, SmtSlots),
        ]
    };
    let group = |evs| Group {
        evs,
        sampler: 0,
        family: Family::AmdZen,
        width,
        cpus: all_cpus(nr),
    };
    let name = match (gen, which) {
        (Zen::Five, ZenEvents::L1L2) => "zen5-l2",
        (Zen::Five, _) => "zen5",
        (_, ZenEvents::L1) => "zen4",
        (_, ZenEvents::L1L2) => "zen4-l2",
        (_, ZenEvents::L1Cut) => "zen4-watchdog",
        (_, ZenEvents::L1L2Cut) => "zen4-watchdog-l2",
        (_, ZenEvents::Ris) => "zen4-ris",
        (_, ZenEvents::Independent) => "zen4-independent",
    };
    match which {
        ZenEvents::L1 => build(name, m, vec![group(l1())]),
        ZenEvents::Ris => {
            // r430076 is ls_not_halted_cyc with USR|OS|EN set by hand; the
            // kernel keeps only AMD64_RAW_EVENT_MASK of a raw config
            // (arch/x86/events/amd/core.c) and sets those bits itself. No
            // SMT event.
            let evs = vec![
                raw(0x43_0076, Cycles),
                raw(0x1_0043_01a0, FrontendSlots),
                raw(0x1_0043_1ea0, BackendSlots),
                raw(0x43_07aa, DispatchedOps),
                raw(0x43_00c1, RetiredSlots),
            ];
            build(name, m, vec![group(evs)])
        }
        ZenEvents::L1Cut => {
            let [first, second] = cut_after_five(l1());
            build(name, m, vec![group(first), group(second)])
        }
        ZenEvents::L1L2 => {
            let (l2a, l2b) = zen_l2_groups(gen, width);
            build(name, m, vec![group(l1()), group(l2a), group(l2b)])
        }
        ZenEvents::L1L2Cut => {
            let (l2a, l2b) = zen_l2_groups(gen, width);
            let mut groups = Vec::new();
            for evs in [l1(), l2a] {
                groups.extend(cut_after_five(evs).map(group));
            }
            groups.push(group(l2b));
            build(name, m, groups)
        }
        ZenEvents::Independent => zen_independent(m, l1(), width),
    }
}

/// A Zen group of six cut to fit five counters (cycles takes one): its
/// first five, and cycles with the sixth.
fn cut_after_five(mut evs: Vec<Ev>) -> [Vec<Ev>; 2] {
    let rest = evs.split_off(5);
    let second = std::iter::once(ev("cycles", event_type::HARDWARE, 0, Quantity::Cycles))
        .chain(rest)
        .collect();
    [evs, second]
}

/// An 8-cpu machine of Zen generation `gen`, with its pipeline width.
fn zen_machine(gen: Zen) -> (u32, Machine) {
    let (width, cpu_desc, cpuid) = match gen {
        Zen::Four => (
            6,
            Some("AMD EPYC 9654 96-Core Processor"),
            "AuthenticAMD,25,17,1",
        ),
        Zen::Five => (
            8,
            Some("AMD EPYC 9755 128-Core Processor"),
            "AuthenticAMD,26,2,0",
        ),
    };
    let m = Machine {
        arch: "x86_64",
        cpu_desc,
        cpuid,
        nr_cpus: 8,
        pmu_mappings: pmus(&[
            (4, "cpu"),
            (1, "software"),
            (2, "tracepoint"),
            (5, "breakpoint"),
            (6, "kprobe"),
            (7, "uprobe"),
            (8, "ibs_fetch"),
            (9, "ibs_op"),
            (10, "msr"),
            (11, "amd_df"),
            (12, "amd_l3"),
            (13, "power"),
        ]),
        cpu_pmu_caps: Some(caps(&[("branches", "16")])),
        pmu_caps: Some(vec![
            ("ibs_op".into(), caps(&[("zen4_ibs_extensions", "1")])),
            ("ibs_fetch".into(), caps(&[("zen4_ibs_extensions", "1")])),
        ]),
        hybrid_topology: None,
    };
    (width, m)
}

/// The level-2 events of a Zen `width` wide (perf's amdzen4/amdzen5
/// pipeline.json): six
/// counters a group, so two more groups, each with its own cycles
/// sampler, which the kernel rotates with the level-1 group.
fn zen_l2_groups(gen: Zen, width: u32) -> (Vec<Ev>, Vec<Ev>) {
    use Quantity::*;
    let cmask = (width as u64) << 24;
    // Resyncs: resyncs_or_nc_redirects on Zen 4, bp_redirects.resync on
    // Zen 5 (the sets' `resyncs` role).
    let resyncs = match gen {
        Zen::Four => 0x96,
        Zen::Five => 0x19f,
    };
    let l2a = vec![
        ev("cycles", event_type::HARDWARE, 0, Cycles),
        raw(0x1_0000_01a0 | cmask, FetchLatencyCycles),
        raw(0xc3, BranchMisses),
        raw(resyncs, MachineClears),
        raw(0xa2d6, LoadNotCompleteCycles),
        raw(0x2d6, NotCompleteCycles),
    ];
    let l2b = vec![
        ev("cycles", event_type::HARDWARE, 0, Cycles),
        raw(0xc1, RetiredSlots),
        raw(0x1_0000_00c2, MicrocodeOps),
    ];
    (l2a, l2b)
}

/// `-e cycles,r...,r...`: each event samples with its own period, no READ.
fn zen_independent(m: Machine, evs: Vec<Ev>, width: u32) -> Preset {
    // Periods that give every event samples of its own: rarer events get
    // shorter ones.
    let periods = [
        1_000_003u64,
        2_000_003,
        2_000_003,
        2_000_003,
        2_000_003,
        200_003,
    ];
    let cpus = all_cpus(m.nr_cpus);
    let mut events = Vec::new();
    let mut counts = Vec::new();
    let mut samplers = Vec::new();
    let names: Vec<String> = evs.iter().map(|e| e.name.clone()).collect();
    for (i, (e, p)) in evs.into_iter().zip(periods).enumerate() {
        let mut a = Attr::new(e.type_, e.config);
        a.sample_type = SINGLE_SAMPLE_TYPE;
        a.read_format = rf::ID | rf::LOST;
        a.flags |= flags::INHERIT | flags::DISABLED | flags::ENABLE_ON_EXEC;
        if i == 0 {
            a.flags |= flags::TRACKING;
        }
        a.sampling = Sampling::Period(p);
        events.push(EventSpec {
            name: e.name,
            attr: a,
            cpus: cpus.clone(),
        });
        counts.push(e.counts);
        samplers.push(Sampler {
            event: i,
            reads: Vec::new(),
            family: Family::AmdZen,
            width,
            cpus: cpus.clone(),
        });
    }
    let cmdline = [
        "/usr/bin/perf",
        "record",
        "-e",
        &names.join(","),
        "-P",
        "--sample-cpu",
        "-g",
        "--",
        PROGRAM,
    ]
    .iter()
    .map(|s| s.to_string())
    .collect();
    Preset {
        name: "zen4-independent".into(),
        spec: machine_spec(m, events, Vec::new(), cmdline),
        counts,
        samplers,
        independent: true,
    }
}

fn neoverse_v2() -> Preset {
    use Quantity::*;
    // armv8_pmuv3_0 is registered with a dynamic type; 10 as on the fixture
    // machine crates/record/tests/machines/neoverse-v2.tree.
    const PMU: u32 = 10;
    let arm = |n: &str, c: u64, q| ev(n, PMU, c, q);
    let evs = vec![
        arm("cpu_cycles", 0x11, Cycles),
        arm("stall_slot_frontend", 0x3e, FrontendSlots),
        arm("stall_slot_backend", 0x3d, BackendSlots),
        arm("stall_slot", 0x3f, StallSlots),
        arm("op_retired", 0x3a, RetiredSlots),
        arm("op_spec", 0x3b, SpecOps),
        arm("br_mis_pred", 0x10, BranchMisses),
    ];
    let m = Machine {
        arch: "aarch64",
        // arm64 /proc/cpuinfo has no "model name": perf writes no CPUDESC.
        cpu_desc: None,
        cpuid: "0x00000000410fd4f0",
        nr_cpus: 8,
        pmu_mappings: pmus(&[
            (PMU, "armv8_pmuv3_0"),
            (1, "software"),
            (2, "tracepoint"),
            (5, "breakpoint"),
            (6, "kprobe"),
            (7, "uprobe"),
            (11, "arm_spe_0"),
        ]),
        cpu_pmu_caps: None,
        pmu_caps: Some(vec![(
            "armv8_pmuv3_0".into(),
            caps(&[
                ("slots", "0x00000008"),
                ("bus_slots", "0x00000020"),
                ("bus_width", "0x00000040"),
            ]),
        )]),
        hybrid_topology: None,
    };
    let g = Group {
        evs,
        sampler: 0,
        family: Family::ArmNeoverse,
        width: 8,
        cpus: all_cpus(8),
    };
    build("neoverse-v2", m, vec![g])
}

/// The PMU type of `cpu_atom` on the hybrid machine.
const ATOM: u32 = 10;

/// A group of E-cores `width` slots wide on `cpus`.
fn atom_group(evs: Vec<Ev>, width: u32, cpus: std::ops::Range<u32>) -> Group {
    Group {
        evs,
        sampler: 0,
        family: Family::IntelAtom,
        width,
        cpus: cpus.collect(),
    }
}

/// A hybrid part whose P-cores are counted on general-purpose counters.
#[derive(Clone, Copy, PartialEq, Eq)]
enum Hybrid {
    /// Alder Lake: Golden Cove (`intel-glc-gp`) and Gracemont.
    AlderLake,
    /// Lunar Lake: Lion Cove (`intel-lnc-gp`) and Skymont.
    LunarLake,
}

/// A hybrid part as `perfq record` records it with perf ≤ 6.12: the
/// P-cores' level 1 on general-purpose counters, the E-cores' level 1 and,
/// with `level2`, their level 2.
fn hybrid_gp(part: Hybrid, level2: bool) -> Preset {
    use Quantity::*;
    let core = |c: u64, q| ev(&format!("cpu_core/config={c:#x}/"), 4, c, q);
    let mut p_events = vec![
        ev("cpu_core/cycles/", event_type::HARDWARE, 4 << 32, Cycles),
        core(0x1a4, Slots),
        core(0x19c, FrontendSlots),
        core(0x2a4, BackendSlots),
        core(0x2c2, RetiredSlots),
    ];
    let (machine, p_width, p_cpus, (e1, e2), e_width, e_cpus, name) = match part {
        Hybrid::AlderLake => {
            // Golden Cove's frontend correction; Lion Cove has none.
            p_events.push(core(0x10ad, UopDropping));
            let name = ["alderlake-hybrid-gp", "alderlake-hybrid-gp-l2"];
            let groups = gracemont_groups(Some(ATOM));
            (alderlake_machine(), 6, 0..16, groups, 5, 16..24, name)
        }
        Hybrid::LunarLake => {
            let name = ["lunarlake-hybrid-gp", "lunarlake-hybrid-gp-l2"];
            (
                lunarlake_machine(),
                8,
                0..4,
                skymont_groups(),
                8,
                4..8,
                name,
            )
        }
    };
    let p_cores = Group {
        evs: p_events,
        sampler: 0,
        family: Family::IntelGeneral,
        width: p_width,
        cpus: p_cpus.collect(),
    };
    let mut groups = vec![p_cores, atom_group(e1, e_width, e_cpus.clone())];
    if level2 {
        groups.push(atom_group(e2, e_width, e_cpus));
    }
    let mut p = build(name[usize::from(level2)], machine, groups);
    // perf 6.1 and 6.12 add a tracking event of their own on a hybrid
    // part (`dummy`, not written here) whose samples differ from the
    // groups', so every sample leads with IDENTIFIER instead of carrying
    // ID.
    for e in &mut p.spec.events {
        e.attr.sample_type = (e.attr.sample_type & !st::ID) | st::IDENTIFIER;
    }
    p
}

/// Skymont (Lunar and Arrow Lake E-cores), 8 wide: level 1 with its own
/// bad-speculation event, and level 2 as Gracemont's, on `cpu_atom`.
fn skymont_groups() -> (Vec<Ev>, Vec<Ev>) {
    use Quantity::*;
    let atom = |c: u64, q| ev(&format!("cpu_atom/config={c:#x}/"), ATOM, c, q);
    let cycles = || {
        ev(
            "cpu_atom/cycles/",
            event_type::HARDWARE,
            (ATOM as u64) << 32,
            Cycles,
        )
    };
    let e1 = vec![
        cycles(),
        atom(0x19c, FrontendSlots),
        atom(0x73, BadSpeculationSlots),
        atom(0x2a4, BackendSlots),
        atom(0x2c2, RetiredSlots),
    ];
    let e2 = vec![
        cycles(),
        atom(0x7271, FetchLatencySlots),
        atom(0x8d71, FetchBandwidthSlots),
        atom(0x473, MispredictSlots),
        atom(0x373, MachineClearSlots),
        atom(0x174, CoreBoundSlots),
    ];
    (e1, e2)
}

fn alderlake_hybrid() -> Preset {
    let (e1, e2) = gracemont_groups(Some(ATOM));
    let groups = vec![
        Group {
            evs: perf_metrics_group(8, Some(("cpu_core", 4))),
            sampler: 1,
            family: Family::IntelPerfMetrics,
            width: 6,
            cpus: (0..16).collect(),
        },
        atom_group(e1, 5, 16..24),
        atom_group(e2, 5, 16..24),
    ];
    build("alderlake-hybrid", alderlake_machine(), groups)
}

/// Alder Lake-N: Gracemont cores alone, on the `cpu` PMU; level 1, and
/// with `level2` its second group, as `perfq record` records them.
fn gracemont(level2: bool) -> Preset {
    let (e1, e2) = gracemont_groups(None);
    let m = intel_machine("Intel(R) N100", "GenuineIntel,6,190,0", 4, "gracemont");
    let group = |evs| Group {
        evs,
        sampler: 0,
        family: Family::IntelAtom,
        width: 5,
        cpus: all_cpus(4),
    };
    match level2 {
        true => build("gracemont-l2", m, vec![group(e1), group(e2)]),
        false => build("gracemont", m, vec![group(e1)]),
    }
}

/// Gracemont, 5 wide (perf's adln-metrics.json): level 1, and level 2 in a
/// second group (six general counters each); on a hybrid part's
/// `cpu_atom` (`atom`: its type) by the kernel's aliases, else on `cpu` by
/// raw config.
fn gracemont_groups(atom: Option<u32>) -> (Vec<Ev>, Vec<Ev>) {
    use Quantity::*;
    let atom_ev = |n: &str, c: u64, q| match atom {
        Some(t) => ev(&format!("cpu_atom/{n}/"), t, c, q),
        None => raw(c, q),
    };
    let atom_cycles = || match atom {
        Some(t) => ev(
            "cpu_atom/cycles/",
            event_type::HARDWARE,
            (t as u64) << 32,
            Cycles,
        ),
        None => ev("cycles", event_type::HARDWARE, 0, Cycles),
    };
    let e1 = vec![
        atom_cycles(),
        atom_ev("topdown-fe-bound", 0x71, FrontendSlots),
        atom_ev("topdown-be-bound", 0x74, BackendSlots),
        atom_ev("topdown-retiring", 0xc2, RetiredSlots),
    ];
    let e2 = vec![
        atom_cycles(),
        atom_ev(
            "topdown_fe_bound.frontend_latency",
            0x7271,
            FetchLatencySlots,
        ),
        atom_ev(
            "topdown_fe_bound.frontend_bandwidth",
            0x8d71,
            FetchBandwidthSlots,
        ),
        atom_ev("topdown_bad_speculation.mispredict", 0x473, MispredictSlots),
        atom_ev(
            "topdown_bad_speculation.machine_clears",
            0x373,
            MachineClearSlots,
        ),
        atom_ev("topdown_be_bound.alloc_restrictions", 0x174, CoreBoundSlots),
    ];
    (e1, e2)
}

/// A 12th-generation Core: 16 P-core cpus (`cpu_core`), 8 E-core cpus
/// (`cpu_atom`).
fn alderlake_machine() -> Machine {
    hybrid_machine(
        "12th Gen Intel(R) Core(TM) i9-12900K",
        "GenuineIntel,6,151,2",
        "alderlake_hybrid",
        ("0-15", "16-23"),
    )
}

/// A Core Ultra 200V: 4 P-core cpus (`cpu_core`), 4 E-core cpus
/// (`cpu_atom`).
fn lunarlake_machine() -> Machine {
    hybrid_machine(
        "Intel(R) Core(TM) Ultra 7 258V",
        "GenuineIntel,6,189,1",
        "lunarlake_hybrid",
        ("0-3", "4-7"),
    )
}

/// A hybrid Intel part: `cpu_core` (type 4) and `cpu_atom` on the cpus
/// given, with their caps.
fn hybrid_machine(
    cpu_desc: &'static str,
    cpuid: &'static str,
    pmu_name: &str,
    (core_cpus, atom_cpus): (&str, &str),
) -> Machine {
    let hybrid_caps = intel_caps(pmu_name);
    let nr_cpus = atom_cpus
        .rsplit('-')
        .next()
        .and_then(|n| n.parse::<u32>().ok())
        .map_or(0, |n| n + 1);
    Machine {
        arch: "x86_64",
        cpu_desc: Some(cpu_desc),
        cpuid,
        nr_cpus,
        pmu_mappings: pmus(&[
            (4, "cpu_core"),
            (ATOM, "cpu_atom"),
            (1, "software"),
            (2, "tracepoint"),
            (5, "breakpoint"),
            (6, "kprobe"),
            (7, "uprobe"),
            (8, "intel_bts"),
            (9, "intel_pt"),
            (11, "msr"),
            (12, "power"),
        ]),
        // No PMU is called `cpu` on a hybrid part: perf leaves CPU_PMU_CAPS
        // out and writes the core PMUs' caps, hybrid ones first, in PMU_CAPS.
        cpu_pmu_caps: None,
        pmu_caps: Some(vec![
            ("cpu_core".into(), hybrid_caps.clone()),
            ("cpu_atom".into(), hybrid_caps),
        ]),
        hybrid_topology: Some(vec![
            ("cpu_core".into(), core_cpus.into()),
            ("cpu_atom".into(), atom_cpus.into()),
        ]),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_name_builds_and_only_samplers_have_periods() {
        for name in NAMES {
            let p = get(name).expect("known preset");
            assert_eq!(&p.name, name);
            assert_eq!(p.counts.len(), p.spec.events.len());
            for (i, e) in p.spec.events.iter().enumerate() {
                let sampler = p.samplers.iter().any(|s| s.event == i);
                assert_eq!(e.attr.is_sampling(), sampler, "{name}: {}", e.name);
            }
        }
        assert!(get("nehalem").is_none());
    }

    #[test]
    fn topdown_group_order_is_slots_then_the_sampler() {
        let p = get("sapphirerapids").expect("preset");
        let e = &p.spec.events;
        assert_eq!((e[0].attr.type_, e[0].attr.config), (4, 0x400));
        assert_eq!((e[1].attr.type_, e[1].attr.config), (0, 0));
        assert_eq!(p.samplers[0].event, 1);
        let metrics: Vec<u64> = e[2..].iter().map(|e| e.attr.config).collect();
        assert_eq!(
            metrics,
            (0..8).map(|i| 0x8000 + 0x100 * i).collect::<Vec<_>>()
        );
    }
}
