//! The sums made on a thread of their own while the read goes on.
//!
//! A full pass ([`crate::reading::Pass`]) is handed over with what
//! resolving its locations needs of the tracker as the pass ended (its
//! DSOs and kernel reference symbol); the thread resolves the locations
//! and adds the samples up ([`Sums::add`]) while the reading thread
//! reads the next pass. Passes are summed one at a time, in order, so
//! that the sums (and the numbering of their keys) are those of summing
//! each pass before reading the next: at most two passes are held, the
//! one summed and the one read.

use std::sync::mpsc::{sync_channel, SyncSender};

use perfq_stream::Tracker;
use perfq_symbolize::{Symbolizer, TrackerAt};

use crate::numbering_thread::LocationIds;
use crate::reading::Pass;
use crate::sums::Sums;

/// A pass to sum.
struct Job {
    pass: Pass,
    ids: LocationIds,
    at: TrackerAt,
}

/// Runs `read` on this thread, handing it the summing thread ([`Summing`])
/// that adds the passes it hands over into `sums`, resolving with
/// `symbolizer`; gives back what `read` returned and the sums, once
/// every pass handed over is summed.
pub(crate) fn summing_beside<'o, R>(
    mut sums: Sums<'o>,
    symbolizer: &Symbolizer,
    read: impl FnOnce(Summing) -> R,
) -> (R, Sums<'o>) {
    // No pass waits: the reading thread hands one over once the one
    // before is summed.
    let (to, jobs) = sync_channel::<Job>(0);
    perfq_ids::beside(
        // `read` drops the sender when done, which ends the loop.
        || read(Summing { to }),
        move || {
            for job in jobs {
                sums.add(job.pass, job.ids, symbolizer, &job.at);
            }
            sums
        },
    )
}

/// The summing thread, as the reading thread holds it.
pub(crate) struct Summing {
    to: SyncSender<Job>,
}

impl Summing {
    /// Hands over a full pass, its ids made, with the tracker as of its
    /// end; waits while the pass before is summed.
    pub(crate) fn add(&mut self, pass: Pass, ids: LocationIds, tracker: &Tracker) {
        let job = Job {
            pass,
            ids,
            at: tracker.at(),
        };
        // A thread that stopped has panicked: `summing_beside` raises
        // its panic.
        let _ = self.to.send(job);
    }
}
