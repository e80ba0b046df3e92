//! Symbolization throughput: unique locations of a capture resolved per
//! second (binaries opened, symbol tables built, DSOs in parallel), with
//! and without DWARF inline chains. Capture: `PERFQ_BENCH_CAPTURE`, else
//! `testdata/fp.data`.

use std::path::PathBuf;

use criterion::{criterion_group, criterion_main, Criterion, Throughput};
use perfq_reader::{Capture, RecordType};
use perfq_symbolize::{Config, Location, StackUnwinder, Symbolizer, Tracker};
use rustc_hash::FxHashSet;

fn capture_path() -> PathBuf {
    std::env::var_os("PERFQ_BENCH_CAPTURE")
        .map(PathBuf::from)
        .unwrap_or_else(|| PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../testdata/fp.data"))
}

fn symbolize(c: &mut Criterion) {
    let capture = Capture::open(capture_path()).expect("open the bench capture");
    let mut tracker = Tracker::new(&capture);
    let symbolizer = Symbolizer::new(
        &Config::default(),
        tracker.kernel_build_id(),
        capture.meta().os_release.as_deref(),
    );
    let mut unwinder = StackUnwinder::new(capture.meta().arch.as_deref());
    let mut seen: FxHashSet<Location> = FxHashSet::default();
    let mut lookups = Vec::new();
    let mut records = capture.records_by_time();
    while let Some(r) = records.next_record().expect("valid") {
        if r.kind != RecordType::SAMPLE {
            if let Ok((d, _)) = capture.parse(&r) {
                tracker.observe(&d);
            }
            continue;
        }
        let Ok(s) = capture.sample(&r) else { continue };
        let Some(pid) = s.pid else { continue };
        unwinder.sample_frames(&tracker, &symbolizer, &s, &mut lookups);
        for f in &lookups {
            seen.insert(tracker.locate(pid, f.lookup, f.kernel));
        }
    }
    let locations: Vec<Location> = seen.into_iter().collect();
    let mut g = c.benchmark_group("symbolize");
    g.throughput(Throughput::Elements(locations.len() as u64));
    g.sample_size(10);
    for (name, inline) in [("symbols", false), ("symbols_inline_dwarf", true)] {
        g.bench_function(name, |b| {
            b.iter(|| {
                let config = Config {
                    inline,
                    ..Config::default()
                };
                let s = Symbolizer::new(
                    &config,
                    tracker.kernel_build_id(),
                    capture.meta().os_release.as_deref(),
                );
                s.resolve_all(&tracker, &locations).len()
            })
        });
    }
    g.finish();
}

criterion_group!(benches, symbolize);
criterion_main!(benches);
