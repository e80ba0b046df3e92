//! The read's side of a report: each sample's locations numbered by
//! ticket and its deliveries kept, in passes of bounded memory.

use perfq_stream::{Flow, Locate, Located, Own, Sink, Take, Tracker};
use perfq_symbolize::Symbolizer;

use crate::chain_tree::{ChainTree, NONE};
use crate::loc_key::LocKey;
use crate::numbering_thread::Tickets;
use crate::off_cpu::{Pending, Weights, UNWEIGHED};
use crate::summing_thread::Summing;
use crate::Options;

/// What a report locates of each sample: its own address, always a
/// location of its own, and with `--children` its stack, every frame not
/// shared with the thread's previous stack given a ticket of its own (the
/// tree of tickets, [`ChainTree`], takes a ticket for a position), each
/// DWARF-unwound user frame counting its inlining levels.
pub(crate) fn locate(opt: &Options) -> Locate {
    Locate {
        stack: opt.children,
        own: Own::First,
        branches: false,
        cache: false,
        expand_unwound: true,
    }
}

/// What a read counts.
pub(crate) enum Counting {
    /// Samples, as delivered.
    Samples,
    /// Off-CPU time: every sample with an address is kept as a possible
    /// stack, and intervals give it their time as they end
    /// (`crate::off_cpu`).
    OffCpu(Pending),
    /// Off-CPU time of samples whose pass was summed before their
    /// intervals ended (the first read's [`Pending::finish`]).
    Weights(Weights),
}

/// The read's side of a report: each sample's locations handed over by
/// ticket, its deliveries kept, and a pass handed to the summing thread
/// when it is full.
pub(crate) struct Reading<'s> {
    pids: Option<Vec<u32>>,
    pass_memory: u64,
    pass: Pass,
    summing: Summing,
    /// For the stream (unwinding); the summing thread resolves with it.
    symbolizer: &'s Symbolizer,
    counting: Counting,
}

impl<'s> Reading<'s> {
    /// A read handing its passes to `summing`.
    pub(crate) fn new(
        opt: &Options,
        summing: Summing,
        symbolizer: &'s Symbolizer,
        counting: Counting,
    ) -> Self {
        Reading {
            pids: opt.pids.clone(),
            pass_memory: opt.pass_memory.unwrap_or(PASS_MEMORY),
            pass: Pass::default(),
            summing,
            symbolizer,
            counting,
        }
    }

    /// Whether `pid` is of the processes asked for (any without `--pid`;
    /// none without a pid when some are asked for).
    fn of_pids(&self, pid: Option<u32>) -> bool {
        match (&self.pids, pid) {
            (None, _) => true,
            (Some(pids), Some(pid)) => pids.binary_search(&pid).is_ok(),
            (Some(_), None) => false,
        }
    }

    /// The last pass, unsummed, the summing thread, and what was counted
    /// (weights each handed out or counted as without a stack).
    pub(crate) fn finish(mut self) -> (Pass, Summing, Counting) {
        if let Counting::Weights(w) = &mut self.counting {
            w.finish();
        }
        self.pass.drop_unweighed();
        (self.pass, self.summing, self.counting)
    }
}

impl Sink for Reading<'_> {
    type Key = LocKey;
    type Numbers = Tickets;
    type Error = perfq_stream::Interrupted;

    /// Samples with a pid and an address, of the processes asked for;
    /// for off-CPU time, those with an address (that may give stacks).
    fn take(&mut self, view: &perfq_stream::SampleView<'_, '_>) -> Take {
        let wanted = match &mut self.counting {
            Counting::Samples => None,
            Counting::OffCpu(p) => Some(p.may_give_stack(view.event())),
            Counting::Weights(w) => Some(w.wanted(view.number())),
        };
        if let Some(wanted) = wanted {
            return match wanted && view.leaf().is_some() {
                true => Take::Locate,
                false => Take::Skip,
            };
        }
        let pid = view.sample().pid;
        match pid.is_some() && view.leaf().is_some() && self.of_pids(pid) {
            true => Take::Locate,
            false => Take::Skip,
        }
    }

    fn symbolizer(&self) -> Option<&Symbolizer> {
        Some(self.symbolizer)
    }

    fn sample(
        &mut self,
        located: &Located<'_, '_, '_>,
        tickets: &mut Tickets,
    ) -> Result<Flow, Self::Error> {
        let Some(leaf) = located.own() else {
            return Ok(Flow::Go);
        };
        let pass = &mut self.pass;
        pass.any_expanded |= located.expanded();
        let chain = match located.stack() {
            [] => NONE,
            stack => pass.tree.chain(stack, located.new_in_stack()),
        };
        let number = located.view().number();
        let kept_at = pass.samples.len();
        let mut push = |event, period| {
            pass.samples.push(Sample {
                event,
                leaf,
                chain,
                period,
            })
        };
        match &mut self.counting {
            Counting::OffCpu(p) => {
                p.kept(number, kept_at);
                push(UNWEIGHED, 0);
            }
            Counting::Weights(w) => w.take(number).for_each(|(state, ns)| push(state, ns)),
            // perf splits a sample-read sample into one sample per member
            // with its delta as period, dropping zero deltas.
            Counting::Samples => located
                .view()
                .delivered()
                .for_each(|(event, period)| push(event.0 as u32, period)),
        }
        Ok(match pass.bytes(tickets.len()) >= self.pass_memory {
            true => Flow::Restart,
            false => Flow::Go,
        })
    }

    /// The pass is full: its tickets become ids, and it is handed to the
    /// summing thread.
    fn restarted(&mut self, tickets: &mut Tickets, tracker: &Tracker) -> Result<(), Self::Error> {
        let ids = tickets.cut();
        let mut pass = std::mem::take(&mut self.pass);
        pass.drop_unweighed();
        if let Counting::OffCpu(p) = &mut self.counting {
            p.pass_summed();
        }
        self.summing.add(pass, ids, tracker);
        Ok(())
    }

    /// An interval of off-CPU time gives its time to its sample, of the
    /// processes asked for.
    fn off_cpu(&mut self, interval: &perfq_stream::off_cpu::Interval) -> Result<(), Self::Error> {
        if !self.of_pids(interval.pid) {
            return Ok(());
        }
        if let Counting::OffCpu(p) = &mut self.counting {
            p.ended(interval, &mut self.pass.samples);
        }
        Ok(())
    }
}

/// What a pass of the read holds at most in tickets and samples
/// ([`Pass::bytes`]). The distinct locations of the pass come on top (a
/// key and, a slice at a time, a resolution each, while it is summed):
/// about as much again; two passes are held while one is summed and the
/// next read. Smaller passes hold less but resolve a location
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
    /// Whether a frame's inlining levels count (DWARF-unwound frames).
    pub(crate) any_expanded: bool,
}

impl Pass {
    /// Leaves out the samples kept as possible stacks that no off-CPU
    /// interval named.
    fn drop_unweighed(&mut self) {
        self.samples.retain(|s| s.event != UNWEIGHED);
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
