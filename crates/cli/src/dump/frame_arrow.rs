//! Symbolized frames as an Arrow column (`perfq.samples(path,
//! symbols=True)`): per sample, a list of the frames `dump --symbols
//! --format jsonl` writes, leaf first, with the same fields; a field the
//! JSON leaves out is null.

use std::sync::Arc;

use arrow_array::builder::{
    ArrayBuilder, ListBuilder, StringBuilder, StructBuilder, UInt32Builder, UInt64Builder,
};
use arrow_array::{ArrayRef, ListArray, StructArray};
use perfq_query::arrow::buffer::{NullBuffer, OffsetBuffer, ScalarBuffer};
use perfq_query::arrow::datatypes::{DataType, Field, Fields};
use perfq_query::arrow::error::ArrowError;
use perfq_symbolize::{FrameLookup, Resolved};

use super::symbolized::SymbolizedFrames;

/// The column's field.
pub(super) fn field() -> Field {
    Field::new_list("frames", item(), true)
}

fn item() -> Field {
    Field::new_struct("item", frame_fields(), false)
}

/// A frame: its address and context, its DSO, symbol (null where none was
/// found, with `unresolved` saying why), the symbol as stored, the offset
/// in the DSO, the binary read and the address looked up in it, and its
/// inline chain (innermost first; null where there is none).
fn frame_fields() -> Fields {
    let text = |name: &str| Field::new(name, DataType::Utf8, true);
    Fields::from(vec![
        Field::new("addr", DataType::UInt64, false),
        text("context"),
        Field::new("dso", DataType::Utf8, false),
        text("symbol"),
        text("raw_symbol"),
        Field::new("dso_offset", DataType::UInt64, false),
        text("binary"),
        Field::new("vaddr", DataType::UInt64, true),
        text("unresolved"),
        Field::new_list("inlined", inline_item(), true),
    ])
}

fn inline_item() -> Field {
    Field::new_struct("item", inline_fields(), false)
}

fn inline_fields() -> Fields {
    Fields::from(vec![
        Field::new("function", DataType::Utf8, true),
        Field::new("file", DataType::Utf8, true),
        Field::new("line", DataType::UInt32, true),
    ])
}

fn inline_builder() -> ListBuilder<StructBuilder> {
    ListBuilder::new(StructBuilder::from_fields(inline_fields(), 0)).with_field(inline_item())
}

/// The column being made.
pub(super) struct FrameColumns {
    /// Where each row's frames end.
    ends: Vec<usize>,
    /// Which rows have frames (an unknown event's row has none).
    valid: Vec<bool>,
    addr: UInt64Builder,
    context: StringBuilder,
    dso: StringBuilder,
    symbol: StringBuilder,
    raw_symbol: StringBuilder,
    dso_offset: UInt64Builder,
    binary: StringBuilder,
    vaddr: UInt64Builder,
    unresolved: StringBuilder,
    inlined: ListBuilder<StructBuilder>,
}

impl FrameColumns {
    pub(super) fn new() -> FrameColumns {
        FrameColumns {
            ends: Vec::new(),
            valid: Vec::new(),
            addr: UInt64Builder::new(),
            context: StringBuilder::new(),
            dso: StringBuilder::new(),
            symbol: StringBuilder::new(),
            raw_symbol: StringBuilder::new(),
            dso_offset: UInt64Builder::new(),
            binary: StringBuilder::new(),
            vaddr: UInt64Builder::new(),
            unresolved: StringBuilder::new(),
            inlined: inline_builder(),
        }
    }

    /// A row with these frames.
    pub(super) fn push(&mut self, (resolved, frames): SymbolizedFrames<'_>) {
        for (f, id) in frames {
            if let Some(r) = resolved.get(*id as usize) {
                self.frame(f, &r);
            }
        }
        self.end_row(true);
    }

    /// A row without frames.
    pub(super) fn push_null(&mut self) {
        self.end_row(false);
    }

    fn end_row(&mut self, valid: bool) {
        self.ends.push(self.addr.len());
        self.valid.push(valid);
    }

    fn frame(&mut self, f: &FrameLookup, r: &Resolved) {
        self.addr.append_value(f.addr);
        self.context.append_option(f.context.map(|c| c.name()));
        self.dso.append_value(&r.dso);
        self.symbol.append_option(r.symbol.as_deref());
        self.raw_symbol.append_option(r.raw_symbol.as_deref());
        self.dso_offset.append_value(r.addr);
        let binary = r.binary.as_ref();
        self.binary
            .append_option(binary.map(|(path, _)| path.to_string_lossy()));
        self.vaddr.append_option(binary.map(|(_, vaddr)| *vaddr));
        self.unresolved
            .append_option(r.reason.as_ref().map(|why| why.name()));
        let inlined = &mut self.inlined;
        if r.inlined.is_empty() {
            inlined.append_null();
            return;
        }
        let chain = inlined.values();
        for i in &r.inlined {
            chain
                .field_builder::<StringBuilder>(0)
                .expect("inline_fields' first is text")
                .append_option(i.function.as_deref());
            chain
                .field_builder::<StringBuilder>(1)
                .expect("inline_fields' second is text")
                .append_option(i.file.as_deref());
            chain
                .field_builder::<UInt32Builder>(2)
                .expect("inline_fields' third is a u32")
                .append_option(i.line);
            chain.append(true);
        }
        inlined.append(true);
    }

    /// The rows held as a column; the builders start again empty.
    pub(super) fn finish(&mut self) -> Result<ArrayRef, ArrowError> {
        let columns: Vec<ArrayRef> = vec![
            Arc::new(self.addr.finish()),
            Arc::new(self.context.finish()),
            Arc::new(self.dso.finish()),
            Arc::new(self.symbol.finish()),
            Arc::new(self.raw_symbol.finish()),
            Arc::new(self.dso_offset.finish()),
            Arc::new(self.binary.finish()),
            Arc::new(self.vaddr.finish()),
            Arc::new(self.unresolved.finish()),
            Arc::new(self.inlined.finish()),
        ];
        let frames = StructArray::try_new(frame_fields(), columns, None)?;
        let ends = std::iter::once(0).chain(self.ends.drain(..));
        let ends = ends
            .map(i32::try_from)
            .collect::<Result<Vec<i32>, _>>()
            .map_err(|_| ArrowError::ComputeError("a batch has over 2^31 frames".into()))?;
        let valid = NullBuffer::from(std::mem::take(&mut self.valid));
        let offsets = OffsetBuffer::new(ScalarBuffer::from(ends));
        let list = ListArray::try_new(Arc::new(item()), offsets, Arc::new(frames), Some(valid))?;
        Ok(Arc::new(list))
    }
}
