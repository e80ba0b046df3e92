//! Any bytes given to the reader: open, walk the records in file and time
//! order, decode every record, compute group deltas. Must never panic,
//! hang or allocate without bound.

#![no_main]

use libfuzzer_sys::fuzz_target;
use perfq_reader::{Capture, ReadDeltas, RecordData};

fuzz_target!(|data: &[u8]| {
    let Ok(capture) = Capture::from_bytes(data.to_vec()) else { return };
    let mut records = capture.records();
    while let Ok(Some(r)) = records.next_record() {
        let _ = capture.parse(&r);
    }
    let mut deltas = ReadDeltas::new();
    let mut out = Vec::new();
    let mut records = capture.records_by_time();
    while let Ok(Some(r)) = records.next_record() {
        if let (Ok((RecordData::Sample(s), _)), Some(ev)) = (capture.parse(&r), r.event.index()) {
            out.clear();
            deltas.apply(capture.events(), ev, &s, &mut out);
            if let Some(c) = s.callchain {
                let _ = c.frames().count();
            }
            if let Some(b) = s.branch_stack {
                let _ = b.entries().map(|e| e.flags()).count();
            }
        }
    }
});
