//! The processes a process started, as a capture's FORK records tell
//! them: what `perfq record --all-threads` answers for when it recorded
//! every CPU while perf's command ran.

use std::collections::{BTreeMap, BTreeSet};
use std::path::Path;

use anyhow::Context;
use perfq_reader::{Capture, RecordData, RecordType};

/// Every process `parent` started and every process those started, in
/// the capture at `path` (sorted ids; `parent` itself left out). A thread
/// is no process of its own: its FORK names its process as its parent.
pub fn started_by(path: &Path, parent: u32) -> anyhow::Result<Vec<u32>> {
    let capture = Capture::open(path).with_context(|| format!("cannot read {}", path.display()))?;
    let mut children: BTreeMap<u32, BTreeSet<u32>> = BTreeMap::new();
    let mut records = capture.records();
    // A damaged capture ends the read where it is damaged: the processes
    // found up to there are kept, and the answer's own read of the
    // capture says what was lost.
    while let Ok(Some(record)) = records.next_record() {
        // Only FORK records are decoded. One that does not parse is no
        // FORK perfq can follow; the answer's own read of the capture
        // reports it.
        if record.kind != RecordType::FORK {
            continue;
        }
        if let Ok((RecordData::Fork(f), _)) = capture.parse(&record) {
            if f.pid != f.ppid {
                children.entry(f.ppid).or_default().insert(f.pid);
            }
        }
    }
    let mut found = BTreeSet::new();
    let mut next = vec![parent];
    while let Some(p) = next.pop() {
        for &c in children.get(&p).into_iter().flatten() {
            if c != parent && found.insert(c) {
                next.push(c);
            }
        }
    }
    Ok(found.into_iter().collect())
}
