//! The `functions` table as perfq makes it, kept by number: each row's
//! name as an address or a symbol's number, and its DSO's number, about
//! 12 bytes a row. Its text is written as a batch is read. Most functions
//! of a system-wide capture are unresolved addresses, each a function of
//! its own; as Arrow string columns (the address's text and a view of
//! each column) its rows took far more, for the session's life.

use std::sync::Arc;

use datafusion::arrow::array::{
    ArrayRef, RecordBatch, StringViewArray, StringViewBuilder, UInt64Array,
};
use datafusion::arrow::buffer::Buffer;
use datafusion::arrow::datatypes::SchemaRef;
use perfq_ids::TextIds;

use super::on_read::OnRead;
use super::{typed, Name};
use crate::Error;

/// The rows of `functions`: ids 1 to `len() - 1` in row order, then
/// `[unknown]` (id 0), as its SQL's `UNION ALL` gives them.
#[derive(Debug)]
pub(super) struct FunctionNames {
    schema: SchemaRef,
    /// Each row's name: an address, or where `symbolic` says so, a
    /// symbol's number.
    names: Vec<u64>,
    /// A bit per row, set where the row is named by a symbol.
    symbolic: Vec<u64>,
    symbols: Texts,
    /// Each row's DSO: its number in `dsos`.
    dso_of: Vec<u32>,
    dsos: Texts,
}

/// Strings stored end to end in one block, numbered as added (a column's
/// views point into the block: nothing is copied to read them).
#[derive(Debug)]
struct Texts {
    block: Buffer,
    /// Where each string ends in `block`.
    ends: Vec<u32>,
}

impl Texts {
    fn new(texts: TextIds) -> Self {
        let (bytes, ends) = texts.into_parts();
        Texts {
            block: Buffer::from_vec(bytes),
            ends,
        }
    }

    /// String `n`.
    fn text(&self, n: u32) -> &str {
        let (offset, len) = self.at(n);
        let bytes = &self.block.as_slice()[offset as usize..(offset + len) as usize];
        // Stored from `&str`s (TextIds), whole.
        std::str::from_utf8(bytes).unwrap_or_default()
    }

    /// String `n`'s offset and length in `block`.
    fn at(&self, n: u32) -> (u32, u32) {
        perfq_ids::span(&self.ends, n)
    }
}

impl FunctionNames {
    /// How many rows there are, `[unknown]`'s included.
    pub(super) fn rows(&self) -> usize {
        self.names.len()
    }

    /// The last function id (that of row `last - 1`).
    pub(super) fn last(&self) -> u32 {
        // At most u32::MAX rows: see `Builder::finish`.
        (self.names.len() - 1) as u32
    }

    /// Calls `f` with function `id`'s symbol and DSO (`[unknown]`'s for
    /// an id beyond the last).
    pub(super) fn with_name<R>(&self, id: u32, f: impl FnOnce(&str, &str) -> R) -> R {
        let row = match id {
            0 => self.rows() - 1,
            id if id <= self.last() => id as usize - 1,
            _ => return f("[unknown]", "[unknown]"),
        };
        let dso = self.dsos.text(self.dso_of[row]);
        let name = self.names[row];
        if self.symbolic[row / 64] & (1 << (row % 64)) != 0 {
            f(self.symbols.text(name as u32), dso)
        } else {
            // `0x` and hex digits: always UTF-8.
            Name::Address(name).with_text(|t| f(std::str::from_utf8(t).unwrap_or_default(), dso))
        }
    }

    /// The symbol and DSO columns of `rows` (row numbers), in that order.
    pub(super) fn columns(
        &self,
        rows: impl Iterator<Item = usize> + Clone,
    ) -> Result<(StringViewArray, StringViewArray), Error> {
        let count = rows.clone().count();
        let mut symbols = StringViewBuilder::with_capacity(count);
        let symbol_block = symbols.append_block(self.symbols.block.clone());
        let mut dsos = StringViewBuilder::with_capacity(count);
        let dso_block = dsos.append_block(self.dsos.block.clone());
        let shape =
            |e: datafusion::arrow::error::ArrowError| Error::Shape(format!("functions: {e}"));
        for row in rows {
            let name = self.names[row];
            if self.symbolic[row / 64] & (1 << (row % 64)) != 0 {
                let (offset, len) = self.symbols.at(name as u32);
                symbols
                    .try_append_view(symbol_block, offset, len)
                    .map_err(shape)?;
            } else {
                // `0x` and hex digits: always UTF-8.
                Name::Address(name).with_text(|t| {
                    symbols.append_value(std::str::from_utf8(t).unwrap_or_default())
                });
            }
            let (offset, len) = self.dsos.at(self.dso_of[row]);
            dsos.try_append_view(dso_block, offset, len)
                .map_err(shape)?;
        }
        Ok((symbols.finish(), dsos.finish()))
    }
}

impl OnRead for FunctionNames {
    fn schema(&self) -> &SchemaRef {
        &self.schema
    }

    fn len(&self) -> usize {
        self.rows()
    }

    fn batch(&self, start: usize, end: usize) -> Result<RecordBatch, Error> {
        let last = self.rows() - 1;
        let ids = (start..end).map(|row| if row == last { 0 } else { row as u64 + 1 });
        let (symbols, dsos) = self.columns(start..end)?;
        let columns = [
            Arc::new(UInt64Array::from_iter_values(ids)) as ArrayRef,
            Arc::new(symbols),
            Arc::new(dsos),
        ];
        typed(&self.schema, &columns)
    }
}

/// [`FunctionNames`] made a row at a time, in id order.
#[derive(Default)]
pub(super) struct Builder {
    names: Vec<u64>,
    symbolic: Vec<u64>,
    symbols: TextIds,
    dso_of: Vec<u32>,
    dsos: TextIds,
}

/// The number of `text` among `texts`, stored if new.
fn number(texts: &mut TextIds, text: &str) -> Result<u32, Error> {
    // Arrow's view blocks are at most u32::MAX bytes.
    texts
        .id(text)
        .ok_or_else(|| Error::Shape("function names beyond 4 GiB".into()))
}

impl Builder {
    /// A builder with room for `rows` rows (without `[unknown]`'s).
    pub(super) fn with_capacity(rows: usize) -> Self {
        Builder {
            names: Vec::with_capacity(rows + 1),
            symbolic: Vec::with_capacity(rows.div_ceil(64) + 1),
            dso_of: Vec::with_capacity(rows + 1),
            ..Builder::default()
        }
    }

    /// Adds the next row: `name` in `dso`.
    pub(super) fn push(&mut self, name: Name<'_>, dso: &str) -> Result<(), Error> {
        let row = self.names.len();
        if row.is_multiple_of(64) {
            self.symbolic.push(0);
        }
        match name {
            Name::Address(a) => self.names.push(a),
            Name::Symbol(s) => {
                let n = number(&mut self.symbols, s)?;
                self.names.push(u64::from(n));
                self.symbolic[row / 64] |= 1 << (row % 64);
            }
        }
        let dso = number(&mut self.dsos, dso)?;
        self.dso_of.push(dso);
        Ok(())
    }

    /// How many rows were added.
    pub(super) fn rows(&self) -> usize {
        self.names.len()
    }

    /// The table, `[unknown]`'s row added last, its batches typed as
    /// `schema`.
    pub(super) fn finish(mut self, schema: SchemaRef) -> Result<FunctionNames, Error> {
        self.push(Name::Symbol("[unknown]"), "[unknown]")?;
        let n = self.names.len();
        if u32::try_from(n).is_err() {
            return Err(Error::Shape(format!(
                "{n} functions: more than ids can number"
            )));
        }
        self.names.shrink_to_fit();
        self.dso_of.shrink_to_fit();
        Ok(FunctionNames {
            schema,
            names: self.names,
            symbolic: self.symbolic,
            symbols: Texts::new(self.symbols),
            dso_of: self.dso_of,
            dsos: Texts::new(self.dsos),
        })
    }
}

#[cfg(test)]
mod tests {
    use std::sync::Arc;

    use datafusion::arrow::array::Array;
    use datafusion::arrow::datatypes::{DataType, Field, Schema};

    use super::{Builder, Name};

    /// Rows read back as added, symbols and addresses mixed, across
    /// words of the symbolic bits; `[unknown]` last, with id 0.
    #[test]
    fn rows_read_back_as_added() {
        let mut b = Builder::default();
        let mut want = Vec::new();
        for i in 0..150u64 {
            let dso = if i % 3 == 0 {
                "/usr/lib/libc.so.6"
            } else {
                "[kernel.kallsyms]"
            };
            if i % 7 == 0 {
                b.push(Name::Symbol("main"), dso).unwrap();
                want.push(("main".to_string(), dso));
            } else {
                b.push(Name::Address(0x1000 + i), dso).unwrap();
                want.push((format!("{:#x}", 0x1000 + i), dso));
            }
        }
        want.push(("[unknown]".to_string(), "[unknown]"));
        let schema = Arc::new(Schema::new(vec![
            Field::new("function_id", DataType::UInt64, false),
            Field::new("symbol", DataType::Utf8View, false),
            Field::new("dso", DataType::Utf8View, false),
        ]));
        let names = b.finish(schema).unwrap();
        assert_eq!((names.rows(), names.last()), (151, 150));
        let (s, d) = names.columns(0..names.rows()).unwrap();
        for (row, (sym, dso)) in want.iter().enumerate() {
            assert_eq!(
                (s.value(row), d.value(row)),
                (sym.as_str(), *dso),
                "row {row}"
            );
        }
        let batch = super::OnRead::batch(&names, 140, 151).unwrap();
        assert_eq!(batch.num_rows(), 11);
        let ids = batch
            .column(0)
            .as_any()
            .downcast_ref::<datafusion::arrow::array::UInt64Array>();
        let ids = ids.unwrap();
        assert_eq!((ids.value(0), ids.value(10)), (141, 0));
    }
}
