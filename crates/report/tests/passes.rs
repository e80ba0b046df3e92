//! `report` reads a capture in passes, each summed and dropped before the
//! next (`Options::pass_memory`): the rows must not depend on where
//! the passes end. Every testdata capture, and generated ones with group
//! reads (several events sampled, members whose counters did not move) and
//! with independently sampled events, are reported in one pass and in
//! passes of a few frames and samples, with and without `--children`, for each way of
//! keying rows, and off-CPU time where a capture has it. The one-pass report is the one the agreement tests hold
//! against `perf report` (crates/cli/tests/report.rs).

use std::path::{Path, PathBuf};

use perfq_report::{self as report, Options, Report, SortKey};
use perfq_testgen::{presets, Binary, CallTree, Workload};

/// The workspace root (read when the test runs: a warm target folder may
/// serve a checkout at another path).
fn root() -> PathBuf {
    std::env::var_os("CARGO_MANIFEST_DIR")
        .map_or_else(|| PathBuf::from(env!("CARGO_MANIFEST_DIR")), PathBuf::from)
        .join("../..")
}

/// What a row shows: its keys are numbered as passes meet them.
fn shown(r: &Report, row: &report::Row) -> (String, String, Option<&'static str>, [u64; 6]) {
    let sums = [
        u64::from(row.event),
        row.samples,
        row.period,
        row.total_samples,
        row.total_period,
        row.unresolved_samples,
    ];
    let (dso, symbol) = (r.dso(row).to_string(), r.symbol(row).to_string());
    (dso, symbol, r.unresolved_reason(row), sums)
}

fn same_in_passes(file: &Path) {
    // Keyed by symbol or DSO alone, rows gather keys of several passes.
    // Off CPU (where the capture has off-CPU time), an interval that ends
    // after its stack's pass was summed is counted by a second read.
    let modes = [
        (false, SortKey::DsoSym, false),
        (true, SortKey::DsoSym, false),
        (true, SortKey::Sym, false),
        (true, SortKey::Dso, false),
        (false, SortKey::DsoSym, true),
        (true, SortKey::DsoSym, true),
    ];
    for (children, sort, off_cpu) in modes {
        {
            let opt = |per_pass| Options {
                children,
                sort,
                pass_memory: per_pass,
                pids: None,
                off_cpu,
                ..Options::default()
            };
            let whole: Report = report::run(file, &opt(None)).unwrap();
            if off_cpu && whole.rows.is_empty() {
                continue;
            }
            assert!(!whole.rows.is_empty(), "{}", file.display());
            for per_pass in [500, 5000] {
                let parts = report::run(file, &opt(Some(per_pass))).unwrap();
                let what = format!(
                    "{} children={children} {sort:?} per pass {per_pass}",
                    file.display()
                );
                assert_eq!(parts.events, whole.events, "{what}");
                assert_eq!(parts.unresolved, whole.unresolved, "{what}");
                assert_eq!(parts.read, whole.read, "{what}");
                assert_eq!(parts.without_stack, whole.without_stack, "{what}");
                assert_eq!(parts.rows.len(), whole.rows.len(), "{what}");
                for (a, b) in parts.rows.iter().zip(&whole.rows) {
                    assert_eq!(shown(&parts, a), shown(&whole, b), "{what}");
                }
            }
        }
    }
}

#[test]
fn testdata_reports_are_the_same_in_passes() {
    let dir = root().join("testdata");
    let mut n = 0;
    for entry in std::fs::read_dir(&dir).unwrap() {
        let path = entry.unwrap().path();
        if path.extension().is_some_and(|e| e == "data") {
            same_in_passes(&path);
            n += 1;
        }
    }
    assert!(n >= 8, "testdata captures: {n}");
}

#[test]
fn generated_group_reads_are_the_same_in_passes() {
    let dir = std::env::temp_dir().join(format!("perfq-passes-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir).unwrap();
    let demo = root().join("testdata/td-demo");
    let binary = Binary::open(&demo).unwrap();
    let workload = Workload::new(&binary, &demo.to_string_lossy());
    for preset in ["sapphirerapids", "zen4-independent"] {
        let file = dir.join(format!("{preset}.data"));
        let p = presets::get(preset).unwrap();
        workload
            .write(&file, &p, &CallTree::td_demo(), 600)
            .unwrap();
        same_in_passes(&file);
    }
    let _ = std::fs::remove_dir_all(&dir);
}
