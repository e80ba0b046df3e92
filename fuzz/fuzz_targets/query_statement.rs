//! Any text as `perfq query`'s SQL over a small dataset (testdata/fp.data
//! converted without symbols, every table and view registered): planning
//! and running it must never panic, and no statement may write a file or
//! change the dataset (`Session::query_read_only` refuses `COPY`, DDL and
//! DML before they run).

#![no_main]

use std::path::{Path, PathBuf};

use libfuzzer_sys::fuzz_target;
use perfq_query::Session;
use perfq_writer::convert::{convert, Options, ReadValues};

/// The files below `dir`, with their sizes.
fn listing(dir: &Path) -> Vec<(PathBuf, u64)> {
    let mut out = Vec::new();
    let mut stack = vec![dir.to_path_buf()];
    while let Some(d) = stack.pop() {
        for e in std::fs::read_dir(&d).into_iter().flatten().flatten() {
            let path = e.path();
            match e.metadata() {
                Ok(m) if m.is_dir() => stack.push(path),
                Ok(m) => out.push((path, m.len())),
                Err(_) => {}
            }
        }
    }
    out.sort();
    out
}

struct Fixture {
    session: Session,
    dataset: PathBuf,
    before: Vec<(PathBuf, u64)>,
}

fn fixture() -> Fixture {
    let dir = std::env::temp_dir().join(format!("perfq-fuzz-query-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    let dataset = dir.join("dataset");
    let capture = Path::new(env!("CARGO_MANIFEST_DIR")).join("../testdata/fp.data");
    let options = Options {
        force: true,
        symbols: None,
        stack_memory: None,
        source: None,
        read_values: ReadValues::Rows,
    };
    convert(&capture, &dataset, &options, &mut |_, _| {}).expect("testdata/fp.data converts");
    let session = Session::open(&dataset).expect("a session over it");
    let before = listing(&dir);
    Fixture {
        session,
        dataset: dir,
        before,
    }
}

thread_local! {
    static FIXTURE: Fixture = fixture();
}

fuzz_target!(|data: &[u8]| {
    let Ok(sql) = std::str::from_utf8(data) else {
        return;
    };
    FIXTURE.with(|f| {
        let _ = f.session.query_read_only(sql);
        assert_eq!(listing(&f.dataset), f.before, "the statement wrote: {sql}");
    });
});
