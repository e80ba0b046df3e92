//! Conformance over a corpus of real captures, which is not in the
//! repository (`common::corpus`: `PERFQ_CORPUS`, else `../shared/corpus`;
//! docs/testing.md describes its catalog). Without it every test here
//! prints `SKIPPED` and passes, unless `PERFQ_REQUIRE_ORACLES=1` is set.
//! `perfq info --json` must count samples and every record type exactly as
//! perf 6.12's `perf report -D` did (the catalog's `samples` and `pc`), on
//! every capture perf reads. Captures perf cannot read must give the same
//! counts, or a clear error, or differ for a reason listed below.

mod common;

use std::collections::BTreeMap;

use serde_json::Value;

/// Captures perf cannot read whose catalog counts come from the independent
/// parser, where perfq reads more than that parser and says why here.
const KNOWN_DIFFERENCES: &[(&str, &str)] = &[
    (
        "simpleperf/simpleperf/testdata/perf_sched_stat_runtime.data",
        "simpleperf keeps tracing data inside its HEADER_TRACING_DATA record; the catalog's parser skipped it again after the record and lost records",
    ),
    (
        "simpleperf/simpleperf/testdata/perf_with_tracepoint_event.data",
        "same simpleperf inline tracing data; the catalog's parser lost sync (BAD_SIZE) where perfq reads 45 samples",
    ),
    (
        "hiperf/test/fuzztest/resource/testdata/report_test.data",
        "the last MMAP2 overruns the file by 15 bytes (TRAILING_BYTES -15): the catalog counts the partial record, perfq drops it with a warning",
    ),
    (
        "linux-perf-data/tests/fixtures/sleep.compressed2.pipe.data",
        "perf >= 6.16 wrapped a COMPRESSED2 u16 size; perfq corrects it from the data size (with a warning), the catalog's parser read garbage type 1701847131",
    ),
    (
        "performance_modelisation/src/tool_oprofile/perf.data",
        "data size 0 in the header: perf refuses, perfq reads the records up to the end of the file (with a warning)",
    ),
];

fn expected_counts(entry: &Value) -> BTreeMap<String, u64> {
    let mut exp = BTreeMap::new();
    for (k, v) in entry["pc"].as_object().into_iter().flatten() {
        if matches!(
            k.as_str(),
            "TRAILING_BYTES" | "BAD_SIZE" | "z:decompressed_bytes"
        ) {
            continue;
        }
        let k = k.strip_prefix("z:").unwrap_or(k);
        *exp.entry(k.to_string()).or_default() += v.as_u64().unwrap_or(0);
    }
    exp
}

#[test]
fn corpus_counts_match_perf() {
    let Some(corpus) = common::corpus() else {
        common::skip("../shared/corpus is absent; the corpus conformance test did not run");
        return;
    };
    let catalog = common::catalog(&corpus);
    let mut matched = 0;
    let mut failures = Vec::new();
    let mut notes = Vec::new();
    for entry in &catalog {
        let rel = entry["path"].as_str().expect("path");
        let path = corpus.join(rel);
        let out = common::perfq(&["info", "--json", path.to_str().expect("utf-8 path")]);
        let code = out.status.code();
        if !matches!(code, Some(0) | Some(1)) {
            failures.push(format!(
                "{rel}: exit status {code:?}: {}",
                String::from_utf8_lossy(&out.stderr)
            ));
            continue;
        }
        let stderr = String::from_utf8_lossy(&out.stderr);
        if code == Some(1) && stderr.lines().count() != 1 {
            failures.push(format!("{rel}: error is not one line: {stderr}"));
        }
        let info: Option<Value> = serde_json::from_slice(&out.stdout).ok();
        let got: Option<BTreeMap<String, u64>> = info.as_ref().map(|i| {
            i["records"]
                .as_object()
                .into_iter()
                .flatten()
                .map(|(k, v)| (k.clone(), v.as_u64().unwrap_or(0)))
                .collect()
        });
        let got_samples = info.as_ref().and_then(|i| i["samples"].as_u64());
        let mut expected = expected_counts(entry);
        let mut exp_samples = entry["samples"].as_u64();
        let perf_reads = entry["script612"]
            .as_str()
            .is_some_and(|s| s.starts_with("OK"));
        // A row without any perf count (perf 6.12 printed no statistics for
        // it): ask the installed perf.
        if perf_reads && entry["samples_src"] == "-" && expected.is_empty() {
            match common::perf_report_d_counts(&path) {
                Some(c) => {
                    exp_samples = Some(c.get("SAMPLE").copied().unwrap_or(0));
                    expected = c;
                }
                None => {
                    notes.push(format!("{rel}: catalog has no counts and no local perf could read it; not compared"));
                    continue;
                }
            }
        }
        if got.as_ref() == Some(&expected) && got_samples == exp_samples {
            matched += 1;
            continue;
        }
        let diff: Vec<String> = expected
            .keys()
            .chain(got.iter().flat_map(|g| g.keys()))
            .collect::<std::collections::BTreeSet<_>>()
            .into_iter()
            .filter(|k| expected.get(*k) != got.as_ref().and_then(|g| g.get(*k)))
            .map(|k| {
                format!(
                    "{k}: perf {:?} perfq {:?}",
                    expected.get(k),
                    got.as_ref().and_then(|g| g.get(k))
                )
            })
            .collect();
        if perf_reads {
            failures.push(format!("{rel}: perf reads it but counts differ: {diff:?} (samples perf {exp_samples:?} perfq {got_samples:?})"));
        } else if let Some(damage) = info.as_ref().and_then(|i| i["damage"].as_str()) {
            notes.push(format!(
                "{rel}: perf cannot read it; perfq says what it could not read: {damage}"
            ));
        } else if code == Some(1) {
            notes.push(format!(
                "{rel}: perf cannot read it; perfq stops with: {}",
                stderr.trim()
            ));
        } else if let Some((_, why)) = KNOWN_DIFFERENCES.iter().find(|(p, _)| *p == rel) {
            notes.push(format!(
                "{rel}: differs from the catalog's independent parser: {why}"
            ));
        } else {
            failures.push(format!("{rel}: perf cannot read it and perfq neither matches the catalog nor reports an error: {diff:?}"));
        }
    }
    println!(
        "corpus: {matched} of {} captures match perf's counts exactly",
        catalog.len()
    );
    for n in &notes {
        println!("  note: {n}");
    }
    assert!(
        failures.is_empty(),
        "{} failures:\n{}",
        failures.len(),
        failures.join("\n")
    );
}

/// Captures from other machines, whose binaries are absent here, still
/// report: per-DSO rows whose self percentages add up to 100 for each event,
/// each counting its samples left unresolved, and no error.
#[test]
fn corpus_reports_per_dso_without_binaries() {
    let Some(corpus) = common::corpus() else {
        common::skip("../shared/corpus is absent; corpus reports not checked");
        return;
    };
    let catalog = common::catalog(&corpus);
    let mut reported = 0;
    let mut unresolved_rows = 0;
    for entry in catalog
        .iter()
        .filter(|e| e["script612"].as_str().is_some_and(|s| s.starts_with("OK")))
    {
        let rel = entry["path"].as_str().expect("path");
        let path = corpus.join(rel);
        let rows = common::perfq_rows(&[
            "report",
            "--sort",
            "dso",
            "--format",
            "json",
            path.to_str().expect("path"),
        ]);
        if entry["samples"].as_u64().unwrap_or(0) > 0 {
            assert!(!rows.is_empty(), "{rel}: samples but no rows");
        }
        let mut sums: BTreeMap<String, f64> = BTreeMap::new();
        for r in &rows {
            *sums
                .entry(r["event"].as_str().unwrap_or("").to_string())
                .or_default() += r["self_percent"].as_f64().unwrap_or(0.0);
            unresolved_rows += (r["unresolved_samples"].as_u64().unwrap_or(0) > 0) as usize;
        }
        for (event, sum) in sums {
            assert!(
                (sum - 100.0).abs() < 0.01,
                "{rel}: {event}: self percentages add up to {sum}"
            );
        }
        reported += 1;
    }
    assert!(
        unresolved_rows > 0,
        "some corpus DSOs are absent here and must be reported unresolved"
    );
    println!("corpus: {reported} captures report per DSO ({unresolved_rows} unresolved rows)");
}

/// Corpus captures whose per-DSO self percentages perf 6.1 shows
/// differently, and why. Everything else perf reads must agree.
const PER_DSO_DIFFERENCES: &[(&str, &str)] = &[
    // perf found a vmlinux for these kernels in its build-id cache on the
    // recording machine's layout and names the DSO [kernel.vmlinux].
    (
        "autofdo/testdata/perf-vmlinux.data",
        "perf names the kernel [kernel.vmlinux]",
    ),
    (
        "performance_modelisation/test/perf.data",
        "perf names the kernel [kernel.vmlinux]",
    ),
    // Samples perf synthesizes from the Intel PT trace (AUX), not decoded.
    (
        "perf_data_converter/src/quipper/testdata/perf.data.intel_pt-4.14",
        "Intel PT decoding",
    ),
    // simpleperf's kernel mapping spans the whole address space ([0, 2^64));
    // perf 6.1 puts no kernel sample in it and shows them as [unknown],
    // perfq as [kernel.kallsyms].
    (
        "simpleperf/simpleperf/scripts/test/script_testdata/aggregatable_perf",
        "simpleperf kernel mapping",
    ),
    (
        "simpleperf/simpleperf/testdata/perf_display_bitmaps.data",
        "simpleperf kernel mapping",
    ),
    (
        "simpleperf/simpleperf/testdata/perf_merge",
        "simpleperf kernel mapping",
    ),
    (
        "simpleperf/simpleperf/testdata/perf_with_interpreter_frames.data",
        "simpleperf kernel mapping",
    ),
    (
        "simpleperf/simpleperf/testdata/perf_with_jit_symbol.data",
        "simpleperf kernel mapping",
    ),
    (
        "simpleperf/simpleperf/testdata/perf_with_kernel_symbols_available_false.data",
        "simpleperf kernel mapping",
    ),
    (
        "simpleperf/simpleperf/testdata/wrong_ip_callchain_perf.data",
        "simpleperf kernel mapping",
    ),
];

/// `perfq report --sort dso` against `perf report --no-children --sort dso`
/// on every corpus capture perf 6.1 reads: each DSO's self percentage per
/// event within 0.1 point wherever either shows 0.5% or more. Events are
/// matched by their order (perf and perfq name events of files without
/// stored names differently, e.g. `cycles:HG` and `cycles`).
#[test]
fn corpus_report_per_dso_agrees_with_perf_report() {
    let Some(corpus) = common::corpus() else {
        common::skip("../shared/corpus is absent; corpus reports not compared with perf");
        return;
    };
    if !common::have_perf() {
        common::skip("perf is not installed; corpus reports not compared with perf");
        return;
    }
    type Pcts = BTreeMap<(usize, String), f64>;
    // Events in order of first appearance, each DSO's percentage.
    fn index(rows: impl Iterator<Item = (String, String, f64)>) -> Pcts {
        let mut events: Vec<String> = Vec::new();
        let mut out = Pcts::new();
        for (ev, dso, pct) in rows {
            let i = events.iter().position(|e| *e == ev).unwrap_or_else(|| {
                events.push(ev);
                events.len() - 1
            });
            *out.entry((i, dso)).or_default() += pct;
        }
        out
    }
    let (mut compared, mut skipped) = (0, 0);
    for entry in common::catalog(&corpus)
        .iter()
        .filter(|e| e["script61"].as_str().is_some_and(|s| s.starts_with("OK")))
    {
        let rel = entry["path"].as_str().expect("path");
        if PER_DSO_DIFFERENCES.iter().any(|(p, _)| rel.starts_with(p)) {
            skipped += 1;
            continue;
        }
        let path = corpus.join(rel);
        let f = path.to_str().expect("path");
        let Some(text) = common::perf(&[
            "report",
            "-i",
            f,
            "--stdio",
            "--no-children",
            "--sort",
            "dso",
            "-g",
            "none",
            "--no-branch-stack",
            "--no-group",
        ]) else {
            continue;
        };
        let mut event = String::new();
        let mut perf_rows = Vec::new();
        for line in text.lines() {
            if let Some((_, e)) = line.split_once("of event '") {
                event = e.trim_end_matches('\'').to_string();
                continue;
            }
            let t: Vec<&str> = line.split_whitespace().collect();
            if line.starts_with('#') || t.len() < 2 || !t[0].ends_with('%') {
                continue;
            }
            let pct: f64 = t[0].trim_end_matches('%').parse().expect("percent");
            perf_rows.push((event.clone(), t[1..].join(" "), pct));
        }
        let rows = common::perfq_rows(&["report", "--sort", "dso", "--format", "json", f]);
        let ours = index(rows.iter().map(|r| {
            (
                r["event"].as_str().unwrap_or("").to_string(),
                r["dso"].as_str().unwrap_or("").to_string(),
                r["self_percent"].as_f64().unwrap_or(0.0),
            )
        }));
        let perf = index(perf_rows.into_iter().filter(|r| r.2 > 0.0));
        for key in perf.keys().chain(ours.keys()) {
            let (p, o) = (
                perf.get(key).copied().unwrap_or(0.0),
                ours.get(key).copied().unwrap_or(0.0),
            );
            if p.max(o) >= 0.5 {
                assert!(
                    (p - o).abs() <= 0.1,
                    "{rel}: event #{} {}: perf {p}%, perfq {o}%",
                    key.0,
                    key.1
                );
            }
        }
        compared += 1;
    }
    assert!(compared >= 100, "{compared} captures compared");
    println!("corpus: {compared} captures' per-DSO self percentages agree with perf report ({skipped} with known differences)");
}

/// Branch stacks (LBR) of every corpus capture that has them and perf
/// reads: each sample's entries — from, to, mispredicted/predicted, in
/// transaction, abort, cycles — equal `perf script -F brstack`.
#[test]
fn corpus_branch_stacks_agree_with_perf_script() {
    let Some(corpus) = common::corpus() else {
        common::skip("../shared/corpus is absent; branch stacks not checked");
        return;
    };
    if !common::have_perf() {
        common::skip("perf is not installed; branch stacks not checked");
        return;
    }
    let catalog = common::catalog(&corpus);
    let mut files = 0;
    let mut samples = 0;
    for entry in &catalog {
        let features = entry["features"].to_string();
        // perf 6.1 (installed) must read it too.
        if !features.contains("branch-stack")
            || !entry["script61"]
                .as_str()
                .is_some_and(|s| s.starts_with("OK"))
        {
            continue;
        }
        let path = corpus.join(entry["path"].as_str().expect("path"));
        let Some(perf) = common::perf_brstack(&path) else {
            continue;
        };
        let ours: Vec<String> = common::perfq_dump(&path)
            .iter()
            .filter_map(|s| s.get("branch_stack"))
            .map(|b| {
                b["entries"]
                    .as_array()
                    .expect("entries")
                    .iter()
                    .map(|e| {
                        let flag = |k: &str, c: &'static str| if e[k] == true { c } else { "-" };
                        let pred = if e["mispred"] == true {
                            "M"
                        } else {
                            flag("predicted", "P")
                        };
                        let h = |k: &str| common::hex_field(&e[k]).unwrap_or(0);
                        format!(
                            "{:#x}/{:#x}/{pred}/{}/{}/{}",
                            h("from"),
                            h("to"),
                            flag("in_tx", "X"),
                            flag("abort", "A"),
                            e["cycles"]
                        )
                    })
                    .collect::<Vec<_>>()
                    .join(" ")
            })
            .collect();
        assert_eq!(
            ours.len(),
            perf.len(),
            "{}: samples with branch stacks",
            path.display()
        );
        for (i, (o, p)) in ours.iter().zip(&perf).enumerate() {
            assert_eq!(o, p, "{}: sample {i}", path.display());
        }
        files += 1;
        samples += ours.len();
    }
    assert!(files >= 10, "only {files} branch-stack captures compared");
    println!(
        "corpus: branch stacks of {samples} samples in {files} captures agree with perf script"
    );
}

/// Memory-sampling fields of corpus captures that record them (PEBS-style
/// DATA_SRC, WEIGHT and WEIGHT_STRUCT, ADDR) equal `perf script`'s, sample
/// by sample.
#[test]
fn corpus_addr_data_src_weight_agree_with_perf_script() {
    let Some(corpus) = common::corpus() else {
        common::skip("../shared/corpus is absent; memory fields not checked");
        return;
    };
    if !common::have_perf() {
        common::skip("perf is not installed; memory fields not checked");
        return;
    }
    let catalog = common::catalog(&corpus);
    let mut files = 0;
    for entry in &catalog {
        let types = entry["sample_types"]
            .as_array()
            .cloned()
            .unwrap_or_default();
        let (Some(first), true) = (types.first().and_then(Value::as_str), types.len() == 1) else {
            continue;
        };
        let has = |f: &str| first.split('|').any(|x| x == f);
        let weight = has("WEIGHT") || has("WEIGHT_STRUCT");
        if !has("ADDR")
            || !(has("DATA_SRC") || weight)
            || !entry["script61"]
                .as_str()
                .is_some_and(|s| s.starts_with("OK"))
        {
            continue;
        }
        let mut fields = vec!["addr"];
        if has("DATA_SRC") {
            fields.push("data_src");
        }
        if weight {
            fields.push("weight");
        }
        let path = corpus.join(entry["path"].as_str().expect("path"));
        // -G: no call graphs between the sample lines.
        let Some(script) = common::perf(&[
            "script",
            "-G",
            "-i",
            path.to_str().expect("path"),
            "-F",
            &fields.join(","),
        ]) else {
            continue;
        };
        let perf: Vec<Vec<u64>> = script
            .lines()
            .filter(|l| !l.trim().is_empty())
            .map(|l| {
                let t: Vec<&str> = l.split_whitespace().collect();
                let mut v = vec![u64::from_str_radix(t[0], 16).expect("addr")];
                if has("DATA_SRC") {
                    v.push(u64::from_str_radix(t[1], 16).expect("data_src"));
                }
                if weight {
                    v.push(t[t.len() - 1].parse().expect("weight"));
                }
                v
            })
            .collect();
        let ours: Vec<Vec<u64>> = common::perfq_dump(&path)
            .iter()
            .map(|s| {
                let mut v = vec![common::hex_field(&s["addr"]).expect("addr")];
                if has("DATA_SRC") {
                    v.push(common::hex_field(&s["data_src"]).expect("data_src"));
                }
                if weight {
                    v.push(s["weight"].as_u64().expect("weight"));
                }
                v
            })
            .collect();
        assert_eq!(ours, perf, "{}", path.display());
        files += 1;
    }
    assert!(files >= 5, "only {files} captures compared");
    println!("corpus: addr/data_src/weight agree with perf script in {files} captures");
}

/// Every sample of every corpus capture perf 6.12 reads (AUX traces aside:
/// perf synthesizes samples from them) has the tid, time, ip and period
/// that perf 6.12's `perf script` prints, one line per group member with a
/// non-zero delta (its period). Compared as sorted lists: perf does not time-order captures
/// without round marks (hiperf), perfq does.
#[test]
fn corpus_samples_agree_with_perf_612_script() {
    let Some(corpus) = common::corpus() else {
        common::skip("../shared/corpus is absent; samples not compared with perf 6.12");
        return;
    };
    if common::perf612().is_none() {
        common::skip("perf 6.12 is not unpacked (.ci/perf612.sh); samples not compared with it");
        return;
    }
    let catalog = common::catalog(&corpus);
    let mut files = 0;
    let mut samples = 0;
    for entry in &catalog {
        let ok = entry["script612"]
            .as_str()
            .is_some_and(|s| s.starts_with("OK"));
        if !ok || entry["features"].to_string().contains("AUX trace") {
            continue;
        }
        let path = corpus.join(entry["path"].as_str().expect("path"));
        let Some(mut perf) = common::perf612() else {
            return;
        };
        let out = perf
            .args([
                "script",
                "-G",
                "-i",
                path.to_str().expect("path"),
                "-F",
                "tid,time,ip,period",
                "--ns",
            ])
            .output()
            .expect("perf 6.12");
        if !out.status.success() {
            continue;
        }
        // "tid time: period ip"
        let mut theirs: Vec<(i64, u64, u64, u64)> = String::from_utf8_lossy(&out.stdout)
            .lines()
            .filter_map(|l| {
                let t: Vec<&str> = l.split_whitespace().collect();
                let (s, ns) = t.get(1)?.trim_end_matches(':').split_once('.')?;
                let ns: u64 = format!("{ns:0<9}")[..9].parse().ok()?;
                Some((
                    t[0].parse().ok()?,
                    s.parse::<u64>().ok()? * 1_000_000_000 + ns,
                    u64::from_str_radix(t.get(3)?, 16).ok()?,
                    t.get(2)?.parse().ok()?,
                ))
            })
            .collect();
        // Samples without PERIOD have their event's attr period, as in perf.
        let info = common::perfq_json(&["info", "--json", path.to_str().expect("path")]);
        let attr_period = |event: &Value| {
            info["events"]
                .as_array()
                .and_then(|evs| evs.iter().find(|e| &e["name"] == event))
                .and_then(|e| e["sample_period"].as_u64())
        };
        let mut ours: Vec<(i64, u64, u64, u64)> = Vec::new();
        for s in common::perfq_dump(&path) {
            let (Some(tid), Some(time), Some(ip)) = (
                s["tid"].as_i64(),
                s["time"].as_u64(),
                common::hex_field(&s["ip"]),
            ) else {
                continue;
            };
            match s["read"]["values"].as_array() {
                Some(values) => {
                    let deltas = values.iter().filter_map(|m| m["delta"].as_u64());
                    ours.extend(deltas.filter(|d| *d != 0).map(|d| (tid, time, ip, d)));
                }
                None => {
                    let period = s["period"].as_u64().or_else(|| attr_period(&s["event"]));
                    ours.push((tid, time, ip, period.unwrap_or(0)));
                }
            }
        }
        theirs.sort_unstable();
        ours.sort_unstable();
        assert_eq!(ours.len(), theirs.len(), "{}: sample lines", path.display());
        assert!(
            ours == theirs,
            "{}: tid/time/ip/period differ",
            path.display()
        );
        files += 1;
        samples += ours.len();
    }
    assert!(files >= 100, "only {files} captures compared");
    println!(
        "corpus: tid/time/ip/period of {samples} sample lines in {files} captures agree with perf 6.12"
    );
}

/// The PMU features as `perf report --header-only -I` prints them: the
/// mappings (`name = type`), each PMU's capabilities line (after "pmu
/// capabilities: "), and the hybrid CPU lists.
#[derive(Debug, Default, PartialEq, Eq)]
struct PmuHeader {
    mappings: Vec<String>,
    caps: Vec<(String, String)>,
    hybrid: Vec<(String, String)>,
}

impl PmuHeader {
    fn is_empty(&self) -> bool {
        self.mappings.is_empty() && self.caps.is_empty() && self.hybrid.is_empty()
    }
}

/// Parses perf's header print (`print_pmu_mappings`, `__print_pmu_caps`,
/// `print_hybrid_topology` in perf's `util/header.c`).
fn perf_pmu_header(text: &str) -> PmuHeader {
    let mut h = PmuHeader::default();
    let mut in_hybrid = false;
    for line in text.lines() {
        let Some(l) = line.strip_prefix("# ") else {
            continue;
        };
        if let Some(m) = l.strip_prefix("pmu mappings: ") {
            if m != "not available" {
                h.mappings = m.split(", ").map(str::to_string).collect();
            }
        } else if let Some((pmu, caps)) = l.split_once(" pmu capabilities: ") {
            h.caps.push((pmu.to_string(), caps.to_string()));
        } else if l == "hybrid cpu system:" {
            in_hybrid = true;
            continue;
        } else if let (true, Some((pmu, cpus))) = (in_hybrid, l.split_once(" cpu list : ")) {
            h.hybrid.push((pmu.to_string(), cpus.to_string()));
            continue;
        }
        in_hybrid = false;
    }
    h
}

/// The same from `perfq info --json`.
fn perfq_pmu_header(info: &Value) -> PmuHeader {
    let list = |k: &str| info[k].as_array().cloned().unwrap_or_default();
    let text = |v: &Value| v.as_str().unwrap_or("").to_string();
    PmuHeader {
        mappings: list("pmu_mappings")
            .iter()
            .map(|m| format!("{} = {}", text(&m["name"]), m["type"]))
            .collect(),
        caps: list("pmu_caps")
            .iter()
            .map(|p| {
                let caps: Vec<String> = p["caps"]
                    .as_array()
                    .into_iter()
                    .flatten()
                    .map(|c| format!("{}={}", text(&c["name"]), text(&c["value"])))
                    .collect();
                let caps = if caps.is_empty() {
                    "not available".to_string()
                } else {
                    caps.join(", ")
                };
                (text(&p["pmu"]), caps)
            })
            .collect(),
        hybrid: list("hybrid_topology")
            .iter()
            .map(|h| (text(&h["pmu"]), text(&h["cpus"])))
            .collect(),
    }
}

/// Captures whose PMU features perf does not print although they are
/// there, and why.
const PMU_KNOWN_DIFFERENCES: &[(&str, &str)] = &[(
    "perf_data_converter/src/quipper/testdata/perf.data.armv7.perf_3.14-3.8",
    "its CPUDESC section is empty (0 bytes): perf stops processing features at the first it cannot read, so it prints no later one (total memory 0 kB where TOTAL_MEM says 2049120, an empty cmdline, pmu mappings not available); perfq reads the four mappings",
)];

/// PMU_MAPPINGS, CPU_PMU_CAPS, PMU_CAPS and HYBRID_TOPOLOGY of every
/// corpus capture perf reads the header of decode to what `perf report
/// --header-only -I` prints.
#[test]
fn corpus_pmu_features_agree_with_perf_header() {
    let Some(corpus) = common::corpus() else {
        common::skip("../shared/corpus is absent; PMU header features not checked");
        return;
    };
    if !common::have_perf() {
        common::skip("perf is not installed; PMU header features not compared with it");
        return;
    }
    let (mut compared, mut with_features, mut refused) = (0, 0, 0);
    let mut failures = Vec::new();
    for entry in common::catalog(&corpus) {
        let rel = entry["path"].as_str().expect("path");
        let path = corpus.join(rel);
        let p = path.to_str().expect("utf-8 path");
        let Some(header) = common::perf(&["report", "--header-only", "-I", "-i", p]) else {
            // perf 6.1 refuses captures of perf >= 6.3 ("incompatible file
            // format") and simpleperf's: nothing to compare with.
            refused += 1;
            continue;
        };
        let theirs = perf_pmu_header(&header);
        let info = common::perfq_json(&["info", "--json", p]);
        let ours = perfq_pmu_header(&info);
        if let Some((_, why)) = PMU_KNOWN_DIFFERENCES.iter().find(|(p, _)| *p == rel) {
            assert_ne!(
                ours, theirs,
                "{rel} agrees now: remove it from PMU_KNOWN_DIFFERENCES"
            );
            println!("  note: {rel}: {why}");
            continue;
        }
        if ours != theirs {
            failures.push(format!("{rel}:\n  perf  {theirs:?}\n  perfq {ours:?}"));
        }
        compared += 1;
        with_features += usize::from(!theirs.is_empty());
    }
    println!("corpus: PMU features of {compared} captures ({with_features} with some) agree with perf report --header-only; perf refused {refused}");
    assert!(
        failures.is_empty(),
        "{} differ:\n{}",
        failures.len(),
        failures.join("\n")
    );
    assert!(
        with_features >= 10,
        "{with_features} captures with PMU features"
    );
}
