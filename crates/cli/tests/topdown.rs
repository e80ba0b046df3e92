//! `perfq topdown` end to end: generated captures with the layouts real
//! topdown recordings have (crates/testgen) → decode → dataset → SQL →
//! CLI output, against the worked examples of
//! crates/topdown/tests/worked_examples.rs (counts and the shares the
//! family's published formulas give them, written out in each test).

mod common;

use std::path::{Path, PathBuf};

use perfq_testgen::{presets, Binary, ExplicitSample, Preset, Values, Workload};
use serde_json::Value;

/// A folder of its own for one test.
fn scratch(name: &str) -> PathBuf {
    common::scratch("td", name)
}

/// The read values of one sample in the sampler's read order, from
/// (type, config) → value; members not given count `fill`.
fn reads(p: &Preset, sampler: usize, by_event: &[((u32, u64), u64)], fill: u64) -> Vec<u64> {
    p.samplers[sampler]
        .reads
        .iter()
        .map(|&i| {
            let a = &p.spec.events[i].attr;
            by_event
                .iter()
                .find(|(k, _)| *k == (a.type_, a.config))
                .map_or(fill, |(_, v)| *v)
        })
        .collect()
}

/// Writes a capture of td-demo's functions with exactly these samples.
fn write_explicit(path: &Path, p: &Preset, samples: &[ExplicitSample]) -> PathBuf {
    let demo = common::td_demo();
    let binary = Binary::open(&demo).unwrap();
    let workload = Workload::new(&binary, &demo.to_string_lossy());
    let mut w = perfq_testgen::Writer::create(path, &workload.spec(p)).unwrap();
    workload.run_explicit(p, samples, &mut w, |_| {}).unwrap();
    w.finish().unwrap();
    path.to_path_buf()
}

/// Writes a capture of `samples` (leaf-first stacks of td-demo's
/// functions) with the given values.
fn generate(dir: &Path, preset: &str, samples: &[(Vec<&str>, Values)]) -> PathBuf {
    let p = presets::get(preset).unwrap();
    let explicit: Vec<ExplicitSample> = samples
        .iter()
        .map(|(stack, values)| ExplicitSample {
            sampler: 0,
            stack: stack.iter().map(|s| s.to_string()).collect(),
            thread: 0,
            values: values.clone(),
        })
        .collect();
    write_explicit(&dir.join(format!("{preset}.data")), &p, &explicit)
}

/// `perfq topdown FILE --format json ARGS`'s rows, which must succeed.
fn topdown(file: &Path, cache: &Path, args: &[&str]) -> Vec<Value> {
    let mut a = vec!["topdown", file.to_str().expect("path"), "--format", "json"];
    a.extend_from_slice(args);
    common::perfq_cached_rows(&a, cache)
}

fn row<'a>(rows: &'a [Value], symbol: &str) -> &'a Value {
    rows.iter()
        .find(|r| r["symbol"] == symbol)
        .unwrap_or_else(|| panic!("no row for {symbol} in {rows:?}"))
}

/// A node's share in percent, to 4 decimals.
fn pct(r: &Value, node: &str) -> f64 {
    let v = r[node]
        .as_f64()
        .unwrap_or_else(|| panic!("no {node} in {r}"));
    (v * 100.0 * 10_000.0).round() / 10_000.0
}

fn check(r: &Value, want: &[(&str, f64)]) {
    for (n, v) in want {
        assert_eq!(pct(r, n), *v, "{n} of {r}");
    }
}

const SLOTS: (u32, u64) = (4, 0x400);
const RET: (u32, u64) = (4, 0x8000);
const BAD: (u32, u64) = (4, 0x8100);
const FE: (u32, u64) = (4, 0x8200);
const BE: (u32, u64) = (4, 0x8300);

/// Three Ice Lake samples (`deltas.rs`' worked example): cumulative values
/// → deltas → per function.
#[test]
fn icelake_three_samples_per_function() {
    let dir = scratch("icl3");
    let p = presets::get("icelake").unwrap();
    let cum = |s: u64, r: u64, b: u64, f: u64, e: u64| {
        Values::Cumulative(reads(
            &p,
            0,
            &[(SLOTS, s), (RET, r), (BAD, b), (FE, f), (BE, e)],
            s / 5,
        ))
    };
    let file = generate(
        &dir,
        "icelake",
        &[
            (
                vec!["checksum", "run", "main"],
                cum(10_000_000, 2_980_392, 980_392, 2_509_803, 3_529_411),
            ),
            (
                vec!["sort_records", "run", "main"],
                cum(20_000_000, 4_980_392, 1_480_392, 4_509_803, 9_029_411),
            ),
            (
                vec!["checksum", "run", "main"],
                cum(30_000_000, 7_980_392, 2_480_392, 6_509_803, 13_029_411),
            ),
        ],
    );
    let rows = topdown(&file, &dir.join("cache"), &["--min-samples", "1"]);
    let foo = row(&rows, "checksum");
    assert_eq!(foo["samples"], 2);
    check(
        foo,
        &[
            ("retiring", 29.9020),
            ("frontend_bound", 22.5490),
            ("backend_bound", 37.6471),
            ("bad_speculation", 9.9020),
        ],
    );
    let bar = row(&rows, "sort_records");
    check(
        bar,
        &[
            ("retiring", 20.0),
            ("frontend_bound", 20.0),
            ("backend_bound", 55.0),
            ("bad_speculation", 5.0),
        ],
    );
    // Total: run and main hold all three samples.
    let total = topdown(
        &file,
        &dir.join("cache"),
        &["--total", "--min-samples", "1"],
    );
    let run = row(&total, "run");
    assert_eq!(run["samples"], 3);
    // The cumulative values of the last sample: 7,980,392 / 29,999,998.
    check(run, &[("retiring", 26.6013)]);
    let _ = std::fs::remove_dir_all(&dir);
}

/// One interval on Ice Lake (with and without the
/// corrections) and Sapphire Rapids level 2 with flags.
#[test]
fn icelake_l1_and_sapphire_rapids_l2() {
    let dir = scratch("icl1");
    let one = |preset: &str, extra: &[((u32, u64), u64)]| {
        let p = presets::get(preset).unwrap();
        let mut v = vec![
            (SLOTS, 10_000_000),
            (RET, 2_980_392),
            (BAD, 980_392),
            (FE, 2_509_803),
            (BE, 3_529_411),
        ];
        v.extend_from_slice(extra);
        let values = Values::Deltas(reads(&p, 0, &v, 1_000_000));
        let file = generate(
            &dir,
            preset,
            &[(vec!["hash_table_probe", "run", "main"], values)],
        );
        topdown(
            &file,
            &dir.join("cache"),
            &["--level", "2", "--min-samples", "1"],
        )
    };
    let rows = one("icelake", &[]);
    check(
        row(&rows, "hash_table_probe"),
        &[
            ("retiring", 29.8039),
            ("frontend_bound", 25.0980),
            ("backend_bound", 35.2941),
            ("bad_speculation", 9.8039),
        ],
    );
    let rows = one(
        "icelake-corrections",
        &[((4, 0x100d), 50_000), ((4, 0x104010d), 20_000)],
    );
    check(
        row(&rows, "hash_table_probe"),
        &[
            ("frontend_bound", 24.5980),
            ("backend_bound", 36.2941),
            ("retiring", 29.8039),
            ("bad_speculation", 9.3039),
        ],
    );
    let rows = one(
        "sapphirerapids",
        &[
            ((4, 0x8400), 588_235),
            ((4, 0x8500), 784_313),
            ((4, 0x8600), 1_568_627),
            ((4, 0x8700), 2_352_941),
        ],
    );
    let r = row(&rows, "hash_table_probe");
    check(
        r,
        &[
            ("heavy_operations", 5.8824),
            ("light_operations", 23.9216),
            ("branch_mispredicts", 7.8431),
            ("machine_clears", 1.9608),
            ("fetch_latency", 15.6863),
            ("fetch_bandwidth", 9.4118),
            ("memory_bound", 23.5294),
            ("core_bound", 11.7647),
        ],
    );
    let flagged: Vec<&str> = r["flagged"]
        .as_array()
        .unwrap()
        .iter()
        .map(|v| v.as_str().unwrap())
        .collect();
    for n in [
        "backend_bound",
        "memory_bound",
        "frontend_bound",
        "fetch_latency",
    ] {
        assert!(flagged.contains(&n), "{n} not flagged: {flagged:?}");
    }
    for n in ["bad_speculation", "branch_mispredicts", "machine_clears"] {
        assert!(!flagged.contains(&n), "{n} flagged: {flagged:?}");
    }
    let _ = std::fs::remove_dir_all(&dir);
}

/// The read values of one sample of `sampler`, given per formula role
/// (roles as `crates/topdown/sets/` names them, found by perfq's own
/// recognizer from each event's type and config: a wrong recognition
/// shows as a wrong number); other members count `fill`.
fn by_role(p: &Preset, model: &str, sampler: usize, values: &[(&str, u64)], fill: u64) -> Vec<u64> {
    use perfq_topdown::{by_name, pmu_types, role_of, CpuInfo, EventKey, PmuInfo};
    let pmus: Vec<PmuInfo> = p
        .spec
        .pmu_mappings
        .iter()
        .map(|(t, n)| PmuInfo {
            type_: Some(*t),
            name: n.clone(),
            caps: vec![("slots".into(), "8".into())],
        })
        .collect();
    let m = by_name(model, &CpuInfo::default()).unwrap();
    let u = &m.sets[0];
    let types = pmu_types(u.pmu, &pmus).unwrap();
    let sampler = &p.samplers[sampler];
    // An independently sampled event reads nothing: its value is its own
    // period.
    let members = if sampler.reads.is_empty() {
        vec![sampler.event]
    } else {
        sampler.reads.clone()
    };
    members
        .iter()
        .map(|&i| {
            let a = &p.spec.events[i].attr;
            let key = EventKey {
                type_: a.type_,
                config: a.config,
            };
            role_of(u, &types, false, key)
                .and_then(|r| values.iter().find(|v| v.0 == r))
                .map_or(fill, |v| v.1)
        })
        .collect()
}

fn one_sample(
    dir: &Path,
    preset: &str,
    model: &str,
    values: &[(&str, u64)],
    args: &[&str],
) -> Value {
    // One sample of every sampler of the preset (groups that take turns on
    // the counters each give one), all in the same function.
    let p = presets::get(preset).unwrap();
    let samples: Vec<ExplicitSample> = (0..p.samplers.len())
        .map(|k| ExplicitSample {
            sampler: k,
            stack: vec!["branchy_search".into(), "run".into(), "main".into()],
            thread: 0,
            values: Values::Deltas(by_role(&p, model, k, values, 0)),
        })
        .collect();
    let file = write_explicit(&dir.join(format!("{preset}.data")), &p, &samples);
    let mut a = vec!["--min-samples", "1"];
    a.extend_from_slice(args);
    let rows = topdown(&file, &dir.join("cache"), &a);
    row(&rows, "branchy_search").clone()
}

/// Skylake, SMT off, slots = 4 × cycles, in one group; then level
/// 2 as `perfq record` records it with SMT on: four groups taking turns,
/// each scaled by its own cycles, with the backend and retiring splits
/// from EXE_ACTIVITY/CYCLE_ACTIVITY and MACRO_FUSED.
#[test]
fn skylake_l1_l2() {
    const SKL: [(&str, u64); 15] = [
        ("cycles", 1_000_000),
        ("idq_not_delivered", 1_000_000),
        ("uops_issued", 1_600_000),
        ("uops_retired_slots", 1_400_000),
        ("recovery_cycles", 25_000),
        ("idq_0_uops", 150_000),
        ("br_misp", 8_000),
        ("clears", 2_000),
        // Heavy = (1.4M + 100K - 1.3M) / 4M.
        ("macro_fused", 100_000),
        ("inst_retired", 1_300_000),
        // Memory = (185K + 15K) / (300K + 50K + 0.35 × 100K + 15K) of the
        // backend.
        ("stalls_mem_any", 185_000),
        ("bound_on_stores", 15_000),
        ("stalls_total", 300_000),
        ("ports_util_1", 50_000),
        ("ports_util_2", 100_000),
    ];
    let dir = scratch("skl");
    let level1_and_front = [
        ("frontend_bound", 25.0),
        ("bad_speculation", 7.5),
        ("retiring", 35.0),
        ("backend_bound", 32.5),
        ("fetch_latency", 15.0),
        ("fetch_bandwidth", 10.0),
        ("branch_mispredicts", 6.0),
        ("machine_clears", 1.5),
    ];
    let r = one_sample(&dir, "skylake", "skylake", &SKL, &["--level", "2"]);
    check(&r, &level1_and_front);
    let r = one_sample(&dir, "skylake-l2-smt", "skylakex", &SKL, &["--level", "2"]);
    check(&r, &level1_and_front);
    check(
        &r,
        &[
            ("memory_bound", 16.25),
            ("core_bound", 16.25),
            ("heavy_operations", 5.0),
            ("light_operations", 30.0),
        ],
    );
    let _ = std::fs::remove_dir_all(&dir);
}

/// The general-purpose sets' worked interval (crates/topdown/tests/
/// worked_examples.rs): recorded as `perfq record` records Ice Lake and
/// Sapphire Rapids with a perf that cannot open PERF_METRICS, found by the
/// capture's CPU id, answered by the `-gp` set.
#[test]
fn general_purpose_ice_lake_and_sapphire_rapids() {
    let dir = scratch("gp");
    let values = [
        ("slots_p", 10_000_000),
        ("idq_not_delivered", 2_500_000),
        ("uop_dropping", 100_000),
        ("be_slots", 3_000_000),
        ("clears_count", 20_000),
        ("retired_slots", 3_500_000),
    ];
    for (preset, set, be, bad) in [
        ("icelake-gp", "intel-icl-gp", 31.0, 10.0),
        ("sapphirerapids-gp", "intel-glc-gp", 30.0, 11.0),
    ] {
        let p = presets::get(preset).unwrap();
        let samples = vec![ExplicitSample {
            sampler: 0,
            stack: vec!["branchy_search".into(), "run".into(), "main".into()],
            thread: 0,
            // The cycles sampler is no role of the set: it counts what it
            // likes.
            values: Values::Deltas(by_role(&p, set, 0, &values, 2_000_000)),
        }];
        let file = write_explicit(&dir.join(format!("{preset}.data")), &p, &samples);
        let rows = topdown(&file, &dir.join("cache"), &["--min-samples", "1"]);
        check(
            row(&rows, "branchy_search"),
            &[
                ("frontend_bound", 24.0),
                ("backend_bound", be),
                ("retiring", 35.0),
                ("bad_speculation", bad),
            ],
        );
    }
    let _ = std::fs::remove_dir_all(&dir);
}

const ZEN: [(&str, u64); 12] = [
    ("cycles", 1_000_000),
    ("fe_slots", 1_500_000),
    ("be_slots", 2_400_000),
    ("dispatched", 2_000_000),
    ("retired", 1_800_000),
    ("smt_slots", 100_000),
    ("fe_cycles", 150_000),
    ("br_misp", 9_000),
    ("resyncs", 1_000),
    ("load_not_complete", 300_000),
    ("not_complete", 500_000),
    ("ucode", 90_000),
];

/// Zen 4 level 1 and 2, the RIS encodings (the 0x43 byte), and the
/// same counts on Zen 5.
#[test]
fn zen4_zen5() {
    let dir = scratch("zen");
    let level1 = [
        ("frontend_bound", 25.0),
        ("backend_bound", 40.0),
        ("bad_speculation", 3.3333),
        ("retiring", 30.0),
        ("smt_contention", 1.6667),
    ];
    // The same counts as one group, and through level 1 cut into two
    // groups (an NMI watchdog holds a counter), each group scaled by its
    // own cycles.
    for preset in ["zen4", "zen4-watchdog"] {
        let r = one_sample(&dir, preset, "amdzen4", &ZEN, &[]);
        check(&r, &level1);
    }
    let r = one_sample(&dir, "zen4-l2", "amdzen4", &ZEN, &["--level", "2"]);
    check(
        &r,
        &[
            ("fetch_latency", 15.0),
            ("fetch_bandwidth", 10.0),
            ("branch_mispredicts", 3.0),
            ("machine_clears", 0.3333),
            ("memory_bound", 24.0),
            ("core_bound", 16.0),
            ("light_operations", 28.5),
            ("heavy_operations", 1.5),
        ],
    );
    let r = one_sample(&dir, "zen4-ris", "amdzen4", &ZEN, &[]);
    check(
        &r,
        &[
            ("frontend_bound", 25.0),
            ("backend_bound", 40.0),
            ("bad_speculation", 3.3333),
            ("retiring", 30.0),
        ],
    );
    let r = one_sample(&dir, "zen5", "amdzen5", &ZEN, &[]);
    check(
        &r,
        &[
            ("frontend_bound", 18.75),
            ("backend_bound", 30.0),
            ("bad_speculation", 2.5),
            ("retiring", 22.5),
        ],
    );
    let _ = std::fs::remove_dir_all(&dir);
}

/// Gracemont alone (Alder Lake-N), 5 wide: level 1 in one group and
/// level 2 in a second that takes turns with it, as `perfq record`
/// records them; each group scaled by its own cycles.
#[test]
fn gracemont_l1_l2_in_two_groups() {
    const GRT: [(&str, u64); 9] = [
        ("cycles", 1_000_000),
        ("fe_slots", 1_500_000),
        ("be_slots", 2_000_000),
        ("ret_slots", 1_250_000),
        ("fe_latency", 1_000_000),
        ("fe_bandwidth", 500_000),
        ("mispredict", 200_000),
        ("machine_clear", 50_000),
        ("alloc_restrict", 750_000),
    ];
    let dir = scratch("grt");
    let level1 = [
        ("frontend_bound", 30.0),
        ("backend_bound", 40.0),
        ("retiring", 25.0),
        ("bad_speculation", 5.0),
    ];
    let r = one_sample(&dir, "gracemont", "alderlaken", &GRT, &[]);
    check(&r, &level1);
    let r = one_sample(&dir, "gracemont-l2", "alderlaken", &GRT, &["--level", "2"]);
    check(&r, &level1);
    check(
        &r,
        &[
            ("fetch_latency", 20.0),
            ("fetch_bandwidth", 10.0),
            ("branch_mispredicts", 4.0),
            ("machine_clears", 1.0),
            ("core_bound", 15.0),
            ("resource_bound", 25.0),
        ],
    );
    let _ = std::fs::remove_dir_all(&dir);
}

/// Neoverse V2 with the slot width from the recorded PMU caps.
#[test]
fn neoverse_v2() {
    let dir = scratch("nv2");
    let r = one_sample(
        &dir,
        "neoverse-v2",
        "neoverse-v2",
        &[
            ("cycles", 1_000_000),
            ("stall_slot_frontend", 2_400_000),
            ("stall_slot_backend", 2_000_000),
            ("stall_slot", 4_400_000),
            ("op_retired", 3_000_000),
            ("op_spec", 3_300_000),
            ("br_mis_pred", 5_000),
        ],
        &[],
    );
    check(
        &r,
        &[
            ("frontend_bound", 29.5),
            ("backend_bound", 23.5),
            ("bad_speculation", 6.0909),
            ("retiring", 40.9091),
        ],
    );
    let _ = std::fs::remove_dir_all(&dir);
}

/// Zen 4 events sampled independently: each sample carries its own
/// event's period, summed per function; the capture cannot say whether
/// the events were multiplexed, and perfq says so.
#[test]
fn zen4_independent_events() {
    let dir = scratch("zeni");
    let p = presets::get("zen4-independent").unwrap();
    let mut samples = Vec::new();
    for (k, _) in p.samplers.iter().enumerate() {
        let v = by_role(&p, "amdzen4", k, &ZEN, 0);
        samples.push(ExplicitSample {
            sampler: k,
            stack: vec!["checksum".into(), "run".into(), "main".into()],
            thread: 0,
            values: Values::Deltas(v),
        });
    }
    let file = write_explicit(&dir.join("zen4-independent.data"), &p, &samples);
    let out = common::perfq_cached(
        &[
            "topdown",
            file.to_str().expect("path"),
            "--format",
            "json",
            "--min-samples",
            "1",
        ],
        &dir.join("cache"),
    );
    let rows = common::json_rows(&out, "perfq topdown");
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(stderr.contains("sampled independently"), "{stderr}");
    check(
        row(&rows, "checksum"),
        &[
            ("frontend_bound", 25.0),
            ("backend_bound", 40.0),
            ("bad_speculation", 3.3333),
            ("retiring", 30.0),
        ],
    );
    let _ = std::fs::remove_dir_all(&dir);
}

/// A capture without topdown events: one line naming what to record.
#[test]
fn no_topdown_events_says_what_to_record() {
    let group = common::testdata("group.data");
    let group = group.to_str().expect("path");
    let err = common::perfq_fails(&["topdown", "--no-cache", group]);
    assert_eq!(err.trim().lines().count(), 1, "{err}");
    assert!(err.contains("perf record -e"), "{err}");
    // The same capture read as another CPU's.
    let err = common::perfq_fails(&["topdown", "--no-cache", "--cpu-model", "pentium", group]);
    assert!(err.contains("unknown CPU model `pentium`"), "{err}");
}

/// Threads, processes, DSOs and intervals partition the same samples; each
/// row's shares come from its own sums.
#[test]
fn other_groupings_partition_the_samples() {
    let dir = scratch("by");
    let file = common::td_demo_capture(
        &dir.join("spr.data"),
        &common::preset("sapphirerapids"),
        3000,
    );
    let cache = dir.join("cache");
    let total =
        |rows: &[Value]| -> u64 { rows.iter().map(|r| r["samples"].as_u64().unwrap()).sum() };
    let threads = topdown(&file, &cache, &["--by", "thread"]);
    assert_eq!(total(&threads), 3000);
    assert!(threads.len() > 1, "{threads:?}");
    for t in &threads {
        assert!(
            t["tid"].is_i64() && t["pid"].is_i64() && t["comm"].is_string(),
            "{t}"
        );
        let sum: f64 = [
            "retiring",
            "bad_speculation",
            "frontend_bound",
            "backend_bound",
        ]
        .iter()
        .map(|n| t[*n].as_f64().unwrap())
        .sum();
        assert!((sum - 1.0).abs() < 1e-9, "{t}");
        assert!(t["retiring_se"].as_f64().unwrap() > 0.0, "{t}");
    }
    let procs = topdown(&file, &cache, &["--by", "process"]);
    assert_eq!(procs.len(), 1);
    assert_eq!(total(&procs), 3000);
    // `--pid` keeps that process's samples, and another's are none.
    let pid = procs[0]["pid"].to_string();
    let only = topdown(&file, &cache, &["--by", "process", "--pid", &pid]);
    assert_eq!(only, procs);
    let none = topdown(&file, &cache, &["--by", "process", "--pid", "1"]);
    assert!(none.is_empty(), "{none:?}");
    let dsos = topdown(&file, &cache, &["--by", "dso"]);
    assert_eq!(total(&dsos), 3000);
    assert!(dsos.iter().any(|d| d["dso"] == "td-demo"), "{dsos:?}");
    let intervals = topdown(&file, &cache, &["--interval", "100"]);
    assert_eq!(total(&intervals), 3000);
    let starts: Vec<f64> = intervals
        .iter()
        .map(|r| r["start_s"].as_f64().unwrap())
        .collect();
    assert!(starts.windows(2).all(|w| w[0] < w[1]), "{starts:?}");
    assert!(
        starts
            .iter()
            .all(|s| (s * 10.0 - (s * 10.0).round()).abs() < 1e-9),
        "{starts:?}"
    );
    // The second question about the same capture reads the cache: the
    // capture is converted once.
    let folders = std::fs::read_dir(cache.join("datasets-v6"))
        .map(|d| {
            d.filter_map(Result::ok)
                .filter(|e| e.file_name().to_string_lossy().starts_with("capture="))
                .count()
        })
        .unwrap_or(0);
    assert_eq!(folders, 1);
    let _ = std::fs::remove_dir_all(&dir);
}

/// `--no-cache` converts a file into a dataset for this one command, which
/// leaves the read_values table without rows (the command reads each
/// sample's deltas from the samples table). Its answers are the kept
/// dataset's, byte for byte, on every preset's layout and on the real
/// top-down capture in testdata, by function, thread and interval.
#[test]
fn no_cache_answers_as_the_cache_does() {
    let dir = scratch("no-cache");
    let cache = dir.join("cache");
    let mut files: Vec<PathBuf> = perfq_testgen::presets::NAMES
        .iter()
        .map(|name| {
            common::td_demo_capture(
                &dir.join(format!("{name}.data")),
                &common::preset(name),
                400,
            )
        })
        .collect();
    files.push(common::testdata("topdown-spr.data"));
    let questions: &[&[&str]] = &[
        &["--level", "2", "--total"],
        &["--by", "thread"],
        &["--interval", "50", "--format", "csv"],
    ];
    // Each preset's capture is asked one of the questions in turn, the
    // real capture all three.
    let last = files.len() - 1;
    for (i, file) in files.iter().enumerate() {
        let file = file.to_str().expect("path");
        let asked = match i {
            i if i == last => questions,
            i => &questions[i % questions.len()..][..1],
        };
        for q in asked {
            let mut args = vec!["topdown", file];
            args.extend_from_slice(q);
            let kept = common::perfq_cached(&args, &cache);
            args.push("--no-cache");
            let scratch = common::perfq_cached(&args, &cache);
            assert_eq!(kept.status.code(), scratch.status.code(), "{args:?}");
            assert_eq!(
                String::from_utf8_lossy(&kept.stdout),
                String::from_utf8_lossy(&scratch.stdout),
                "{args:?}"
            );
            assert_eq!(
                String::from_utf8_lossy(&kept.stderr),
                String::from_utf8_lossy(&scratch.stderr),
                "{args:?}"
            );
        }
    }
    let _ = std::fs::remove_dir_all(&dir);
}
