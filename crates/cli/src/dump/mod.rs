//! `perfq dump`: every sample, every decoded field, in time order.

mod frame_arrow;
mod sample_arrow;
mod sample_csv;
mod sample_json;
mod sideband;
mod streamed;
mod symbolized;

pub use streamed::batches;

use crate::input::CaptureFile;
use std::fmt::Write as _;
use std::io::{IsTerminal, Write};

use perfq_reader::{Capture, EventRef, MemberDelta, RawRecord, RecordData, SampleId};
use perfq_stream::{
    Flow, Interner, Located, Locating, Location, SampleView, Sink, Stream, Take, Tracker,
};
use perfq_symbolize::{Config, FrameLookup, Symbolizer};
use serde_json::json;

use crate::damage::Policy;
use crate::progress::ReadBar;
use crate::Outcome;
use sample_csv::{write_csv, CSV_HEADER};
use sample_json::write_sample;
use symbolized::Symbols;

/// Formats of `perfq dump`.
#[derive(Clone, Copy, clap::ValueEnum)]
pub enum DumpFormat {
    /// One JSON object per line.
    Jsonl,
    /// Comma-separated values with a header line.
    Csv,
}

/// Which records `perfq dump` prints.
#[derive(Clone, Copy, PartialEq, Eq, clap::ValueEnum)]
pub enum DumpRecords {
    /// PERF_RECORD_SAMPLE only.
    Samples,
    /// Every record: samples and the sideband (mmap, comm, fork, exit, lost, ...).
    All,
}

pub fn run(
    file: &CaptureFile,
    format: DumpFormat,
    which: DumpRecords,
    symbols: Option<Config>,
    policy: Policy,
    out: &mut dyn Write,
) -> anyhow::Result<Outcome> {
    if which == DumpRecords::All && matches!(format, DumpFormat::Csv) {
        anyhow::bail!(
            "--records all needs --format jsonl: records other than samples have no CSV columns"
        );
    }
    let path = file.name.as_path();
    let capture = Capture::open(&file.path).map_err(|e| e.with_path(path))?;
    let (symbols, mut locations, locating) = match symbols {
        Some(config) => {
            let (symbols, locations) = Symbols::collect(&capture, &config)?;
            (Some(symbols), locations, Locating::new(symbolized::LOCATE))
        }
        None => (None, Interner::new(), Locating::default()),
    };
    if let DumpFormat::Csv = format {
        writeln!(out, "{CSV_HEADER}")?;
    }
    // Lines on a terminal show the progress themselves; a bar between them
    // would only garble them.
    let bar = if std::io::stdout().is_terminal() {
        ReadBar::hidden()
    } else {
        ReadBar::new(&path.display().to_string())
    };
    let mut stream = Stream::new(&capture);
    let mut printing = Printing {
        capture: &capture,
        format,
        which,
        symbols,
        frames: Vec::new(),
        line: Vec::with_capacity(4096),
        out,
    };
    stream.run(
        &mut { locating },
        &mut locations,
        &mut printing,
        &mut |done, total| bar.update(done, total),
    )?;
    bar.finish();
    let problem = policy.say(&path.display().to_string(), &stream.finish().notes());
    Ok(Outcome::from_problems(problem))
}

/// The output's read of `perfq dump`: a line per record.
struct Printing<'c, 'o> {
    capture: &'c Capture,
    format: DumpFormat,
    which: DumpRecords,
    symbols: Option<Symbols>,
    frames: Vec<(FrameLookup, u32)>,
    line: Vec<u8>,
    out: &'o mut dyn Write,
}

impl Sink for Printing<'_, '_> {
    type Key = Location;
    type Numbers = Interner<Location>;
    type Error = anyhow::Error;

    fn take(&mut self, view: &SampleView<'_, '_>) -> Take {
        symbolized::take(self.symbols.as_ref(), view)
    }

    fn symbolizer(&self) -> Option<&Symbolizer> {
        self.symbols.as_ref().map(|s| &s.symbolizer)
    }

    fn sideband(
        &mut self,
        _tracker: &Tracker,
        r: &RawRecord<'_>,
        data: &RecordData<'_>,
        sample_id: Option<SampleId>,
    ) -> anyhow::Result<()> {
        if self.which == DumpRecords::All {
            let record = sideband::record_json(self.capture, r, data, sample_id);
            serde_json::to_writer(&mut *self.out, &record)?;
            writeln!(self.out)?;
        }
        Ok(())
    }

    fn unknown_event(&mut self, r: &RawRecord<'_>) -> anyhow::Result<()> {
        let offset = format!("{:#x}", r.offset.0);
        let id = match r.event {
            EventRef::UnknownId(id) => Some(id),
            _ => None,
        };
        match self.format {
            DumpFormat::Jsonl => {
                serde_json::to_writer(
                    &mut *self.out,
                    &json!({"offset": offset, "event": null, "unknown_id": id, "time": r.time}),
                )?;
                writeln!(self.out)?;
            }
            DumpFormat::Csv => writeln!(
                self.out,
                "{offset},,{},,,,,,,{},,,,,,,,,",
                r.time.map(|t| t.to_string()).unwrap_or_default(),
                id.map(|i| i.to_string()).unwrap_or_default()
            )?,
        }
        Ok(())
    }

    fn sample(
        &mut self,
        located: &Located<'_, '_, '_>,
        _: &mut Interner<Location>,
    ) -> anyhow::Result<Flow> {
        let (capture, view) = (self.capture, located.view());
        let name = capture
            .events()
            .get(view.event())
            .map_or("", |e| e.name.as_str());
        symbolized::frames_of(located, &mut self.frames);
        let offset = view.record().offset.0;
        let (sample, members) = (view.sample(), view.members());
        match self.format {
            DumpFormat::Jsonl => {
                self.line.clear();
                let resolved = self.symbols.as_ref().map(|s| &s.resolved);
                write_sample(
                    &mut self.line,
                    offset,
                    name,
                    sample,
                    members,
                    capture,
                    resolved.map(|r| (r, self.frames.as_slice())),
                );
                self.line.push(b'\n');
                self.out.write_all(&self.line)?;
            }
            DumpFormat::Csv => write_csv(
                self.out,
                &format!("{offset:#x}"),
                name,
                sample,
                members,
                capture,
            )?,
        }
        Ok(Flow::Go)
    }
}

fn hex(v: u64) -> String {
    format!("{v:#x}")
}

fn cpumode(misc: u16) -> &'static str {
    match misc & perfq_reader::misc::CPUMODE_MASK {
        perfq_reader::misc::KERNEL => "kernel",
        perfq_reader::misc::USER => "user",
        perfq_reader::misc::HYPERVISOR => "hypervisor",
        perfq_reader::misc::GUEST_KERNEL => "guest_kernel",
        perfq_reader::misc::GUEST_USER => "guest_user",
        _ => "unknown",
    }
}

fn member_name<'c>(capture: &'c Capture, m: &MemberDelta) -> Option<&'c str> {
    m.event
        .and_then(|e| capture.events().get(e))
        .map(|e| e.name.as_str())
}

fn bytes_hex(b: &[u8]) -> String {
    let mut s = String::with_capacity(b.len() * 2);
    for x in b {
        let _ = write!(s, "{x:02x}");
    }
    s
}
