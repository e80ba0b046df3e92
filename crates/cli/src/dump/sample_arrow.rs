//! Samples as Arrow batches: the fields `perfq dump --format csv` prints,
//! typed, one row per sample record in time order (the Python module's
//! `perfq.samples`), and with symbols the frames `dump --symbols` writes.
//! A record of an unknown event is a row with its offset, time and id,
//! and no event, as in the CSV.

use std::sync::Arc;

use arrow_array::builder::{
    Int32Builder, ListBuilder, StringBuilder, StructBuilder, UInt32Builder, UInt64Builder,
};
use arrow_array::{ArrayRef, RecordBatch};
use perfq_query::arrow::datatypes::{DataType, Field, Fields, Schema, SchemaRef};
use perfq_query::arrow::error::ArrowError;
use perfq_reader::{Capture, MemberDelta, Sample};

use super::frame_arrow::{self, FrameColumns};
use super::symbolized::SymbolizedFrames;
use super::{cpumode, member_name};

/// Rows per batch.
pub(super) const ROWS: usize = 1 << 16;

/// The columns of the samples' batches; with `symbols`, a last one of
/// frames.
pub(super) fn schema(symbols: bool) -> SchemaRef {
    let u64 = |name: &str| Field::new(name, DataType::UInt64, true);
    let callchain = Field::new_list(
        "callchain",
        Field::new_struct("item", frame_fields(), false),
        true,
    );
    let read = Field::new_list(
        "read",
        Field::new_struct("item", member_fields(), false),
        true,
    );
    let mut fields = vec![
        Field::new("offset", DataType::UInt64, false),
        Field::new("event", DataType::Utf8, true),
        u64("time"),
        Field::new("pid", DataType::Int32, true),
        Field::new("tid", DataType::Int32, true),
        Field::new("cpu", DataType::UInt32, true),
        Field::new("cpumode", DataType::Utf8, true),
        u64("ip"),
        u64("addr"),
        u64("id"),
        u64("stream_id"),
        u64("period"),
        u64("weight"),
        u64("data_src"),
        u64("phys_addr"),
        u64("cgroup"),
        callchain,
        read,
    ];
    fields.extend(symbols.then(frame_arrow::field));
    Arc::new(Schema::new(fields))
}

/// A callchain entry: its address and, where a context marker preceded
/// it, the context (`kernel`, `user`, ...).
fn frame_fields() -> Fields {
    Fields::from(vec![
        Field::new("addr", DataType::UInt64, false),
        Field::new("context", DataType::Utf8, true),
    ])
}

/// A group member's value: its event, cumulative value and change since
/// the thread's previous sample (its period in this sample).
fn member_fields() -> Fields {
    Fields::from(vec![
        Field::new("event", DataType::Utf8, true),
        Field::new("value", DataType::UInt64, false),
        Field::new("delta", DataType::UInt64, true),
    ])
}

/// The rows of the batch being made.
pub(super) struct Batcher {
    schema: SchemaRef,
    offset: UInt64Builder,
    event: StringBuilder,
    time: UInt64Builder,
    pid: Int32Builder,
    tid: Int32Builder,
    cpu: UInt32Builder,
    cpumode: StringBuilder,
    /// ip, addr, id, stream_id, period, weight, data_src, phys_addr,
    /// cgroup.
    numbers: [UInt64Builder; 9],
    callchain: ListBuilder<StructBuilder>,
    read: ListBuilder<StructBuilder>,
    /// With symbols.
    frames: Option<FrameColumns>,
    rows: usize,
}

impl Batcher {
    pub(super) fn new(symbols: bool) -> Batcher {
        Batcher {
            schema: schema(symbols),
            offset: UInt64Builder::new(),
            event: StringBuilder::new(),
            time: UInt64Builder::new(),
            pid: Int32Builder::new(),
            tid: Int32Builder::new(),
            cpu: UInt32Builder::new(),
            cpumode: StringBuilder::new(),
            numbers: std::array::from_fn(|_| UInt64Builder::new()),
            callchain: ListBuilder::new(StructBuilder::from_fields(frame_fields(), 0))
                .with_field(Field::new_struct("item", frame_fields(), false)),
            read: ListBuilder::new(StructBuilder::from_fields(member_fields(), 0))
                .with_field(Field::new_struct("item", member_fields(), false)),
            frames: symbols.then(FrameColumns::new),
            rows: 0,
        }
    }

    /// The rows held.
    pub(super) fn rows(&self) -> usize {
        self.rows
    }

    /// A sample's row; `symbolized` is there when the batches have frames.
    pub(super) fn sample(
        &mut self,
        offset: u64,
        event: &str,
        s: &Sample<'_>,
        members: &[MemberDelta],
        capture: &Capture,
        symbolized: Option<SymbolizedFrames<'_>>,
    ) {
        self.offset.append_value(offset);
        self.event.append_value(event);
        self.time.append_option(s.time);
        self.pid.append_option(s.pid.map(|v| v as i32));
        self.tid.append_option(s.tid.map(|v| v as i32));
        self.cpu.append_option(s.cpu);
        self.cpumode.append_value(cpumode(s.misc));
        let numbers = [
            s.ip,
            s.addr,
            s.id,
            s.stream_id,
            s.period,
            s.weight_value(),
            s.data_src,
            s.phys_addr,
            s.cgroup,
        ];
        for (b, v) in self.numbers.iter_mut().zip(numbers) {
            b.append_option(v);
        }
        self.push_callchain(s);
        self.push_read(s, members, capture);
        if let (Some(columns), Some(frames)) = (&mut self.frames, symbolized) {
            columns.push(frames);
        }
        self.rows += 1;
    }

    /// A record of an unknown event's row: offset, time and id.
    pub(super) fn unknown(&mut self, offset: u64, time: Option<u64>, id: Option<u64>) {
        self.offset.append_value(offset);
        self.event.append_null();
        self.time.append_option(time);
        self.pid.append_null();
        self.tid.append_null();
        self.cpu.append_null();
        self.cpumode.append_null();
        for (i, b) in self.numbers.iter_mut().enumerate() {
            // The id is the third number.
            b.append_option(if i == 2 { id } else { None });
        }
        self.callchain.append_null();
        self.read.append_null();
        if let Some(columns) = &mut self.frames {
            columns.push_null();
        }
        self.rows += 1;
    }

    fn push_callchain(&mut self, s: &Sample<'_>) {
        let Some(chain) = s.callchain else {
            self.callchain.append_null();
            return;
        };
        let frames = self.callchain.values();
        for f in chain.frames() {
            field::<UInt64Builder>(frames, 0).append_value(f.addr);
            field::<StringBuilder>(frames, 1).append_option(f.context.map(|c| c.name()));
            frames.append(true);
        }
        self.callchain.append(true);
    }

    fn push_read(&mut self, s: &Sample<'_>, members: &[MemberDelta], capture: &Capture) {
        if s.read.is_none() {
            self.read.append_null();
            return;
        }
        let values = self.read.values();
        for m in members {
            field::<StringBuilder>(values, 0).append_option(member_name(capture, m));
            field::<UInt64Builder>(values, 1).append_value(m.value);
            field::<UInt64Builder>(values, 2).append_option(m.delta);
            values.append(true);
        }
        self.read.append(true);
    }

    /// The rows held as a batch; the builders start again empty.
    pub(super) fn finish(&mut self) -> Result<RecordBatch, ArrowError> {
        let mut columns: Vec<ArrayRef> = vec![
            Arc::new(self.offset.finish()),
            Arc::new(self.event.finish()),
            Arc::new(self.time.finish()),
            Arc::new(self.pid.finish()),
            Arc::new(self.tid.finish()),
            Arc::new(self.cpu.finish()),
            Arc::new(self.cpumode.finish()),
        ];
        columns.extend(
            self.numbers
                .iter_mut()
                .map(|b| Arc::new(b.finish()) as ArrayRef),
        );
        columns.push(Arc::new(self.callchain.finish()));
        columns.push(Arc::new(self.read.finish()));
        if let Some(frames) = &mut self.frames {
            columns.push(frames.finish()?);
        }
        self.rows = 0;
        RecordBatch::try_new(self.schema.clone(), columns)
    }
}

/// Field `i` of a struct builder made by [`Batcher::new`], whose types
/// it names.
fn field<T: arrow_array::builder::ArrayBuilder>(s: &mut StructBuilder, i: usize) -> &mut T {
    s.field_builder::<T>(i)
        .expect("the struct's field types are Batcher::new's")
}
