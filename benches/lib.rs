//! Benchmarks only: see `decode.rs` (criterion) and `decode.sh` (perfq
//! next to perf on the same capture).
