//! Any bytes converted into a dataset, without symbols: the tracker,
//! callchain lookups, stack interning and every table's writer see what
//! the reader makes of damaged input. Must never panic or hang; an error
//! is a fine answer.

#![no_main]

use std::sync::atomic::{AtomicU64, Ordering};

use libfuzzer_sys::fuzz_target;
use perfq_writer::convert::{convert, Options, ReadValues};

/// A folder per run of the fuzzer (several may run at once).
fn scratch() -> std::path::PathBuf {
    static RUN: AtomicU64 = AtomicU64::new(0);
    let n = RUN.fetch_add(1, Ordering::Relaxed);
    std::env::temp_dir().join(format!("perfq-fuzz-convert-{}-{n}", std::process::id()))
}

fuzz_target!(|data: &[u8]| {
    let dir = scratch();
    if std::fs::create_dir_all(&dir).is_err() {
        return;
    }
    let capture = dir.join("perf.data");
    if std::fs::write(&capture, data).is_ok() {
        let options = Options {
            force: true,
            symbols: None,
            // Odd-sized inputs also take the path that cuts the stack
            // tree into segments.
            stack_memory: (data.len() % 2 == 1).then_some(4096),
            source: None,
            // And some leave read_values without rows, as a dataset
            // for `topdown --no-cache` does.
            read_values: match data.len() % 3 {
                0 => ReadValues::Empty,
                _ => ReadValues::Rows,
            },
        };
        let _ = convert(&capture, &dir.join("dataset"), &options, &mut |_, _| {});
    }
    let _ = std::fs::remove_dir_all(&dir);
});
