//! Binaries opened, and their DWARF read, on a thread of their own as the
//! capture is read: a binary is opened when its DSO appears in the
//! mappings, and its DWARF read (finding debug files, inflating compressed
//! sections: the slow part) when a first frame lies in it. By the time the
//! locations are resolved that work is done, while the reading thread went
//! on; DSOs no sample touches (most libraries of a system-wide capture)
//! cost only their opening, which the DSOs table needs anyway.

use std::sync::mpsc::{channel, Sender};
use std::sync::Arc;
use std::thread::JoinHandle;

use perfq_symbolize::{Dso, DsoId, Dsos, Location, Symbolizer};

/// What to do with a DSO: open its binary, or also read its DWARF.
struct Job {
    id: DsoId,
    dso: Dso,
    dwarf: bool,
}

pub(crate) struct Warmer {
    tx: Option<Sender<Job>>,
    thread: Option<JoinHandle<()>>,
    /// DSOs handed over to be opened so far (ids are dense, in order of
    /// appearance).
    offered: usize,
    /// By DSO id: whether its DWARF was asked for.
    dwarf: Vec<bool>,
}

impl Warmer {
    /// A warmer for `symbolizer`; without a thread to be had, it does
    /// nothing (resolving then opens the binaries itself).
    pub(crate) fn start(symbolizer: Arc<Symbolizer>) -> Warmer {
        let (tx, rx) = channel::<Job>();
        let thread = std::thread::Builder::new()
            .name("warm-binaries".into())
            .spawn(move || {
                for job in rx {
                    symbolizer.prepare(job.id, &job.dso, job.dwarf);
                }
            })
            .ok();
        Warmer {
            tx: thread.is_some().then_some(tx),
            thread,
            offered: 0,
            dwarf: Vec::new(),
        }
    }

    /// Hands over the DSOs that appeared since the last call, to be opened.
    pub(crate) fn offer(&mut self, dsos: &Dsos) {
        while self.offered < dsos.len() {
            let id = DsoId(self.offered as u32);
            self.offered += 1;
            self.send(id, dsos, false);
        }
    }

    /// Asks for the DWARF of the DSOs that newly found `locations` lie in
    /// (each DSO's the first time).
    pub(crate) fn located(&mut self, locations: &[Location], dsos: &Dsos) {
        for l in locations {
            let Location::Dso { dso, .. } = *l else {
                continue;
            };
            let at = dso.0 as usize;
            if self.dwarf.len() <= at {
                self.dwarf.resize(at + 1, false);
            }
            if !std::mem::replace(&mut self.dwarf[at], true) {
                self.send(dso, dsos, true);
            }
        }
    }

    fn send(&mut self, id: DsoId, dsos: &Dsos, dwarf: bool) {
        let Some(tx) = &self.tx else { return };
        if id.0 as usize >= dsos.len() {
            return;
        }
        let dso = dsos.get(id).clone();
        if tx.send(Job { id, dso, dwarf }).is_err() {
            self.tx = None;
        }
    }

    /// Waits until every DSO handed over is ready.
    pub(crate) fn finish(self) {
        // Dropping closes the channel and joins.
    }
}

impl Drop for Warmer {
    fn drop(&mut self) {
        self.tx = None;
        if let Some(t) = self.thread.take() {
            let _ = t.join();
        }
    }
}
