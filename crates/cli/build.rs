//! Links the `perfq` binary as a fixed-address executable on Linux.
//!
//! As a position-independent executable its ~240,000 relative relocations
//! are applied, and the pages they touch copied, at every start: most of
//! the time of a short command (docs/benchmarks.md). The Python module's
//! library is not a binary target and stays position-independent.

fn main() {
    if std::env::var("CARGO_CFG_TARGET_OS").as_deref() == Ok("linux") {
        println!("cargo:rustc-link-arg-bins=-no-pie");
    }
}
