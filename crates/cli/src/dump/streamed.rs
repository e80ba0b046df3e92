//! `perfq dump`'s samples as Arrow batches, streamed (the Python module's
//! `perfq.samples`): a thread reads the capture and makes batches of
//! [`sample_arrow::ROWS`] rows, at most two ahead of the reader, so
//! memory is a few batches' whatever the capture's length. With symbols,
//! the locations are resolved first, in a read of their own, as `dump
//! --symbols` does. The read's warnings reach the answer's
//! [`Later`](crate::say::Later) before its last batch; under `--strict`,
//! damage ends the stream with an error after the rows read.

use std::sync::mpsc::{sync_channel, Receiver, SyncSender};

use perfq_query::arrow::datatypes::SchemaRef;
use perfq_query::arrow::error::ArrowError;
use perfq_query::arrow::record_batch::{RecordBatch, RecordBatchReader};
use perfq_reader::{Capture, EventRef, RawRecord};
use perfq_stream::{
    Flow, Interner, Interrupted, Located, Locating, Location, SampleView, Sink, Stream, Take,
};
use perfq_symbolize::{FrameLookup, Symbolizer};

use super::sample_arrow::{self, Batcher};
use super::symbolized::{self, Symbols};
use crate::damage::Policy;
use crate::input::CaptureFile;
use crate::say;
use crate::symbols::ResolvedSources;

/// Batches made ahead of the reader.
const AHEAD: usize = 2;

type Sent = Result<RecordBatch, ArrowError>;

/// The samples of `file`, a batch at a time; with `symbols`, their frames
/// symbolized from those sources.
pub fn batches(
    file: CaptureFile,
    symbols: Option<ResolvedSources>,
    policy: Policy,
) -> anyhow::Result<crate::Batches> {
    let path = file.name.clone();
    let capture = Capture::open(&file.path).map_err(|e| e.with_path(&path))?;
    let (tx, rx) = sync_channel(AHEAD);
    let (teller, later) = say::later();
    let schema = sample_arrow::schema(symbols.is_some());
    std::thread::Builder::new()
        .name("samples".into())
        .spawn(move || {
            // The copy of a capture in object storage, and the archives
            // unpacked for its symbols, live as long as its read.
            let _file = file;
            let name = path.display().to_string();
            let problem =
                teller.collecting(|| read(&capture, &name, symbols.as_ref(), policy, &tx));
            if let Some(problem) = problem {
                let _ = tx.send(Err(ArrowError::ExternalError(problem.into())));
            }
        })?;
    let reader = Box::new(Received { schema, rx });
    Ok(crate::Batches { reader, later })
}

/// Reads `capture`, sending its batches; returns the damage `--strict`
/// makes an error.
fn read(
    capture: &Capture,
    name: &str,
    sources: Option<&ResolvedSources>,
    policy: Policy,
    tx: &SyncSender<Sent>,
) -> Option<String> {
    let (symbols, mut locations, locating) = match sources {
        Some(sources) => {
            let (symbols, locations) = Symbols::collect(capture, &sources.config(true)).ok()?;
            (Some(symbols), locations, Locating::new(symbolized::LOCATE))
        }
        None => (None, Interner::new(), Locating::default()),
    };
    let mut stream = Stream::new(capture);
    let mut batching = Batching {
        capture,
        rows: Batcher::new(symbols.is_some()),
        symbols,
        frames: Vec::new(),
        tx,
    };
    // An error is the reader gone, or a stop asked for: nothing to say.
    stream
        .run(
            &mut { locating },
            &mut locations,
            &mut batching,
            &mut |_, _| {},
        )
        .ok()?;
    if batching.rows.rows() > 0 {
        batching.send().ok()?;
    }
    policy.say(name, &stream.finish().notes())
}

/// The stream's sink: rows into batches, each sent when full.
struct Batching<'c, 't> {
    capture: &'c Capture,
    rows: Batcher,
    symbols: Option<Symbols>,
    /// The frames of the sample at hand, leaf first, with their location
    /// numbers.
    frames: Vec<(FrameLookup, u32)>,
    tx: &'t SyncSender<Sent>,
}

impl Batching<'_, '_> {
    /// Sends the rows held; fails once the reader is gone.
    fn send(&mut self) -> Result<(), Interrupted> {
        self.tx.send(self.rows.finish()).map_err(|_| Interrupted)
    }

    fn full(&mut self) -> Result<(), Interrupted> {
        if self.rows.rows() >= sample_arrow::ROWS {
            self.send()?;
        }
        Ok(())
    }
}

impl Sink for Batching<'_, '_> {
    type Key = Location;
    type Numbers = Interner<Location>;
    type Error = Interrupted;

    fn take(&mut self, view: &SampleView<'_, '_>) -> Take {
        symbolized::take(self.symbols.as_ref(), view)
    }

    fn symbolizer(&self) -> Option<&Symbolizer> {
        self.symbols.as_ref().map(|s| &s.symbolizer)
    }

    fn unknown_event(&mut self, r: &RawRecord<'_>) -> Result<(), Interrupted> {
        let id = match r.event {
            EventRef::UnknownId(id) => Some(id),
            _ => None,
        };
        self.rows.unknown(r.offset.0, r.time, id);
        self.full()
    }

    fn sample(
        &mut self,
        located: &Located<'_, '_, '_>,
        _: &mut Interner<Location>,
    ) -> Result<Flow, Interrupted> {
        let view = located.view();
        let name = self
            .capture
            .events()
            .get(view.event())
            .map_or("", |e| e.name.as_str());
        symbolized::frames_of(located, &mut self.frames);
        let symbolized = self
            .symbols
            .as_ref()
            .map(|s| (&s.resolved, self.frames.as_slice()));
        let offset = view.record().offset.0;
        self.rows.sample(
            offset,
            name,
            view.sample(),
            view.members(),
            self.capture,
            symbolized,
        );
        self.full()?;
        Ok(Flow::Go)
    }
}

/// The batches, as the reading thread sends them.
struct Received {
    schema: SchemaRef,
    rx: Receiver<Sent>,
}

impl Iterator for Received {
    type Item = Sent;

    fn next(&mut self) -> Option<Sent> {
        // The thread ended (all sent, or it stopped): no more batches.
        self.rx.recv().ok()
    }
}

impl RecordBatchReader for Received {
    fn schema(&self) -> SchemaRef {
        self.schema.clone()
    }
}
