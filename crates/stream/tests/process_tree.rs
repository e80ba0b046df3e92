//! The processes a process started, from FORK records perfq-testgen
//! writes: children and grandchildren, threads left out, unrelated
//! processes left out; a capture cut between FORKs keeps those before.

use std::io::Cursor;
use std::path::PathBuf;

use perfq_reader::{Capture, RecordType};
use perfq_stream::process_tree::started_by;
use perfq_testgen::{presets, Binary, Task, Workload, Writer};

fn root() -> PathBuf {
    std::env::var_os("CARGO_MANIFEST_DIR")
        .map_or_else(|| PathBuf::from(env!("CARGO_MANIFEST_DIR")), PathBuf::from)
        .join("../..")
}

/// (pid, ppid, tid) of each FORK, in time order.
const FORKS: &[(u32, u32, u32)] = &[
    (200, 100, 200), // the parent's child
    (200, 200, 201), // a thread of it: no process of its own
    (300, 200, 300), // a grandchild
    (500, 400, 500), // another process's child
    (600, 300, 600), // a great-grandchild
];

/// A capture holding FORKS.
fn capture() -> Vec<u8> {
    let preset = presets::get("skylake").expect("preset");
    let binary = Binary::open(root().join("testdata/td-demo")).expect("demo binary");
    let spec = Workload::new(&binary, "testdata/td-demo").spec(&preset);
    let mut w = Writer::new(Cursor::new(Vec::new()), &spec).expect("writer");
    for (i, &(pid, ppid, tid)) in FORKS.iter().enumerate() {
        w.fork(&Task {
            pid,
            ppid,
            tid,
            ptid: ppid,
            time: 1_000 + i as u64,
            cpu: 0,
        })
        .expect("fork");
    }
    let (out, _) = w.finish_into().expect("finish");
    out.into_inner()
}

/// The file offset of each FORK record of `bytes`, in file order.
fn fork_offsets(bytes: &[u8]) -> Vec<usize> {
    let c = Capture::from_bytes(bytes.to_vec()).expect("opens");
    let mut records = c.records();
    let mut at = Vec::new();
    while let Some(r) = records.next_record().expect("whole") {
        if r.kind == RecordType::FORK {
            at.push(r.offset.0 as usize);
        }
    }
    at
}

#[test]
fn children_and_theirs_without_threads_or_strangers() {
    let bytes = capture();
    let c = Capture::from_bytes(bytes).expect("opens");
    assert_eq!(
        started_by(&c, 100).expect("not interrupted"),
        [200, 300, 600]
    );
    assert_eq!(started_by(&c, 300).expect("not interrupted"), [600]);
    assert_eq!(started_by(&c, 400).expect("not interrupted"), [500]);
    assert_eq!(
        started_by(&c, 600).expect("not interrupted"),
        Vec::<u32>::new()
    );
}

#[test]
fn a_cut_capture_keeps_the_forks_before_the_cut() {
    let bytes = capture();
    let at = fork_offsets(&bytes);
    assert_eq!(at.len(), FORKS.len());
    // Inside the fourth FORK: the first three are whole.
    let cut = at[3] + 5;
    let c = Capture::from_bytes(bytes[..cut].to_vec()).expect("opens");
    assert_eq!(started_by(&c, 100).expect("not interrupted"), [200, 300]);
}
