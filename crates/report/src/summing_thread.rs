//! The sums made on threads of their own while the read goes on.
//!
//! A full pass ([`crate::reading::Pass`]) is handed over with what
//! resolving its locations needs of the tracker as the pass ended (its
//! DSOs and kernel reference symbol). One thread resolves the locations
//! to row keys (`pass_keys`), another adds the keyed pass up
//! ([`Adding::add`]): a pass is keyed while the one before is added up
//! and the next read. Passes go through each step one at a time, in
//! order, so that the sums (and the numbering of their keys) are those of
//! summing each pass before reading the next: at most three passes are
//! held, the one added up, the one keyed and the one read.

use std::sync::mpsc::{sync_channel, Receiver, SyncSender};

use perfq_stream::Tracker;
use perfq_symbolize::{Symbolizer, TrackerAt};

use crate::numbering_thread::LocationIds;
use crate::pass_keys::KeyedPass;
use crate::reading::Pass;
use crate::sums::{Adding, Sums};

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
    sums: Sums<'o>,
    symbolizer: &Symbolizer,
    read: impl FnOnce(Summing) -> R,
) -> (R, Sums<'o>) {
    let Sums { mut keying, adding } = sums;
    // No pass waits: the reading thread hands one over once the one
    // before is keyed, and that one is handed on once the one before it
    // is added up.
    let (to, jobs) = sync_channel::<Job>(0);
    let (r, (keying, adding)) = perfq_ids::beside(
        // `read` drops the sender when done, which ends the loops.
        || read(Summing { to }),
        move || {
            let (to_adding, keyed) = sync_channel::<KeyedPass>(0);
            perfq_ids::beside(
                move || {
                    for job in jobs {
                        let pass = keying.key_pass(job.pass, job.ids, symbolizer, &job.at);
                        // Only a panic ends the adding thread early;
                        // `beside` raises it again.
                        if to_adding.send(pass).is_err() {
                            break;
                        }
                    }
                    keying
                },
                move || add_up(adding, keyed),
            )
        },
    );
    (r, Sums { keying, adding })
}

/// The adding thread: every keyed pass, in order.
fn add_up<'o>(mut adding: Adding<'o>, keyed: Receiver<KeyedPass>) -> Adding<'o> {
    for pass in keyed {
        adding.add(pass);
    }
    adding
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
