//! Captures the tests write themselves: td-demo's call tree as a preset's
//! CPU records it (crates/testgen).

use std::path::{Path, PathBuf};

use perfq_testgen::{presets, Binary, CallTree, Preset, Workload};

use super::testdata;

/// td-demo's absolute path: the mapping the captures record, so that perf
/// and perfq find the binary wherever they run.
pub fn td_demo() -> PathBuf {
    testdata("td-demo")
        .canonicalize()
        .expect("testdata/td-demo")
}

/// The preset of this name.
pub fn preset(name: &str) -> Preset {
    presets::get(name).unwrap_or_else(|| panic!("no preset {name}"))
}

/// Writes `samples` samples of td-demo's call tree, as `preset` records
/// them, to `path`.
pub fn td_demo_capture(path: &Path, preset: &Preset, samples: u64) -> PathBuf {
    td_demo_capture_of(path, preset, &CallTree::td_demo(), samples)
}

/// Writes `samples` samples of `tree`, a call tree of td-demo's functions,
/// as `preset` records them, to `path`.
pub fn td_demo_capture_of(path: &Path, preset: &Preset, tree: &CallTree, samples: u64) -> PathBuf {
    let demo = td_demo();
    let binary = Binary::open(&demo).expect("open td-demo");
    let workload = Workload::new(&binary, &demo.to_string_lossy());
    let summary = workload
        .write(path, preset, tree, samples)
        .expect("write capture");
    assert_eq!(summary.samples, samples);
    path.to_path_buf()
}

/// Writes an `offcpu-time` capture of td-demo's threads (`perf record
/// --off-cpu`'s layout, crates/testgen) with `waits` to `path`.
pub fn td_demo_off_cpu_capture(
    path: &Path,
    waits: &[perfq_testgen::off_cpu::OffCpuWait],
) -> PathBuf {
    let demo = td_demo();
    let binary = Binary::open(&demo).expect("open td-demo");
    let workload = Workload::new(&binary, &demo.to_string_lossy());
    let summary = workload
        .write_off_cpu(path, &preset("sapphirerapids"), waits)
        .expect("write capture");
    assert_eq!(summary.samples, waits.len() as u64);
    path.to_path_buf()
}
