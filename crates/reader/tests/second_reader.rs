//! A second, independent reader agrees: `linux-perf-data` (framing,
//! decompression, pipe mode) counts the same kernel records, and gives the
//! same samples to the same events, on every capture in `testdata/`.
//!
//! It cannot be the oracle for everything: it hides FINISHED_ROUND,
//! COMPRESSED and pipe-mode header records, and its sample parser decodes
//! PERF_SAMPLE_READ wrongly (see docs/dependencies.md), so only record
//! counts and event attribution are compared here.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

use linux_perf_data::{PerfFileReader, PerfFileRecord};
use perfq_reader::{Capture, RecordType};

fn theirs(path: &Path) -> (BTreeMap<u32, u64>, Vec<u64>) {
    let file = std::fs::File::open(path).expect("open");
    let reader = std::io::BufReader::new(file);
    let pipe = std::fs::read(path).expect("read")[8..16] == 16u64.to_le_bytes();
    let PerfFileReader {
        mut perf_file,
        mut record_iter,
    } = if pipe {
        PerfFileReader::parse_pipe(reader).expect("pipe")
    } else {
        PerfFileReader::parse_file(reader).expect("file")
    };
    let mut counts = BTreeMap::new();
    let mut per_event = vec![0; perf_file.event_attributes().len()];
    while let Some(r) = record_iter.next_record(&mut perf_file).expect("record") {
        if let PerfFileRecord::EventRecord { attr_index, record } = r {
            *counts.entry(record.record_type.0).or_default() += 1;
            if record.record_type.0 == RecordType::SAMPLE.0 {
                per_event[attr_index] += 1;
            }
        }
    }
    (counts, per_event)
}

#[test]
fn linux_perf_data_counts_the_same_records() {
    // The package's folder at run time first: a test binary built in a
    // target folder shared with another checkout carries that checkout's
    // path in env!.
    let dir = std::env::var_os("CARGO_MANIFEST_DIR")
        .map_or_else(
            || Path::new(env!("CARGO_MANIFEST_DIR")).into(),
            PathBuf::from,
        )
        .join("../../testdata");
    for name in [
        "fp.data",
        "dwarf.data",
        "group.data",
        "multi.data",
        "compressed.data",
        "pipe.data",
        "group-pipe.data",
    ] {
        let path = dir.join(name);
        let (their_counts, their_per_event) = theirs(&path);
        let capture = Capture::open(&path).expect("open");
        let mut records = capture.records();
        while records.next_record().expect("valid").is_some() {}
        let ours: BTreeMap<u32, u64> = records
            .stats()
            .by_type()
            .filter(|(t, _)| t.is_kernel())
            .map(|(t, c)| (t.0, c.total()))
            .collect();
        assert_eq!(ours, their_counts, "{name}: kernel record counts");
        assert_eq!(
            records.stats().samples_per_event,
            their_per_event,
            "{name}: samples per event"
        );
    }
}
