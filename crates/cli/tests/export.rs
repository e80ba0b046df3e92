//! `perfq export`: what pprof (`go tool pprof`, Debian's golang) and
//! speedscope (its published schema and its own page, npm `speedscope`,
//! in headless Chromium) read of the files, held to `perfq report`.

mod common;

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::process::Command;

use serde_json::Value;

/// Every capture of `testdata/`.
fn captures() -> impl Iterator<Item = &'static str> {
    common::RECORDED.iter().copied().chain(["topdown-spr.data"])
}

/// `perfq export` of a `testdata/` capture into `file`.
fn export(name: &str, to: &str, file: &Path) {
    perfq(&[
        "export",
        &common::testdata(name).display().to_string(),
        "--to",
        to,
        "-o",
        &file.display().to_string(),
    ]);
}

/// perfq from the repository root (`topdown-spr.data` maps `testdata/td-demo`
/// by a relative path), with this test process's cache.
fn perfq(args: &[&str]) -> String {
    common::succeeded(
        &common::perfq_cached(args, common::process_cache()),
        format_args!("perfq {args:?}"),
    )
}

/// A function's name as both sides are compared: an unresolved address
/// (`perf report`'s `0x000000000000cc5c`, and `0000000000000000` for 0;
/// pprof's `0xcc5c`) by its value.
fn normal(name: &str) -> String {
    let hex = name
        .strip_prefix("0x")
        .or((name.len() == 16).then_some(name));
    match hex.and_then(|h| u64::from_str_radix(h, 16).ok()) {
        Some(a) => format!("{a:#x}"),
        None => name.to_string(),
    }
}

/// Per event and function name (inlined rows left out, as pprof's
/// `-noinlines` leaves them): self samples, total samples, self period,
/// total period, from `perfq report --children --format json`. Rows of one
/// name in several DSOs are added up: pprof knows a function by its name.
type Sums = BTreeMap<String, BTreeMap<String, [u64; 4]>>;

fn report_sums(capture: &Path) -> Sums {
    let rows = common::rows(&perfq(&[
        "report",
        &capture.display().to_string(),
        "--children",
        "--format",
        "json",
    ]));
    // perf's rows of inlining levels: pprof's -noinlines has none.
    sums(rows.into_iter().filter(|r| {
        !r["symbol"]
            .as_str()
            .is_some_and(|s| s.ends_with(" (inlined)"))
    }))
}

/// Rows with event, symbol, samples, total_samples, period and
/// total_period, added up per event and function name.
fn sums(rows: impl Iterator<Item = Value>) -> Sums {
    let mut out = Sums::new();
    for r in rows {
        let n = |k: &str| r[k].as_u64().unwrap_or_else(|| panic!("{k} in {r}"));
        let e = out
            .entry(r["event"].as_str().expect("event").to_string())
            .or_default()
            .entry(normal(r["symbol"].as_str().expect("symbol")))
            .or_default();
        for (i, k) in ["samples", "total_samples", "period", "total_period"]
            .iter()
            .enumerate()
        {
            e[i] += n(k);
        }
    }
    out
}

/// The same sums from the dataset's views (`function_self`,
/// `function_total`), through `perfq query`.
fn view_sums(capture: &Path) -> Sums {
    let sql = "SELECT e.name AS event, t.symbol AS symbol, \
        COALESCE(s.samples, 0) AS samples, t.samples AS total_samples, \
        COALESCE(s.period, 0) AS period, t.period AS total_period \
        FROM function_total t JOIN events e ON e.capture = t.capture AND e.event_id = t.event_id \
        LEFT JOIN function_self s ON s.capture = t.capture AND s.event_id = t.event_id \
        AND s.symbol = t.symbol AND s.dso = t.dso";
    let rows = common::rows(&perfq(&[
        "query",
        &capture.display().to_string(),
        "--format",
        "json",
        sql,
    ]));
    sums(rows.into_iter())
}

/// `go` (Debian's golang-go, whose `go tool pprof` reads the files), or a
/// skip.
fn go() -> Option<()> {
    let ok = Command::new("go")
        .arg("version")
        .output()
        .is_ok_and(|o| o.status.success());
    if !ok {
        common::skip(
            "go is not installed (bash .ci/setup.sh installs golang-go); pprof files not read",
        );
        return None;
    }
    Some(())
}

/// `go tool pprof args... file`'s output, which must succeed.
fn pprof(args: &[&str], file: &Path) -> String {
    let home = common::scratch("pprof", "home");
    let out = Command::new("go")
        .args(["tool", "pprof"])
        .args(args)
        .arg(file)
        // pprof keeps nothing of ours, and looks nothing up.
        .env("HOME", &home)
        .env("PPROF_TMPDIR", &home)
        .env("PPROF_BINARY_PATH", &home)
        .env("GOFLAGS", "-mod=mod")
        .output()
        .expect("run go tool pprof");
    assert!(
        out.status.success(),
        "go tool pprof {args:?} {}: {}",
        file.display(),
        String::from_utf8_lossy(&out.stderr)
    );
    String::from_utf8(out.stdout).expect("UTF-8")
}

/// `go tool pprof -top`'s rows for one sample type: name → (flat, cum),
/// every node shown (no node dropped for being small), inlined functions
/// counted in the function they are inlined into.
fn pprof_top(file: &Path, sample_index: &str) -> BTreeMap<String, (u64, u64)> {
    let text = pprof(
        &[
            "-top",
            "-noinlines",
            "-nodecount=1000000",
            "-nodefraction=0",
            "-edgefraction=0",
            "-unit=ns",
            &format!("-sample_index={sample_index}"),
        ],
        file,
    );
    let mut rows = BTreeMap::new();
    let mut body = false;
    for line in text.lines() {
        if line.trim_start().starts_with("flat ") {
            body = true;
            continue;
        }
        if !body {
            continue;
        }
        let fields: Vec<&str> = line.split_whitespace().collect();
        assert!(fields.len() >= 6, "a -top row: {line}");
        let value = |s: &str| -> u64 {
            let digits = s
                .strip_suffix("ns")
                .or_else(|| s.strip_suffix("slots"))
                .unwrap_or(s);
            digits
                .parse()
                .unwrap_or_else(|_| panic!("a whole value in {line}"))
        };
        let name = fields[5..].join(" ");
        let prev = rows.insert(normal(&name), (value(fields[0]), value(fields[3])));
        assert!(prev.is_none(), "{name} twice in -top");
    }
    rows
}

/// Flat (self) per function name, compared whole, and cumulative (total)
/// per resolved function. An unresolved frame of a callchain is named by
/// perf (and `perfq report`) by the return address recorded, in the
/// dataset by the address looked up (pc − 1; docs/schema.md): one frame,
/// two names, so unresolved names are held to the flat sums only, where
/// a sample's own address has one name on both sides.
fn compare(
    got: &BTreeMap<String, (u64, u64)>,
    want: &BTreeMap<String, (u64, u64)>,
    what: &str,
    flat_too: bool,
) {
    let flat = |m: &BTreeMap<String, (u64, u64)>| -> BTreeMap<String, u64> {
        m.iter()
            .filter(|(_, v)| v.0 > 0)
            .map(|(k, v)| (k.clone(), v.0))
            .collect()
    };
    let cum = |m: &BTreeMap<String, (u64, u64)>| -> BTreeMap<String, u64> {
        m.iter()
            .filter(|(k, v)| v.1 > 0 && !k.starts_with("0x"))
            .map(|(k, v)| (k.clone(), v.1))
            .collect()
    };
    if flat_too {
        assert_eq!(flat(got), flat(want), "{what}: flat (self) per function");
    }
    assert_eq!(
        cum(got),
        cum(want),
        "{what}: cum (total) per resolved function"
    );
    assert!(
        !cum(want).is_empty() || !flat(want).is_empty(),
        "{what}: nothing compared"
    );
}

#[test]
fn pprof_reads_every_capture_as_perfq_report_counts_it() {
    let Some(()) = go() else { return };
    let dir = common::scratch("export", "pprof");
    for name in captures() {
        let capture = common::testdata(name);
        let file = dir.join(format!("{name}.pb.gz"));
        export(name, "pprof", &file);
        // -raw reads every sample, location and mapping.
        let raw = pprof(&["-raw"], &file);
        assert!(
            raw.contains("Samples:") && raw.contains("Locations"),
            "{raw}"
        );
        let expected = report_sums(&capture);
        assert!(!expected.is_empty(), "{name}: perfq report has rows");
        for (event, functions) in &expected {
            let samples = pprof_top(&file, &format!("{event}_samples"));
            let periods = pprof_top(&file, event);
            let want = |i: usize, j: usize| -> BTreeMap<String, (u64, u64)> {
                functions
                    .iter()
                    .map(|(f, v)| (f.clone(), (v[i], v[j])))
                    .collect()
            };
            // perf names the unwound frames of a --call-graph dwarf
            // capture by DWARF in Children (the views and pprof by the
            // symbol): there pprof's cum is held to the views below only.
            let dwarf = name == "dwarf.data";
            let flat_only = |m: BTreeMap<String, (u64, u64)>| -> BTreeMap<String, (u64, u64)> {
                m.into_iter().map(|(k, v)| (k, (v.0, 0))).collect()
            };
            let strip = |m: &BTreeMap<String, (u64, u64)>| {
                if dwarf {
                    flat_only(m.clone())
                } else {
                    m.clone()
                }
            };
            compare(
                &strip(&samples),
                &strip(&want(0, 1)),
                &format!("{name} {event} samples"),
                true,
            );
            compare(
                &strip(&periods),
                &strip(&want(2, 3)),
                &format!("{name} {event} periods"),
                true,
            );
            // The dataset's own sums, every name (unresolved ones too:
            // both name a frame by the address looked up).
            let views = &view_sums(&capture)[event];
            let exact = |m: &BTreeMap<String, (u64, u64)>| -> BTreeMap<String, (u64, u64)> {
                m.iter()
                    .filter(|(_, v)| **v != (0, 0))
                    .map(|(k, v)| (k.clone(), *v))
                    .collect()
            };
            let of = |i: usize, j: usize| -> BTreeMap<String, (u64, u64)> {
                views
                    .iter()
                    .map(|(f, v)| (f.clone(), (v[i], v[j])))
                    .collect()
            };
            assert_eq!(
                exact(&samples),
                exact(&of(0, 1)),
                "{name} {event}: samples = function_self/function_total"
            );
            assert_eq!(
                exact(&periods),
                exact(&of(2, 3)),
                "{name} {event}: periods = function_self/function_total"
            );
        }
    }
}

#[test]
fn pprof_topdown_nodes_add_up_to_perfq_topdowns_slots() {
    let Some(()) = go() else { return };
    let dir = common::scratch("export", "pprof-topdown");
    // The shipped Sapphire Rapids capture, and generated ones: AMD (one
    // group), Skylake level 2 (four groups taking turns), a hybrid part
    // (a row per core type), Arm.
    let mut captures = vec![common::testdata("topdown-spr.data")];
    for preset in [
        "zen4-l2",
        "skylake-l2-smt",
        "alderlake-hybrid-gp-l2",
        "neoverse-v2",
    ] {
        captures.push(common::td_demo_capture(
            &dir.join(format!("{preset}.data")),
            &common::preset(preset),
            3000,
        ));
    }
    for capture in &captures {
        let shown = capture.display().to_string();
        let file = dir.join("topdown.pb.gz");
        perfq(&[
            "export",
            &shown,
            "--to",
            "pprof",
            "-o",
            &file.display().to_string(),
        ]);
        let rows = common::rows(&perfq(&[
            "topdown", &shown, "--level", "2", "--format", "json",
        ]));
        // Per node and function, the rows' node_slots added up (a hybrid
        // part's core types are rows of their own).
        let mut want: BTreeMap<String, BTreeMap<String, f64>> = BTreeMap::new();
        for r in &rows {
            let symbol = normal(r["symbol"].as_str().expect("symbol"));
            for (node, v) in r["node_slots"].as_object().expect("node_slots") {
                if let Some(v) = v.as_f64() {
                    *want
                        .entry(node.clone())
                        .or_default()
                        .entry(symbol.clone())
                        .or_default() += v;
                }
            }
        }
        assert!(want.contains_key("backend_bound"), "{shown}: {want:?}");
        for (node, functions) in &want {
            let top = pprof_top(&file, node);
            let got: BTreeMap<String, u64> = top
                .iter()
                .filter(|(_, v)| v.0 > 0)
                .map(|(k, v)| (k.clone(), v.0))
                .collect();
            let want: BTreeMap<String, u64> = functions
                .iter()
                .map(|(k, v)| (k.clone(), v.max(0.0).round() as u64))
                .filter(|(_, v)| *v > 0)
                .collect();
            assert_eq!(got, want, "{shown}: {node} slots per function (pprof flat)");
        }
    }
}

#[test]
fn pprof_keeps_inlined_functions_build_ids_and_threads() {
    let Some(()) = go() else { return };
    let dir = common::scratch("export", "pprof-raw");
    let file = dir.join("dwarf.pb.gz");
    export("dwarf.data", "pprof", &file);
    let raw = pprof(&["-raw"], &file);
    let locations = raw
        .split("\nLocations\n")
        .nth(1)
        .expect("a Locations section");
    // A location with an inlined function: a line that continues the
    // location above it (no `N: 0x...` of its own). Only where libc's
    // binary and its debug file are the running system's: without them libc's
    // frames are addresses.
    let here = common::recorded_binaries_here(&common::testdata("dwarf.data"))
        .and_then(|()| common::libc_debug_info_here());
    match here {
        Ok(()) => {
            let inlined = locations
                .lines()
                .take_while(|l| !l.starts_with("Mappings"))
                .any(|l| l.starts_with("     ") && !l.trim_start().contains(": 0x"));
            assert!(inlined, "no location with inlined lines:\n{locations}");
        }
        Err(why) => common::skip(format_args!("{why}; inlined lines not looked for")),
    }
    let mappings = raw.split("\nMappings\n").nth(1).expect("Mappings");
    // `N: start/limit/offset path build-id [flags]`: libc's with its id.
    let libc = mappings
        .lines()
        .find(|l| l.contains("/libc.so.6 "))
        .unwrap_or_else(|| panic!("no libc mapping:\n{mappings}"));
    assert!(
        libc.split_whitespace()
            .any(|w| w.len() == 40 && w.bytes().all(|b| b.is_ascii_hexdigit())),
        "no build id: {libc}"
    );
    // Labels: pid, tid and comm, which -tagfocus filters by.
    let samples = raw.split("\nLocations\n").next().expect("samples");
    assert!(
        samples.contains("comm:[sort]") && samples.contains("pid:["),
        "{samples}"
    );
    // The comm labels' sums (pprof -tags): as many samples per comm as
    // perf script prints.
    let tags = pprof(&["-tags", "-sample_index=cpu-clock_samples"], &file);
    let mut labelled: BTreeMap<String, u64> = BTreeMap::new();
    for line in tags
        .split(" comm: ")
        .nth(1)
        .unwrap_or_else(|| panic!("no comm tag:\n{tags}"))
        .lines()
        .skip(1)
        .take_while(|l| !l.trim().is_empty())
    {
        let (count, comm) = line
            .trim()
            .split_once(' ')
            .and_then(|(n, rest)| Some((n, rest.split_once("): ")?.1)))
            .unwrap_or_else(|| panic!("a tag line: {line}"));
        let n: f64 = count.parse().unwrap_or_else(|_| panic!("{line}"));
        labelled.insert(comm.to_string(), n as u64);
    }
    let Some(comms) = common::perf(&[
        "script",
        "-F",
        "comm",
        "-i",
        &common::testdata("dwarf.data").display().to_string(),
    ]) else {
        common::skip("perf is not installed; pprof's comm labels not compared");
        return;
    };
    let mut perf_comms: BTreeMap<String, u64> = BTreeMap::new();
    for l in comms.lines() {
        *perf_comms.entry(l.trim().to_string()).or_default() += 1;
    }
    assert_eq!(labelled, perf_comms, "samples per comm label");
}

// speedscope.

/// npm's `speedscope` (its published schema and its page), installed by
/// .ci/setup.sh into `PERFQ_NPM` (by default ~/.cache/perfq-npm).
fn speedscope_package() -> Option<PathBuf> {
    let root = std::env::var_os("PERFQ_NPM").map_or_else(
        || PathBuf::from(std::env::var_os("HOME").unwrap_or_default()).join(".cache/perfq-npm"),
        PathBuf::from,
    );
    let release = root.join("node_modules/speedscope/dist/release");
    if release.join("file-format-schema.json").is_file() {
        Some(release)
    } else {
        common::skip(format_args!(
            "{} has no speedscope (bash .ci/setup.sh installs it); speedscope files not checked",
            release.display()
        ));
        None
    }
}

/// Per frame name: the weights of the samples it is the leaf of (self) and
/// of the samples whose stack holds it, each sample once (speedscope's
/// total), over every profile.
fn speedscope_totals(file: &Value) -> BTreeMap<String, (u64, u64)> {
    let frames = file["shared"]["frames"].as_array().expect("frames");
    let mut out = BTreeMap::new();
    for p in file["profiles"].as_array().expect("profiles") {
        let samples = p["samples"].as_array().expect("samples");
        let weights = p["weights"].as_array().expect("weights");
        assert_eq!(samples.len(), weights.len());
        for (s, w) in samples.iter().zip(weights) {
            let mut names: Vec<String> = s
                .as_array()
                .expect("a stack")
                .iter()
                .map(|i| {
                    let i = i.as_u64().expect("an index") as usize;
                    normal(frames[i]["name"].as_str().expect("a name"))
                })
                .collect();
            let w = w.as_u64().expect("a weight");
            if let Some(leaf) = names.last() {
                out.entry(leaf.clone()).or_insert((0, 0)).0 += w;
            }
            names.sort();
            names.dedup();
            for n in names {
                out.entry(n).or_insert((0, 0)).1 += w;
            }
        }
    }
    out
}

#[test]
fn speedscope_totals_per_frame_are_perf_reports() {
    let dir = common::scratch("export", "speedscope");
    for name in captures() {
        let capture = common::testdata(name);
        let file = dir.join(format!("{name}.speedscope.json"));
        export(name, "speedscope", &file);
        let json = common::json(&std::fs::read_to_string(&file).expect("read"));
        let totals = speedscope_totals(&json);
        // The event exported: the first sampled.
        let event = json["name"]
            .as_str()
            .and_then(|n| n.rsplit_once(" ("))
            .map(|(_, e)| e.trim_end_matches(')').to_string())
            .expect("the event in the name");
        let rows = common::rows(&perfq(&[
            "report",
            &capture.display().to_string(),
            "--children",
            "--event",
            &event,
            "--format",
            "json",
        ]));
        let mut want: BTreeMap<String, (u64, u64)> = BTreeMap::new();
        for r in rows {
            let s = r["symbol"].as_str().expect("symbol");
            let e = want.entry(normal(s)).or_insert((0, 0));
            e.0 += r["period"].as_u64().expect("period");
            e.1 += r["total_period"].as_u64().expect("total_period");
        }
        // Totals only: speedscope's leaf of an unwound frame is its
        // innermost inlined function, where perf counts self to the symbol.
        if name == "dwarf.data" {
            // perf report --children counts a sample once more for its own
            // entry (the symbol of its address), beside its callchain's
            // levels named by DWARF; where the symbol is not one of those
            // names, the symbol's total in perf is the callchain's plus
            // its self. speedscope, as perf script and flame graphs, has
            // the callchain's frames only.
            for (f, (self_, total)) in &want {
                if f.starts_with("0x") || *total == 0 {
                    continue;
                }
                let got = totals.get(f).map_or(0, |v| v.1);
                assert!(
                    got == *total || got == total - self_,
                    "{name}: {f}: speedscope total {got}, perf report's {total} (self {self_})"
                );
            }
            for (f, (_, total)) in &totals {
                assert!(
                    f.starts_with("0x") || want.contains_key(f),
                    "{name}: {f} ({total}) is no perf report row"
                );
            }
        } else {
            compare(&totals, &want, &format!("{name} speedscope"), false);
        }
        // One profile per thread.
        let profiles = json["profiles"].as_array().expect("profiles");
        let mut names: Vec<&str> = profiles
            .iter()
            .map(|p| p["name"].as_str().expect("name"))
            .collect();
        names.dedup();
        assert_eq!(names.len(), profiles.len(), "{name}: a profile per thread");
    }
}

#[test]
fn speedscope_files_follow_its_schema_and_load_in_its_page() {
    let Some(release) = speedscope_package() else {
        return;
    };
    let Some(python) = common::python_with("selenium, jsonschema") else {
        common::skip("no Python with selenium and jsonschema (bash .ci/setup.sh installs them); speedscope files not checked");
        return;
    };
    let dir = common::scratch("export", "speedscope-page");
    let mut files = Vec::new();
    for name in ["fp.data", "dwarf.data", "group.data", "topdown-spr.data"] {
        let file = dir.join(format!("{name}.speedscope.json"));
        export(name, "speedscope", &file);
        files.push(file);
    }
    let script = common::root().join("crates/cli/tests/browser/speedscope.py");
    let out = Command::new(python)
        .arg(&script)
        .arg(&release)
        .arg(&dir)
        .args(&files)
        // Nothing written beside the scripts.
        .env("PYTHONDONTWRITEBYTECODE", "1")
        .output()
        .expect("run speedscope.py");
    assert!(
        out.status.success(),
        "speedscope.py: {}\n{}",
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr)
    );
    // docs/viewing.md's picture: td-demo, named on every machine.
    common::keep_screenshot(
        &dir.join("topdown-spr.data.speedscope.json.png"),
        "speedscope.png",
    );
}
