//! The processes a process started, as a capture's FORK records tell
//! them: what `perfq record --all-threads` answers for when it recorded
//! every CPU while perf's command ran.

use perfq_reader::{Capture, RawRecord, RecordData, SampleId};
use std::collections::{BTreeMap, BTreeSet};

use crate::{
    Flow, Interrupted, Located, Locating, Location, Sink, Stream, Take, Tracker, Unnumbered,
};

/// Every process `parent` started and every process those started, in
/// `capture` (sorted ids; `parent` itself left out). A thread is no
/// process of its own: its FORK names its process as its parent.
///
/// A damaged capture ends the read where the stream ends it, and the
/// processes found up to there are kept. Nothing is said of the damage:
/// the caller's own read of the capture for its answer says it.
pub fn started_by(capture: &Capture, parent: u32) -> Result<Vec<u32>, Interrupted> {
    let mut forks = Forks::default();
    let mut stream = Stream::new(capture);
    stream.run(
        &mut Locating::default(),
        &mut Unnumbered,
        &mut forks,
        &mut |_, _| {},
    )?;
    let mut found = BTreeSet::new();
    let mut next = vec![parent];
    while let Some(p) = next.pop() {
        for &c in forks.children.get(&p).into_iter().flatten() {
            if c != parent && found.insert(c) {
                next.push(c);
            }
        }
    }
    Ok(found.into_iter().collect())
}

/// The processes each process started, by parent.
#[derive(Default)]
struct Forks {
    children: BTreeMap<u32, BTreeSet<u32>>,
}

impl Sink for Forks {
    type Key = Location;
    type Numbers = Unnumbered;
    type Error = Interrupted;

    fn sideband(
        &mut self,
        _: &Tracker,
        _: &RawRecord<'_>,
        data: &RecordData<'_>,
        _: Option<SampleId>,
    ) -> Result<(), Interrupted> {
        if let RecordData::Fork(f) = data {
            if f.pid != f.ppid {
                self.children.entry(f.ppid).or_default().insert(f.pid);
            }
        }
        Ok(())
    }

    fn take(&mut self, _: &crate::SampleView<'_, '_>) -> Take {
        Take::Skip
    }

    fn sample(&mut self, _: &Located<'_, '_, '_>, _: &mut Unnumbered) -> Result<Flow, Interrupted> {
        Ok(Flow::Go)
    }
}
