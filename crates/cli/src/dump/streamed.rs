//! `perfq dump`'s samples as Arrow batches, streamed (the Python module's
//! `perfq.samples`): a thread reads the capture and makes batches of
//! [`sample_arrow::ROWS`] rows, at most two ahead of the reader, so
//! memory is a few batches' whatever the capture's length. The read's
//! warnings are said on that thread (standard error); under `--strict`,
//! damage ends the stream with an error after the rows read.

use std::sync::mpsc::{sync_channel, Receiver, SyncSender};

use perfq_query::arrow::datatypes::SchemaRef;
use perfq_query::arrow::error::ArrowError;
use perfq_query::arrow::record_batch::{RecordBatch, RecordBatchReader};
use perfq_reader::{Capture, EventRef, RawRecord};
use perfq_stream::{Flow, Interrupted, Located, Locating, Sink, Stream, Unnumbered};

use super::sample_arrow::{self, Batcher};
use crate::damage::Policy;
use crate::input::CaptureFile;

/// Batches made ahead of the reader.
const AHEAD: usize = 2;

type Sent = Result<RecordBatch, ArrowError>;

/// The samples of `file`, a batch at a time.
pub fn batches(
    file: CaptureFile,
    policy: Policy,
) -> anyhow::Result<Box<dyn RecordBatchReader + Send>> {
    let path = file.name.clone();
    let capture = Capture::open(&file.path).map_err(|e| e.with_path(&path))?;
    let (tx, rx) = sync_channel(AHEAD);
    std::thread::Builder::new()
        .name("samples".into())
        .spawn(move || {
            // The copy of a capture in object storage lives as long as
            // its read.
            let _file = file;
            read(&capture, &path.display().to_string(), policy, tx);
        })?;
    Ok(Box::new(Received {
        schema: sample_arrow::schema(),
        rx,
    }))
}

/// Reads `capture`, sending its batches, then the damage under `--strict`.
fn read(capture: &Capture, name: &str, policy: Policy, tx: SyncSender<Sent>) {
    let mut stream = Stream::new(capture);
    let mut batching = Batching {
        capture,
        rows: Batcher::new(),
        tx,
    };
    let ran = stream.run(
        &mut Locating::default(),
        &mut Unnumbered,
        &mut batching,
        &mut |_, _| {},
    );
    if ran.is_err() {
        // The reader went away, or a stop was asked for.
        return;
    }
    if batching.rows.rows() > 0 && batching.send().is_err() {
        return;
    }
    if let Some(problem) = policy.say(name, &stream.finish().notes()) {
        let _ = batching
            .tx
            .send(Err(ArrowError::ExternalError(problem.into())));
    }
}

/// The stream's sink: rows into batches, each sent when full.
struct Batching<'c> {
    capture: &'c Capture,
    rows: Batcher,
    tx: SyncSender<Sent>,
}

impl Batching<'_> {
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

impl Sink for Batching<'_> {
    type Key = perfq_stream::Location;
    type Numbers = Unnumbered;
    type Error = Interrupted;

    fn take(&mut self, _: &perfq_stream::SampleView<'_, '_>) -> perfq_stream::Take {
        perfq_stream::Take::AsIs
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
        _: &mut Unnumbered,
    ) -> Result<Flow, Interrupted> {
        let view = located.view();
        let name = self
            .capture
            .events()
            .get(view.event())
            .map_or("", |e| e.name.as_str());
        let offset = view.record().offset.0;
        self.rows
            .sample(offset, name, view.sample(), view.members(), self.capture);
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
