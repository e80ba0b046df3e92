//! Converting one capture into a dataset's `capture=<id>/` folder.
//!
//! Records are read once, in time order. Samples, their read values,
//! branch entries and raw data and the sideband are streamed into their
//! tables as they come; only the interned stacks and locations (and the
//! distinct data_src values) are kept until the end, when the locations
//! are symbolized, each DSO once, in parallel, and the frames, stacks,
//! DSOs, events and capture tables are written. Under a memory limit
//! (`Options::stack_memory`) the stacks and locations are instead written
//! whenever they reach it, the locations symbolized then, as the capture
//! is still being read.

mod columns;
mod data_src;
mod dsos;
mod frames;
mod meta;
mod read_values;
mod sample_columns;
mod samples;
mod schema;
mod sideband;
mod stack_memo;
mod stacks;
mod warm;

use std::path::{Path, PathBuf};
use std::sync::Arc;

use perfq_ids::TicketBook;
use perfq_reader::{Capture, Mode, RawRecord, RecordData, ReleaseBehind, SampleId};
use perfq_stream::{Flow, Locate, Located, Locating, Notes, Own, Read, Sink, Stream, Tracker};
use perfq_symbolize::{Config, Location, Symbolizer};

use crate::{CaptureWriter, Error};
use frames::{Frames, FramesThread};
use samples::{SampleRow, SampleTables, Segments};
use sideband::Sideband;
use warm::Warmer;

/// How to convert.
#[derive(Clone, Debug, Default)]
pub struct Options {
    /// Replace a capture already in the dataset.
    pub force: bool,
    /// Where symbols come from; `None` writes frames without names (and
    /// stores `--call-graph dwarf` samples' recorded kernel chain only,
    /// as there are no binaries to unwind the user stack with).
    pub symbols: Option<Config>,
    /// At most about this many bytes of stack tree and distinct locations
    /// while converting; past it the stacks and locations so far are
    /// written and interning starts afresh, so that memory stays flat
    /// however long the capture (a stack or location met on both sides of
    /// a cut then has two ids). `None`: no limit, each distinct stack and
    /// location once.
    pub stack_memory: Option<u64>,
    /// The capture's name in the capture table (`source_path`) where its
    /// file is not it: an archive member's, `ARCHIVE!MEMBER`. `None`: the
    /// file's absolute path.
    pub source: Option<String>,
    /// Whether the read_values table gets its rows.
    pub read_values: ReadValues,
}

/// Whether a conversion writes the rows of the read_values table (one a
/// value of each sample's group read).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub enum ReadValues {
    /// Every value: a dataset that is kept, for any query.
    #[default]
    Rows,
    /// The table without rows, for a dataset made for one command that
    /// takes a sample's member deltas from the samples table's `m0..m15`
    /// alone (`perfq topdown` on a file with `--no-cache`). On a top-down
    /// capture, about ten values a sample, those rows are the largest
    /// table and much of the conversion's work; the command never reads
    /// them.
    Empty,
}

/// What a conversion wrote.
#[derive(Debug)]
pub struct Converted {
    /// The capture's folder in the dataset.
    pub dir: PathBuf,
    /// Rows of the samples table.
    pub samples: u64,
    /// What was odd about the capture (also in the capture table).
    pub warnings: Vec<String>,
    /// What could not be read ([`perfq_stream::Damage::summary`], also
    /// the capture table's `read_error`): everything else was converted
    /// and is in the dataset.
    pub damage: Option<String>,
}

/// What `convert` did with a capture.
#[derive(Debug)]
pub enum Conversion {
    /// The capture was converted.
    Written(Converted),
    /// The dataset already holds this capture (the same bytes, perhaps
    /// from another path) and `force` was not set: nothing was written.
    Present {
        /// The capture's folder.
        dir: PathBuf,
    },
}

/// Converts the capture at `path` into `dataset`, unless the dataset holds
/// it already. `progress` is called now and then with (bytes read,
/// capture size).
pub fn convert(
    path: &Path,
    dataset: &Path,
    opt: &Options,
    progress: &mut dyn FnMut(u64, u64),
) -> Result<Conversion, Error> {
    let capture = Capture::open(path)?;
    let mut stream = Stream::new(&capture);
    let symbolizer = start_symbolizer(opt, &capture, &stream);
    let hash = file_hash(&capture);
    let id = format!("{hash:016x}");
    let w = match CaptureWriter::create(dataset, &id, opt.force) {
        Err(Error::Exists(dir)) => return Ok(Conversion::Present { dir }),
        w => w?,
    };
    let mut reading = Reading::new(&w, &capture, symbolizer.clone(), opt)?;
    let mut locating = Locating::new(LOCATE);
    let mut tickets = TicketBook::default();
    stream.run(&mut locating, &mut tickets, &mut reading, progress)?;
    // The cache of located frames goes before the locations are
    // symbolized, the conversion's peak of memory.
    perfq_ids::drop_beside(locating);
    let read = stream.finish();
    let samples = reading.tables.count;
    let done_with = reading.finish(&w, &read, tickets, symbolizer.as_deref())?;
    meta::write_events(&w, &capture)?;
    meta::write_pmus(&w, &capture)?;
    let Notes { warnings, damage } = read.notes();
    meta::write_capture(
        &w,
        &capture,
        &meta::Summary {
            id: &id,
            hash,
            source: path,
            source_name: opt.source.as_deref(),
            stats: &read.stats,
            decode_errors: read.damage.undecoded_samples.count,
            damage: damage.as_deref(),
            warnings: &warnings,
        },
    )?;
    // What was read before an error is kept; the error is reported.
    let dir = w.finish()?;
    perfq_ids::drop_beside((capture, read.tracker, symbolizer, done_with));
    Ok(Conversion::Written(Converted {
        dir,
        samples,
        warnings,
        damage,
    }))
}

/// The symbolizer of a conversion with symbols: kernel symbols start
/// loading on a thread of their own before the capture is hashed, so that
/// the two overlap (a capture the dataset already holds then loads them
/// for nothing: milliseconds from perf's saved copy, more from
/// /proc/kallsyms, against the hash's reading of the whole file).
fn start_symbolizer(
    opt: &Options,
    capture: &Capture,
    stream: &Stream<'_>,
) -> Option<Arc<Symbolizer>> {
    opt.symbols.as_ref().map(|c| {
        // Frames carry inline chains and file:line.
        let config = Config {
            inline: true,
            ..c.clone()
        };
        Arc::new(Symbolizer::new(
            &config,
            stream.tracker().kernel_build_id(),
            capture.meta().os_release.as_deref(),
        ))
    })
}

/// What a conversion locates of each sample: its stack, its own address
/// (the stack's leaf when it is the same frame) and its branch endpoints,
/// a location met before in the same mappings keeping its number.
const LOCATE: Locate = Locate {
    stack: true,
    own: Own::AfterStack,
    branches: true,
    cache: true,
    expand_unwound: false,
};

/// The read's side of a conversion: each record into its tables, each
/// sample's frames numbered by ticket (the samples thread gives the
/// locations their ids, see `samples`).
struct Reading {
    frames_table: FramesThread,
    tables: SampleTables,
    sideband: Sideband,
    warmer: Option<Warmer>,
    symbolizer: Option<Arc<Symbolizer>>,
    /// Whether stacks and locations are written in segments
    /// ([`Options::stack_memory`]).
    segments: bool,
}

impl Reading {
    /// The read of `capture` into `w`'s tables.
    fn new(
        w: &CaptureWriter,
        capture: &Capture,
        symbolizer: Option<Arc<Symbolizer>>,
        opt: &Options,
    ) -> Result<Self, Error> {
        let events = capture.events();
        let segments = opt.stack_memory.map(|bytes| Segments {
            bytes,
            locations: capture.header().mode == Mode::File,
        });
        Ok(Reading {
            frames_table: FramesThread::new(Frames::create(w, symbolizer.clone())?),
            tables: SampleTables::create(w, events, segments, opt.read_values)?,
            sideband: Sideband::create(w)?,
            warmer: symbolizer.clone().map(Warmer::start),
            symbolizer,
            segments: segments.is_some(),
        })
    }

    /// Once the capture is read: the samples, stacks, sideband, frames,
    /// DSOs and data sources written. Returns what is left to drop.
    fn finish(
        self,
        w: &CaptureWriter,
        read: &Read,
        mut tickets: TicketBook<Location>,
        symbolizer: Option<&Symbolizer>,
    ) -> Result<impl Send + 'static, Error> {
        let tracker = &read.tracker;
        let Reading {
            frames_table,
            mut tables,
            mut sideband,
            mut warmer,
            ..
        } = self;
        let data_src_values = std::mem::take(&mut tables.data_src);
        // The samples thread finishes the samples and writes the stacks
        // while this one symbolizes and writes the frames.
        let mut pending = tables.finish(&mut tickets)?;
        if read.damage.read_error.is_some() {
            sideband.unread(read.damage.unread_bytes)?;
        }
        sideband.finish()?;
        // The rest of the locations are symbolized here, once the
        // segments handed over are written.
        let mut frames_table = frames_table.finish()?;
        let mut kept = None;
        pending.locations(|locations| {
            if let Some(w) = warmer.take() {
                w.finish();
            }
            kept = Some(frames_table.write(tracker.dsos(), tracker.kernel_ref(), locations)?);
            Ok(())
        })?;
        frames_table.finish()?;
        dsos::write(w, tracker, symbolizer)?;
        pending.wait()?;
        let mut values: Vec<u64> = data_src_values.into_iter().collect();
        values.sort_unstable();
        data_src::write(w, values.into_iter())?;
        Ok(kept)
    }
}

impl Sink for Reading {
    type Key = Location;
    type Numbers = TicketBook<Location>;
    type Error = Error;

    fn sideband(
        &mut self,
        tracker: &Tracker,
        r: &RawRecord<'_>,
        data: &RecordData<'_>,
        sample_id: Option<SampleId>,
    ) -> Result<(), Error> {
        let event = r.event.index().map(|e| e.0 as u64);
        self.sideband.push(r.time, event, data, sample_id)?;
        if let Some(w) = self.warmer.as_mut() {
            w.offer(tracker.dsos());
        }
        Ok(())
    }

    fn lost(&mut self, r: &RawRecord<'_>) -> Result<(), Error> {
        self.sideband.lost(r)
    }

    fn off_cpu(&mut self, interval: &perfq_stream::off_cpu::Interval) -> Result<(), Error> {
        self.sideband.off_cpu(interval)
    }

    fn symbolizer(&self) -> Option<&Symbolizer> {
        self.symbolizer.as_deref()
    }

    fn sample(
        &mut self,
        located: &Located<'_, '_, '_>,
        tickets: &mut TicketBook<Location>,
    ) -> Result<Flow, Error> {
        let view = located.view();
        // Off-CPU intervals name samples by the stream's numbers.
        debug_assert_eq!(view.number(), self.tables.count, "sample ids");
        let tracker = view.tracker();
        if let Some(w) = self.warmer.as_mut() {
            w.located(tickets.fresh(), tracker.dsos());
        }
        let row = SampleRow {
            event: view.event(),
            period: view.period(),
            tid: located.chain_tid(),
            frames: located.stack(),
            leaf_frame: located.own(),
            branch_frames: located.branches(),
            members: view.members(),
        };
        self.tables.push(view.sample(), row, tickets)?;
        if self.segments {
            if let Some(segment) = self.tables.segment() {
                self.frames_table.write(tracker.at(), segment)?;
            }
        }
        Ok(Flow::Go)
    }
}

/// The id the capture at `path` has in a dataset (`capture=<id>`): the
/// hash of its bytes, as [`convert`] gives it.
pub fn capture_id(path: &Path) -> Result<String, Error> {
    let capture = Capture::open(path)?;
    Ok(format!("{:016x}", file_hash(&capture)))
}

/// xxh3-64 of the capture's bytes, read a window at a time so that the
/// pages read are handed back as it goes.
fn file_hash(capture: &Capture) -> u64 {
    let mut h = xxhash_rust::xxh3::Xxh3::new();
    let mut done = 0u64;
    for chunk in capture.bytes().chunks(ReleaseBehind::EVERY as usize) {
        h.update(chunk);
        done += chunk.len() as u64;
        capture.release_before(done);
    }
    h.digest()
}

/// Lowercase hex of a build id.
fn hex(bytes: &[u8]) -> String {
    use std::fmt::Write;
    bytes.iter().fold(String::new(), |mut s, b| {
        let _ = write!(s, "{b:02x}");
        s
    })
}
