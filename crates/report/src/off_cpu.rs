//! Off-CPU time as a report's weights ([`crate::Options::off_cpu`]). An
//! interval's stack is a sample's (the switch-out's own, or the thread's
//! last before it), so its time is counted as that sample's period, once
//! per state it has time in (each state is one of the report's events):
//! the frames are located and named as every other report's are.
//!
//! The read keeps every sample of a pass that could give a stack, with
//! no time ([`UNWEIGHED`]); each interval, as it ends, gives its time to
//! its sample ([`Pending`]). The sample always comes first, but its pass
//! may have been summed by then (a pass ends when its memory is full):
//! such intervals are kept ([`Pending::late`]), and a second read counts
//! their time on their samples alone ([`Weights`]).

use perfq_reader::EventIndex;
use perfq_stream::off_cpu::{Interval, State};
use perfq_stream::Stream;

use crate::reading::Sample;

/// The event of a sample kept as a possible stack that no interval has
/// named yet: no event of the report, so the sums leave it out.
pub(crate) const UNWEIGHED: u32 = u32::MAX;

/// Per state: time (ns).
pub(crate) type ByState = [u64; State::NAMES.len()];

/// Off-CPU time found in the read itself.
#[derive(Debug, Default)]
pub(crate) struct Pending {
    /// The events whose samples can give a stack; `None`: any
    /// ([`perfq_stream::off_cpu::OffCpu::stack_events`]).
    stack_events: Option<Vec<EventIndex>>,
    /// The pass's kept samples: (sample number, index in the pass's
    /// samples), in number order.
    at: Vec<(u64, u32)>,
    /// (sample number, state, ns) of intervals whose sample is not in the
    /// pass: summed with an earlier one, or never located (no address).
    late: Vec<(u64, u8, u64)>,
    /// The time of intervals without a stack.
    unstacked: ByState,
}

impl Pending {
    /// Found by `stream`'s read: the samples it can take as stacks.
    pub(crate) fn read_by(&mut self, stream: &Stream<'_>) {
        self.stack_events = stream
            .off_cpu()
            .map_or(Some(Vec::new()), |o| o.stack_events());
    }

    /// Whether a sample of `event` can give an interval its stack.
    pub(crate) fn may_give_stack(&self, event: EventIndex) -> bool {
        self.stack_events
            .as_ref()
            .is_none_or(|e| e.contains(&event))
    }

    /// Sample `number`, kept at `index` of the pass's samples.
    pub(crate) fn kept(&mut self, number: u64, index: usize) {
        self.at.push((number, index as u32));
    }

    /// The pass was summed: its samples can take no more time.
    pub(crate) fn pass_summed(&mut self) {
        self.at.clear();
    }

    /// Gives `interval`'s time to its sample among `samples` (the pass's),
    /// or keeps it for later.
    pub(crate) fn ended(&mut self, interval: &Interval, samples: &mut Vec<Sample>) {
        let state = interval.state.index();
        let ns = interval.duration_ns();
        let Some((number, _)) = interval.stack else {
            self.unstacked[state] += ns;
            return;
        };
        let Some(i) = position_from_end(&self.at, number) else {
            self.late.push((number, state as u8, ns));
            return;
        };
        // One sample per interval: a row's samples are its intervals.
        let s = &mut samples[self.at[i].1 as usize];
        if s.event == UNWEIGHED {
            (s.event, s.period) = (state as u32, ns);
            return;
        }
        let (leaf, chain) = (s.leaf, s.chain);
        samples.push(Sample {
            event: state as u32,
            leaf,
            chain,
            period: ns,
        });
    }

    /// What the read left: the late intervals as weights for a second
    /// read (none if there are none), and the time without a stack.
    pub(crate) fn finish(self) -> (Option<Weights>, ByState) {
        let weights = (!self.late.is_empty()).then(|| Weights::of(self.late));
        (weights, self.unstacked)
    }
}

/// Where sample `number` is among `at` (sorted by number), searched
/// from the end in growing steps: an interval's sample is mostly one of
/// the last few kept (intervals are short), whose entries are in cache
/// where a binary search over all of them misses it at each step.
fn position_from_end(at: &[(u64, u32)], number: u64) -> Option<usize> {
    let (mut hi, mut step) = (at.len(), 1);
    loop {
        let lo = hi.saturating_sub(step);
        if lo == 0 || at[lo].0 <= number {
            let found = at[lo..hi].binary_search_by_key(&number, |&(n, _)| n);
            return found.ok().map(|i| lo + i);
        }
        (hi, step) = (lo, step * 2);
    }
}

/// The time a second read gives samples of earlier passes, by sample.
#[derive(Debug, Default)]
pub(crate) struct Weights {
    /// (sample number, state index, ns), sorted by sample number, one
    /// entry per interval.
    by_sample: Vec<(u64, u8, u64)>,
    /// The first entry not yet handed out (the read meets samples in
    /// their numbers' order).
    next: usize,
    /// The time of the entries whose sample was never located (it has no
    /// address).
    pub(crate) unstacked: ByState,
}

impl Weights {
    fn of(mut by_sample: Vec<(u64, u8, u64)>) -> Weights {
        by_sample.sort_unstable_by_key(|&(n, s, _)| (n, s));
        Weights {
            by_sample,
            ..Weights::default()
        }
    }

    /// Whether sample `number` is weighed; the entries of samples before
    /// it that were not handed out count as without a stack.
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

#[cfg(test)]
mod tests {
    use super::position_from_end;

    #[test]
    fn searching_from_the_end_finds_what_a_binary_search_finds() {
        for len in [0usize, 1, 2, 3, 7, 8, 100] {
            let at: Vec<(u64, u32)> = (0..len).map(|i| (3 * i as u64 + 5, i as u32)).collect();
            for number in 0..3 * len as u64 + 10 {
                let expected = at.binary_search_by_key(&number, |&(n, _)| n).ok();
                assert_eq!(position_from_end(&at, number), expected, "{len} {number}");
            }
        }
    }
}
