//! What a test does when an oracle it compares with is missing here.
//!
//! A test whose oracle (perf, gcc, the corpus, a Python engine, Chromium…)
//! is absent cannot check anything. On a developer's machine it says so
//! and passes; where `PERFQ_REQUIRE_ORACLES` is set (CI sets it after
//! installing every oracle) a missing oracle is a failure, so that no test
//! passes without having checked what it is for.

use std::fmt::Display;

/// The variable that turns a missing oracle into a failure.
pub const REQUIRE: &str = "PERFQ_REQUIRE_ORACLES";

/// Whether missing oracles fail the tests (`PERFQ_REQUIRE_ORACLES` set to
/// anything but empty or `0`).
pub fn required() -> bool {
    std::env::var_os(REQUIRE).is_some_and(|v| !v.is_empty() && v != "0")
}

/// Says that `why` keeps the calling test (or part of it) from checking
/// anything: prints `SKIPPED: why` and returns, or panics with it where
/// oracles are required. Call it, then return.
#[track_caller]
pub fn skip(why: impl Display) {
    if required() {
        panic!("{REQUIRE} is set and an oracle is missing: {why}");
    }
    eprintln!("SKIPPED: {why}");
}
