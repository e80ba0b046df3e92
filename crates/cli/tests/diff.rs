//! `perfq diff` against independent oracles:
//!
//! 1. A C program built here whose argument makes one function do five
//!    times the work and one more function run: two captures recorded with
//!    `perf record -e cpu-clock -g`. The slowed function is the top row,
//!    its change positive and significant; every function's samples in A
//!    and B equal `perf report -n --no-children --sort dso,sym`'s; shares,
//!    changes, z and p-values equal the two-proportion z-test computed
//!    here from perf's counts (the p-value by numerical integration, not
//!    the erfc fit perfq uses); the function present only in B has 0
//!    samples in A. CSV, JSON and Parquet carry the same rows, `--by dso`
//!    sums per DSO, and two `capture=<id>` folders of a dataset give the
//!    same rows as the files.
//! 2. Two generated top-down captures (Ice Lake and Sapphire Rapids): the
//!    level-1 columns of each side equal `perfq topdown --format json` of
//!    that capture, and the changes are their differences.

mod common;

use std::collections::BTreeMap;
use std::fs::File;
use std::path::{Path, PathBuf};

use common::{
    perfq_cached_fails as perfq_fails, perfq_cached_ok as perfq_ok, perfq_cached_rows as perfq_rows,
};
use serde_json::Value;

const PROGRAM: &str = r#"
#include <stdint.h>
#include <stdio.h>

static volatile uint64_t sink;

/* Each function's own loop (no shared callee), so its samples are its
 * self time. */
#define WORK(n, k)                     \
    for (uint64_t i = 0; i < (n); i++) \
        sink += i * (k)

__attribute__((noinline)) void parse_records(uint64_t n) { WORK(n, 3); }
__attribute__((noinline)) void hash_keys(uint64_t n) { WORK(n, 5); }
__attribute__((noinline)) void sort_keys(uint64_t n) { WORK(n, 7); }
__attribute__((noinline)) void write_output(uint64_t n) { WORK(n, 11); }
__attribute__((noinline)) void only_when_slow(uint64_t n) { WORK(n, 13); }

int main(int argc, char **argv) {
    int slow = argc > 1 && argv[1][0] == '1';
    uint64_t n = 10000000;
    for (int k = 0; k < 20; k++) {
        parse_records(n);
        hash_keys(slow ? 5 * n : n);
        sort_keys(n);
        write_output(n);
        if (slow)
            only_when_slow(n / 4);
    }
    printf("%llu\n", (unsigned long long)sink);
    return 0;
}
"#;

const FUNCTIONS: [&str; 5] = [
    "parse_records",
    "hash_keys",
    "sort_keys",
    "write_output",
    "only_when_slow",
];

/// The program built and recorded at normal speed (A) and slowed (B), or
/// `None` after saying why not.
fn recorded() -> Option<(PathBuf, PathBuf, PathBuf)> {
    if !common::have_perf() || !common::can_record() {
        common::skip("perf cannot record here; perfq diff not checked");
        return None;
    }
    let dir = common::scratch("diff", "program");
    std::fs::write(dir.join("slow.c"), PROGRAM).expect("write source");
    let built = common::gcc(
        &dir,
        &[
            "-O2",
            "-g",
            "-fno-omit-frame-pointer",
            "slow.c",
            "-o",
            "slow",
        ],
    );
    if !built {
        common::skip("gcc is not available; perfq diff not checked");
        return None;
    }
    let record = |out: &str, arg: &str| {
        common::record(&dir, out, &[], &["-g", "-F", "2000"], &["./slow", arg])
    };
    let a = record("a.data", "0");
    let b = record("b.data", "1");
    Some((dir, a, b))
}

/// (dso, symbol) → samples, from `perf report -n --no-children`.
fn perf_samples(data: &Path) -> BTreeMap<(String, String), u64> {
    let out = common::perf(&[
        "report",
        "-i",
        data.to_str().expect("path"),
        "--stdio",
        "--no-children",
        "-n",
        "--sort",
        "dso,sym",
        "-g",
        "none",
    ])
    .expect("perf report");
    let mut m = BTreeMap::new();
    for line in out.lines().filter(|l| !l.starts_with('#')) {
        // "    37.50%            66  slow               [.] parse_records"
        let t: Vec<&str> = line.split_whitespace().collect();
        if t.len() < 5 || !t[0].ends_with('%') {
            continue;
        }
        let Ok(n) = t[1].parse::<u64>() else { continue };
        let Some(marker) = t.iter().position(|x| *x == "[.]" || *x == "[k]") else {
            continue;
        };
        let key = (t[2..marker].join(" "), t[marker + 1..].join(" "));
        *m.entry(key).or_default() += n;
    }
    m
}

/// erfc(x) = 2/√π ∫ₓ^∞ e^(−t²) dt by Simpson's rule over [x, x + 12].
fn erfc_by_integration(x: f64) -> f64 {
    let n = 200_000;
    let h = 12.0 / n as f64;
    let f = |t: f64| (-t * t).exp();
    let mut s = f(x) + f(x + 12.0);
    for i in 1..n {
        let t = x + i as f64 * h;
        s += if i % 2 == 1 { 4.0 } else { 2.0 } * f(t);
    }
    s * h / 3.0 * 2.0 / std::f64::consts::PI.sqrt()
}

fn num(v: &Value) -> f64 {
    v.as_f64().unwrap_or_else(|| panic!("number: {v}"))
}

#[test]
fn the_slowed_function_is_the_top_row() {
    let Some((dir, a, b)) = recorded() else {
        return;
    };
    let cache = dir.join("cache");
    let (pa, pb) = (a.to_str().expect("path"), b.to_str().expect("path"));
    let rows = perfq_rows(&["diff", pa, pb, "--format", "json"], &cache);
    let top = &rows[0];
    assert_eq!(top["symbol"], "hash_keys", "top row: {top}");
    assert!(num(&top["change_pp"]) > 10.0, "{top}");
    assert!(num(&top["z"]) > 5.0 && num(&top["p_value"]) < 1e-6, "{top}");
    // Sorted by the absolute change.
    for w in rows.windows(2) {
        assert!(num(&w[0]["change_pp"]).abs() >= num(&w[1]["change_pp"]).abs());
    }
    let checked = rows_agree_with_perf_report(&rows, &a, &b);
    println!(
        "diff: top row {} {:+.2} pp, z {:.2}, p {:.3e}; {checked} functions equal perf report's counts",
        top["symbol"],
        num(&top["change_pp"]),
        num(&top["z"]),
        num(&top["p_value"])
    );
    let only = rows
        .iter()
        .find(|r| r["symbol"] == "only_when_slow")
        .expect("the function only B has");
    assert_eq!(only["a_samples"], 0);
    assert!(only["b_samples"].as_u64().expect("samples") > 0);
    assert_eq!(num(&only["a_pct"]), 0.0);

    let csv = other_formats_carry_the_same_rows(pa, pb, &rows, &dir, &cache);
    the_table_rounds_the_json_rows(pa, pb, &rows, &cache);

    // Per DSO: the program's DSO gains what its functions gain.
    let dsos = perfq_rows(&["diff", pa, pb, "--by", "dso", "--format", "json"], &cache);
    let slow = dsos
        .iter()
        .find(|r| r["dso"] == "slow")
        .expect("slow's row");
    let sum = |col: &str| -> u64 {
        rows.iter()
            .filter(|r| r["dso"] == "slow")
            .map(|r| r[col].as_u64().expect("samples"))
            .sum()
    };
    assert_eq!(slow["a_samples"], sum("a_samples"));
    assert_eq!(slow["b_samples"], sum("b_samples"));
    assert!(dsos.iter().all(|r| r.get("symbol").is_none()));

    capture_folders_give_the_files_rows(pa, pb, &csv, &dir, &cache);
    std::fs::remove_dir_all(&dir).ok();
}

/// The terminal table: at most 100 columns, every JSON row in order with
/// its shares and change to two decimals and its significance mark.
fn the_table_rounds_the_json_rows(pa: &str, pb: &str, rows: &[Value], cache: &Path) {
    let table = perfq_ok(&["diff", pa, pb], cache);
    let lines: Vec<&str> = table.lines().collect();
    for l in &lines {
        assert!(l.chars().count() <= 100, "wider than 100 columns: {l:?}");
    }
    let body: Vec<&str> = lines
        .iter()
        .copied()
        .filter(|l| !l.starts_with('#'))
        .skip(1)
        .collect();
    assert_eq!(body.len(), rows.len(), "{table}");
    for (line, r) in body.iter().zip(rows) {
        let p = num(&r["p_value"]);
        let mark = match p {
            p if p < 0.001 => "***",
            p if p < 0.01 => "**",
            p if p < 0.05 => "*",
            _ => "",
        };
        let cells: Vec<&str> = line.split_whitespace().collect();
        let want = [
            r["a_samples"].to_string(),
            r["b_samples"].to_string(),
            format!("{:.2}", num(&r["a_pct"])),
            format!("{:.2}", num(&r["b_pct"])),
            format!("{:+.2}", num(&r["change_pp"])),
        ];
        assert_eq!(
            &cells[..5],
            &want.iter().map(String::as_str).collect::<Vec<_>>()[..],
            "{line}"
        );
        let rest = if mark.is_empty() {
            &cells[5..]
        } else {
            assert_eq!(cells[5], mark, "{line}");
            &cells[6..]
        };
        assert_eq!(rest[0], r["symbol"].as_str().expect("symbol"), "{line}");
    }
}

/// Every function's samples in A and B equal perf report's; shares,
/// changes and the test recomputed from them. Returns the functions
/// compared.
fn rows_agree_with_perf_report(rows: &[Value], a: &Path, b: &Path) -> usize {
    let (sa, sb) = (perf_samples(a), perf_samples(b));
    let (na, nb): (u64, u64) = (sa.values().sum(), sb.values().sum());
    let mut checked = 0;
    for r in rows {
        let key = (
            r["dso"].as_str().expect("dso").to_string(),
            r["symbol"].as_str().expect("symbol").to_string(),
        );
        let (xa, xb) = (
            sa.get(&key).copied().unwrap_or(0),
            sb.get(&key).copied().unwrap_or(0),
        );
        if !FUNCTIONS.contains(&key.1.as_str()) {
            continue;
        }
        assert_eq!(r["a_samples"], xa, "{key:?} in A");
        assert_eq!(r["b_samples"], xb, "{key:?} in B");
        let (p1, p2) = (xa as f64 / na as f64, xb as f64 / nb as f64);
        assert!((num(&r["a_pct"]) - 100.0 * p1).abs() < 1e-9, "{r}");
        assert!((num(&r["b_pct"]) - 100.0 * p2).abs() < 1e-9, "{r}");
        assert!(
            (num(&r["change_pp"]) - 100.0 * (p2 - p1)).abs() < 1e-9,
            "{r}"
        );
        let p = (xa + xb) as f64 / (na + nb) as f64;
        let z = (p2 - p1) / (p * (1.0 - p) * (1.0 / na as f64 + 1.0 / nb as f64)).sqrt();
        assert!((num(&r["z"]) - z).abs() < 1e-9, "{r}: z {z}");
        let pv = erfc_by_integration(z.abs() / std::f64::consts::SQRT_2);
        let got = num(&r["p_value"]);
        assert!(
            (got - pv).abs() <= 1e-6 * pv.max(1e-300) + 1e-300,
            "{r}: p-value {pv}"
        );
        checked += 1;
    }
    assert_eq!(
        checked,
        FUNCTIONS.len(),
        "every program function in the diff"
    );
    checked
}

/// The CSV and Parquet formats carry `rows` (the JSON's); Parquet needs a
/// file. Returns the CSV.
fn other_formats_carry_the_same_rows(
    pa: &str,
    pb: &str,
    rows: &[Value],
    dir: &Path,
    cache: &Path,
) -> String {
    let csv = perfq_ok(&["diff", pa, pb, "--format", "csv"], cache);
    let mut lines = csv.lines();
    let header: Vec<&str> = lines.next().expect("header").split(',').collect();
    assert_eq!(header[..4], ["symbol", "dso", "a_samples", "b_samples"]);
    let csv_rows: Vec<Vec<&str>> = lines.map(|l| l.split(',').collect()).collect();
    assert_eq!(csv_rows.len(), rows.len());
    for (c, j) in csv_rows.iter().zip(rows) {
        assert_eq!(c[0], j["symbol"].as_str().expect("symbol"));
        assert_eq!(c[2].parse::<u64>().expect("a_samples"), j["a_samples"]);
        assert_eq!(c[3].parse::<u64>().expect("b_samples"), j["b_samples"]);
    }
    let pq = dir.join("diff.parquet");
    perfq_ok(
        &[
            "diff",
            pa,
            pb,
            "--format",
            "parquet",
            "-o",
            pq.to_str().expect("path"),
        ],
        cache,
    );
    let (n, top_symbol) = parquet_symbols(&pq);
    assert_eq!(n, rows.len(), "parquet rows");
    assert_eq!(top_symbol.as_deref(), Some("hash_keys"));
    // Parquet needs -o.
    perfq_fails(&["diff", pa, pb, "--format", "parquet"], cache);
    csv
}

/// The rows of a Parquet file and its first row's symbol.
fn parquet_symbols(pq: &Path) -> (usize, Option<String>) {
    let reader = parquet::arrow::arrow_reader::ParquetRecordBatchReaderBuilder::try_new(
        File::open(pq).expect("parquet file"),
    )
    .expect("parquet")
    .build()
    .expect("reader");
    let mut n = 0;
    let mut top_symbol = None;
    for batch in reader {
        let batch = batch.expect("batch");
        use arrow_array::Array;
        let sym = batch
            .column_by_name("symbol")
            .expect("symbol column")
            .as_any()
            .downcast_ref::<arrow_array::StringArray>()
            .expect("utf8");
        if n == 0 && sym.len() > 0 {
            top_symbol = Some(sym.value(0).to_string());
        }
        n += batch.num_rows();
    }
    (n, top_symbol)
}

/// Two captures of a dataset, given by their `capture=<id>` folders, give
/// the files' rows (`csv`); a whole dataset is not one capture.
fn capture_folders_give_the_files_rows(pa: &str, pb: &str, csv: &str, dir: &Path, cache: &Path) {
    let ds = dir.join("dataset");
    perfq_ok(
        &["convert", pa, pb, "-o", ds.to_str().expect("path")],
        cache,
    );
    // A capture's id is its content hash, the same in the cache and here.
    let folder = |data: &str| -> PathBuf {
        let q = perfq_ok(
            &[
                "query",
                data,
                "SELECT capture_id FROM capture",
                "--format",
                "csv",
            ],
            cache,
        );
        let id = q.lines().nth(1).expect("capture id").trim().to_string();
        ds.join(format!("capture={id}"))
    };
    let (fa, fb) = (folder(pa), folder(pb));
    assert!(
        fa.is_dir() && fb.is_dir(),
        "{} {}",
        fa.display(),
        fb.display()
    );
    let from_folders = perfq_ok(
        &[
            "diff",
            fa.to_str().expect("path"),
            fb.to_str().expect("path"),
            "--format",
            "csv",
        ],
        cache,
    );
    assert_eq!(from_folders, csv, "capture folders give the files' rows");
    // A whole dataset is not one capture.
    perfq_fails(&["diff", ds.to_str().expect("path"), pb], cache);
}

#[test]
fn topdown_columns_are_each_sides_shares() {
    let dir = common::scratch("diff", "topdown");
    let cache = dir.join("cache");
    let gen = |preset: &str| {
        let path = dir.join(format!("{preset}.data"));
        common::td_demo_capture(&path, &common::preset(preset), 3000)
    };
    let (a, b) = (gen("icelake"), gen("sapphirerapids"));
    let (pa, pb) = (a.to_str().expect("path"), b.to_str().expect("path"));
    let rows = perfq_rows(
        &["diff", pa, pb, "--event", "cycles", "--format", "json"],
        &cache,
    );
    let topdown = |data: &str| -> Vec<Value> {
        perfq_rows(
            &["topdown", data, "--format", "json", "--min-samples", "1"],
            &cache,
        )
    };
    let (ta, tb) = (topdown(pa), topdown(pb));
    let mut checked = 0;
    for r in &rows {
        let find = |t: &[Value]| {
            t.iter()
                .find(|x| x["symbol"] == r["symbol"] && x["dso"] == r["dso"])
                .cloned()
        };
        let (Some(xa), Some(xb)) = (find(&ta), find(&tb)) else {
            continue;
        };
        for node in [
            "retiring",
            "bad_speculation",
            "frontend_bound",
            "backend_bound",
        ] {
            let va = num(&xa[node]) * 100.0;
            let vb = num(&xb[node]) * 100.0;
            assert!((num(&r[format!("a_{node}_pct")]) - va).abs() < 1e-9, "{r}");
            assert!((num(&r[format!("b_{node}_pct")]) - vb).abs() < 1e-9, "{r}");
            assert!(
                (num(&r[format!("{node}_change_pp")]) - (vb - va)).abs() < 1e-9,
                "{r}"
            );
        }
        checked += 1;
    }
    assert!(
        checked >= 5,
        "functions with top-down shares on both sides: {checked}"
    );
    println!(
        "diff topdown: {checked} functions' level-1 shares equal perfq topdown's on both sides"
    );
    std::fs::remove_dir_all(&dir).ok();
}

/// A group read (`{task-clock,page-faults}:S`) delivers its members at the
/// leader's times, so "the first event sampled" ties: diff and the flame
/// graph break the tie alike, by place in the group, and default to the
/// leader, the event `perf script` prints first and the collapse tools
/// fold (the flame graph's folded stacks are held to those tools' in
/// flamegraph.rs).
#[test]
fn a_group_capture_defaults_to_the_flame_graphs_event() {
    let group = common::testdata("group.data");
    let group = group.to_str().expect("path");
    let notes = |args: &[&str]| -> String {
        let out = common::perfq(args);
        common::succeeded(&out, args.join(" "));
        String::from_utf8_lossy(&out.stderr).into_owned()
    };
    let diff = notes(&["diff", group, group, "--format", "json"]);
    assert!(
        diff.contains("comparing samples of task-clock (choose with --event)"),
        "{diff}"
    );
    let folded = notes(&["flamegraph", "--folded", group]);
    assert!(
        folded.contains("showing task-clock (the first event sampled); also sampled: page-faults"),
        "{folded}"
    );
}
