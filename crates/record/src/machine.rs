//! The machine perfq records on, read from files under a root folder (`/`
//! on a real machine; a fixture tree in tests, `PERFQ_SYSROOT`): the CPU
//! as perf's header would name it, the PMUs the kernel registered, SMT,
//! the kernel's version and the settings that decide what a user may
//! record. A file missing or unreadable leaves its field empty: what that
//! rules out is for the method chooser to say.

use std::path::{Path, PathBuf};

use perfq_topdown::{CpuInfo, PmuInfo};

use crate::version::Version;

/// What the machine is.
#[derive(Clone, Debug, Default)]
pub struct Machine {
    /// The root its files were read under.
    pub root: PathBuf,
    /// `x86_64` or `aarch64`, as perf's HEADER_ARCH (told from
    /// `/proc/cpuinfo`'s fields).
    pub arch: Option<String>,
    /// The CPU as perf's HEADER_CPUID spells it: `GenuineIntel,6,143,8`,
    /// or an arm64 MIDR `0x00000000410fd4f0`.
    pub cpuid: Option<String>,
    /// `/proc/cpuinfo`'s `model name`, for messages.
    pub model_name: Option<String>,
    /// The PMUs under `/sys/bus/event_source/devices`, by name.
    pub pmus: Vec<Pmu>,
    /// Whether SMT (hyper-threading) is on (`/sys/devices/system/cpu/smt/active`).
    pub smt: Option<bool>,
    /// The running kernel (`/proc/sys/kernel/osrelease`).
    pub kernel: Option<Version>,
    /// `kernel.perf_event_paranoid`.
    pub paranoid: Option<i32>,
    /// Whether the NMI watchdog is on (`kernel.nmi_watchdog`): it holds a
    /// counter of its own.
    pub nmi_watchdog: Option<bool>,
    /// Whether tracefs names the `sched:sched_switch` tracepoint (its id
    /// under `/sys/kernel/tracing` or `/sys/kernel/debug/tracing` is
    /// readable): perf opens it by that id.
    pub sched_switch: bool,
}

/// One PMU the kernel registered.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Pmu {
    /// `cpu`, `cpu_core`, `cpu_atom`, `armv8_pmuv3_0`, `software`, ...
    pub name: String,
    /// Its `perf_event_attr.type`.
    pub type_: Option<u32>,
    /// Its capabilities (`caps/`: `slots`, `pmu_name`, ...).
    pub caps: Vec<(String, String)>,
    /// The events it names (`events/`), sorted.
    pub events: Vec<String>,
}

impl Pmu {
    /// Whether it names `event` in `events/`.
    pub fn has_event(&self, event: &str) -> bool {
        self.events
            .binary_search_by(|e| e.as_str().cmp(event))
            .is_ok()
    }

    /// A capability's value.
    pub fn cap(&self, name: &str) -> Option<&str> {
        self.caps
            .iter()
            .find(|(k, _)| k == name)
            .map(|(_, v)| v.as_str())
    }
}

fn read(path: &Path) -> Option<String> {
    std::fs::read_to_string(path).ok()
}

fn read_trimmed(path: &Path) -> Option<String> {
    read(path)
        .map(|s| s.trim().to_string())
        .filter(|s| !s.is_empty())
}

/// The sorted names of the entries of `dir` (none when it is missing).
fn names(dir: &Path) -> Vec<String> {
    let mut out: Vec<String> = std::fs::read_dir(dir)
        .into_iter()
        .flatten()
        .flatten()
        .map(|e| e.file_name().to_string_lossy().into_owned())
        .collect();
    out.sort();
    out
}

/// The fields of the first processor of `/proc/cpuinfo`.
fn first_processor(cpuinfo: &str) -> Vec<(&str, &str)> {
    cpuinfo
        .lines()
        .take_while(|l| !l.trim().is_empty())
        .filter_map(|l| l.split_once(':'))
        .map(|(k, v)| (k.trim(), v.trim()))
        .collect()
}

/// An integer as `/proc/cpuinfo` writes it: decimal, or `0x` hex.
fn number(s: &str) -> Option<u64> {
    match s.strip_prefix("0x") {
        Some(h) => u64::from_str_radix(h, 16).ok(),
        None => s.parse().ok(),
    }
}

impl Machine {
    /// The machine whose files are under `root`.
    pub fn read(root: &Path) -> Machine {
        let at = |rel: &str| root.join(rel);
        let cpuinfo = read(&at("proc/cpuinfo")).unwrap_or_default();
        let fields = first_processor(&cpuinfo);
        let field = |k: &str| fields.iter().find(|(n, _)| *n == k).map(|(_, v)| *v);
        let (arch, cpuid) = if let Some(vendor) = field("vendor_id") {
            // perf's x86 get_cpuid(): vendor, family, model, stepping in
            // decimal, the extended family and model already folded in,
            // as /proc/cpuinfo shows them.
            let cpuid = match (field("cpu family"), field("model"), field("stepping")) {
                (Some(f), Some(m), Some(s)) => Some(format!("{vendor},{f},{m},{s}")),
                _ => None,
            };
            (Some("x86_64".to_string()), cpuid)
        } else if field("CPU implementer").is_some()
            || at("sys/devices/system/cpu/cpu0/regs/identification/midr_el1").exists()
        {
            // perf's arm64 get_cpuid(): the first CPU's MIDR_EL1 from
            // sysfs; /proc/cpuinfo's fields when sysfs lacks it.
            let sysfs = read_trimmed(&at(
                "sys/devices/system/cpu/cpu0/regs/identification/midr_el1",
            ))
            .and_then(|s| number(&s));
            let from_fields = || {
                let f = |k: &str| field(k).and_then(number);
                Some(
                    (f("CPU implementer")? << 24)
                        | (f("CPU variant")? << 20)
                        | (0xf << 16)
                        | (f("CPU part")? << 4)
                        | f("CPU revision")?,
                )
            };
            let midr = sysfs.or_else(from_fields);
            (
                Some("aarch64".to_string()),
                midr.map(|m| format!("0x{m:016x}")),
            )
        } else {
            (None, None)
        };
        let devices = at("sys/bus/event_source/devices");
        let pmus = names(&devices)
            .into_iter()
            .map(|name| {
                let dir = devices.join(&name);
                let caps = names(&dir.join("caps"))
                    .into_iter()
                    .filter_map(|c| Some((c.clone(), read_trimmed(&dir.join("caps").join(&c))?)))
                    .collect();
                Pmu {
                    type_: read_trimmed(&dir.join("type")).and_then(|t| t.parse().ok()),
                    caps,
                    events: names(&dir.join("events")),
                    name,
                }
            })
            .collect();
        let flag = |rel: &str| read_trimmed(&at(rel)).map(|s| s != "0");
        Machine {
            root: root.to_path_buf(),
            arch,
            cpuid,
            model_name: field("model name").map(str::to_string),
            pmus,
            smt: flag("sys/devices/system/cpu/smt/active"),
            kernel: read_trimmed(&at("proc/sys/kernel/osrelease")).and_then(|s| Version::find(&s)),
            paranoid: read_trimmed(&at("proc/sys/kernel/perf_event_paranoid"))
                .and_then(|s| s.parse().ok()),
            nmi_watchdog: flag("proc/sys/kernel/nmi_watchdog"),
            sched_switch: ["sys/kernel/tracing", "sys/kernel/debug/tracing"]
                .iter()
                .any(|t| read_trimmed(&at(&format!("{t}/events/sched/sched_switch/id"))).is_some()),
        }
    }

    /// The PMU called `name`.
    pub fn pmu(&self, name: &str) -> Option<&Pmu> {
        self.pmus.iter().find(|p| p.name == name)
    }

    /// The CPU as a capture's header would describe it, for
    /// [`perfq_topdown::detect`]: the same detection for a capture and
    /// for the machine about to record one.
    pub fn cpu_info(&self) -> CpuInfo {
        CpuInfo {
            arch: self.arch.clone(),
            cpuid: self.cpuid.clone(),
            pmus: self
                .pmus
                .iter()
                .map(|p| PmuInfo {
                    type_: p.type_,
                    name: p.name.clone(),
                    caps: p.caps.clone(),
                })
                .collect(),
        }
    }

    /// The PMUs that count CPU events: `cpu`, hybrid `cpu_core` and
    /// `cpu_atom`, Arm core PMUs. None on a virtual machine without PMU
    /// passthrough.
    pub fn core_pmus(&self) -> impl Iterator<Item = &Pmu> {
        self.pmus.iter().filter(|p| {
            matches!(p.name.as_str(), "cpu" | "cpu_core" | "cpu_atom")
                || perfq_topdown::is_arm_core_pmu(&p.name)
        })
    }
}
