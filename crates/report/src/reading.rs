//! The read's side of a report: each sample's locations numbered by
//! ticket and its deliveries kept, in passes of bounded memory.

use perfq_ids::Numbering;
use perfq_stream::{Consumer, SampleView, Tracker};
use perfq_symbolize::{FrameLookup, RecentChains, Symbolizer};

use crate::chain_tree::{ChainTree, NONE};
use crate::numbering_thread::Tickets;
use crate::sums::Sums;
use crate::Options;

/// In a frame's lookup flags (beside [`FrameLookup::lookup_bits`]): the
/// frame counts each of its inlining levels.
const EXPAND: u8 = 1 << 3;

/// The read's side of a report: each sample's locations handed over by
/// ticket, its deliveries kept, and a pass summed when it is full.
pub(crate) struct Reading<'o, 't> {
    children: bool,
    pids: Option<Vec<u32>>,
    pass_memory: u64,
    pass: Pass,
    sums: Sums<'o>,
    symbolizer: Symbolizer,
    tickets: &'t mut Tickets,
}

impl<'o, 't> Reading<'o, 't> {
    /// A read summing into `sums`, its locations numbered by `tickets`.
    pub(crate) fn new(
        opt: &Options,
        sums: Sums<'o>,
        symbolizer: Symbolizer,
        tickets: &'t mut Tickets,
    ) -> Self {
        Reading {
            children: opt.children,
            pids: opt.pids.clone(),
            pass_memory: opt.pass_memory.unwrap_or(PASS_MEMORY),
            pass: Pass::default(),
            sums,
            symbolizer,
            tickets,
        }
    }

    /// The last pass, unsummed, the sums of those before, and the
    /// symbolizer.
    pub(crate) fn finish(self) -> (Pass, Sums<'o>, Symbolizer) {
        (self.pass, self.sums, self.symbolizer)
    }
}

impl Consumer for Reading<'_, '_> {
    type Error = std::convert::Infallible;

    fn sample(&mut self, view: &mut SampleView<'_, '_>) -> Result<(), Self::Error> {
        let reading = self;
        let tickets = &mut *reading.tickets;
        let s = view.sample();
        let (Some(pid), Some(leaf_frame)) = (s.pid, view.leaf()) else {
            return Ok(());
        };
        if let Some(pids) = &reading.pids {
            if pids.binary_search(&pid).is_err() {
                return Ok(());
            }
        }
        let tracker = view.tracker();
        let leaf = tickets.number((
            tracker.locate(pid, leaf_frame.lookup, leaf_frame.kernel),
            None,
            false,
        ));
        let tid = s.tid.unwrap_or(pid);
        let chain = if reading.children {
            let unwound = view.locate_frames(Some(&reading.symbolizer));
            reading
                .pass
                .chain(view.tracker(), pid, tid, view.frames(), unwound, tickets)
        } else {
            NONE
        };
        // perf splits a sample-read sample into one sample per member with
        // its delta as period, dropping zero deltas.
        for (event, period) in view.delivered() {
            reading.pass.samples.push(Sample {
                event: event.0 as u32,
                leaf,
                chain,
                period,
            });
        }
        if reading.pass.bytes(tickets.len()) >= reading.pass_memory {
            let ids = tickets.cut();
            let pass = std::mem::take(&mut reading.pass);
            reading
                .sums
                .add(pass, ids, &mut reading.symbolizer, view.tracker());
        }
        Ok(())
    }
}

/// What a pass of the read holds at most in tickets and samples
/// ([`Pass::bytes`]). The distinct locations of the pass come on top (a
/// key and, a slice at a time, a resolution each, while it is summed):
/// about as much again. Smaller passes hold less but resolve a location
/// met in several passes once in each (`benches/build.sh` measures
/// `perfq report` with this size on system-wide captures).
const PASS_MEMORY: u64 = 16 << 20;

/// What one pass of the read holds until it is summed.
#[derive(Default)]
pub(crate) struct Pass {
    /// Per delivered (event, period) sample: its own location (a ticket
    /// until the pass ends, then a location id) and, for --children, its
    /// callchain as the leaf-most ticket of the tree of callchain tickets
    /// (`chain_tree`).
    pub(crate) samples: Vec<Sample>,
    pub(crate) tree: ChainTree,
    /// By thread: its previous callchain, as this pass's tickets.
    pub(crate) recent: RecentChains,
    /// Whether a frame's inlining levels count (DWARF-unwound frames).
    pub(crate) any_expanded: bool,
}

impl Pass {
    /// The chain of `lookups` (leaf first) in the pass's tree: the
    /// root-side frames shared with the thread's previous chain keep their
    /// tickets, the others are located and handed over.
    fn chain(
        &mut self,
        tracker: &Tracker,
        pid: u32,
        tid: u32,
        lookups: &[FrameLookup],
        unwound: bool,
        tickets: &mut Tickets,
    ) -> u32 {
        // How a frame is looked up, with whether its inlining levels
        // count (DWARF-unwound user frames).
        let flags_of = |f: &FrameLookup| {
            let expand = unwound && f.kernel == Some(false);
            f.lookup_bits() | if expand { EXPAND } else { 0 }
        };
        let mut new = 0;
        let any_expanded = &mut self.any_expanded;
        let ids = self
            .recent
            .locate(tracker, pid, tid, lookups, flags_of, |f| {
                // Looked up here, numbered on the interning thread: a
                // cache of lookups was slower than the lookups it saved.
                let expand = flags_of(f) & EXPAND != 0;
                *any_expanded |= expand;
                let l = tracker.locate(pid, f.lookup, f.kernel);
                new += 1;
                tickets.number((l, Some(f.addr), expand))
            });
        self.tree.chain(ids, new)
    }

    /// What the pass holds, given its tickets: a location id and a caller
    /// for each ticket (4 bytes each), and its samples.
    fn bytes(&self, tickets: usize) -> u64 {
        let held = tickets * 8 + self.samples.len() * std::mem::size_of::<Sample>();
        held as u64
    }
}

/// A delivered (event, period) sample as the read keeps it: its own
/// location's ticket (an id once the read is done) and its callchain's
/// leaf-most ticket. 24 bytes, as a [`Group`], which it becomes in place.
pub(crate) struct Sample {
    pub(crate) event: u32,
    pub(crate) leaf: u32,
    /// [`NONE`] without callchain (or without `--children`).
    pub(crate) chain: u32,
    pub(crate) period: u64,
}
