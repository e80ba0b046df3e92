//! A pass's locations resolved to row keys: the first half of summing a
//! pass. It runs on a thread of its own, beside the one adding up the
//! pass before (`summing_thread`): resolving and keying a pass and adding
//! one up take about as long, and each alone leaves a core idle.

use std::sync::Arc;

use perfq_symbolize::{Location, Placed, Resolutions, Symbolizer, TrackerAt, Unresolved};
use rayon::prelude::*;

use crate::chain_tree::ChainTree;
use crate::loc_key::LocKey;
use crate::numbering_thread::LocationIds;
use crate::reading::{Pass, Sample};
use crate::row_keys::{KeySym, RowKeys};
use crate::shown::row_key;
use crate::{Options, SortKey};

/// Locations resolved at a time by `report` (their resolutions are
/// dropped once their row keys are taken).
const RESOLVE_SLICE: usize = 1 << 17;

/// The row keys of the passes keyed so far: (DSO, symbol) of each row,
/// numbered as passes meet them, and why each is unresolved.
pub(crate) struct Keying<'o> {
    opt: &'o Options,
    keys: RowKeys,
    /// By key: why its first location met is unresolved.
    key_reason: Vec<Option<Unresolved>>,
}

/// A pass with its locations keyed: what adding it up needs.
pub(crate) struct KeyedPass {
    /// Its samples, each one's own location an id (no longer a ticket).
    pub(crate) samples: Vec<Sample>,
    pub(crate) tree: ChainTree,
    /// By callchain ticket, its location (`--children` only).
    pub(crate) ticket_ids: Vec<u32>,
    /// By location: its row key, and why it is unresolved.
    pub(crate) loc_key: Vec<u32>,
    pub(crate) loc_reason: Vec<Option<Unresolved>>,
    /// By location, the keys it counts for on a callchain.
    pub(crate) chain_keys: ChainKeys,
    /// Keys numbered once the pass was keyed.
    pub(crate) nkeys: usize,
}

impl<'o> Keying<'o> {
    pub(crate) fn new(opt: &'o Options) -> Self {
        Keying {
            opt,
            keys: RowKeys::new(),
            key_reason: Vec::new(),
        }
    }

    /// The keys and why each is unresolved, by key.
    pub(crate) fn into_keys(self) -> (RowKeys, Vec<Option<Unresolved>>) {
        (self.keys, self.key_reason)
    }

    /// Resolves a pass's locations to row keys; drops what adding it up
    /// does not need.
    pub(crate) fn key_pass(
        &mut self,
        pass: Pass,
        ids: LocationIds,
        symbolizer: &Symbolizer,
        at: &TrackerAt,
    ) -> KeyedPass {
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
        KeyedPass {
            samples,
            tree,
            ticket_ids,
            loc_key: located.key,
            loc_reason: located.reason,
            chain_keys,
            nkeys: self.keys.len(),
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
            let locations: Vec<Location> = slice.iter().map(LocKey::location).collect();
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
        for (i, (r, k)) in resolved.iter_placed().zip(slice).enumerate() {
            let (show, expand) = (k.show(), k.expand());
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
pub(crate) struct ChainKeys {
    /// By location: where its keys start in `keys` (one more at the end).
    start: Vec<u32>,
    keys: Vec<u32>,
}

impl ChainKeys {
    /// The keys of location `loc`.
    pub(crate) fn of(&self, loc: u32) -> &[u32] {
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
