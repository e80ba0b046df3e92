//! Per-function self and total (inclusive) samples and periods of one
//! capture, as `perf report --no-children` / `--children` compute them:
//! the aggregation behind `perfq report`.
//!
//! It reads the perf.data file itself rather than a dataset: a report
//! needs no conversion (the CLI's target is ≥ 5× `perf report`, and
//! converting first costs more than the whole report), and it names rows
//! exactly as perf does where the dataset keeps one name per frame. The
//! standard views `function_self` and `function_total` are the same
//! aggregation over a dataset; `crates/cli/tests/report_views.rs` holds
//! the two equal on every testdata and corpus capture and counts where
//! they differ by design (docs/testing.md):
//!
//! - **Group reads.** perf delivers a `PERF_SAMPLE_READ` sample once per
//!   member whose counter moved, with its delta as period; so does
//!   [`run`]. The views count the `samples` table's rows: once, under the
//!   sampling event, with the sample's own period.
//! - **Unresolved callchain entries.** perf names an unresolved frame of
//!   a callchain by the address recorded (a return address unadjusted),
//!   a sample's own unresolved address by its offset in its DSO; the views
//!   name every unresolved frame by its DSO offset (else its address) after
//!   the `pc − 1` of return addresses.
//! - **DWARF inlining levels.** For `--call-graph dwarf` captures perf
//!   counts every unwound user frame once per inlining level, named by its
//!   DWARF function (`name (inlined)` where it is not the ELF symbol's);
//!   the views count the ELF symbol.
//!
//! ```no_run
//! use perfq_query::report::{self, Options};
//!
//! let r = report::run("perf.data".as_ref(), &Options { children: true, ..Options::default() })?;
//! for row in &r.rows {
//!     let event = &r.events[row.event];
//!     println!("{} {} {} {} of {}", event.name, row.dso, row.symbol, row.total_period, event.period);
//! }
//! # Ok::<(), perfq_query::Error>(())
//! ```

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::sync::Arc;

use perfq_reader::{Capture, MemberDelta, ReadDeltas, RecordType, ReleaseBehind};
use perfq_symbolize::{
    leaf_lookup, Config, FrameLookup, Location, Placed, RecentChains, StackUnwinder, Symbolizer,
    Tracker, Unresolved,
};
use rayon::prelude::*;

use crate::Error;

mod chain_tree;
mod location_ids;
mod row_keys;

use chain_tree::{total_sums, ChainTree, Group, NONE};
use location_ids::{with_location_ids, LocKey, LocationIds};
use row_keys::{KeySym, RowKeys};

/// Locations resolved at a time by `report` (their resolutions are
/// dropped once their row keys are taken).
const RESOLVE_SLICE: usize = 1 << 17;

/// In a frame's lookup flags (beside [`FrameLookup::lookup_bits`]): the
/// frame counts each of its inlining levels.
const EXPAND: u8 = 1 << 3;

/// How rows are keyed.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub enum SortKey {
    /// Shared object and symbol (perf's `--sort dso,sym`).
    #[default]
    DsoSym,
    /// Symbol only (the DSO left empty).
    Sym,
    /// Shared object only (the symbol left empty).
    Dso,
}

/// What to report.
#[derive(Clone, Debug, Default)]
pub struct Options {
    /// Also total (inclusive) samples and periods from callchains, as
    /// `perf report --children`.
    pub children: bool,
    /// How rows are keyed.
    pub sort: SortKey,
    /// Only the events of this name.
    pub event: Option<String>,
    /// Where symbols come from.
    pub symbols: Config,
}

/// One event of the capture and what was delivered for it.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct EventTotal {
    /// Its name (`events.name`).
    pub name: String,
    /// Samples delivered (a group read once per member whose counter
    /// moved); 0 for events not reported.
    pub samples: u64,
    /// The sum of their periods.
    pub period: u64,
}

/// One row: an event's samples of one function (or DSO, or symbol).
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Row {
    /// → [`Report::events`].
    pub event: usize,
    /// The DSO's short name, `[unknown]` for an address nothing maps
    /// (empty with [`SortKey::Sym`]); shared by the DSO's rows (millions
    /// of `[unknown]` rows on a system-wide capture).
    pub dso: Arc<str>,
    /// The symbol; unresolved, the address, which it shows as perf prints
    /// it (empty with [`SortKey::Dso`]). Shared with the rows of the other
    /// events, and an address is formatted only when shown: a system-wide
    /// capture has millions of such rows.
    pub symbol: Symbol,
    /// Why the symbol is unresolved ([`perfq_symbolize::Unresolved::name`]);
    /// never given for DSO rows, which may mix resolved and unresolved
    /// addresses.
    pub unresolved: Option<&'static str>,
    /// Samples whose own address is in it (Self).
    pub samples: u64,
    /// The sum of their periods.
    pub period: u64,
    /// Samples whose own address or callchain holds it, each once
    /// (Children; 0 without [`Options::children`]).
    pub total_samples: u64,
    /// The sum of their periods.
    pub total_period: u64,
    /// Own samples whose symbol could not be resolved.
    pub unresolved_samples: u64,
}

/// The report of one capture.
#[derive(Debug, Default)]
pub struct Report {
    /// Every event of the capture, in its order.
    pub events: Vec<EventTotal>,
    /// The rows with samples, in perf's order: by event, then largest
    /// period first (total with [`Options::children`], else self), then
    /// larger self period, then symbol.
    pub rows: Vec<Row>,
    /// Own samples left unresolved, by reason.
    pub unresolved: BTreeMap<&'static str, u64>,
    /// What the symbolizer could not use (build-id mismatches, kallsyms).
    pub notes: Vec<String>,
    /// Samples that could not be decoded (not counted).
    pub undecoded: u64,
    /// What stopped reading before the end of the file, if anything (the
    /// rows count what was read before it).
    pub error: Option<perfq_reader::Error>,
}

impl Report {
    /// Samples delivered, all events together.
    pub fn samples(&self) -> u64 {
        self.events.iter().map(|e| e.samples).sum()
    }
}

/// An unresolved address as perf prints it (`%-#.*llx` with 16 digits:
/// `0x` then 16 digits, or 16 zeros for 0, which C prints without prefix),
/// as bytes, without allocating.
fn address_text(a: u64) -> AddressText {
    const HEX: &[u8; 16] = b"0123456789abcdef";
    let mut t = [b'0'; 18];
    t[1] = b'x';
    for (i, d) in t[2..].iter_mut().enumerate() {
        *d = HEX[((a >> (60 - 4 * i)) & 0xf) as usize];
    }
    // 0 is its sixteen zeros alone.
    AddressText {
        text: t,
        from: if a == 0 { 2 } else { 0 },
    }
}

/// The text of an address as perf prints it: `text[from..]`.
struct AddressText {
    text: [u8; 18],
    from: usize,
}

impl std::ops::Deref for AddressText {
    type Target = [u8];
    fn deref(&self) -> &[u8] {
        &self.text[self.from..]
    }
}

/// Reads the capture at `path` (`-` for standard input) in time order and
/// reports it.
pub fn run(path: &Path, opt: &Options) -> Result<Report, Error> {
    run_with_progress(path, opt, &mut |_, _| {})
}

/// [`run`], calling `progress` now and then with (bytes of the capture
/// read, its size) while it reads the records; symbolizing and summing
/// follow the last call.
pub fn run_with_progress(
    path: &Path,
    opt: &Options,
    progress: &mut dyn FnMut(u64, u64),
) -> Result<Report, Error> {
    let capture = Capture::open(path)?;
    let events = capture.events();
    let mut tracker = Tracker::new(&capture);
    // Unique locations, numbered on a second thread (`location_ids`): the
    // read hands each over as a `LocKey` and keeps its ticket. Unresolved,
    // perf shows a sample's own ip as its offset in the DSO but a
    // callchain entry as the address itself (for return addresses: the
    // return address, though it is looked up at pc - 1, the call), so
    // chain entries carry the address to show. Frames perf unwound from a
    // DWARF user stack also count every function inlined at their address
    // ("name (inlined)"): those are expanded.
    // Per delivered (event, period) sample: its own location (a ticket
    // until the read ends, then an id) and, for --children, its
    // callchain as the leaf-most ticket of the tree of callchain tickets
    // (`chain_tree`).
    let mut samples: Vec<Sample> = Vec::new();
    let mut tree = ChainTree::default();
    // By thread: its previous callchain.
    let mut recent = RecentChains::default();
    let mut deltas = ReadDeltas::new();
    let mut members: Vec<MemberDelta> = Vec::new();
    let mut undecoded = 0u64;
    let mut error = None;
    let symbolizer = Symbolizer::new(
        &opt.symbols,
        tracker.kernel_build_id(),
        capture.meta().os_release.as_deref(),
    );
    // User stacks recorded with --call-graph dwarf are unwound (x86_64).
    let mut unwinder = StackUnwinder::new(capture.meta().arch.as_deref());
    let mut any_expanded = false;
    let mut lookups: Vec<FrameLookup> = Vec::new();
    let mut records = capture.records_by_time();
    let mut release = ReleaseBehind::default();
    let ((), LocationIds { keys, ticket_ids }) = with_location_ids(|tickets| loop {
        if let Some(done) = records.progress() {
            progress(done, capture.file_len());
        }
        let Some(r) = records.next_ok(&mut error) else {
            break;
        };
        // Pages of the capture behind the reading position go back to the
        // OS as the conversion does it: they are not read again.
        release.reached(&capture, r.offset.0);
        if r.kind != RecordType::SAMPLE {
            if let Ok((data, _)) = capture.parse(&r) {
                tracker.observe(&data);
            }
            continue;
        }
        let Some(ev) = r.event.index() else { continue };
        let Ok(s) = capture.sample(&r) else {
            undecoded += 1;
            continue;
        };
        let (Some(pid), Some(leaf_frame)) = (s.pid, leaf_lookup(&s)) else {
            continue;
        };
        let leaf = tickets.push((
            tracker.locate(pid, leaf_frame.lookup, leaf_frame.kernel),
            None,
            false,
        ));
        let mut chain = NONE;
        if opt.children {
            let unwound = unwinder.sample_frames(&tracker, &symbolizer, &s, &mut lookups);
            // How a frame is looked up, with whether its inlining levels
            // count (DWARF-unwound user frames).
            let flags_of = |f: &FrameLookup| {
                let expand = unwound && f.kernel == Some(false);
                f.lookup_bits() | if expand { EXPAND } else { 0 }
            };
            // The root-side frames shared with the thread's previous chain
            // keep their locations; only the others are looked up.
            let tid = s.tid.unwrap_or(pid);
            let mut new = 0;
            let ids = recent.locate(&tracker, pid, tid, &lookups, flags_of, |f| {
                // Looked up here, numbered on the interning thread: a
                // cache of lookups was slower than the lookups it saved.
                let expand = flags_of(f) & EXPAND != 0;
                any_expanded |= expand;
                let l = tracker.locate(pid, f.lookup, f.kernel);
                new += 1;
                tickets.push((l, Some(f.addr), expand))
            });
            chain = tree.chain(ids, new);
        }
        // perf splits a sample-read sample into one sample per member with
        // its delta as period, dropping zero deltas.
        if s.read.is_some() {
            members.clear();
            deltas.apply(events, ev, &s, &mut members);
            for m in &members {
                if let (Some(e), Some(d)) = (m.event, m.delta) {
                    if d != 0 {
                        samples.push(Sample {
                            event: e.0 as u32,
                            leaf,
                            chain,
                            period: d,
                        });
                    }
                }
            }
        } else {
            let period = s
                .period
                .unwrap_or_else(|| events.get(ev).map_or(1, |e| e.attr.sample_period_or_freq));
            samples.push(Sample {
                event: ev.0 as u32,
                leaf,
                chain,
                period,
            });
        }
    });
    progress(capture.file_len(), capture.file_len());
    // The read's lookup maps are done with: their memory (a few hundred
    // bytes per location on system-wide captures) goes before resolving
    // and summing need theirs.
    drop((recent, lookups, unwinder));
    // Samples' own tickets become location ids; callchain tickets stay
    // (the tree's nodes), looked up in `ticket_ids` when summing.
    samples
        .par_iter_mut()
        .for_each(|s| s.leaf = ticket_ids[s.leaf as usize]);
    let ticket_ids = if opt.children {
        ticket_ids
    } else {
        drop(ticket_ids);
        Vec::new()
    };
    // Vectors grown by doubling give back their slack before the
    // resolutions are made.
    samples.shrink_to_fit();
    tree.shrink_to_fit();
    let mut symbolizer = symbolizer;
    symbolizer.set_inline(any_expanded);
    // Locations are resolved a slice at a time, each slice's resolutions
    // (over 100 bytes per location) dropped once its row keys are taken:
    // the keys hold the names from then on (shared, not copied: an `Arc`
    // of the DSO's and the symbol's names).
    let sort = opt.sort;
    let n = keys.len();
    // By location: the id of its row key (rows are dense per event), why
    // it is unresolved, and for frames whose inlining levels count, the
    // levels' names (`None`: the function itself).
    let mut row_keys = RowKeys::new();
    let mut loc_key: Vec<u32> = Vec::with_capacity(n);
    let mut loc_reason: Vec<Option<Unresolved>> = Vec::with_capacity(n);
    let mut levels: Vec<InlineLevels> = Vec::new();
    // Each slice's row keys are taken while the next slice is resolved
    // (one core each: taking keys is a hash probe per location, resolving
    // is spread over DSOs).
    let slices: Vec<&[LocKey]> = keys.chunks(RESOLVE_SLICE).collect();
    let resolve = |slice: &[LocKey]| {
        let locations: Vec<Location> = slice.iter().map(|k| k.0).collect();
        symbolizer.resolve_all(&tracker, &locations)
    };
    let mut next = slices.first().map(|s| resolve(s));
    for (c, slice) in slices.iter().enumerate() {
        let Some(resolved) = next.take() else { break };
        let take_keys = || {
            // Locations no mapping contains (most of a system-wide
            // capture's) differ only in their address: their resolution is
            // not made one by one, only their key.
            let unmapped = resolved.unmapped(0);
            for (i, r) in resolved.iter_placed().enumerate() {
                let loc = c * RESOLVE_SLICE + i;
                let (_, show, expand) = slice[i];
                let r = match r {
                    Placed::Mapped(r) => r,
                    Placed::Unmapped(addr) => {
                        let (dso, sym) = row_key(&unmapped.dso, None, addr, show, sort);
                        loc_key.push(row_keys.id(dso, sym, loc));
                        loc_reason.push(unmapped.reason.clone());
                        continue;
                    }
                };
                let (dso, sym) = row_key(&r.dso, r.symbol.as_ref(), r.addr, show, sort);
                loc_key.push(row_keys.id(dso, sym, loc));
                loc_reason.push(r.reason.clone());
                if expand && !r.inlined.is_empty() && r.symbol.is_some() {
                    // perf's `append_inlines` names each level; where the
                    // DWARF name is the symbol's (and per DSO, always) it is
                    // the function's own row.
                    let names = r.inlined.iter().map(|f| {
                        let name = f.function.as_deref().unwrap_or("??");
                        (Some(name) != r.symbol.as_deref() && sort != SortKey::Dso)
                            .then(|| Arc::from(name))
                    });
                    let dso = (sort != SortKey::Sym).then(|| r.dso.clone());
                    levels.push(InlineLevels {
                        loc: loc as u32,
                        dso,
                        names: names.collect(),
                    });
                }
            }
        };
        next = rayon::join(|| slices.get(c + 1).map(|s| resolve(s)), take_keys).0;
    }
    drop(slices);
    drop(keys);
    // The keys a callchain entry counts for: its own, or for expanded
    // frames one per inlining level ("name (inlined)"), numbered after
    // every location's own key.
    let mut chain_key_start: Vec<u32> = Vec::with_capacity(n + 1);
    let mut chain_keys: Vec<u32> = Vec::with_capacity(n);
    let mut levels = levels.into_iter().peekable();
    for (loc, &own) in loc_key.iter().enumerate() {
        chain_key_start.push(chain_keys.len() as u32);
        match levels.next_if(|l| l.loc as usize == loc) {
            None => chain_keys.push(own),
            Some(InlineLevels { dso, names, .. }) => {
                for name in names {
                    chain_keys.push(match name {
                        None => own,
                        Some(name) => row_keys.id(dso.as_ref(), KeySym::Inlined(&name), loc),
                    });
                }
            }
        }
    }
    chain_key_start.push(chain_keys.len() as u32);
    let mut keys = row_keys;
    // Why each key's first location is unresolved: all the rows still
    // need of the resolutions.
    let key_reason: Vec<Option<Unresolved>> = keys
        .done_numbering()
        .iter()
        .map(|&l| loc_reason[l as usize].clone())
        .collect();

    let wanted = |e: usize| -> bool {
        match &opt.event {
            Some(name) => events.list().get(e).is_some_and(|ev| &ev.name == name),
            None => true,
        }
    };
    if let Some(name) = &opt.event {
        if !events.list().iter().any(|e| &e.name == name) {
            return Err(Error::NoEvent {
                name: name.clone(),
                path: PathBuf::from(path),
            });
        }
    }
    // Sums are kept per (key, event) for the events samples have only: a
    // system-wide capture's dummy event has none, and with millions of
    // keys (every garbage frame-pointer address is one) a slot per event
    // of the capture doubled the largest vector of the report.
    let mut sampled = vec![false; events.len()];
    for smp in &samples {
        if let Some(s) = sampled.get_mut(smp.event as usize) {
            *s = true;
        }
    }
    // In event order, as rows are ordered by event.
    let event_of_slot: Vec<usize> = (0..events.len())
        .filter(|&e| sampled[e] && wanted(e))
        .collect();
    let mut slot_of_event: Vec<Option<u32>> = vec![None; events.len()];
    for (slot, &e) in event_of_slot.iter().enumerate() {
        slot_of_event[e] = Some(slot as u32);
    }
    let nev = event_of_slot.len().max(1);
    let mut totals: Vec<EventTotal> = events
        .list()
        .iter()
        .map(|e| EventTotal {
            name: e.name.clone(),
            ..EventTotal::default()
        })
        .collect();
    let mut unresolved: BTreeMap<&'static str, u64> = BTreeMap::new();
    let mut acc: Vec<Acc> = vec![Acc::default(); keys.len() * nev];
    // Self sums per sample; for --children each sample also becomes a
    // group of one (in place), for the sums over the tree.
    let groups: Vec<Group> = samples
        .into_iter()
        .filter_map(|smp| {
            let e = smp.event as usize;
            let slot = slot_of_event.get(e).copied().flatten()?;
            let t = totals.get_mut(e)?;
            t.samples += 1;
            t.period += smp.period;
            let own = loc_key[smp.leaf as usize];
            let a = &mut acc[own as usize * nev + slot as usize];
            a.samples += 1;
            a.period += smp.period;
            if let Some(why) = &loc_reason[smp.leaf as usize] {
                a.unresolved_samples += 1;
                *unresolved.entry(why.name()).or_default() += 1;
            }
            opt.children.then_some(Group {
                chain: smp.chain,
                own,
                slot,
                samples: 1,
                period: smp.period,
            })
        })
        .collect();
    if opt.children {
        // The sample's own entry and every callchain entry: a callchain
        // ticket's keys are its location's.
        let keys_of = |ticket: u32| {
            let keys = ticket_ids.get(ticket as usize).and_then(|&l| {
                let a = *chain_key_start.get(l as usize)? as usize;
                let b = *chain_key_start.get(l as usize + 1)? as usize;
                chain_keys.get(a..b)
            });
            keys.unwrap_or_default()
        };
        total_sums(groups, &tree, keys.len(), keys_of, |k, slot, n, p| {
            let a = &mut acc[k * nev + slot];
            a.total_samples += n;
            a.total_period += p;
        });
    } else {
        // Empty, but holding the samples' memory (collected in place):
        // freed before the rows are made, as `total_sums` frees it.
        drop(groups);
    }
    drop((tree, ticket_ids, chain_keys, chain_key_start, loc_key));
    // Rows are ordered by their sums and keys, then given their strings:
    // hundreds of thousands of rows are not copied around while sorting.
    // Each carries the first bytes of its symbol's text, so that rows of
    // equal sums (most of a system-wide capture's millions, one sample
    // each) are mostly told apart without reading their keys, scattered
    // over hundreds of megabytes; the index last keeps equal rows in key
    // order.
    let mut order: Vec<OrderRow> = acc
        .iter()
        .enumerate()
        .filter(|(_, a)| a.period > 0 || a.total_period > 0 || a.samples > 0)
        .map(|(i, a)| {
            let k = if opt.children {
                a.total_period
            } else {
                a.period
            };
            OrderRow {
                event: event_of_slot[i % nev] as u32,
                index: i as u32,
                sort_period: k,
                period: a.period,
                text: keys.sym(i / nev).text_prefix(),
            }
        })
        .collect();
    // Sorting and naming the rows run on every core (they are a fifth of
    // `--children` on a system-wide capture's 600 K rows). The index
    // makes every comparison total: the order is the same however split.
    order.par_sort_unstable_by(|a, b| {
        a.event
            .cmp(&b.event)
            .then(b.sort_period.cmp(&a.sort_period))
            .then(b.period.cmp(&a.period))
            .then(a.text.cmp(&b.text))
            .then_with(|| {
                keys.sym(a.index as usize / nev)
                    .cmp_text(&keys.sym(b.index as usize / nev))
            })
            .then(a.index.cmp(&b.index))
    });
    let rows: Vec<Row> = order
        .par_iter()
        .map(|&OrderRow { index: i, .. }| {
            let (k, e) = (i as usize / nev, event_of_slot[i as usize % nev]);
            let a = &acc[i as usize];
            Row {
                event: e,
                dso: keys.dso(k).clone(),
                symbol: keys.symbol(k),
                // A DSO-only row may mix resolved and unresolved
                // locations: it carries a count, not a reason.
                unresolved: match opt.sort {
                    SortKey::Dso => None,
                    _ => key_reason[k].as_ref().map(|r| r.name()),
                },
                samples: a.samples,
                period: a.period,
                total_samples: a.total_samples,
                total_period: a.total_period,
                unresolved_samples: a.unresolved_samples,
            }
        })
        .collect();
    Ok(Report {
        events: totals,
        rows,
        unresolved,
        notes: symbolizer.notes(),
        undecoded,
        error: error.map(|e| e.with_path(path)),
    })
}

/// A row as it is sorted: by event, then larger sort period, then larger
/// self period, then symbol text (its first bytes, then all of it), then
/// key order.
struct OrderRow {
    event: u32,
    /// Into the sums: key × events + the event's slot.
    index: u32,
    sort_period: u64,
    period: u64,
    text: TextPrefix,
}

/// The first 16 bytes of a shown text, zero-padded, as two big-endian
/// numbers: unequal prefixes order as the texts do, since a symbol's text
/// holds no NUL byte (names come from C strings: ELF and DWARF string
/// tables, kallsyms, perf maps); equal ones say nothing.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord)]
struct TextPrefix(u64, u64);

impl TextPrefix {
    fn of<'b>(bytes: impl Iterator<Item = &'b u8>) -> TextPrefix {
        let mut b = [0u8; 16];
        for (d, s) in b.iter_mut().zip(bytes) {
            *d = *s;
        }
        let (hi, lo) = b.split_at(8);
        let word = |w: &[u8]| w.iter().fold(0u64, |n, &x| n << 8 | u64::from(x));
        TextPrefix(word(hi), word(lo))
    }
}

/// A row's symbol, as it is shown.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
enum Sym<'a> {
    /// A resolved name.
    Name(&'a str),
    /// A function inlined at an unwound frame: `name (inlined)`.
    Inlined(&'a str),
    /// An unresolved address, as perf prints it ([`address_text`]):
    /// hundreds of thousands of them on system-wide captures, formatted
    /// only for the rows printed.
    Address(u64),
    /// No symbol ([`SortKey::Dso`]).
    Empty,
}

impl Sym<'_> {
    /// The first bytes of the shown text ([`TextPrefix`]).
    fn text_prefix(&self) -> TextPrefix {
        match self {
            Sym::Name(s) => TextPrefix::of(s.as_bytes().iter()),
            Sym::Inlined(s) => TextPrefix::of(s.as_bytes().iter().chain(b" (inlined)")),
            Sym::Address(a) => TextPrefix::of(address_text(*a).iter()),
            Sym::Empty => TextPrefix::of([].iter()),
        }
    }

    /// Orders as the shown texts do.
    fn cmp_text(&self, other: &Sym<'_>) -> std::cmp::Ordering {
        match (self, other) {
            (Sym::Name(a), Sym::Name(b)) => a.cmp(b),
            // Sixteen hex digits after `0x`, and 0 as sixteen zeros
            // (before any `0x`): the order of the numbers.
            (Sym::Address(a), Sym::Address(b)) => a.cmp(b),
            // Names beside addresses (hundreds of thousands of rows of
            // equal sums on system-wide captures): compared without
            // allocating.
            (Sym::Name(a), Sym::Address(b)) => a.as_bytes().cmp(&address_text(*b)[..]),
            (Sym::Address(a), Sym::Name(b)) => address_text(*a)[..].cmp(b.as_bytes()),
            _ => self.to_string().cmp(&other.to_string()),
        }
    }
}

impl std::fmt::Display for Sym<'_> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            Sym::Name(s) => f.write_str(s),
            Sym::Inlined(s) => write!(f, "{s} (inlined)"),
            // Hex digits only: the bytes are ASCII.
            Sym::Address(a) => f.write_str(std::str::from_utf8(&address_text(*a)).unwrap_or("")),
            Sym::Empty => Ok(()),
        }
    }
}

/// The row key of a location resolved to `dso` and `symbol` (at `addr`):
/// an unresolved one is named by the address perf shows (`show` for a
/// callchain entry). No DSO when rows are not per DSO.
fn row_key<'a>(
    dso: &'a Arc<str>,
    symbol: Option<&'a Arc<str>>,
    addr: u64,
    show: Option<u64>,
    sort: SortKey,
) -> (Option<&'a Arc<str>>, KeySym<'a>) {
    let sym = match symbol {
        Some(s) => KeySym::Name(s),
        None => KeySym::Address(show.unwrap_or(addr)),
    };
    match sort {
        SortKey::DsoSym => (Some(dso), sym),
        SortKey::Sym => (None, sym),
        SortKey::Dso => (Some(dso), KeySym::Empty),
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

/// A row's symbol ([`Row::symbol`]); `Display` shows it as perf does.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub enum Symbol {
    /// A resolved name.
    Name(Arc<str>),
    /// A function inlined at an unwound frame, shown `name (inlined)`.
    Inlined(Arc<str>),
    /// An unresolved address, shown as perf prints it (`0x` and sixteen
    /// hex digits; 0 as sixteen zeros).
    Address(u64),
    /// No symbol ([`SortKey::Dso`]).
    #[default]
    Empty,
}

impl std::fmt::Display for Symbol {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        self.view().fmt(f)
    }
}

impl Symbol {
    fn view(&self) -> Sym<'_> {
        match self {
            Symbol::Name(s) => Sym::Name(s),
            Symbol::Inlined(s) => Sym::Inlined(s),
            Symbol::Address(a) => Sym::Address(*a),
            Symbol::Empty => Sym::Empty,
        }
    }
}

/// A delivered (event, period) sample as the read keeps it: its own
/// location's ticket (an id once the read is done) and its callchain's
/// leaf-most ticket. 24 bytes, as a [`Group`], which it becomes in place.
struct Sample {
    event: u32,
    leaf: u32,
    /// [`NONE`] without callchain (or without `--children`).
    chain: u32,
    period: u64,
}

/// One key's sums for one event.
#[derive(Default, Clone, Copy)]
struct Acc {
    samples: u64,
    period: u64,
    total_samples: u64,
    total_period: u64,
    unresolved_samples: u64,
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn addresses_print_and_order_as_perf_text() {
        for a in [0u64, 1, 0xabc, 0x7fff_1234_5678, u64::MAX] {
            let text = if a == 0 {
                "0".repeat(16)
            } else {
                format!("{a:#018x}")
            };
            assert_eq!(Symbol::Address(a).to_string(), text);
            for name in ["", "0", "0x", "0x0000ffff", "main", "0000000000000000x"] {
                assert_eq!(
                    Sym::Name(name).cmp_text(&Sym::Address(a)),
                    name.cmp(text.as_str()),
                    "{name} vs {text}"
                );
                assert_eq!(
                    Sym::Address(a).cmp_text(&Sym::Name(name)),
                    text.as_str().cmp(name)
                );
            }
        }
    }

    #[test]
    fn text_prefixes_order_as_the_texts_when_they_differ() {
        let syms = [
            Sym::Empty,
            Sym::Name(""),
            Sym::Name("a"),
            Sym::Name("ab"),
            Sym::Name("abcdefgh"),
            Sym::Name("abcdefghi"),
            Sym::Name("abcdefghijklmnop"),
            Sym::Name("abcdefghijklmnopq"),
            Sym::Name("abcdefghijklmnoz"),
            Sym::Name("0x00007f"),
            Sym::Name("\u{e9}t\u{e9}"),
            Sym::Inlined("abc"),
            Sym::Inlined("abcdefghijklmnop"),
            Sym::Address(0),
            Sym::Address(0x7f00_0000_0010),
            Sym::Address(0x7f00_0000_0020),
            Sym::Address(0x7f00_0000_1000),
            Sym::Address(u64::MAX),
        ];
        for a in &syms {
            for b in &syms {
                let text = a.to_string().cmp(&b.to_string());
                assert_eq!(a.cmp_text(b), text, "{a} vs {b}");
                let (pa, pb) = (a.text_prefix(), b.text_prefix());
                if pa != pb {
                    assert_eq!(pa.cmp(&pb), text, "{a} vs {b}");
                } else {
                    // Equal prefixes: texts equal for 16 bytes (or all).
                    let (ta, tb) = (a.to_string(), b.to_string());
                    let n = |t: &str| t.len().min(16);
                    assert_eq!(
                        ta.as_bytes()[..n(&ta)],
                        tb.as_bytes()[..n(&tb)],
                        "{a} vs {b}"
                    );
                }
            }
        }
    }
}
