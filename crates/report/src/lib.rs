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
use perfq_stream::{Locating, Notes, Stream};
use perfq_symbolize::{Config, Symbolizer, Unresolved};

mod chain_tree;
mod error;
mod loc_key;
mod numbering_thread;
mod off_cpu;
mod pass_keys;
mod reading;
mod row_keys;
mod shown;
mod summing_thread;
mod sums;

pub use error::Error;

use numbering_thread::with_location_ids;
use off_cpu::Pending;
use reading::{Counting, Reading};
use row_keys::RowKeys;
use shown::{Sym, TextPrefix};
use summing_thread::summing_beside;
use sums::Sums;

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
    /// Only the samples of these processes (ids sorted), as `perf report
    /// --pid`; all when `None`.
    pub pids: Option<Vec<u32>>,
    /// Where symbols come from.
    pub symbols: Config,
    /// Bytes of frames looked up and samples a pass of the read holds at
    /// most (each frame 8 bytes, each sample 24), bounding what a report
    /// holds whatever the capture's length; `None`: 16 MiB. Each pass is
    /// summed while the next one is read, so that two are held at most.
    /// The rows are the same for any value: passes are summed one at a
    /// time, in order.
    pub pass_memory: Option<u64>,
    /// Time off CPU instead of samples: each off-CPU interval
    /// ([`perfq_stream::off_cpu`]) counts its length, in nanoseconds, as
    /// the period of the sample that gives it its stack. The report's
    /// events are then the states the threads waited in
    /// ([`perfq_stream::off_cpu::State::NAMES`]), and [`Options::event`]
    /// is not used. The sums are the views `off_cpu_function_self` and
    /// `off_cpu_function_total`'s, held equal by a test as `report`'s are
    /// to `function_self` and `function_total`'s.
    pub off_cpu: bool,
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
    /// With [`Options::off_cpu`], by event (state): the time of the
    /// intervals that have no stack (a thread off CPU since before the
    /// capture began), which no row counts.
    pub without_stack: Vec<u64>,
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
    let (sums, counting) = match opt.off_cpu {
        true => {
            let states = perfq_stream::off_cpu::State::NAMES.map(String::from);
            let pending = Counting::OffCpu(Pending::default());
            (Sums::new(opt, states, None), pending)
        }
        false => {
            let events = capture.events().list();
            if let Some(name) = &opt.event {
                if !events.iter().any(|e| &e.name == name) {
                    return Err(Error::NoEvent {
                        name: name.clone(),
                        path: PathBuf::from(path),
                    });
                }
            }
            let names = events.iter().map(|e| e.name.clone());
            (Sums::new(opt, names, opt.event.clone()), Counting::Samples)
        }
    };
    let first = read(&capture, opt, Read::new(sums, counting), progress)?;
    let notes = first.notes.clone();
    let (done, without_stack) = match first.counting {
        Counting::OffCpu(p) => {
            let (late, mut unstacked) = p.finish();
            let done = match late {
                // Intervals whose sample's pass was summed before they
                // ended: their time, on those samples, in a second read.
                Some(w) => {
                    let again = Read {
                        counting: Counting::Weights(w),
                        ..first
                    };
                    let again = read(&capture, opt, again, &mut |_, _| {})?;
                    if let Counting::Weights(w) = &again.counting {
                        (0..unstacked.len()).for_each(|s| unstacked[s] += w.unstacked[s]);
                    }
                    again
                }
                None => Read {
                    counting: Counting::Samples,
                    ..first
                },
            };
            (done, unstacked.to_vec())
        }
        _ => (first, Vec::new()),
    };
    let mut report = done.sums.report();
    report.notes = done.symbolizer.map_or_else(Vec::new, |s| s.notes());
    report.read = notes;
    report.without_stack = without_stack;
    Ok(report)
}

/// What a read sums into, and what it leaves for the next.
struct Read<'o> {
    sums: Sums<'o>,
    /// Made by the first read (it needs the capture's kernel), kept for a
    /// second one.
    symbolizer: Option<Symbolizer>,
    counting: Counting,
    /// What the read said of the capture.
    notes: Notes,
}

impl<'o> Read<'o> {
    fn new(sums: Sums<'o>, counting: Counting) -> Self {
        Read {
            sums,
            symbolizer: None,
            counting,
            notes: Notes::default(),
        }
    }
}

/// One read of `capture` into `into`'s sums.
fn read<'o>(
    capture: &Capture,
    opt: &Options,
    into: Read<'o>,
    progress: &mut dyn FnMut(u64, u64),
) -> Result<Read<'o>, Error> {
    let mut stream = Stream::new(capture);
    // Unique locations, numbered on a second thread (`numbering_thread`): the
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
    // samples added to the sums and everything else of it dropped while
    // the next pass is read, so that memory follows the rows reported,
    // not the capture's length.
    let symbolizer = into.symbolizer.unwrap_or_else(|| {
        Symbolizer::new(
            &opt.symbols,
            stream.tracker().kernel_build_id(),
            capture.meta().os_release.as_deref(),
        )
    });
    let mut counting = into.counting;
    if let Counting::OffCpu(p) = &mut counting {
        p.read_by(&stream);
    }
    // Each full pass is summed on a thread of its own while the next is
    // read (`summing_thread`); the last once the read is done.
    let ((read, counting, ran), sums) = summing_beside(into.sums, &symbolizer, |summing| {
        let ((read, pass, mut summing, counting, ran), last) = with_location_ids(|tickets| {
            let mut reading = Reading::new(opt, summing, &symbolizer, counting);
            let mut locating = Locating::new(reading::locate(opt));
            let ran = stream.run(&mut locating, tickets, &mut reading, progress);
            // The read's lookup maps are done with: their memory (a few
            // hundred bytes per location on system-wide captures) goes
            // before resolving and summing need theirs.
            drop(locating);
            let (pass, summing, counting) = reading.finish();
            (stream.finish(), pass, summing, counting, ran)
        });
        if ran.is_ok() {
            summing.add(pass, last, &read.tracker);
        }
        (read, counting, ran)
    });
    ran?;
    Ok(Read {
        sums,
        symbolizer: Some(symbolizer),
        counting,
        notes: read.notes(),
    })
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
