//! Off-CPU time as a report's weights ([`crate::Options::off_cpu`]): a
//! first read of the capture finds its off-CPU intervals
//! ([`perfq_stream::off_cpu`]) and sums their lengths by the sample that
//! gives each its stack, and by state. The report's own read then locates
//! those samples only, each counting its summed time, once per state it
//! has time in (each state is one of the report's events), instead of its
//! period. An interval's stack is a sample's, so the frames are located
//! and named as every other report's are, with nothing kept between the
//! two reads but the weights.

use perfq_reader::Capture;
use perfq_stream::off_cpu::{Interval, State};
use perfq_stream::{
    Flow, Interrupted, Located, Locating, Location, Sink, Stream, Take, Unnumbered,
};

/// The time of the intervals whose stack each sample gives, per state,
/// and of those without a stack.
#[derive(Debug, Default)]
pub(crate) struct Weights {
    /// (sample number, state index, ns), sorted by sample number, one
    /// entry per sample and state.
    by_sample: Vec<(u64, u8, u64)>,
    /// The first entry not yet handed out (the read meets samples in
    /// their numbers' order).
    next: usize,
    /// By state: the time of intervals with no stack, or whose stack's
    /// sample could not be located (it has no address).
    pub(crate) unstacked: [u64; State::NAMES.len()],
}

impl Weights {
    /// The intervals of `capture` (of the processes `pids`, sorted, when
    /// given), summed by stack sample and state.
    pub(crate) fn read(capture: &Capture, pids: Option<&[u32]>) -> Result<Weights, Interrupted> {
        let mut intervals = Intervals {
            pids,
            weights: Weights::default(),
        };
        Stream::new(capture).run(
            &mut Locating::default(),
            &mut Unnumbered,
            &mut intervals,
            &mut |_, _| {},
        )?;
        let mut w = intervals.weights;
        w.by_sample.sort_unstable_by_key(|&(n, s, _)| (n, s));
        w.by_sample.dedup_by(|later, kept| {
            let same = (later.0, later.1) == (kept.0, kept.1);
            if same {
                kept.2 += later.2;
            }
            same
        });
        Ok(w)
    }

    /// Whether sample `number` gives a stack; the entries of samples
    /// before it that were not handed out count as without a stack.
    pub(crate) fn wanted(&mut self, number: u64) -> bool {
        while let Some(&(n, state, ns)) = self.by_sample.get(self.next) {
            if n >= number {
                return n == number;
            }
            self.unstacked[state as usize] += ns;
            self.next += 1;
        }
        false
    }

    /// The (state index, ns) of sample `number`, handed out once.
    pub(crate) fn take(&mut self, number: u64) -> impl Iterator<Item = (u32, u64)> + '_ {
        let from = self.next;
        while self.by_sample.get(self.next).is_some_and(|e| e.0 == number) {
            self.next += 1;
        }
        self.by_sample[from..self.next]
            .iter()
            .map(|&(_, state, ns)| (u32::from(state), ns))
    }

    /// Once the read is over: what was not handed out has no stack.
    pub(crate) fn finish(&mut self) {
        self.wanted(u64::MAX);
    }
}

/// The first read's sink: intervals only, no sample taken.
struct Intervals<'p> {
    pids: Option<&'p [u32]>,
    weights: Weights,
}

impl Sink for Intervals<'_> {
    type Key = Location;
    type Numbers = Unnumbered;
    type Error = Interrupted;

    fn off_cpu(&mut self, interval: &Interval) -> Result<(), Interrupted> {
        if let Some(pids) = self.pids {
            match interval.pid {
                Some(pid) if pids.binary_search(&pid).is_ok() => {}
                _ => return Ok(()),
            }
        }
        let state = interval.state.index();
        let ns = interval.duration_ns();
        match interval.stack {
            Some((number, _)) => self.weights.by_sample.push((number, state as u8, ns)),
            None => self.weights.unstacked[state] += ns,
        }
        Ok(())
    }

    fn take(&mut self, _: &perfq_stream::SampleView<'_, '_>) -> Take {
        Take::Skip
    }

    fn sample(&mut self, _: &Located<'_, '_, '_>, _: &mut Unnumbered) -> Result<Flow, Interrupted> {
        Ok(Flow::Go)
    }
}
