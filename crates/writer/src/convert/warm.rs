//! Binaries opened, and their DWARF read, on a thread of their own as
//! their DSOs appear in the capture: by the time the locations are
//! resolved the slow part (finding debug files, inflating compressed
//! DWARF) is done, while the reading thread went on.

use std::sync::mpsc::{channel, Sender};
use std::sync::Arc;
use std::thread::JoinHandle;

use perfq_symbolize::{Dso, DsoId, Dsos, Symbolizer};

pub(crate) struct Warmer {
    tx: Option<Sender<(DsoId, Dso)>>,
    thread: Option<JoinHandle<()>>,
    /// DSOs handed over so far (ids are dense, in order of appearance).
    offered: usize,
}

impl Warmer {
    /// A warmer for `symbolizer`; without a thread to be had, it does
    /// nothing (resolving then opens the binaries itself).
    pub(crate) fn start(symbolizer: Arc<Symbolizer>) -> Warmer {
        let (tx, rx) = channel::<(DsoId, Dso)>();
        let thread = std::thread::Builder::new()
            .name("warm-binaries".into())
            .spawn(move || {
                for (id, dso) in rx {
                    symbolizer.prepare(id, &dso);
                }
            })
            .ok();
        Warmer {
            tx: thread.is_some().then_some(tx),
            thread,
            offered: 0,
        }
    }

    /// Hands over the DSOs that appeared since the last call.
    pub(crate) fn offer(&mut self, dsos: &Dsos) {
        let Some(tx) = &self.tx else { return };
        while self.offered < dsos.len() {
            let id = DsoId(self.offered as u32);
            self.offered += 1;
            if tx.send((id, dsos.get(id).clone())).is_err() {
                self.tx = None;
                return;
            }
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
