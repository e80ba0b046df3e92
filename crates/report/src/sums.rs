//! The sums of a report: each pass's locations resolved to row keys
//! (`pass_keys`), its samples added to the keys' self sums and, with
//! `--children`, to the totals of every key on their callchains; then the
//! rows, sorted.

use std::collections::BTreeMap;

use perfq_symbolize::Unresolved;
use rayon::prelude::*;

use crate::chain_tree::{total_sums, Group};
use crate::pass_keys::{KeyedPass, Keying};
use crate::reading::Sample;
use crate::{EventTotal, Options, Report, Row};

/// Keys whose sums are made into rows at a time (2.5 MB of sums).
const SUMS_AT_A_TIME: usize = 1 << 16;

/// The sums of the passes read so far: all that stays from one pass to
/// the next besides the symbolizer's binaries. Its halves work on threads
/// of their own (`summing_thread`).
pub(crate) struct Sums<'o> {
    /// The row keys.
    pub(crate) keying: Keying<'o>,
    /// The sums by row key and event.
    pub(crate) adding: Adding<'o>,
}

/// The sums of the passes added so far, by row key and event.
pub(crate) struct Adding<'o> {
    opt: &'o Options,
    /// Keys the sums are kept for.
    nkeys: usize,
    /// By event of the capture: its slot in `acc` once it has samples, if
    /// it is reported. Sums are kept for the events samples have only: a
    /// system-wide capture's dummy event has none, and with millions of
    /// keys (every garbage frame-pointer address is one) a slot per event
    /// of the capture doubled the largest vector of the report.
    slot_of_event: Vec<Option<u32>>,
    /// By slot, its event.
    event_of_slot: Vec<usize>,
    /// By slot, by key.
    acc: Vec<Vec<Acc>>,
    totals: Vec<EventTotal>,
    /// The one event reported, when not all are.
    wanted: Option<String>,
    /// Own samples left unresolved, by reason.
    unresolved: BTreeMap<&'static str, u64>,
}

impl<'o> Sums<'o> {
    /// Sums of the report's events, named `events` in their order, of
    /// the one named `wanted` only when given.
    pub(crate) fn new(
        opt: &'o Options,
        events: impl IntoIterator<Item = String>,
        wanted: Option<String>,
    ) -> Self {
        let totals: Vec<EventTotal> = events
            .into_iter()
            .map(|name| EventTotal {
                name,
                ..EventTotal::default()
            })
            .collect();
        let adding = Adding {
            opt,
            nkeys: 0,
            slot_of_event: vec![None; totals.len()],
            event_of_slot: Vec::new(),
            acc: Vec::new(),
            totals,
            wanted,
            unresolved: BTreeMap::new(),
        };
        Sums {
            keying: Keying::new(opt),
            adding,
        }
    }

    /// The report of the sums: its rows in perf's order.
    pub(crate) fn report(self) -> Report {
        let (mut keys, key_reason) = self.keying.into_keys();
        let Adding {
            opt,
            event_of_slot,
            acc,
            totals,
            unresolved,
            ..
        } = self.adding;
        keys.done_numbering();
        // Rows are made small (names stay in the keys) and sorted in
        // place. Each carries the first bytes of its symbol's text, so
        // that rows of equal sums (most of a system-wide capture's
        // millions, one sample each) are mostly told apart without reading
        // their keys, scattered over hundreds of megabytes; the key last
        // keeps equal rows in key order.
        let mut rows: Vec<Row> =
            Vec::with_capacity(acc.iter().flatten().filter(|a| a.has_samples()).count());
        // The sums are taken from their end a block at a time, each
        // block's memory given back as its rows are made (a vector this
        // large is mapped on its own, and shrinking it unmaps its tail):
        // rows and sums are not held whole at once.
        for (slot, mut by_key) in acc.into_iter().enumerate() {
            let event = event_of_slot[slot] as u32;
            while !by_key.is_empty() {
                let from = by_key.len().saturating_sub(SUMS_AT_A_TIME);
                rows.extend(
                    by_key[from..]
                        .iter()
                        .enumerate()
                        .filter(|(_, a)| a.has_samples())
                        .map(|(i, a)| Row {
                            event,
                            key: (from + i) as u32,
                            samples: a.samples,
                            period: a.period,
                            total_samples: a.total_samples,
                            total_period: a.total_period,
                            unresolved_samples: a.unresolved_samples,
                            text: keys.sym(from + i).text_prefix(),
                        }),
                );
                by_key.truncate(from);
                by_key.shrink_to_fit();
            }
        }
        // Sorting runs on every core (a large part of `--children` on a
        // system-wide capture). The key makes every comparison total:
        // the order is the same however split.
        let sort_period = |r: &Row| {
            if opt.children {
                r.total_period
            } else {
                r.period
            }
        };
        rows.par_sort_unstable_by(|a, b| {
            a.event
                .cmp(&b.event)
                .then(sort_period(b).cmp(&sort_period(a)))
                .then(b.period.cmp(&a.period))
                .then(a.text.cmp(&b.text))
                .then_with(|| keys.sym(a.key as usize).cmp_text(&keys.sym(b.key as usize)))
                .then(a.key.cmp(&b.key))
        });
        Report {
            events: totals,
            rows,
            unresolved,
            keys,
            key_reason,
            sort: opt.sort,
            ..Report::default()
        }
    }
}

impl<'o> Adding<'o> {
    /// Adds a keyed pass's samples to the sums and drops it.
    pub(crate) fn add(&mut self, pass: KeyedPass) {
        let KeyedPass {
            samples,
            tree,
            ticket_ids,
            loc_key,
            loc_reason,
            chain_keys,
            nkeys,
        } = pass;
        // Every slot sums every key met so far.
        self.nkeys = nkeys;
        for a in &mut self.acc {
            a.resize(nkeys, Acc::default());
        }
        let groups = self.add_self(samples, &loc_key, &loc_reason);
        if self.opt.children {
            // The sample's own entry and every callchain entry: a
            // callchain ticket's keys are its location's.
            let keys_of = |ticket: u32| match ticket_ids.get(ticket as usize) {
                Some(&loc) => chain_keys.of(loc),
                None => &[],
            };
            let acc = &mut self.acc;
            total_sums(groups, &tree, nkeys, keys_of, |k, slot, n, p| {
                let a = &mut acc[slot][k];
                a.total_samples += n;
                a.total_period = a.total_period.wrapping_add(p);
            });
        }
    }

    /// The slot of event `e`'s sums, made at its first sample; `None` for
    /// events not reported.
    fn slot(&mut self, e: usize) -> Option<usize> {
        let slot = self.slot_of_event.get_mut(e)?;
        if slot.is_none() {
            let wanted = match &self.wanted {
                Some(name) => self.totals.get(e).is_some_and(|t| &t.name == name),
                None => true,
            };
            if !wanted {
                return None;
            }
            *slot = Some(self.event_of_slot.len() as u32);
            self.event_of_slot.push(e);
            self.acc.push(vec![Acc::default(); self.nkeys]);
        }
        slot.map(|s| s as usize)
    }

    /// Adds each sample to its own key's self sums and its event's
    /// totals; for `--children` each sample also becomes a group of one
    /// (in place), for the sums over the callchain tree.
    fn add_self(
        &mut self,
        samples: Vec<Sample>,
        loc_key: &[u32],
        loc_reason: &[Option<Unresolved>],
    ) -> Vec<Group> {
        let children = self.opt.children;
        samples
            .into_iter()
            .filter_map(|smp| {
                let e = smp.event as usize;
                let slot = self.slot(e)?;
                let t = self.totals.get_mut(e)?;
                t.samples += 1;
                // Periods add up as perf's do, wrapping: a damaged or reset
                // counter's read delta wraps to near 2^64.
                t.period = t.period.wrapping_add(smp.period);
                let own = loc_key[smp.leaf as usize];
                let a = &mut self.acc[slot][own as usize];
                a.samples += 1;
                a.period = a.period.wrapping_add(smp.period);
                if let Some(why) = &loc_reason[smp.leaf as usize] {
                    a.unresolved_samples += 1;
                    *self.unresolved.entry(why.name()).or_default() += 1;
                }
                children.then_some(Group {
                    chain: smp.chain,
                    own,
                    slot: slot as u32,
                    samples: 1,
                    period: smp.period,
                })
            })
            .collect()
    }
}

/// One key's sums for one event.
#[derive(Default, Clone, Copy)]
pub(crate) struct Acc {
    samples: u64,
    period: u64,
    total_samples: u64,
    total_period: u64,
    unresolved_samples: u64,
}

impl Acc {
    /// Whether any sample counted here: the key has a row for the event.
    fn has_samples(&self) -> bool {
        self.period > 0 || self.total_period > 0 || self.samples > 0
    }
}
