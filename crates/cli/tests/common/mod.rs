//! Helpers shared by the integration tests: where things are, running
//! perfq and perf.

#![allow(dead_code)]

use std::path::{Path, PathBuf};
use std::process::{Command, Output};

/// The workspace root.
pub fn root() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../..")
}

/// `../shared/corpus` beside the checkout (or `PERFQ_CORPUS`), if present.
pub fn corpus() -> Option<PathBuf> {
    let dir = std::env::var_os("PERFQ_CORPUS")
        .map(PathBuf::from)
        .unwrap_or_else(|| root().join("../shared/corpus"));
    dir.join("catalog.json").is_file().then_some(dir)
}

/// A capture in `testdata/`.
pub fn testdata(name: &str) -> PathBuf {
    root().join("testdata").join(name)
}

/// Runs the perfq binary.
pub fn perfq(args: &[&str]) -> Output {
    Command::new(env!("CARGO_BIN_EXE_perfq")).args(args).output().expect("run perfq")
}

/// Whether `perf` runs here.
pub fn have_perf() -> bool {
    Command::new("perf").arg("--version").output().is_ok_and(|o| o.status.success())
}

/// Runs perf with `args`, returning stdout, or `None` if it failed.
pub fn perf(args: &[&str]) -> Option<String> {
    let o = Command::new("perf").args(args).output().ok()?;
    o.status.success().then(|| String::from_utf8_lossy(&o.stdout).into_owned())
}

/// The "Aggregated stats" of `perf report -D`: record type → count.
pub fn perf_report_d_counts(file: &Path) -> Option<std::collections::BTreeMap<String, u64>> {
    let out = perf(&["report", "-D", "-i", file.to_str()?])?;
    let mut counts = std::collections::BTreeMap::new();
    let mut in_stats = false;
    for line in out.lines() {
        if line.starts_with("Aggregated stats") {
            in_stats = true;
            continue;
        }
        if !in_stats {
            continue;
        }
        // "          SAMPLE events:         27  (61.4%)"; per-event sections
        // follow as "<name> stats:" and end the aggregate.
        if line.ends_with(" stats:") {
            break;
        }
        let Some((name, rest)) = line.trim().split_once(" events:") else { continue };
        let n: u64 = rest.split_whitespace().next()?.parse().ok()?;
        // perf's table says ATTR, FEATURE, ... for the HEADER_* records.
        let name = match name {
            "ATTR" | "EVENT_TYPE" | "TRACING_DATA" | "BUILD_ID" | "FEATURE" => format!("HEADER_{name}"),
            n => n.to_string(),
        };
        if name != "TOTAL" && n > 0 {
            counts.insert(name, n);
        }
    }
    Some(counts)
}
