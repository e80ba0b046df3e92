//! `perfq topdown` and the dataset's group-read columns against
//! independent oracles:
//!
//! 1. `perf report --group` on generated captures of every preset (and
//!    the group reads recorded in `testdata/`): each member's share per
//!    symbol, from the dataset's `samples.m<K>` columns.
//! 2. `perfq dump --symbols`: per-member deltas summed per function (self
//!    and total) equal the `counts` of `perfq topdown --format json`.
//! 3. Alder Lake hybrid: P-core rows use the Golden Cove set, E-core rows
//!    the Gracemont set, each row's values are its formulas applied to its
//!    counts, and E-core rows hold exactly the samples of cpus 16-23.
//! 4. Bad input: an unknown id in the group reads, a cut capture, the
//!    wrong CPU, a group without the level-2 events.

mod common;

use std::collections::{BTreeMap, BTreeSet};
use std::path::{Path, PathBuf};
use std::process::Output;

use common::{perfq_cached as perfq, preset};
use perfq_query::arrow::array::{Array, AsArray};
use perfq_query::arrow::datatypes::{DataType, UInt32Type, UInt64Type};
use perfq_query::arrow::record_batch::RecordBatch;
use perfq_query::Session;
use perfq_testgen::{presets, Binary, CallTree, Preset, Workload, Writer};
use perfq_topdown::{by_name, pmu_types, role_of, Compiled, CpuInfo, EventKey, PmuClass, PmuInfo};
use serde_json::Value;

/// Samples per generated capture.
const SAMPLES: u64 = 3000;

/// A folder of its own for one test.
fn scratch(name: &str) -> PathBuf {
    common::scratch("tdo", name)
}

/// Writes a capture of `preset` running td-demo's call tree.
fn generate(dir: &Path, preset: &Preset, samples: u64) -> PathBuf {
    common::td_demo_capture(&dir.join(format!("{}.data", preset.name)), preset, samples)
}

fn stderr(o: &Output) -> String {
    String::from_utf8_lossy(&o.stderr).into_owned()
}

/// `perfq topdown FILE --format json ARGS`, which must succeed.
fn topdown_json(file: &Path, cache: &Path, args: &[&str]) -> Vec<Value> {
    let mut a = vec![
        "topdown",
        file.to_str().expect("utf-8 path"),
        "--format",
        "json",
    ];
    a.extend_from_slice(args);
    common::perfq_cached_rows(&a, cache)
}

/// `perfq convert FILE -o DATASET` into a dataset of its own.
fn convert(file: &Path, dataset: &Path, extra: &[&str]) {
    let mut a = vec![
        "convert",
        file.to_str().expect("utf-8 path"),
        "-o",
        dataset.to_str().expect("utf-8 path"),
    ];
    a.extend_from_slice(extra);
    common::perfq_cached_ok(&a, dataset);
}

fn col_u64(b: &RecordBatch, name: &str) -> Vec<Option<u64>> {
    let a = b
        .column_by_name(name)
        .unwrap_or_else(|| panic!("no column {name}"));
    let a = perfq_query::arrow::compute::cast(a, &DataType::UInt64).expect("cast to u64");
    let a = a.as_primitive::<UInt64Type>();
    (0..a.len())
        .map(|i| a.is_valid(i).then(|| a.value(i)))
        .collect()
}

fn col_u32(b: &RecordBatch, name: &str) -> Vec<Option<u32>> {
    let a = b
        .column_by_name(name)
        .unwrap_or_else(|| panic!("no column {name}"));
    let a = perfq_query::arrow::compute::cast(a, &DataType::UInt32).expect("cast to u32");
    let a = a.as_primitive::<UInt32Type>();
    (0..a.len())
        .map(|i| a.is_valid(i).then(|| a.value(i)))
        .collect()
}

fn col_str(b: &RecordBatch, name: &str) -> Vec<Option<String>> {
    let a = b
        .column_by_name(name)
        .unwrap_or_else(|| panic!("no column {name}"));
    let a = perfq_query::arrow::compute::cast(a, &DataType::Utf8).expect("cast to utf8");
    let a = a.as_string::<i32>();
    (0..a.len())
        .map(|i| a.is_valid(i).then(|| a.value(i).to_string()))
        .collect()
}

// ---------------------------------------------------------------------
// 1. perf report --group

/// One section of `perf report --group`: the events of the group (or,
/// for events in no group, the events perf shows side by side), and per
/// symbol line the percentage of each.
#[derive(Debug)]
struct PerfSection {
    names: Vec<String>,
    /// Symbol → (percentages summed over the lines with that name, lines).
    lines: BTreeMap<String, (Vec<f64>, usize)>,
}

/// perf's sections. A capture with several groups gets one section per
/// group, in event order, each headed `# Samples: N of events 'anon group
/// { a, b, c }'`; events in no group are forced into one section, headed
/// `of events 'a, b, c'`. Each symbol line has one percentage per member,
/// in group order: the member's period there over the member's total.
fn perf_group_report(file: &Path) -> Option<Vec<PerfSection>> {
    let out = common::perf(&[
        "report",
        "-i",
        file.to_str()?,
        "--group",
        "--stdio",
        "--no-children",
        "--sort",
        "sym",
        "-g",
        "none",
    ])?;
    let mut sections: Vec<PerfSection> = Vec::new();
    for line in out.lines() {
        if let Some(rest) = line.strip_prefix("# Samples: ") {
            let quoted = rest.split_once('\'')?.1.rsplit_once('\'')?.0;
            let list = match (quoted.find('{'), quoted.rfind('}')) {
                (Some(a), Some(z)) if a < z => &quoted[a + 1..z],
                _ => quoted,
            };
            sections.push(PerfSection {
                names: list.split(", ").map(|n| n.trim().to_string()).collect(),
                lines: BTreeMap::new(),
            });
            continue;
        }
        if line.starts_with('#') || line.trim().is_empty() {
            continue;
        }
        let Some(section) = sections.last_mut() else {
            continue;
        };
        let pcts: Vec<f64> = line
            .split_whitespace()
            .map_while(|t| t.strip_suffix('%').and_then(|p| p.parse().ok()))
            .collect();
        if pcts.is_empty() {
            continue;
        }
        assert_eq!(
            pcts.len(),
            section.names.len(),
            "{}: a line with {} percentages in a section of {:?}: {line}",
            file.display(),
            pcts.len(),
            section.names
        );
        let (_, sym) = line.split_once("] ")?;
        let e = section
            .lines
            .entry(sym.trim().to_string())
            .or_insert_with(|| (vec![0.0; pcts.len()], 0));
        for (s, p) in e.0.iter_mut().zip(&pcts) {
            *s += p;
        }
        e.1 += 1;
    }
    Some(sections)
}

/// An event of the dataset.
#[derive(Clone, Debug)]
struct Event {
    id: u32,
    name: String,
    group_leader: Option<u32>,
    member: u32,
}

fn events(session: &Session) -> Vec<Event> {
    let mut out = Vec::new();
    for b in session
        .sql("SELECT event_id, name, group_leader, member FROM events ORDER BY event_id")
        .expect("events")
    {
        let (id, name, leader, member) = (
            col_u32(&b, "event_id"),
            col_str(&b, "name"),
            col_u32(&b, "group_leader"),
            col_u32(&b, "member"),
        );
        for i in 0..b.num_rows() {
            out.push(Event {
                id: id[i].expect("event_id"),
                name: name[i].clone().unwrap_or_default(),
                group_leader: leader[i],
                member: member[i].unwrap_or(0),
            });
        }
    }
    out
}

/// perf's name of a sample's own address: the symbol, else the address
/// in its DSO (`0x` and 16 hex digits), else the address itself.
fn perf_key(symbol: Option<String>, unresolved: Option<u64>) -> String {
    match (symbol, unresolved) {
        (Some(s), _) => s,
        (None, Some(a)) => format!("{a:#018x}"),
        (None, None) => "(no address)".into(),
    }
}

/// Per sampling event and leaf symbol: the sum of `period` and of each
/// `m<K>` column.
type Sums = BTreeMap<(u32, String), [u64; 17]>;

fn leaf_sums(session: &Session) -> Sums {
    let ms: Vec<String> = (0..16).map(|k| format!("s.m{k}")).collect();
    let sums: Vec<String> = (0..16).map(|k| format!("sum(x.m{k}) AS m{k}")).collect();
    let q = format!(
        "SELECT x.event_id, x.symbol, x.unres, sum(x.period) AS period, {} FROM (
           SELECT s.event_id, f.symbol,
                  CASE WHEN f.symbol IS NULL THEN coalesce(f.dso_offset, f.address) END AS unres,
                  s.period, {}
           FROM samples s
           LEFT JOIN frames f
             ON f.capture = s.capture AND f.frame_id = s.leaf_frame_id AND f.inline_depth = 0
         ) x
         GROUP BY x.event_id, x.symbol, x.unres",
        sums.join(", "),
        ms.join(", ")
    );
    let mut out = Sums::new();
    for b in session.sql(&q).expect("leaf sums") {
        let ev = col_u32(&b, "event_id");
        let sym = col_str(&b, "symbol");
        let unres = col_u64(&b, "unres");
        let period = col_u64(&b, "period");
        let m: Vec<Vec<Option<u64>>> = (0..16).map(|k| col_u64(&b, &format!("m{k}"))).collect();
        for i in 0..b.num_rows() {
            let key = (ev[i].expect("event_id"), perf_key(sym[i].clone(), unres[i]));
            let e = out.entry(key).or_insert([0; 17]);
            e[16] += period[i].unwrap_or(0);
            for k in 0..16 {
                e[k] += m[k][i].unwrap_or(0);
            }
        }
    }
    out
}

/// Symbol → the member's sum there, per column of a perf section, from
/// the dataset: for a group, `m<K>` of the rows of the group's events
/// (whichever samples), K = `events.member`; for events perf shows side
/// by side without a group, each event's own periods.
fn section_sums(
    section: &PerfSection,
    events: &[Event],
    sums: &Sums,
    file: &Path,
) -> BTreeMap<String, Vec<u64>> {
    let n = section.names.len();
    // The group whose members, in member order, are the section's names.
    let mut leaders: Vec<u32> = events.iter().filter_map(|e| e.group_leader).collect();
    leaders.dedup();
    let group = leaders.into_iter().find_map(|l| {
        let mut members: Vec<&Event> = events
            .iter()
            .filter(|e| e.group_leader == Some(l))
            .collect();
        members.sort_by_key(|e| e.member);
        let names: Vec<&str> = members.iter().map(|e| e.name.as_str()).collect();
        (names == section.names).then(|| members.iter().map(|e| e.id).collect::<Vec<u32>>())
    });
    let mut out: BTreeMap<String, Vec<u64>> = BTreeMap::new();
    match group {
        Some(ids) => {
            for ((ev, sym), v) in sums {
                if ids.contains(ev) {
                    let e = out.entry(sym.clone()).or_insert_with(|| vec![0; n]);
                    for (k, s) in e.iter_mut().enumerate() {
                        *s += v[k];
                    }
                }
            }
        }
        None => {
            let ids: Vec<u32> = section
                .names
                .iter()
                .map(|name| {
                    events
                        .iter()
                        .find(|e| &e.name == name && e.group_leader.is_none())
                        .unwrap_or_else(|| {
                            panic!(
                                "{}: perf's section {:?} is no group of the dataset's events {events:?}",
                                file.display(),
                                section.names
                            )
                        })
                        .id
                })
                .collect();
            for ((ev, sym), v) in sums {
                if let Some(k) = ids.iter().position(|i| i == ev) {
                    out.entry(sym.clone()).or_insert_with(|| vec![0; n])[k] += v[16];
                }
            }
        }
    }
    out
}

/// Whether perf named kernel frames (`[k] name`, not an address): with no
/// vmlinux or build-id cache here, it took them from the running kernel's
/// /proc/kallsyms, which it does for a capture without a kernel build id
/// whatever kernel recorded it. perfq is then given the same kallsyms.
fn perf_named_kernel_frames(file: &Path) -> bool {
    common::perf(&[
        "report",
        "-i",
        file.to_str().expect("path"),
        "--stdio",
        "--no-children",
        "--sort",
        "sym",
        "-g",
        "none",
    ])
    .is_some_and(|out| {
        out.lines().any(|l| {
            l.split_once("[k] ")
                .is_some_and(|(_, s)| !s.trim().starts_with("0x"))
        })
    })
}

/// Checks every member's share per symbol against `perf report --group`;
/// returns the number of (section, symbol) lines compared.
fn agree_with_perf_group(file: &Path, dir: &Path) -> usize {
    let sections = perf_group_report(file)
        .unwrap_or_else(|| panic!("perf report --group -i {} failed", file.display()));
    assert!(
        !sections.is_empty(),
        "{}: perf printed no section",
        file.display()
    );
    let dataset = dir.join(format!(
        "ds-{}",
        file.file_stem().unwrap_or_default().to_string_lossy()
    ));
    let _ = std::fs::remove_dir_all(&dataset);
    let kallsyms: &[&str] = if perf_named_kernel_frames(file) {
        &["--kallsyms", "/proc/kallsyms"]
    } else {
        &[]
    };
    convert(file, &dataset, kallsyms);
    let session = Session::open(&dataset).expect("open dataset");
    let events = events(&session);
    let sums = leaf_sums(&session);
    let mut compared = 0;
    for section in &sections {
        let ours = section_sums(section, &events, &sums, file);
        let n = section.names.len();
        let totals: Vec<u64> = (0..n).map(|k| ours.values().map(|v| v[k]).sum()).collect();
        let share = |v: &[u64], k: usize| {
            if totals[k] == 0 {
                0.0
            } else {
                100.0 * v[k] as f64 / totals[k] as f64
            }
        };
        let ctx = format!("{} {:?}", file.display(), section.names);
        for (sym, (pcts, lines)) in &section.lines {
            let v = ours.get(sym).cloned().unwrap_or_else(|| vec![0; n]);
            for k in 0..n {
                let ours = share(&v, k);
                // perf prints 2 decimals: ±0.005 each line it printed.
                let tolerance = 0.01 * *lines as f64 + 1e-9;
                assert!(
                    (ours - pcts[k]).abs() <= tolerance,
                    "{ctx}: {sym}: {}: perf {:.2}%, perfq {ours:.4}% ({} of {})",
                    section.names[k],
                    pcts[k],
                    v[k],
                    totals[k]
                );
            }
            compared += 1;
        }
        // Nothing perfq attributes is missing from perf's lines.
        for (sym, v) in &ours {
            if v.iter().any(|&x| x > 0) {
                assert!(
                    section.lines.contains_key(sym),
                    "{ctx}: perfq has {sym} {v:?}, perf has no line for it"
                );
            }
        }
    }
    compared
}

fn skip_without_perf(what: &str) -> bool {
    if !common::have_perf() {
        common::skip(format_args!(
            "perf is not installed; {what} not compared with perf"
        ));
        return true;
    }
    false
}

fn perf_group_preset(name: &str) {
    if skip_without_perf(name) {
        return;
    }
    let dir = scratch(&format!("perf-{name}"));
    let file = generate(&dir, &preset(name), SAMPLES);
    let n = agree_with_perf_group(&file, &dir);
    assert!(n >= 7, "{name}: only {n} lines compared");
    println!("{name}: {n} symbol lines agree with perf report --group");
    let _ = std::fs::remove_dir_all(&dir);
}

#[test]
fn perf_group_icelake() {
    perf_group_preset("icelake");
}

#[test]
fn perf_group_icelake_corrections() {
    perf_group_preset("icelake-corrections");
}

#[test]
fn perf_group_sapphirerapids() {
    perf_group_preset("sapphirerapids");
}

#[test]
fn perf_group_icelake_gp() {
    perf_group_preset("icelake-gp");
}

#[test]
fn perf_group_sapphirerapids_gp() {
    perf_group_preset("sapphirerapids-gp");
}

#[test]
fn perf_group_skylake() {
    perf_group_preset("skylake");
}

#[test]
fn perf_group_skylake_l1() {
    perf_group_preset("skylake-l1");
}

/// Level 2 in four groups taking turns (SMT on: four counters a thread).
#[test]
fn perf_group_skylake_l2_smt() {
    perf_group_preset("skylake-l2-smt");
}

#[test]
fn perf_group_zen4() {
    perf_group_preset("zen4");
}

/// Three groups taking turns: perf prints three sections, each headed by
/// its own member list (all three start with `cycles`).
#[test]
fn perf_group_zen4_l2() {
    perf_group_preset("zen4-l2");
}

/// Level 1 cut into two groups (an NMI watchdog holds a counter).
#[test]
fn perf_group_zen4_watchdog() {
    perf_group_preset("zen4-watchdog");
}

#[test]
fn perf_group_zen4_watchdog_l2() {
    perf_group_preset("zen4-watchdog-l2");
}

#[test]
fn perf_group_zen4_ris() {
    perf_group_preset("zen4-ris");
}

/// No group: perf --group shows the events side by side in one section,
/// each with its own periods.
#[test]
fn perf_group_zen4_independent() {
    perf_group_preset("zen4-independent");
}

#[test]
fn perf_group_zen5() {
    perf_group_preset("zen5");
}

#[test]
fn perf_group_zen5_l2() {
    perf_group_preset("zen5-l2");
}

#[test]
fn perf_group_gracemont() {
    perf_group_preset("gracemont");
}

#[test]
fn perf_group_gracemont_l2() {
    perf_group_preset("gracemont-l2");
}

#[test]
fn perf_group_neoverse_v2() {
    perf_group_preset("neoverse-v2");
}

/// One P-core group and two E-core groups (sections in event order).
#[test]
fn perf_group_alderlake_hybrid() {
    perf_group_preset("alderlake-hybrid");
}

/// The P-cores on general-purpose counters, the E-cores' level 1.
#[test]
fn perf_group_alderlake_hybrid_gp() {
    perf_group_preset("alderlake-hybrid-gp");
}

/// The same with the E-cores' level 2 in a second group.
#[test]
fn perf_group_alderlake_hybrid_gp_l2() {
    perf_group_preset("alderlake-hybrid-gp-l2");
}

/// Lion Cove on general-purpose counters, Skymont's level 1.
#[test]
fn perf_group_lunarlake_hybrid_gp() {
    perf_group_preset("lunarlake-hybrid-gp");
}

/// The same with Skymont's level 2 in a second group.
#[test]
fn perf_group_lunarlake_hybrid_gp_l2() {
    perf_group_preset("lunarlake-hybrid-gp-l2");
}

/// Every preset (every group layout `perfq record` records, cut into
/// groups or not) is answered at level 2, self and total: the generated
/// SQL stays within what the engine parses however many roles and groups
/// the formulas mix, and the level-1 shares of each row sum to 1 (within
/// half a point) or the row says why not.
#[test]
fn every_preset_is_answered_at_level_2() {
    for name in presets::NAMES {
        let dir = scratch(&format!("answered-{name}"));
        let cache = dir.join("cache");
        let file = generate(&dir, &preset(name), 400);
        for mode in [
            &["--level", "2", "--min-samples", "1"][..],
            &["--level", "2", "--total"],
        ] {
            let rows = topdown_json(&file, &cache, mode);
            assert!(!rows.is_empty(), "{name} {mode:?}: no rows");
            for r in &rows {
                let l1: Option<f64> = [
                    "retiring",
                    "bad_speculation",
                    "frontend_bound",
                    "backend_bound",
                ]
                .iter()
                .map(|n| r[*n].as_f64())
                .sum();
                let smt = r["smt_contention"].as_f64().unwrap_or(0.0);
                // A row whose level-1 shares are more than half a point
                // from 1 says so (perfq's own slack): a function sampled
                // only by a group that lacks them (groups take turns), or
                // events sampled each on their own.
                let said = r["issues"].as_str().is_some_and(|i| !i.is_empty());
                if let (Some(sum), false) = (l1, said) {
                    assert!((sum + smt - 1.0).abs() <= 0.005, "{name} {mode:?}: {r}");
                }
            }
        }
        let _ = std::fs::remove_dir_all(&dir);
    }
}

#[test]
fn every_preset_is_compared_with_perf() {
    // The tests above, one per preset: a new preset needs one too.
    let tested = [
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
    for n in presets::NAMES {
        assert!(tested.contains(n), "preset {n} has no perf --group test");
    }
}

/// Software-event group reads of `testdata/` recorded by perf: system binaries,
/// unresolved addresses and kernel frames.
#[test]
fn perf_group_recorded_captures() {
    if skip_without_perf("testdata group captures") {
        return;
    }
    let dir = scratch("perf-recorded");
    for name in ["group.data", "group-pipe.data"] {
        let n = agree_with_perf_group(&common::testdata(name), &dir);
        assert!(n >= 10, "{name}: only {n} lines compared");
        println!("{name}: {n} symbol lines agree with perf report --group");
    }
    let _ = std::fs::remove_dir_all(&dir);
}

// ---------------------------------------------------------------------
// 2. Slot sums per function against perfq dump

/// The capture's PMUs as perfq-topdown takes them.
fn pmus(p: &Preset) -> Vec<PmuInfo> {
    let caps = |name: &str| -> Vec<(String, String)> {
        p.spec
            .pmu_caps
            .iter()
            .flatten()
            .filter(|c| c.0 == name)
            .flat_map(|c| c.1.clone())
            .collect()
    };
    p.spec
        .pmu_mappings
        .iter()
        .map(|(t, n)| PmuInfo {
            type_: Some(*t),
            name: n.clone(),
            caps: caps(n),
        })
        .collect()
}

fn cpu_info(p: &Preset) -> CpuInfo {
    CpuInfo {
        arch: Some(p.spec.arch.clone()),
        cpuid: Some(p.spec.cpuid.clone()),
        pmus: pmus(p),
    }
}

/// Which role each event of a preset plays in one formula set.
struct Roles {
    /// Event name → role.
    by_name: BTreeMap<String, String>,
    /// Roles more than one event plays (the `cycles` leader of each of
    /// several groups): perfq takes such a role from one of them.
    ambiguous: BTreeSet<String>,
    /// The set compiled for the roles present.
    compiled: Compiled,
}

/// The roles of `p`'s events in the `set`-th formula set of `model`,
/// from each event's (type, config) as perfq recognizes them.
fn roles(p: &Preset, model: &str, set: usize) -> Roles {
    let info = cpu_info(p);
    let m = by_name(model, &info).expect("model");
    let u = &m.sets[set];
    let types = pmu_types(u.pmu, &info.pmus).expect("pmu types");
    let hybrid = info
        .pmus
        .iter()
        .any(|x| x.name == "cpu_core" || x.name == "cpu_atom");
    let mut by_name = BTreeMap::new();
    let mut players: BTreeMap<String, usize> = BTreeMap::new();
    for e in &p.spec.events {
        let key = EventKey {
            type_: e.attr.type_,
            config: e.attr.config,
        };
        if let Some(r) = role_of(u, &types, hybrid, key) {
            let old = by_name.insert(e.name.clone(), r.to_string());
            assert!(
                old.is_none_or(|o| o == r),
                "{}: two roles for {}",
                p.name,
                e.name
            );
            *players.entry(r.to_string()).or_default() += 1;
        }
    }
    let present: BTreeSet<&String> = players.keys().collect();
    let compiled = u.compile(&|r| present.contains(&r.to_string()));
    Roles {
        by_name,
        ambiguous: players
            .into_iter()
            .filter(|(_, n)| *n > 1)
            .map(|(r, _)| r)
            .collect(),
        compiled,
    }
}

/// One sample of `perfq dump --symbols`.
#[derive(Debug)]
struct DumpSample {
    cpu: Option<u64>,
    /// The leaf frame's symbol, then every frame's (leaf first).
    symbols: Vec<Option<String>>,
    /// (member event name, delta).
    deltas: Vec<(Option<String>, u64)>,
}

fn dump_samples(file: &Path, cache: &Path) -> Vec<DumpSample> {
    common::perfq_cached_ok(
        &["dump", file.to_str().expect("utf-8 path"), "--symbols"],
        cache,
    )
    .lines()
    .map(|l| {
        let v: Value = serde_json::from_str(l).expect("dump line is JSON");
        let frames = v["frames"].as_array().cloned().unwrap_or_default();
        assert_eq!(
            frames.first().map(|f| &f["addr"]),
            Some(&v["ip"]),
            "the first frame is the sample's ip: {l}"
        );
        DumpSample {
            cpu: v["cpu"].as_u64(),
            symbols: frames
                .iter()
                .map(|f| f["symbol"].as_str().map(str::to_string))
                .collect(),
            deltas: v["read"]["values"]
                .as_array()
                .map(|vals| {
                    vals.iter()
                        .filter_map(|m| {
                            Some((
                                m["event"].as_str().map(str::to_string),
                                m["delta"].as_u64()?,
                            ))
                        })
                        .collect()
                })
                .unwrap_or_default(),
        }
    })
    .collect()
}

/// Per symbol: (samples, role → sum of the members' deltas), self (the
/// leaf) or total (every distinct symbol of the stack once).
type RoleSums = BTreeMap<String, (u64, BTreeMap<String, u64>)>;

fn role_sums(
    samples: &[DumpSample],
    roles: &BTreeMap<String, String>,
    total: bool,
    keep: &dyn Fn(&DumpSample) -> bool,
) -> RoleSums {
    let mut out = RoleSums::new();
    for s in samples.iter().filter(|s| keep(s)) {
        let syms: BTreeSet<&str> = if total {
            s.symbols.iter().flatten().map(String::as_str).collect()
        } else {
            s.symbols
                .first()
                .and_then(|x| x.as_deref())
                .into_iter()
                .collect()
        };
        for sym in syms {
            let e = out.entry(sym.to_string()).or_default();
            e.0 += 1;
            for (ev, d) in &s.deltas {
                if let Some(role) = ev.as_ref().and_then(|n| roles.get(n)) {
                    *e.1.entry(role.clone()).or_default() += d;
                }
            }
        }
    }
    out
}

/// A row's counts as integers (they are sums of integer deltas).
fn row_counts(row: &Value) -> BTreeMap<String, u64> {
    row["counts"]
        .as_object()
        .unwrap_or_else(|| panic!("no counts in {row}"))
        .iter()
        .map(|(k, v)| {
            let x = v.as_f64().unwrap_or_else(|| panic!("count {k} of {row}"));
            assert!(
                x >= 0.0 && x.fract() == 0.0 && x < 9.0e15,
                "count {k} = {x} is no exact integer"
            );
            (k.clone(), x as u64)
        })
        .collect()
}

/// Each row's counts equal the oracle's sums for its symbol: the roles
/// the set's computed nodes use, each exactly (roles several events play
/// only by name: perfq takes them from one event).
fn check_counts(what: &str, rows: &[Value], oracle: &RoleSums, roles: &Roles) {
    let ours: BTreeSet<&str> = rows.iter().filter_map(|r| r["symbol"].as_str()).collect();
    let theirs: BTreeSet<&str> = oracle.keys().map(String::as_str).collect();
    assert_eq!(ours, theirs, "{what}: symbols");
    for r in rows {
        let sym = r["symbol"].as_str().expect("symbol");
        let (n, want) = &oracle[sym];
        assert_eq!(r["samples"].as_u64(), Some(*n), "{what}: {sym}: samples");
        let got = row_counts(r);
        // A role that leads several groups taking turns (the E-cores'
        // cycles) is counted per group: `cycles__g0`, `cycles__g1`.
        let mut want_keys: BTreeSet<String> = BTreeSet::new();
        for role in &roles.compiled.roles {
            let split: Vec<&String> = got
                .keys()
                .filter(|k| k.starts_with(&format!("{role}__g")))
                .collect();
            if split.is_empty() {
                want_keys.insert(role.clone());
            } else {
                want_keys.extend(split.into_iter().cloned());
            }
        }
        assert_eq!(
            got.keys().cloned().collect::<BTreeSet<_>>(),
            want_keys,
            "{what}: {sym}: the roles counted"
        );
        let base = |r: &str| r.split("__g").next().unwrap_or(r).to_string();
        for (role, v) in got
            .iter()
            .filter(|(r, _)| !roles.ambiguous.contains(&base(r)))
        {
            assert_eq!(
                Some(v),
                want.get(role).or(Some(&0)),
                "{what}: {sym}: {role}"
            );
        }
    }
}

#[test]
fn slot_sums_per_function_equal_dump_deltas() {
    for (name, model) in [
        ("sapphirerapids", "sapphirerapids"),
        ("zen4", "amdzen4"),
        ("neoverse-v2", "neoverse-v2"),
    ] {
        let dir = scratch(&format!("sums-{name}"));
        let cache = dir.join("cache");
        let p = preset(name);
        let file = generate(&dir, &p, SAMPLES);
        let roles = roles(&p, model, 0);
        assert!(roles.ambiguous.is_empty(), "{name}: {:?}", roles.ambiguous);
        let dump = dump_samples(&file, &cache);
        assert_eq!(dump.len() as u64, SAMPLES);
        let args = ["--level", "2", "--min-samples", "1"];
        let rows = topdown_json(&file, &cache, &args);
        let oracle = role_sums(&dump, &roles.by_name, false, &|_| true);
        check_counts(&format!("{name} self"), &rows, &oracle, &roles);
        let rows = topdown_json(&file, &cache, &[&args[..], &["--total"]].concat());
        let oracle = role_sums(&dump, &roles.by_name, true, &|_| true);
        check_counts(&format!("{name} total"), &rows, &oracle, &roles);
        // main is on every stack.
        assert_eq!(oracle["main"].0, SAMPLES, "{name}: main's total samples");
        println!(
            "{name}: {:?} agree per function, self and total",
            roles.compiled.roles
        );
        let _ = std::fs::remove_dir_all(&dir);
    }
}

// ---------------------------------------------------------------------
// 3. Hybrid

const GLC_L2: [&str; 8] = [
    "heavy_operations",
    "light_operations",
    "branch_mispredicts",
    "machine_clears",
    "fetch_latency",
    "fetch_bandwidth",
    "memory_bound",
    "core_bound",
];
const GRT_L2: [&str; 6] = [
    "fetch_latency",
    "fetch_bandwidth",
    "branch_mispredicts",
    "machine_clears",
    "core_bound",
    "resource_bound",
];
const ALL_NODES: [&str; 14] = [
    "retiring",
    "bad_speculation",
    "frontend_bound",
    "backend_bound",
    "smt_contention",
    "heavy_operations",
    "light_operations",
    "branch_mispredicts",
    "machine_clears",
    "fetch_latency",
    "fetch_bandwidth",
    "memory_bound",
    "core_bound",
    "resource_bound",
];

/// Each row's values are its set's formulas applied to its own counts;
/// the row's nodes are those of its core type's set.
fn check_hybrid_rows(what: &str, rows: &[Value], sets: &BTreeMap<&str, Roles>) {
    for r in rows {
        let core = r["core"]
            .as_str()
            .unwrap_or_else(|| panic!("{what}: no core in {r}"));
        let c = &sets
            .get(core)
            .unwrap_or_else(|| panic!("{what}: core {core}"))
            .compiled;
        let want_l2: &[&str] = if core == "cpu_core" { &GLC_L2 } else { &GRT_L2 };
        let have: BTreeSet<&str> = ALL_NODES
            .iter()
            .copied()
            .filter(|n| r.get(*n).is_some())
            .collect();
        let mut want: BTreeSet<&str> = want_l2.iter().copied().collect();
        want.extend([
            "retiring",
            "bad_speculation",
            "frontend_bound",
            "backend_bound",
        ]);
        assert_eq!(have, want, "{what}: nodes of a {core} row: {r}");
        let counts = row_counts(r);
        // The E-cores' two groups took turns on the counters, each led by
        // cycles: perfq keeps each group's cycles apart (`cycles__g0`, the
        // group with more of the set's events: level 2 here; `cycles__g1`,
        // level 1) and scales each event by its own group's share of the
        // cycles (docs/topdown.md), so the formula sees rates of the same
        // time.
        let get = |role: &str| -> Option<f64> {
            let v = |k: &str| counts.get(k).map(|&v| v as f64);
            let (Some(c0), Some(c1)) = (v("cycles__g0"), v("cycles__g1")) else {
                return v(role);
            };
            let l2 = [
                "fe_latency",
                "fe_bandwidth",
                "mispredict",
                "machine_clear",
                "alloc_restrict",
            ];
            let own = if l2.contains(&role) { c0 } else { c1 };
            match role {
                "cycles" => Some(c0 + c1),
                _ if own == 0.0 => None,
                _ => Some(v(role)? * (c0 + c1) / own),
            }
        };
        let values = c.evaluate(&get);
        assert_eq!(values.len(), want.len(), "{what}: {core} compiled nodes");
        for (node, v) in values {
            let got = r[&node].as_f64();
            let want = v.map(|x| x.clamp(0.0, 1.0));
            match (got, want) {
                (Some(g), Some(w)) => assert!(
                    (g - w).abs() <= 1e-9,
                    "{what}: {} ({core}) {node}: perfq {g}, formula {w}",
                    r["symbol"]
                ),
                (g, w) => assert_eq!(g, w, "{what}: {} ({core}) {node}", r["symbol"]),
            }
        }
    }
}

#[test]
fn hybrid_rows_by_core_type() {
    let dir = scratch("hybrid");
    let cache = dir.join("cache");
    let p = preset("alderlake-hybrid");
    let file = generate(&dir, &p, SAMPLES);
    let info = cpu_info(&p);
    let model = by_name("alderlake", &info).expect("alderlake");
    let mut sets: BTreeMap<&str, Roles> = BTreeMap::new();
    for (i, u) in model.sets.iter().enumerate() {
        if u.set.name == "intel-glc-gp" {
            // The P-core's general-purpose alternative: this capture
            // recorded PERF_METRICS.
            continue;
        }
        let (core, set) = match u.pmu {
            PmuClass::Atom => ("cpu_atom", "intel-grt"),
            _ => ("cpu_core", "intel-glc"),
        };
        assert_eq!(u.set.name, set);
        sets.insert(core, roles(&p, "alderlake", i));
    }
    assert_eq!(sets.len(), 2, "a P-core and an E-core set");
    let args = ["--level", "2", "--min-samples", "1"];
    let rows = topdown_json(&file, &cache, &args);
    check_hybrid_rows("self", &rows, &sets);
    let total = topdown_json(&file, &cache, &[&args[..], &["--total"]].concat());
    check_hybrid_rows("total", &total, &sets);

    // E-core rows hold the samples of cpus 16-23, P-core rows the others;
    // and the counts are those of each core's members.
    let dump = dump_samples(&file, &cache);
    let atom_cpus = 16..24;
    let e_samples = dump
        .iter()
        .filter(|s| s.cpu.is_some_and(|c| atom_cpus.contains(&c)))
        .count() as u64;
    assert!(e_samples > 100, "E-core samples: {e_samples}");
    assert!(
        e_samples < SAMPLES - 100,
        "P-core samples: {}",
        SAMPLES - e_samples
    );
    for (core, on_core) in [("cpu_atom", true), ("cpu_core", false)] {
        let keep = |s: &DumpSample| s.cpu.is_some_and(|c| atom_cpus.contains(&c)) == on_core;
        let ours: Vec<Value> = rows.iter().filter(|r| r["core"] == core).cloned().collect();
        let oracle = role_sums(&dump, &sets[core].by_name, false, &keep);
        check_counts(&format!("{core} self"), &ours, &oracle, &sets[core]);
        let n: u64 = ours
            .iter()
            .map(|r| r["samples"].as_u64().unwrap_or(0))
            .sum();
        let want = if on_core {
            e_samples
        } else {
            SAMPLES - e_samples
        };
        assert_eq!(n, want, "{core}: samples of its rows");
    }
    let _ = std::fs::remove_dir_all(&dir);
}

/// The E-cores' level-2 events are a group of their own
/// (`{cpu_atom/cycles/, topdown_fe_bound.frontend_latency, ...}`) taking
/// turns with the level-1 group: their sums cover the time that group
/// ran, so each is a share of that group's own cycles, not of the
/// level-1 group's.
#[test]
fn hybrid_level2_nodes_use_their_own_groups_cycles() {
    let dir = scratch("hybrid-l2");
    let cache = dir.join("cache");
    let p = preset("alderlake-hybrid");
    let file = generate(&dir, &p, SAMPLES);
    let rows = topdown_json(&file, &cache, &["--level", "2", "--min-samples", "1"]);
    let dump = dump_samples(&file, &cache);
    let l2 = [
        (
            "fetch_latency",
            "cpu_atom/topdown_fe_bound.frontend_latency/",
        ),
        (
            "fetch_bandwidth",
            "cpu_atom/topdown_fe_bound.frontend_bandwidth/",
        ),
        (
            "branch_mispredicts",
            "cpu_atom/topdown_bad_speculation.mispredict/",
        ),
        (
            "machine_clears",
            "cpu_atom/topdown_bad_speculation.machine_clears/",
        ),
        (
            "core_bound",
            "cpu_atom/topdown_be_bound.alloc_restrictions/",
        ),
    ];
    // Per leaf symbol, over the level-2 group's samples: its cycles and
    // each of its events.
    let mut sums: BTreeMap<String, BTreeMap<&str, u64>> = BTreeMap::new();
    for s in &dump {
        let names: Vec<&str> = s.deltas.iter().filter_map(|d| d.0.as_deref()).collect();
        if !names.contains(&l2[0].1) {
            continue;
        }
        let Some(Some(sym)) = s.symbols.first() else {
            continue;
        };
        let e = sums.entry(sym.clone()).or_default();
        for (name, d) in &s.deltas {
            *e.entry(match name.as_deref() {
                Some(n) => l2.iter().find(|x| x.1 == n).map_or(n, |x| x.0),
                None => "?",
            })
            .or_default() += d;
        }
    }
    for r in rows.iter().filter(|r| r["core"] == "cpu_atom") {
        let sym = r["symbol"].as_str().expect("symbol");
        let s = &sums[sym];
        let slots = 5.0 * s["cpu_atom/cycles/"] as f64;
        for (node, _) in l2 {
            let want = (s[node] as f64 / slots).clamp(0.0, 1.0);
            let got = r[node].as_f64().expect("value");
            assert!(
                (got - want).abs() <= 1e-9,
                "{sym} {node}: perfq {got}, its group's {want}"
            );
        }
    }
    let _ = std::fs::remove_dir_all(&dir);
}

// ---------------------------------------------------------------------
// 4. Bad input

/// stderr's lines, checked to be perfq's own messages (no panic).
fn messages(o: &Output) -> Vec<String> {
    let err = stderr(o);
    assert!(!err.contains("panicked"), "perfq panicked: {err}");
    assert_ne!(o.status.code(), Some(101), "perfq panicked: {err}");
    assert!(o.status.code().is_some(), "perfq was killed: {err}");
    let lines: Vec<String> = err.lines().map(str::to_string).collect();
    for l in &lines {
        assert!(l.starts_with("perfq: "), "not a perfq message: {l}");
    }
    lines
}

/// A Sapphire Rapids capture whose `topdown-mem-bound` reads carry an id
/// no event has (every sample's). Returns it with the same capture
/// unpatched.
fn capture_with_unknown_id(dir: &Path) -> (PathBuf, PathBuf) {
    let p = preset("sapphirerapids");
    let demo = common::td_demo();
    let binary = Binary::open(&demo).expect("open td-demo");
    let workload = Workload::new(&binary, &demo.to_string_lossy());
    let good = dir.join("good.data");
    let spec = workload.spec(&p);
    let mem = spec
        .events
        .iter()
        .position(|e| e.name == "topdown-mem-bound")
        .expect("topdown-mem-bound");
    let mut w = Writer::create(&good, &spec).expect("create");
    let ids: Vec<u64> = w.ids(mem).to_vec();
    workload
        .run(&p, &CallTree::td_demo(), 600, &mut w, |_| {})
        .expect("samples");
    w.finish().expect("finish");
    let mut bytes = std::fs::read(&good).expect("read");
    // perf_file_header: data {offset, size} at byte 40.
    let u64_at = |b: &[u8], at: usize| u64::from_le_bytes(b[at..at + 8].try_into().unwrap());
    let (off, size) = (u64_at(&bytes, 40) as usize, u64_at(&bytes, 48) as usize);
    let mut patched = 0;
    // Records are 8-byte aligned, and so is every u64 in them.
    for at in (off..off + size).step_by(8) {
        let v = u64_at(&bytes, at);
        if ids.contains(&v) {
            bytes[at..at + 8].copy_from_slice(&(0xdead_0000 + v).to_le_bytes());
            patched += 1;
        }
    }
    assert_eq!(patched, 600, "one read of the member per sample");
    let bad = dir.join("unknown-id.data");
    std::fs::write(&bad, bytes).expect("write");
    (bad, good)
}

/// (a) The known members still give their numbers, as perf's do (it
/// skips values of unknown ids): level 1 and the level-2 nodes that do
/// not use the member are those of the intact capture.
#[test]
fn bad_input_unknown_id_in_group_read() {
    let dir = scratch("unknown-id");
    let cache = dir.join("cache");
    let (bad, good) = capture_with_unknown_id(&dir);
    let args = [
        "topdown",
        bad.to_str().unwrap(),
        "--format",
        "json",
        "--level",
        "2",
        "--min-samples",
        "1",
    ];
    let out = perfq(&args, &cache);
    let msgs = messages(&out);
    println!("stderr: {msgs:?}");
    assert_eq!(out.status.code(), Some(0), "{msgs:?}");
    // Why the member is missing, and which nodes are left out for it.
    assert_eq!(msgs.len(), 2, "{msgs:?}");
    assert!(
        msgs[1].contains("memory_bound, core_bound not computed"),
        "{msgs:?}"
    );
    let rows: Vec<Value> = serde_json::from_slice(&out.stdout).expect("json");
    let intact = topdown_json(&good, &cache, &args[4..]);
    assert_eq!(rows.len(), intact.len());
    for r in &rows {
        let sym = &r["symbol"];
        let i = intact
            .iter()
            .find(|x| &x["symbol"] == sym)
            .expect("same symbols");
        assert_eq!(r["samples"], i["samples"], "{sym}");
        for node in [
            "retiring",
            "bad_speculation",
            "frontend_bound",
            "backend_bound",
            "heavy_operations",
            "light_operations",
            "branch_mispredicts",
            "machine_clears",
            "fetch_latency",
            "fetch_bandwidth",
        ] {
            assert_eq!(r[node], i[node], "{sym}: {node}");
        }
        let (rc, ic) = (row_counts(r), row_counts(i));
        for role in [
            "slots",
            "td_retiring",
            "td_bad_spec",
            "td_fe_bound",
            "td_be_bound",
        ] {
            assert_eq!(rc.get(role), ic.get(role), "{sym}: {role}");
        }
    }
    // perf report --group: the member's column is 0 (its values skipped),
    // the others as in the intact capture; perfq's columns agree.
    if common::have_perf() {
        let n = agree_with_perf_group(&bad, &dir);
        assert!(n >= 7, "only {n} lines compared");
    }
    let _ = std::fs::remove_dir_all(&dir);
}

/// (a) continued: a member none of whose values could be matched to an
/// event is not a measurement of 0.
#[test]
fn bad_input_unknown_id_is_not_a_zero() {
    let dir = scratch("unknown-id-zero");
    let cache = dir.join("cache");
    let (bad, _) = capture_with_unknown_id(&dir);
    let out = perfq(
        &[
            "topdown",
            bad.to_str().unwrap(),
            "--format",
            "json",
            "--level",
            "2",
            "--min-samples",
            "1",
        ],
        &cache,
    );
    let msgs = messages(&out);
    println!("stderr: {msgs:?}");
    assert_eq!(out.status.code(), Some(0), "{msgs:?}");
    assert_eq!(
        msgs.len(),
        2,
        "the unknown ids, then the nodes left out: {msgs:?}"
    );
    assert!(
        msgs[0].contains("unknown-id.data") && msgs[0].contains("id"),
        "{msgs:?}"
    );
    let rows: Vec<Value> = serde_json::from_slice(&out.stdout).expect("json");
    for r in &rows {
        assert!(
            r["memory_bound"].is_null() && !r["counts"]["td_mem_bound"].is_number(),
            "memory_bound from no readable value: {r}"
        );
    }
    let _ = std::fs::remove_dir_all(&dir);
}

/// A Sapphire Rapids capture cut at 60% of its size: the feature sections
/// (CPU id, event names, groups) are gone with the end of the data.
fn cut_capture(dir: &Path) -> (PathBuf, u64) {
    let p = preset("sapphirerapids");
    let full = generate(dir, &p, SAMPLES);
    let bytes = std::fs::read(&full).expect("read");
    let cut = dir.join("cut.data");
    std::fs::write(&cut, &bytes[..bytes.len() * 6 / 10]).expect("write");
    // The samples wholly inside the cut.
    let out = perfq(&["dump", cut.to_str().unwrap()], dir);
    let samples = String::from_utf8_lossy(&out.stdout).lines().count() as u64;
    assert!(samples > SAMPLES / 3 && samples < SAMPLES, "{samples}");
    (cut, samples)
}

/// (b) perfq says where the file is cut and what it cannot do, in lines
/// of its own, and does not panic.
#[test]
fn bad_input_cut_capture() {
    let dir = scratch("cut");
    let cache = dir.join("cache");
    let (cut, _) = cut_capture(&dir);
    let out = perfq(
        &[
            "topdown",
            cut.to_str().unwrap(),
            "--format",
            "json",
            "--min-samples",
            "1",
        ],
        &cache,
    );
    let msgs = messages(&out);
    println!("stderr: {msgs:?}");
    let code = out.status.code();
    assert!(code == Some(0) || code == Some(1), "{code:?}: {msgs:?}");
    assert!(
        msgs.iter().any(|m| m.contains("warning: ")
            && m.contains("cut.data")
            && m.contains("is cut")
            && m.contains("offset 0x")),
        "a warning naming the file and the offset: {msgs:?}"
    );
    if code == Some(1) {
        // The CPU id was in the lost header features.
        let errors: Vec<&String> = msgs.iter().filter(|m| m.contains("error: ")).collect();
        assert_eq!(errors.len(), 1, "one error line: {msgs:?}");
        assert!(
            errors[0].contains("no CPU id") && errors[0].contains("--cpu-model"),
            "{msgs:?}"
        );
    } else {
        let _: Value = serde_json::from_slice(&out.stdout).expect("json");
    }
    let _ = std::fs::remove_dir_all(&dir);
}

/// (b) continued: told the CPU, perfq answers from the samples that are
/// there: every sample carries its whole group read, with the ids the
/// attr section (at the start of the file, intact) gives to each event.
#[test]
fn bad_input_cut_capture_with_cpu_model() {
    let dir = scratch("cut-model");
    let cache = dir.join("cache");
    let (cut, samples) = cut_capture(&dir);
    let out = perfq(
        &[
            "topdown",
            cut.to_str().unwrap(),
            "--format",
            "json",
            "--min-samples",
            "1",
            "--cpu-model",
            "sapphirerapids",
        ],
        &cache,
    );
    let msgs = messages(&out);
    println!("stderr: {msgs:?}");
    assert_eq!(out.status.code(), Some(0), "{msgs:?}");
    let rows: Vec<Value> = serde_json::from_slice(&out.stdout).expect("json");
    let n: u64 = rows
        .iter()
        .map(|r| r["samples"].as_u64().unwrap_or(0))
        .sum();
    assert_eq!(n, samples);
    let _ = std::fs::remove_dir_all(&dir);
}

/// (c) A Sapphire Rapids capture read as Zen 4's: one line naming the
/// events Zen 4 needs.
#[test]
fn bad_input_wrong_cpu_model() {
    let dir = scratch("wrong-cpu");
    let cache = dir.join("cache");
    let file = generate(&dir, &preset("sapphirerapids"), 300);
    let out = perfq(
        &["topdown", file.to_str().unwrap(), "--cpu-model", "amdzen4"],
        &cache,
    );
    let msgs = messages(&out);
    println!("stderr: {msgs:?}");
    assert_eq!(out.status.code(), Some(1), "{msgs:?}");
    assert_eq!(msgs.len(), 1, "one line: {msgs:?}");
    let m = &msgs[0];
    assert!(m.starts_with("perfq: error: "), "{m}");
    assert!(m.contains("amdzen4"), "{m}");
    assert!(m.contains("perf record -e"), "{m}");
    for ev in ["cycles", "r1000001a0", "r100001ea0", "r7aa", "rc1"] {
        assert!(m.contains(ev), "{ev} not named: {m}");
    }
    assert!(out.stdout.is_empty());
    let _ = std::fs::remove_dir_all(&dir);
}

/// (d) A Sapphire Rapids group without the four level-2 PERF_METRICS
/// events (`{slots,cycles,topdown-retiring,-bad-spec,-fe-bound,-be-bound}`)
/// asked for level 2: level 1, and a warning naming what is missing.
#[test]
fn bad_input_missing_level2_members() {
    let dir = scratch("no-l2");
    let cache = dir.join("cache");
    let mut p = preset("sapphirerapids");
    let keep = p
        .spec
        .events
        .iter()
        .position(|e| e.name == "topdown-heavy-ops")
        .expect("topdown-heavy-ops");
    p.name = "sapphirerapids-l1".into();
    p.spec.events.truncate(keep);
    p.counts.truncate(keep);
    p.spec.groups[0].len = keep;
    p.samplers[0].reads.truncate(keep);
    let file = generate(&dir, &p, 600);
    let out = perfq(
        &[
            "topdown",
            file.to_str().unwrap(),
            "--format",
            "json",
            "--level",
            "2",
            "--min-samples",
            "1",
        ],
        &cache,
    );
    let msgs = messages(&out);
    println!("stderr: {msgs:?}");
    assert_eq!(out.status.code(), Some(0), "{msgs:?}");
    let rows: Vec<Value> = serde_json::from_slice(&out.stdout).expect("json");
    assert!(!rows.is_empty());
    for r in &rows {
        for n in [
            "retiring",
            "bad_speculation",
            "frontend_bound",
            "backend_bound",
        ] {
            assert!(r[n].is_number(), "{n} of {r}");
        }
        for n in GLC_L2 {
            assert!(r.get(n).is_none(), "{n} in {r}");
        }
    }
    let text = msgs.join("\n");
    // One line names the nodes left out, the events they lack and what is
    // shown instead.
    assert_eq!(msgs.len(), 1, "{text}");
    assert!(
        msgs[0].starts_with("perfq: warning: ")
            && msgs[0].contains("not computed")
            && msgs[0].contains("showing level 1"),
        "{text}"
    );
    assert!(
        msgs.iter().all(|m| m.starts_with("perfq: warning: ")),
        "{text}"
    );
    for role in [
        "td_heavy_ops",
        "td_br_mispredict",
        "td_fetch_lat",
        "td_mem_bound",
    ] {
        assert!(text.contains(role), "{role} not named: {text}");
    }
    let _ = std::fs::remove_dir_all(&dir);
}
