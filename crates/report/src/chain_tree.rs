//! Callchains as a tree of tickets, and `--children` sums over it.
//!
//! The read hands every frame it looks up to the location-numbering
//! thread as a ticket (`numbering_thread`); a frame shared with its thread's
//! previous callchain keeps that chain's ticket (`RecentChains`). So the
//! tickets of callchain frames already form a tree: each new frame's
//! caller is the ticket before it, or the last shared one. A sample keeps
//! only its chain's leaf-most ticket, and the tree a parent per ticket:
//! memory grows with the frames looked up, not with samples × depth (ten
//! million samples of a 60-deep stack are 2.4 GB of chain entries, but a
//! few thousand tickets where the stacks repeat).
//!
//! Sums then go once per distinct stack and own location: samples with
//! the same ones are added up first (per event), their stack walked once
//! for all events, and each function counted once per stack however
//! often it recurs in it.

use rayon::slice::ParallelSliceMut;

/// "No ticket": a root frame's caller, a sample without callchain.
pub(super) const NONE: u32 = u32::MAX;

/// By ticket, its caller's ticket ([`NONE`] for a root frame and for
/// tickets that are not callchain frames).
#[derive(Default)]
pub(super) struct ChainTree {
    parent: Vec<u32>,
}

impl ChainTree {
    /// Records the last `new` of `chain` (a sample's callchain tickets,
    /// root first), the tickets just made for it, each called from the
    /// one before; returns the chain's leaf-most ticket ([`NONE`] for an
    /// empty chain).
    pub(super) fn chain(&mut self, chain: &[u32], new: usize) -> u32 {
        let first_new = chain.len().saturating_sub(new);
        for i in first_new..chain.len() {
            let caller = match i.checked_sub(1) {
                Some(c) => chain[c],
                None => NONE,
            };
            self.set(chain[i], caller);
        }
        chain.last().copied().unwrap_or(NONE)
    }

    fn set(&mut self, ticket: u32, caller: u32) {
        let t = ticket as usize;
        // Tickets are numbered as they are made; those between (samples'
        // own locations) have no caller.
        if t >= self.parent.len() {
            self.parent.resize(t + 1, NONE);
        }
        self.parent[t] = caller;
    }

    /// The caller of `ticket`.
    fn caller(&self, ticket: u32) -> u32 {
        self.parent.get(ticket as usize).copied().unwrap_or(NONE)
    }

    /// Gives back the vector's slack (it grew by doubling).
    pub(super) fn shrink_to_fit(&mut self) {
        self.parent.shrink_to_fit();
    }
}

/// Samples of one stack, own key and event slot, added up: 24 bytes, as
/// a sample is in the read, so that samples become groups in place.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(super) struct Group {
    /// The leaf-most callchain ticket, or [`NONE`].
    pub chain: u32,
    /// The key of the samples' own location.
    pub own: u32,
    /// The event's slot in the sums.
    pub slot: u32,
    pub samples: u32,
    pub period: u64,
}

/// Adds each group's samples and period to every key of its stack once:
/// its own key and the keys of its callchain's frames (`keys_of` gives a
/// ticket's keys: its location's, one per inlining level where those
/// count). `add(key, slot, samples, period)` takes the sums; `nkeys`
/// bounds the keys.
pub(super) fn total_sums<'k>(
    mut groups: Vec<Group>,
    tree: &ChainTree,
    nkeys: usize,
    keys_of: impl Fn(u32) -> &'k [u32],
    mut add: impl FnMut(usize, usize, u64, u64),
) {
    // Equal stacks next to each other, then added up in place.
    groups.par_sort_unstable_by_key(|g| (g.chain, g.own, g.slot));
    let mut merged: usize = 0;
    for i in 0..groups.len() {
        let g = groups[i];
        match merged.checked_sub(1).map(|m| &mut groups[m]) {
            Some(m)
                if (m.chain, m.own, m.slot) == (g.chain, g.own, g.slot) && m.samples < u32::MAX =>
            {
                m.samples += g.samples;
                m.period = m.period.wrapping_add(g.period);
            }
            _ => {
                groups[merged] = g;
                merged += 1;
            }
        }
    }
    groups.truncate(merged);
    // stamp[key] = the last stack that counted it, so that each key counts
    // once per stack however often it recurs in it.
    let mut stamp: Vec<u32> = vec![u32::MAX; nkeys];
    // One walk per stack and own key, for all its events: a sample that
    // reads a group of ten counters is ten samples of one stack.
    for (run, same) in groups
        .chunk_by(|a, b| (a.chain, a.own) == (b.chain, b.own))
        .enumerate()
    {
        let run = run as u32;
        let mut count = |k: u32| {
            if let Some(s) = stamp.get_mut(k as usize) {
                if *s != run {
                    *s = run;
                    for g in same {
                        add(k as usize, g.slot as usize, u64::from(g.samples), g.period);
                    }
                }
            }
        };
        let Some(first) = same.first() else { continue };
        count(first.own);
        let mut at = first.chain;
        while at != NONE {
            keys_of(at).iter().for_each(|&k| count(k));
            at = tree.caller(at);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The sums of the tree and groups are those of counting every
    /// sample's whole chain, each key once per sample: with shared
    /// callers, recursion, repeated stacks, several slots and a sample
    /// without callchain.
    #[test]
    fn sums_are_those_of_each_sample_counted_alone() {
        // Tickets: 0 leaf of sample A, 1..=3 its chain (root first).
        let mut t = ChainTree::default();
        let a = t.chain(&[1, 2, 3], 3);
        // Sample B shares 1, 2 with A and adds 5 (4 is its leaf).
        let b = t.chain(&[1, 2, 5], 1);
        // Sample C: a leaf only.
        let c = t.chain(&[], 0);
        assert_eq!((a, b, c), (3, 5, NONE));
        assert_eq!(t.caller(5), 2);
        assert_eq!(t.caller(1), NONE);
        // Keys by ticket: 3 and 1 are the same function (recursion); 5
        // has two inlining levels.
        let keys: Vec<Vec<u32>> = vec![
            vec![10],
            vec![11],
            vec![12],
            vec![11],
            vec![13],
            vec![14, 12],
            vec![15],
        ];
        let own = |leaf: usize| keys[leaf][0];
        // (chain, own, slot, period) per sample; A twice (once per slot).
        let samples = [
            (a, own(0), 0, 100),
            (a, own(0), 0, 7),
            (a, own(0), 1, 5),
            (b, own(4), 0, 20),
            (c, own(6), 0, 3),
        ];
        let mut expected = vec![(0u64, 0u64); 16 * 2];
        for &(chain, own, slot, period) in &samples {
            let mut seen = vec![own];
            let mut at = chain;
            while at != NONE {
                seen.extend(&keys[at as usize]);
                at = t.caller(at);
            }
            seen.sort_unstable();
            seen.dedup();
            for k in seen {
                let e = &mut expected[k as usize * 2 + slot as usize];
                e.0 += 1;
                e.1 += period;
            }
        }
        let groups = samples
            .iter()
            .map(|&(chain, own, slot, period)| Group {
                chain,
                own,
                slot,
                samples: 1,
                period,
            })
            .collect();
        let mut got = vec![(0u64, 0u64); 16 * 2];
        total_sums(
            groups,
            &t,
            16,
            |at| &keys[at as usize],
            |k, slot, n, p| {
                got[k * 2 + slot].0 += n;
                got[k * 2 + slot].1 += p;
            },
        );
        assert_eq!(got, expected);
        assert_eq!(got[11 * 2], (3, 127), "recursion counted once");
        assert_eq!(got[12 * 2], (3, 127), "an inlining level counted once");
    }
}
