//! Per-function self and total (inclusive) samples and periods of one
//! capture, as `perf report --no-children` / `--children` compute them:
//! the aggregation behind `perfq report`. Samples are counted as perf
//! delivers them ([`perfq_stream::SampleView::delivered`]: a group read
//! once per member whose counter moved, its delta as period), as the
//! views count them too.
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
//! use perfq_report::Options;
//!
//! let r = perfq_report::run("perf.data".as_ref(), &Options { children: true, ..Options::default() })?;
//! for row in &r.rows {
//!     let event = &r.events[row.event as usize];
//!     let (dso, symbol) = (r.dso(row), r.symbol(row));
//!     println!("{} {dso} {symbol} {} of {}", event.name, row.total_period, event.period);
//! }
//! # Ok::<(), perfq_report::Error>(())
//! ```
#![deny(missing_docs)]

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::sync::Arc;

use perfq_reader::Capture;
use perfq_stream::{Consumer, Notes, SampleView, Stream, Tracker};
use perfq_symbolize::{
    Config, FrameLookup, Location, Placed, RecentChains, Symbolizer, Unresolved,
};
use rayon::prelude::*;

mod chain_tree;
mod error;
mod location_ids;
mod row_keys;

pub use error::Error;

use chain_tree::{total_sums, ChainTree, Group, NONE};
use location_ids::{with_location_ids, LocKey, LocationIds, Tickets};
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
    /// Bytes of frames looked up and samples a pass of the read holds at
    /// most (each frame 8 bytes, each sample 24), bounding what a report
    /// holds whatever the capture's length; `None`: 16 MiB. The rows are
    /// the same for any value: each pass's locations are resolved and its
    /// samples summed before the next pass is read.
    pub pass_memory: Option<u64>,
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

/// One row: an event's samples of one function (or DSO, or symbol). Its
/// names are the report's ([`Report::dso`], [`Report::symbol`]): a
/// system-wide capture has millions of rows (every unresolved address is
/// one), each kept in 64 bytes.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Row {
    /// → [`Report::events`].
    pub event: u32,
    /// The row's (DSO, symbol) in the report's keys.
    key: u32,
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
    /// The first bytes of the symbol's text, by which rows are sorted.
    text: TextPrefix,
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
    /// What the read said of the capture: its warnings, and what could
    /// not be read (the rows count everything else).
    pub read: Notes,
    /// The rows' names.
    keys: RowKeys,
    /// By key: why its first location met is unresolved.
    key_reason: Vec<Option<Unresolved>>,
    sort: SortKey,
}

impl Report {
    /// Samples delivered, all events together.
    pub fn samples(&self) -> u64 {
        self.events.iter().map(|e| e.samples).sum()
    }

    /// The row's DSO: its short name, `[unknown]` for an address nothing
    /// maps (empty with [`SortKey::Sym`]).
    pub fn dso(&self, row: &Row) -> &str {
        self.keys.dso(row.key as usize)
    }

    /// The row's symbol; unresolved, the address, which it shows as perf
    /// prints it (empty with [`SortKey::Dso`]). Names are shared with the
    /// rows of the other events, and an address is formatted only when
    /// shown.
    pub fn symbol(&self, row: &Row) -> Symbol {
        self.keys.symbol(row.key as usize)
    }

    /// Why the row's symbol is unresolved
    /// ([`perfq_symbolize::Unresolved::name`]); never given for DSO rows,
    /// which may mix resolved and unresolved addresses.
    pub fn unresolved_reason(&self, row: &Row) -> Option<&'static str> {
        match self.sort {
            SortKey::Dso => None,
            _ => self
                .key_reason
                .get(row.key as usize)?
                .as_ref()
                .map(|r| r.name()),
        }
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
    if let Some(name) = &opt.event {
        if !events.list().iter().any(|e| &e.name == name) {
            return Err(Error::NoEvent {
                name: name.clone(),
                path: PathBuf::from(path),
            });
        }
    }
    let mut stream = Stream::new(&capture);
    // Unique locations, numbered on a second thread (`location_ids`): the
    // read hands each over as a `LocKey` and keeps its ticket. Unresolved,
    // perf shows a sample's own ip as its offset in the DSO but a
    // callchain entry as the address itself (for return addresses: the
    // return address, though it is looked up at pc - 1, the call), so
    // chain entries carry the address to show. Frames perf unwound from a
    // DWARF user stack also count every function inlined at their address
    // ("name (inlined)"): those are expanded.
    //
    // The read goes in passes ([`Pass`]) of at most `pass_memory` bytes
    // of tickets and samples: each pass's locations are resolved, its
    // samples added to the sums and everything else of it dropped before
    // the next pass reads on, so that memory follows the rows reported,
    // not the capture's length.
    let symbolizer = Symbolizer::new(
        &opt.symbols,
        stream.tracker().kernel_build_id(),
        capture.meta().os_release.as_deref(),
    );
    let sums = Sums::new(opt, events.list());
    let ((read, pass, mut sums, mut symbolizer), last) = with_location_ids(|tickets| {
        let mut reading = Reading {
            children: opt.children,
            pass_memory: opt.pass_memory.unwrap_or(PASS_MEMORY),
            pass: Pass::default(),
            sums,
            symbolizer,
            tickets,
        };
        let Ok(()) = stream.run(&mut reading, progress);
        let Reading {
            pass,
            sums,
            symbolizer,
            ..
        } = reading;
        (stream.finish(), pass, sums, symbolizer)
    });
    sums.add(pass, last, &mut symbolizer, &read.tracker);
    let mut report = sums.report();
    report.notes = symbolizer.notes();
    report.read = read.notes();
    Ok(report)
}

/// The read's side of a report: each sample's locations handed over by
/// ticket, its deliveries kept, and a pass summed when it is full.
struct Reading<'o, 't> {
    children: bool,
    pass_memory: u64,
    pass: Pass,
    sums: Sums<'o>,
    symbolizer: Symbolizer,
    tickets: &'t mut Tickets,
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
        let tracker = view.tracker();
        let leaf = tickets.push((
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
/// on the system-wide build capture, about as much again.
///
/// On that capture (591 K samples; 4.5 M tickets with `--children`) and
/// its 4× longer recording, against one pass for the whole capture: peak
/// RSS of `report --children` 229 → 172 MB and 643 → 316 MB (with rows
/// of 64 bytes; the 4× capture's 2.5 M rows are now most of it), time
/// +5% and +7%; `report` 117 → 121 MB and 195 → 145 MB, time the same
/// and +20% (locations met again in each pass are resolved again). With
/// passes of 2, 4 and 8 M tickets the 4× capture's peak stayed at 416 MB
/// while rows were 104 bytes: passes alone did not bound it.
const PASS_MEMORY: u64 = 16 << 20;

/// Keys whose sums are made into rows at a time (2.5 MB of sums).
const SUMS_AT_A_TIME: usize = 1 << 16;

/// What one pass of the read holds until it is summed.
#[derive(Default)]
struct Pass {
    /// Per delivered (event, period) sample: its own location (a ticket
    /// until the pass ends, then a location id) and, for --children, its
    /// callchain as the leaf-most ticket of the tree of callchain tickets
    /// (`chain_tree`).
    samples: Vec<Sample>,
    tree: ChainTree,
    /// By thread: its previous callchain, as this pass's tickets.
    recent: RecentChains,
    /// Whether a frame's inlining levels count (DWARF-unwound frames).
    any_expanded: bool,
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
                tickets.push((l, Some(f.addr), expand))
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

/// The sums of the passes read so far, by row key and event: all that
/// stays from one pass to the next besides the symbolizer's binaries.
struct Sums<'o> {
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
    /// Own samples left unresolved, by reason.
    unresolved: BTreeMap<&'static str, u64>,
}

impl<'o> Sums<'o> {
    fn new(opt: &'o Options, events: &[perfq_reader::Event]) -> Self {
        Sums {
            opt,
            keys: RowKeys::new(),
            key_reason: Vec::new(),
            slot_of_event: vec![None; events.len()],
            event_of_slot: Vec::new(),
            acc: Vec::new(),
            totals: events
                .iter()
                .map(|e| EventTotal {
                    name: e.name.clone(),
                    ..EventTotal::default()
                })
                .collect(),
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
            let wanted = match &self.opt.event {
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
    fn add(
        &mut self,
        pass: Pass,
        ids: LocationIds,
        symbolizer: &mut Symbolizer,
        tracker: &Tracker,
    ) {
        let Pass {
            mut samples,
            mut tree,
            recent,
            any_expanded,
        } = pass;
        // The read's lookup maps are done with: their memory (a few
        // hundred bytes per location on system-wide captures) goes before
        // resolving and summing need theirs.
        drop(recent);
        let LocationIds {
            keys: locs,
            ticket_ids,
        } = ids;
        // Samples' own tickets become location ids; callchain tickets stay
        // (the tree's nodes), looked up in `ticket_ids` when summing.
        samples
            .par_iter_mut()
            .for_each(|s| s.leaf = ticket_ids[s.leaf as usize]);
        let children = self.opt.children;
        let ticket_ids = if children {
            ticket_ids
        } else {
            drop(ticket_ids);
            Vec::new()
        };
        // Vectors grown by doubling give back their slack before the
        // resolutions are made.
        samples.shrink_to_fit();
        tree.shrink_to_fit();
        symbolizer.set_inline(any_expanded);
        let symbolizer = &*symbolizer;
        // Locations are resolved a slice at a time, each slice's
        // resolutions (over 100 bytes per location) dropped once its row
        // keys are taken: the keys hold the names from then on (shared,
        // not copied: an `Arc` of the DSO's and the symbol's names).
        let sort = self.opt.sort;
        let n = locs.len();
        // By location: the id of its row key, why it is unresolved, and
        // for frames whose inlining levels count, the levels' names
        // (`None`: the function itself).
        let mut loc_key: Vec<u32> = Vec::with_capacity(n);
        let mut loc_reason: Vec<Option<Unresolved>> = Vec::with_capacity(n);
        let mut levels: Vec<InlineLevels> = Vec::new();
        // Each slice's row keys are taken while the next slice is resolved
        // (one core each: taking keys is a hash probe per location,
        // resolving is spread over DSOs).
        let slices: Vec<&[LocKey]> = locs.chunks(RESOLVE_SLICE).collect();
        let resolve = |slice: &[LocKey]| {
            let locations: Vec<Location> = slice.iter().map(|k| k.0).collect();
            symbolizer.resolve_all(tracker, &locations)
        };
        let mut next = slices.first().map(|s| resolve(s));
        for (c, slice) in slices.iter().enumerate() {
            let Some(resolved) = next.take() else { break };
            let take_keys = || {
                // Locations no mapping contains (most of a system-wide
                // capture's) differ only in their address: their
                // resolution is not made one by one, only their key.
                let unmapped = resolved.unmapped(0);
                for (i, r) in resolved.iter_placed().enumerate() {
                    let loc = c * RESOLVE_SLICE + i;
                    let (_, show, expand) = slice[i];
                    let r = match r {
                        Placed::Mapped(r) => r,
                        Placed::Unmapped(addr) => {
                            let reason = &unmapped.reason;
                            loc_key.push(self.key(&unmapped.dso, None, addr, show, reason));
                            loc_reason.push(reason.clone());
                            continue;
                        }
                    };
                    loc_key.push(self.key(&r.dso, r.symbol.as_ref(), r.addr, show, &r.reason));
                    loc_reason.push(r.reason.clone());
                    if expand && !r.inlined.is_empty() && r.symbol.is_some() {
                        // perf's `append_inlines` names each level; where
                        // the DWARF name is the symbol's (and per DSO,
                        // always) it is the function's own row.
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
        drop(locs);
        // The keys a callchain entry counts for: its own, or for expanded
        // frames one per inlining level ("name (inlined)").
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
                            Some(name) => {
                                let why = &loc_reason[loc];
                                self.key_of(dso.as_ref(), KeySym::Inlined(&name), why)
                            }
                        });
                    }
                }
            }
        }
        chain_key_start.push(chain_keys.len() as u32);
        // Every slot sums every key met so far.
        let nkeys = self.keys.len();
        for a in &mut self.acc {
            a.resize(nkeys, Acc::default());
        }
        // Self sums per sample; for --children each sample also becomes a
        // group of one (in place), for the sums over the tree.
        let groups: Vec<Group> = samples
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
            .collect();
        if children {
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
            let acc = &mut self.acc;
            total_sums(groups, &tree, nkeys, keys_of, |k, slot, n, p| {
                let a = &mut acc[slot][k];
                a.total_samples += n;
                a.total_period = a.total_period.wrapping_add(p);
            });
        }
    }

    /// The report of the sums: its rows in perf's order.
    fn report(self) -> Report {
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
        // Sorting runs on every core (a fifth of `--children` on a
        // system-wide capture's 600 K rows). The key makes every
        // comparison total: the order is the same however split.
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

/// The first 16 bytes of a shown text, zero-padded, as two big-endian
/// numbers: unequal prefixes order as the texts do, since a symbol's text
/// holds no NUL byte (names come from C strings: ELF and DWARF string
/// tables, kallsyms, perf maps); equal ones say nothing.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, PartialOrd, Ord)]
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

/// A row's symbol ([`Report::symbol`]); `Display` shows it as perf does.
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

impl Acc {
    /// Whether any sample counted here: the key has a row for the event.
    fn has_samples(&self) -> bool {
        self.period > 0 || self.total_period > 0 || self.samples > 0
    }
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
