//! Running the perfq binary and checking how a run ended: the standard
//! output of a run that must succeed, the standard error of one that must
//! fail, each with the run's messages in the panic when it did not.

use std::fmt::Display;
use std::path::{Path, PathBuf};
use std::process::{Command, Output};

use serde_json::Value;

use super::{root, scratch};

/// Runs the perfq binary, with the conversion cache of this test process
/// ([`process_cache`]).
pub fn perfq(args: &[&str]) -> Output {
    Command::new(env!("CARGO_BIN_EXE_perfq"))
        .args(args)
        .env("PERFQ_CACHE_DIR", process_cache())
        .output()
        .expect("run perfq")
}

/// A conversion cache (`PERFQ_CACHE_DIR`) made empty for this test
/// process: nothing a previous test run, or the user's own `~/.cache/perfq`,
/// holds can answer a test.
pub fn process_cache() -> &'static Path {
    static DIR: std::sync::OnceLock<PathBuf> = std::sync::OnceLock::new();
    DIR.get_or_init(|| scratch("cache", "process"))
}

/// Runs the perfq binary with its own conversion cache (`PERFQ_CACHE_DIR`),
/// so that tests of `topdown` and `query` on files do not share one, from
/// the repository root (`testdata/...` names its files).
pub fn perfq_cached(args: &[&str], cache: &Path) -> Output {
    Command::new(env!("CARGO_BIN_EXE_perfq"))
        .args(args)
        .env("PERFQ_CACHE_DIR", cache)
        .current_dir(root())
        .output()
        .expect("run perfq")
}

/// Runs the perfq binary with `HOME` at `home` and no cache of the tests':
/// its default cache, and perf's `~/.debug`, are then `home`'s (an empty
/// one holds no binary that could name a frame).
pub fn perfq_in_home(args: &[&str], home: &Path) -> Output {
    Command::new(env!("CARGO_BIN_EXE_perfq"))
        .args(args)
        .env("HOME", home)
        .output()
        .expect("run perfq")
}

/// The standard output of `out`, a run that must have succeeded: else a
/// panic naming the run (`what`) with its standard error.
pub fn succeeded(out: &Output, what: impl Display) -> String {
    assert!(
        out.status.success(),
        "{what}: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    String::from_utf8(out.stdout.clone()).expect("perfq's output is UTF-8")
}

/// The standard error of `out`, a run that must have failed: else a panic
/// naming the run (`what`).
pub fn failed(out: &Output, what: impl Display) -> String {
    assert!(
        !out.status.success(),
        "{what} succeeded: {}",
        String::from_utf8_lossy(&out.stdout)
    );
    String::from_utf8_lossy(&out.stderr).into_owned()
}

/// `text`, one JSON value.
pub fn json(text: &str) -> Value {
    serde_json::from_str(text).unwrap_or_else(|e| panic!("not JSON ({e}): {text}"))
}

/// `text`, a JSON array, as its items.
pub fn rows(text: &str) -> Vec<Value> {
    match json(text) {
        Value::Array(rows) => rows,
        other => panic!("not a JSON array: {other}"),
    }
}

/// `text`, one JSON value per line.
pub fn json_lines(text: &str) -> Vec<Value> {
    text.lines()
        .map(|l| serde_json::from_str(l).unwrap_or_else(|e| panic!("not JSON ({e}): {l}")))
        .collect()
}

/// The standard output of `perfq args...`, which must succeed.
pub fn perfq_ok(args: &[&str]) -> String {
    succeeded(&perfq(args), format_args!("perfq {args:?}"))
}

/// The JSON `perfq args...` prints, which must succeed.
pub fn perfq_json(args: &[&str]) -> Value {
    json(&perfq_ok(args))
}

/// The JSON rows `perfq args...` prints (`--format json`), which must
/// succeed.
pub fn perfq_rows(args: &[&str]) -> Vec<Value> {
    rows(&perfq_ok(args))
}

/// The standard error of `perfq args...`, which must fail.
pub fn perfq_fails(args: &[&str]) -> String {
    failed(&perfq(args), format_args!("perfq {args:?}"))
}

/// [`perfq_cached`]'s standard output, once it has succeeded.
pub fn perfq_cached_ok(args: &[&str], cache: &Path) -> String {
    succeeded(&perfq_cached(args, cache), format_args!("perfq {args:?}"))
}

/// [`perfq_cached`]'s JSON rows, once it has succeeded.
pub fn perfq_cached_rows(args: &[&str], cache: &Path) -> Vec<Value> {
    rows(&perfq_cached_ok(args, cache))
}

/// [`perfq_cached`]'s standard error, once it has failed.
pub fn perfq_cached_fails(args: &[&str], cache: &Path) -> String {
    failed(&perfq_cached(args, cache), format_args!("perfq {args:?}"))
}

/// The JSON rows a perfq run printed, once it has succeeded (`what` names
/// the run in the failure message).
pub fn json_rows(out: &Output, what: &str) -> Vec<Value> {
    rows(&succeeded(out, what))
}

/// Parses `perfq dump` JSON lines.
pub fn perfq_dump(file: &Path) -> Vec<Value> {
    json_lines(&perfq_ok(&["dump", file.to_str().expect("utf-8 path")]))
}
