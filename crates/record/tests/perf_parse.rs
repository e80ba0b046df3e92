//! perf's own parse of every command line `perfq record` prints: for each
//! fixture machine, each installed perf (6.1, and 6.12 from
//! `.ci/perf612.sh`) and levels 1 and 2, perf records the printed group
//! on the fixture's PMUs and the attrs it built are read back with `perf
//! evlist -v`:
//! - every member plays, in order, the role of the method's group as
//!   perfq's topdown reads it back (`perfq_topdown::role_of`), one sampler
//!   per group, group reads (`READ`, `ID|GROUP|LOST`) on every member;
//! - where `crates/testgen` has a preset for the method, its events have
//!   the same type, config, sample_type and read_format: the generated
//!   captures the topdown tests use are what `perfq record` records.
//!
//! The test needs no hardware PMU: perf is shown the fixture's PMUs (its
//! `sys/bus/event_source/devices` is bind-mounted over the real one in a
//! private mount namespace, and a preloaded `syscall` wrapper opens each
//! event of a fixture PMU as a software clock with the rest of its attr
//! unchanged), so that perf goes on to write a capture whose attrs are the
//! ones it built.

mod common;

use std::collections::BTreeSet;
use std::path::{Path, PathBuf};
use std::process::Command;

use perfq_record::{plan, Machine, Perf, Plan, Privilege};
use perfq_testgen::oracle;

/// Opens events of the PMU types in `PERFQ_FAKE_TYPES` as software
/// clocks (perf keeps the attr it built; the kernel gets the copy).
const SHIM: &str = r#"
#define _GNU_SOURCE
#include <dlfcn.h>
#include <linux/perf_event.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/syscall.h>

static int faked(unsigned type) {
    const char *list = getenv("PERFQ_FAKE_TYPES");
    char buf[512];
    if (!list) return 0;
    snprintf(buf, sizeof buf, "%s", list);
    for (char *t = strtok(buf, ","); t; t = strtok(NULL, ","))
        if ((unsigned)atoi(t) == type) return 1;
    return 0;
}

long syscall(long n, ...) {
    va_list ap;
    long a[6];
    va_start(ap, n);
    for (int i = 0; i < 6; i++) a[i] = va_arg(ap, long);
    va_end(ap);
    static long (*real)(long, ...);
    if (!real) real = (long (*)(long, ...))dlsym(RTLD_NEXT, "syscall");
    if (n == SYS_perf_event_open) {
        struct perf_event_attr *attr = (struct perf_event_attr *)a[0];
        if (faked(attr->type)) {
            struct perf_event_attr copy;
            size_t size = attr->size && attr->size < sizeof copy ? attr->size : sizeof copy;
            memset(&copy, 0, sizeof copy);
            memcpy(&copy, attr, size);
            copy.size = sizeof copy;
            copy.type = PERF_TYPE_SOFTWARE;
            copy.config = PERF_COUNT_SW_CPU_CLOCK;
            copy.config1 = copy.config2 = 0;
            copy.precise_ip = 0;
            return real(n, &copy, a[1], a[2], a[3], a[4]);
        }
    }
    return real(n, a[0], a[1], a[2], a[3], a[4], a[5]);
}
"#;

/// A perf to check with: its program and the library folder it needs.
struct PerfUnderTest {
    perf: Perf,
    libs: Option<PathBuf>,
}

fn perfs() -> Vec<PerfUnderTest> {
    let mut found = Vec::new();
    match std::env::var_os("PATH").and_then(|p| Perf::find(&p)) {
        Some(perf) => found.push(PerfUnderTest { perf, libs: None }),
        None => oracle::skip("no perf on PATH"),
    }
    let dir = std::env::var_os("PERFQ_PERF612_DIR")
        .map(PathBuf::from)
        .or_else(|| {
            std::env::var_os("HOME").map(|h| PathBuf::from(h).join(".cache/perfq-perf612"))
        });
    match dir.filter(|d| d.join("root/usr/bin/perf").is_file()) {
        Some(d) => {
            let libs = d.join("root/usr/lib/x86_64-linux-gnu");
            let bin = d.join("root/usr/bin/perf");
            let out = Command::new(&bin)
                .arg("--version")
                .env("LD_LIBRARY_PATH", &libs)
                .output()
                .expect("perf 6.12 --version");
            let says = String::from_utf8_lossy(&out.stdout).trim().to_string();
            let perf = Perf {
                path: bin,
                version: perfq_record::Version::find(&says),
                says,
            };
            found.push(PerfUnderTest {
                perf,
                libs: Some(libs),
            });
        }
        None => oracle::skip("perf 6.12 is not unpacked (.ci/perf612.sh)"),
    }
    found
}

/// The wrapper library, built with the system's C compiler.
fn shim(dir: &Path) -> Option<PathBuf> {
    let src = dir.join("shim.c");
    let lib = dir.join("shim.so");
    std::fs::write(&src, SHIM).expect("write shim.c");
    let built = Command::new("cc")
        .args(["-shared", "-fPIC", "-O2", "-o"])
        .arg(&lib)
        .arg(&src)
        .arg("-ldl")
        .status()
        .is_ok_and(|s| s.success());
    built.then_some(lib)
}

/// `unshare` with a private mount namespace (as root; otherwise inside a
/// user namespace), if the system allows one.
fn unshare() -> Option<Vec<&'static str>> {
    let euid = std::fs::read_to_string("/proc/self/status")
        .ok()?
        .lines()
        .find_map(|l| l.strip_prefix("Uid:"))
        .and_then(|l| l.split_whitespace().nth(1).map(str::to_string))?;
    let args = if euid == "0" {
        vec!["unshare", "-m"]
    } else {
        vec!["unshare", "-r", "-m"]
    };
    let works = Command::new(args[0])
        .args(&args[1..])
        .arg("true")
        .status()
        .is_ok_and(|s| s.success());
    works.then_some(args)
}

/// The CPUs the test runs on, for the fixture's hybrid PMUs' `cpus`
/// files (perf opens a hybrid PMU's events on the CPUs it names).
fn online_cpus() -> usize {
    std::thread::available_parallelism().map_or(1, |n| n.get())
}

/// Points each hybrid PMU of the fixture at CPUs the test runs on: the
/// first core type at CPU 0, the next at CPU 1 (or 0).
fn fit_cpus_here(devices: &Path) {
    let mut n = 0;
    for name in ["cpu_core", "cpu_atom"] {
        let cpus = devices.join(name).join("cpus");
        if cpus.is_file() {
            std::fs::write(&cpus, format!("{}\n", n % online_cpus())).expect("cpus");
            n += 1;
        }
    }
}

/// One event as `perf evlist -v` shows it.
#[derive(Debug)]
struct Shown {
    name: String,
    type_: u32,
    config: u64,
    sample_type: BTreeSet<String>,
    read_format: BTreeSet<String>,
    samples: bool,
}

fn parse_evlist(text: &str) -> Vec<Shown> {
    let flags = |v: &str| v.split('|').map(str::to_string).collect::<BTreeSet<_>>();
    text.lines()
        .filter(|line| !line.starts_with('#'))
        .filter_map(|line| {
            let (name, rest) = line.split_once(": ")?;
            let mut e = Shown {
                name: name.to_string(),
                type_: 0,
                config: 0,
                sample_type: BTreeSet::new(),
                read_format: BTreeSet::new(),
                samples: rest.contains("{ sample_period, sample_freq }"),
            };
            for field in rest.split(", ") {
                let Some((k, v)) = field.split_once(": ") else {
                    continue;
                };
                match k {
                    // perf >= 6.x appends the PMU's name: `4 (cpu)`.
                    "type" => {
                        e.type_ = v
                            .split_whitespace()
                            .next()
                            .and_then(|t| t.parse().ok())
                            .expect("type")
                    }
                    "config" => {
                        let hex = v.split_whitespace().next().unwrap_or(v);
                        e.config =
                            u64::from_str_radix(hex.trim_start_matches("0x"), 16).expect("config")
                    }
                    "sample_type" => e.sample_type = flags(v),
                    "read_format" => e.read_format = flags(v),
                    _ => {}
                }
            }
            Some(e)
        })
        .collect()
}

const SAMPLE_TYPE: [&str; 25] = [
    "IP",
    "TID",
    "TIME",
    "ADDR",
    "READ",
    "CALLCHAIN",
    "ID",
    "CPU",
    "PERIOD",
    "STREAM_ID",
    "RAW",
    "BRANCH_STACK",
    "REGS_USER",
    "STACK_USER",
    "WEIGHT",
    "DATA_SRC",
    "IDENTIFIER",
    "TRANSACTION",
    "REGS_INTR",
    "PHYS_ADDR",
    "AUX",
    "CGROUP",
    "DATA_PAGE_SIZE",
    "CODE_PAGE_SIZE",
    "WEIGHT_STRUCT",
];
const READ_FORMAT: [&str; 5] = [
    "TOTAL_TIME_ENABLED",
    "TOTAL_TIME_RUNNING",
    "ID",
    "GROUP",
    "LOST",
];

fn names_of(bits: u64, names: &[&str]) -> BTreeSet<String> {
    names
        .iter()
        .enumerate()
        .filter(|(i, _)| bits & (1 << i) != 0)
        .map(|(_, n)| n.to_string())
        .collect()
}

/// The testgen preset that writes what a plan records: its methods in
/// order, each with whether its groups were cut to fit fewer counters.
fn preset_of(layout: &[(&str, bool)], hybrid: bool) -> Option<&'static str> {
    Some(match (layout, hybrid) {
        ([("glc-gp", false), ("grt-l1", false)], true) => "alderlake-hybrid-gp",
        ([("glc-gp", false), ("grt-l2", false)], true) => "alderlake-hybrid-gp-l2",
        ([("lnc-gp", false), ("skt-l1", false)], true) => "lunarlake-hybrid-gp",
        ([("lnc-gp", false), ("skt-l2", false)], true) => "lunarlake-hybrid-gp-l2",
        (_, true) => return None,
        ([("skl-l2", true)], _) => "skylake-l2-smt",
        ([("zen4-l1", true)], _) => "zen4-watchdog",
        ([("zen4-l2", true)], _) => "zen4-watchdog-l2",
        ([(method, false)], _) => match *method {
            "skl-l1" => "skylake-l1",
            "icl-gp" => "icelake-gp",
            "glc-gp" => "sapphirerapids-gp",
            "zen4-l1" => "zen4",
            "zen4-l2" => "zen4-l2",
            "zen5-l1" => "zen5",
            "zen5-l2" => "zen5-l2",
            "grt-l1" => "gracemont",
            "grt-l2" => "gracemont-l2",
            "n2v2-l1" => "neoverse-v2",
            _ => return None,
        },
        _ => return None,
    })
}

/// Records `plan`'s group with `perf` on the fixture at `root` and
/// returns what `perf evlist -v` shows (perf's dummy tracking event left
/// out).
fn perf_builds(
    perf: &PerfUnderTest,
    root: &Path,
    plan: &Plan,
    shim: &Path,
    unshare: &[&str],
    out: &Path,
) -> Vec<Shown> {
    let devices = root.join("sys/bus/event_source/devices");
    fit_cpus_here(&devices);
    let machine = Machine::read(root);
    let fake: Vec<String> = machine
        .pmus
        .iter()
        .filter(|p| !["software", "tracepoint", "breakpoint"].contains(&p.name.as_str()))
        .filter_map(|p| p.type_)
        .chain([0, 3, 4])
        .map(|t| t.to_string())
        .collect();
    let _ = std::fs::remove_file(out);
    let mut cmd = Command::new(unshare[0]);
    cmd.args(&unshare[1..])
        .args([
            "sh",
            "-c",
            "mount --bind \"$1\" /sys/bus/event_source/devices && shift && exec \"$@\"",
            "sh",
        ])
        .arg(&devices)
        .arg(&perf.perf.path)
        .args(&plan.argv[1..])
        .env("LD_PRELOAD", shim)
        .env("PERFQ_FAKE_TYPES", fake.join(","));
    if let Some(libs) = &perf.libs {
        cmd.env("LD_LIBRARY_PATH", libs);
    }
    let run = cmd.output().expect("run perf record");
    assert!(
        run.status.success() && out.is_file(),
        "{} {:?}: {}",
        perf.perf.says,
        plan.argv,
        String::from_utf8_lossy(&run.stderr)
    );
    let mut evlist = Command::new(&perf.perf.path);
    evlist.args(["evlist", "-v", "-i"]).arg(out);
    if let Some(libs) = &perf.libs {
        evlist.env("LD_LIBRARY_PATH", libs);
    }
    let shown = evlist.output().expect("perf evlist");
    parse_evlist(&String::from_utf8_lossy(&shown.stdout))
        .into_iter()
        .filter(|e| !e.name.starts_with("dummy"))
        .collect()
}

/// Checks perf's attrs against the plan's methods and their presets;
/// returns how many events were held to a preset.
fn check(
    plan: &Plan,
    machine: &Machine,
    shown: &[Shown],
    what: &str,
    without_preset: &mut BTreeSet<String>,
) -> usize {
    let model = plan.model.as_ref().expect("a top-down plan has a model");
    let pmus: Vec<perfq_topdown::PmuInfo> = machine
        .pmus
        .iter()
        .map(|p| perfq_topdown::PmuInfo {
            type_: p.type_,
            name: p.name.clone(),
            caps: p.caps.clone(),
        })
        .collect();
    let hybrid = machine.pmu("cpu_core").is_some();
    let mut at = 0;
    for chosen in &plan.chosen {
        let method = chosen.method;
        let set_use = model
            .sets
            .iter()
            .find(|u| u.set.name == method.set.name)
            .expect("the chosen set is the model's");
        let types = perfq_topdown::pmu_types(set_use.pmu, &pmus).expect("the set's PMU");
        let items: Vec<&String> = chosen.groups.iter().flatten().collect();
        let group = &shown[at..at + items.len()];
        at += items.len();
        for (item, e) in items.iter().zip(group) {
            let key = perfq_topdown::EventKey {
                type_: e.type_,
                config: e.config,
            };
            if method.set.role(item).is_some() {
                let role = perfq_topdown::role_of(set_use, &types, hybrid, key);
                assert_eq!(role, Some(item.as_str()), "{what}: {} read back", e.name);
            } else {
                // perf's generic event the sampler is (no role of the set):
                // PERF_TYPE_HARDWARE, on the set's PMU where one is named.
                let id = perfq_topdown::GENERIC
                    .iter()
                    .position(|g| g == *item)
                    .expect("a generic event") as u64;
                let pmu = (e.config >> 32) as u32;
                assert!(
                    e.type_ == perfq_topdown::TYPE_HARDWARE
                        && e.config & 0xffff_ffff == id
                        && (pmu == 0 || types.contains(&pmu)),
                    "{what}: {} is perf's {item}",
                    e.name
                );
            }
            assert!(
                e.sample_type.contains("READ"),
                "{what}: {} reads the group",
                e.name
            );
            let group_read: BTreeSet<String> = ["ID", "GROUP", "LOST"]
                .iter()
                .map(|s| s.to_string())
                .collect();
            assert_eq!(e.read_format, group_read, "{what}: {}", e.name);
        }
        let mut start = 0;
        for g in &chosen.groups {
            let members = &group[start..start + g.len()];
            start += g.len();
            assert_eq!(
                members.iter().filter(|e| e.samples).count(),
                1,
                "{what}: one sampler in each group of {}",
                method.name
            );
        }
    }
    assert_eq!(at, shown.len(), "{what}: perf built exactly the groups");
    // The methods as recorded on the fixture: the method, and whether its groups
    // were cut to fit.
    let layout: Vec<(&str, bool)> = plan
        .chosen
        .iter()
        .map(|c| (c.method.name.as_str(), c.groups != c.method.groups))
        .collect();
    let Some(name) = preset_of(&layout, hybrid) else {
        let how = |(m, cut): &(&str, bool)| format!("{m}{}", if *cut { " cut" } else { "" });
        let list: Vec<String> = layout.iter().map(how).collect();
        without_preset.insert(list.join(" + "));
        return 0;
    };
    let preset = perfq_testgen::presets::get(name).expect("preset");
    assert_eq!(
        preset.spec.events.len(),
        shown.len(),
        "{what}: preset {name}"
    );
    for (p, e) in preset.spec.events.iter().zip(shown) {
        let ctx = format!("{what}: {} against preset {name}'s {}", e.name, p.name);
        assert_eq!(p.attr.type_, e.type_, "{ctx}: type");
        assert_eq!(p.attr.config, e.config, "{ctx}: config");
        assert_eq!(
            names_of(p.attr.sample_type, &SAMPLE_TYPE),
            e.sample_type,
            "{ctx}: sample_type"
        );
        assert_eq!(
            names_of(p.attr.read_format, &READ_FORMAT),
            e.read_format,
            "{ctx}: read_format"
        );
    }
    shown.len()
}

#[test]
fn perf_builds_the_attrs_perfq_reads_back() {
    let perfs = perfs();
    if perfs.is_empty() {
        return;
    }
    let Some(unshare) = unshare() else {
        oracle::skip("no private mount namespace here (unshare -m)");
        return;
    };
    let work = tempfile::tempdir().expect("tempdir");
    let Some(shim) = shim(work.path()) else {
        oracle::skip("no C compiler (cc) to build the syscall wrapper");
        return;
    };
    let out = work.path().join("perf.data");
    let (mut lines, mut held) = (BTreeSet::new(), 0);
    let mut methods = BTreeSet::new();
    let mut without_preset = BTreeSet::new();
    for (name, root) in common::machines() {
        for p in &perfs {
            for level in [1, 2] {
                let machine = Machine::read(root.path());
                let request = common::request(level, &["true"], &out);
                let Ok(plan) = plan(&machine, &p.perf, Privilege::read(root.path()), &request)
                else {
                    continue;
                };
                let what = format!("{name}, {}, level {level}", p.perf.says);
                let chosen: Vec<String> =
                    plan.chosen.iter().map(|c| c.method.name.clone()).collect();
                if !lines.insert((p.perf.says.clone(), plan.argv.clone(), chosen)) {
                    continue;
                }
                let shown = perf_builds(p, root.path(), &plan, &shim, &unshare, &out);
                held += check(&plan, &machine, &shown, &what, &mut without_preset);
                methods.extend(plan.chosen.iter().map(|c| c.method.name.clone()));
            }
        }
    }
    println!(
        "{} command lines parsed by perf; methods {methods:?}; {held} events equal to a preset's",
        lines.len()
    );
    assert!(
        without_preset.is_empty(),
        "printed without a preset: {without_preset:?}"
    );
    for m in [
        "skl-l1", "icl-gp", "glc-gp", "zen4-l1", "zen5-l1", "n2v2-l1", "grt-l1",
    ] {
        assert!(methods.contains(m), "{m} was printed and parsed");
    }
}
