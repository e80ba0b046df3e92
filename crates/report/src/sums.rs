//! The sums of a report: each pass's locations resolved to row keys, its
//! samples added to the keys' self sums and, with `--children`, to the
//! totals of every key on their callchains; then the rows, sorted.

use std::collections::BTreeMap;
use std::sync::Arc;

use perfq_symbolize::{Location, Placed, Resolutions, Symbolizer, TrackerAt, Unresolved};
use rayon::prelude::*;

use crate::chain_tree::{total_sums, Group};
use crate::numbering_thread::{LocKey, LocationIds};
use crate::reading::{Pass, Sample};
use crate::row_keys::{KeySym, RowKeys};
use crate::shown::row_key;
use crate::{EventTotal, Options, Report, Row, SortKey};

/// Locations resolved at a time by `report` (their resolutions are
/// dropped once their row keys are taken).
const RESOLVE_SLICE: usize = 1 << 17;

/// Keys whose sums are made into rows at a time (2.5 MB of sums).
const SUMS_AT_A_TIME: usize = 1 << 16;

/// The sums of the passes read so far, by row key and event: all that
/// stays from one pass to the next besides the symbolizer's binaries.
pub(crate) struct Sums<'o> {
    opt: &'o Options,
    /// (DSO, symbol) of each row, numbered as passes meet them.
    keys: RowKeys,
    /// By key: why its first location met is unresolved.
    key_reason: Vec<Option<Unresolved>>,
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
        Sums {
            opt,
            keys: RowKeys::new(),
            key_reason: Vec::new(),
            slot_of_event: vec![None; totals.len()],
            event_of_slot: Vec::new(),
            acc: Vec::new(),
            totals,
            wanted,
            unresolved: BTreeMap::new(),
        }
    }

    /// The key of a location resolved to `dso` and `symbol` (at `addr`,
    /// shown as `show`), its reason kept if the key is new.
    fn key(
        &mut self,
        dso: &Arc<str>,
        symbol: Option<&Arc<str>>,
        addr: u64,
        show: Option<u64>,
        reason: &Option<Unresolved>,
    ) -> u32 {
        let (dso, sym) = row_key(dso, symbol, addr, show, self.opt.sort);
        self.key_of(dso, sym, reason)
    }

    fn key_of(
        &mut self,
        dso: Option<&Arc<str>>,
        sym: KeySym<'_>,
        reason: &Option<Unresolved>,
    ) -> u32 {
        let id = self.keys.id(dso, sym);
        if id as usize == self.key_reason.len() {
            self.key_reason.push(reason.clone());
        }
        id
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
            self.acc.push(vec![Acc::default(); self.keys.len()]);
        }
        slot.map(|s| s as usize)
    }

    /// Resolves a pass's locations, adds its samples to the sums and drops
    /// the rest of it.
    pub(crate) fn add(
        &mut self,
        pass: Pass,
        ids: LocationIds,
        symbolizer: &Symbolizer,
        at: &TrackerAt,
    ) {
        let Pass {
            mut samples,
            mut tree,
            any_expanded,
        } = pass;
        let LocationIds {
            keys: locs,
            ids: ticket_ids,
        } = ids;
        let ticket_ids = locate_leaves(&mut samples, ticket_ids, self.opt.children);
        // Vectors grown by doubling give back their slack before the
        // resolutions are made.
        samples.shrink_to_fit();
        tree.shrink_to_fit();
        symbolizer.set_inline(any_expanded);
        let located = self.location_keys(&locs, symbolizer, at);
        drop(locs);
        let chain_keys = self.chain_keys(located.levels, &located.key, &located.reason);
        // Every slot sums every key met so far.
        let nkeys = self.keys.len();
        for a in &mut self.acc {
            a.resize(nkeys, Acc::default());
        }
        let groups = self.add_self(samples, &located.key, &located.reason);
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

    /// The row key of each of a pass's locations, why it is unresolved,
    /// and the inlining levels of those whose levels count.
    ///
    /// Locations are resolved a slice at a time, each slice's resolutions
    /// (over 100 bytes per location) dropped once its row keys are taken:
    /// the keys hold the names from then on (shared, not copied: an `Arc`
    /// of the DSO's and the symbol's names). Each slice's row keys are
    /// taken while the next slice is resolved (one core each: taking keys
    /// is a hash probe per location, resolving is spread over DSOs).
    fn location_keys(
        &mut self,
        locs: &[LocKey],
        symbolizer: &Symbolizer,
        at: &TrackerAt,
    ) -> LocationKeys {
        let mut located = LocationKeys {
            key: Vec::with_capacity(locs.len()),
            reason: Vec::with_capacity(locs.len()),
            levels: Vec::new(),
        };
        let slices: Vec<&[LocKey]> = locs.chunks(RESOLVE_SLICE).collect();
        let resolve = |slice: &[LocKey]| {
            let locations: Vec<Location> = slice.iter().map(|k| k.0).collect();
            symbolizer.resolve_in(at.dsos(), at.kernel_ref(), &locations)
        };
        let mut next = slices.first().map(|s| resolve(s));
        for (c, slice) in slices.iter().enumerate() {
            let Some(resolved) = next.take() else { break };
            let take_keys = || self.take_keys(&resolved, slice, c * RESOLVE_SLICE, &mut located);
            next = rayon::join(|| slices.get(c + 1).map(|s| resolve(s)), take_keys).0;
        }
        located
    }

    /// Takes the row keys of `slice`'s locations, resolved as `resolved`,
    /// the first being location `first` of the pass.
    fn take_keys(
        &mut self,
        resolved: &Resolutions,
        slice: &[LocKey],
        first: usize,
        into: &mut LocationKeys,
    ) {
        let sort = self.opt.sort;
        // Locations no mapping contains (most of a system-wide capture's)
        // differ only in their address: their resolution is not made one
        // by one, only their key.
        let unmapped = resolved.unmapped(0);
        for (i, (r, &LocKey(_, show, expand))) in resolved.iter_placed().zip(slice).enumerate() {
            let r = match r {
                Placed::Mapped(r) => r,
                Placed::Unmapped(addr) => {
                    let reason = &unmapped.reason;
                    into.key
                        .push(self.key(&unmapped.dso, None, addr, show, reason));
                    into.reason.push(reason.clone());
                    continue;
                }
            };
            into.key
                .push(self.key(&r.dso, r.symbol.as_ref(), r.addr, show, &r.reason));
            into.reason.push(r.reason.clone());
            if expand && !r.inlined.is_empty() && r.symbol.is_some() {
                // perf's `append_inlines` names each level; where the
                // DWARF name is the symbol's (and per DSO, always) it is
                // the function's own row.
                let names = r.inlined.iter().map(|f| {
                    let name = f.function.as_deref().unwrap_or("??");
                    (Some(name) != r.symbol.as_deref() && sort != SortKey::Dso)
                        .then(|| Arc::from(name))
                });
                into.levels.push(InlineLevels {
                    loc: (first + i) as u32,
                    dso: (sort != SortKey::Sym).then(|| r.dso.clone()),
                    names: names.collect(),
                });
            }
        }
    }

    /// The keys each location counts for on a callchain: its own, or for
    /// expanded frames one per inlining level ("name (inlined)").
    fn chain_keys(
        &mut self,
        levels: Vec<InlineLevels>,
        loc_key: &[u32],
        loc_reason: &[Option<Unresolved>],
    ) -> ChainKeys {
        let mut out = ChainKeys {
            start: Vec::with_capacity(loc_key.len() + 1),
            keys: Vec::with_capacity(loc_key.len()),
        };
        let mut levels = levels.into_iter().peekable();
        for (loc, &own) in loc_key.iter().enumerate() {
            out.start.push(out.keys.len() as u32);
            match levels.next_if(|l| l.loc as usize == loc) {
                None => out.keys.push(own),
                Some(InlineLevels { dso, names, .. }) => {
                    for name in names {
                        out.keys.push(match name {
                            None => own,
                            Some(name) => {
                                let why = &loc_reason[loc];
                                self.key_of(dso.as_ref(), KeySym::Inlined(&name), why)
                            }
                        });
                    }
                }
            }
        }
        out.start.push(out.keys.len() as u32);
        out
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

    /// The report of the sums: its rows in perf's order.
    pub(crate) fn report(self) -> Report {
        let Sums {
            opt,
            mut keys,
            key_reason,
            event_of_slot,
            acc,
            totals,
            unresolved,
            ..
        } = self;
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

/// Samples' own tickets made location ids; the ids of callchain tickets
/// kept for `--children` (the tree's nodes are tickets, looked up when
/// summing), else dropped.
fn locate_leaves(samples: &mut [Sample], ticket_ids: Vec<u32>, children: bool) -> Vec<u32> {
    samples
        .par_iter_mut()
        .for_each(|s| s.leaf = ticket_ids[s.leaf as usize]);
    match children {
        true => ticket_ids,
        false => Vec::new(),
    }
}

/// A pass's locations as row keys.
struct LocationKeys {
    /// By location: the id of its row key.
    key: Vec<u32>,
    /// By location: why it is unresolved.
    reason: Vec<Option<Unresolved>>,
    /// The locations whose inlining levels count, in location order.
    levels: Vec<InlineLevels>,
}

/// By location, the keys it counts for on a callchain.
struct ChainKeys {
    /// By location: where its keys start in `keys` (one more at the end).
    start: Vec<u32>,
    keys: Vec<u32>,
}

impl ChainKeys {
    /// The keys of location `loc`.
    fn of(&self, loc: u32) -> &[u32] {
        let range = || {
            let a = *self.start.get(loc as usize)? as usize;
            let b = *self.start.get(loc as usize + 1)? as usize;
            self.keys.get(a..b)
        };
        range().unwrap_or_default()
    }
}

/// The inlining levels of an unwound frame's location, each counted in
/// `--children` as perf's `append_inlines` names it.
struct InlineLevels {
    loc: u32,
    /// The DSO of its keys (`None` when rows are not per DSO).
    dso: Option<Arc<str>>,
    /// Innermost first: the inlined function's name, or `None` where the
    /// level is the function itself (its own row).
    names: Vec<Option<Arc<str>>>,
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
