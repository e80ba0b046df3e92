//! Decode throughput of `perfq-reader` on one capture: framing only, every
//! record decoded in file order, and time order with group-read deltas
//! (what `perfq dump` does before formatting).
//!
//! The capture is `PERFQ_BENCH_CAPTURE`, else `testdata/fp.data`;
//! `benches/decode.sh` records a large one and sets it.

use std::path::PathBuf;

use criterion::{criterion_group, criterion_main, Criterion, Throughput};
use perfq_reader::{Capture, ReadDeltas, RecordType};

fn capture_path() -> PathBuf {
    std::env::var_os("PERFQ_BENCH_CAPTURE")
        .map(PathBuf::from)
        .unwrap_or_else(|| PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../testdata/fp.data"))
}

fn decode(c: &mut Criterion) {
    let path = capture_path();
    let capture = Capture::open(&path).expect("open the bench capture");
    let bytes = capture.file_len();
    let mut g = c.benchmark_group("decode");
    g.throughput(Throughput::Bytes(bytes));
    g.sample_size(10);
    g.bench_function("framing", |b| {
        b.iter(|| {
            let mut r = capture.records();
            while r.next_record().expect("valid").is_some() {}
            r.stats().samples()
        })
    });
    g.bench_function("decode_file_order", |b| {
        b.iter(|| {
            let mut r = capture.records();
            let mut n = 0u64;
            while let Some(rec) = r.next_record().expect("valid") {
                if rec.kind == RecordType::SAMPLE {
                    if let Ok(s) = capture.sample(&rec) {
                        n += s.callchain.map_or(0, |c| c.raw.len() as u64);
                    }
                } else {
                    let _ = capture.parse(&rec);
                }
            }
            n
        })
    });
    g.bench_function("decode_time_order_deltas", |b| {
        b.iter(|| {
            let mut r = capture.records_by_time();
            let mut deltas = ReadDeltas::new();
            let mut out = Vec::new();
            let mut n = 0u64;
            while let Some(rec) = r.next_record().expect("valid") {
                if let (RecordType::SAMPLE, Some(ev)) = (rec.kind, rec.event.index()) {
                    let Ok(s) = capture.sample(&rec) else {
                        continue;
                    };
                    out.clear();
                    deltas.apply(capture.events(), ev, &s, &mut out);
                    n += out.len() as u64 + s.callchain.map_or(0, |c| c.frames().count() as u64);
                }
            }
            n
        })
    });
    g.finish();
}

criterion_group!(benches, decode);
criterion_main!(benches);
