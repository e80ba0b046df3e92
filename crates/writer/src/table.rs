//! One Parquet file written in row groups from typed column buffers.

use std::fs::File;
use std::path::Path;
use std::sync::Arc;

use arrow_array::builder::{ListBuilder, UInt32Builder};
use arrow_array::{
    ArrayRef, Int32Array, RecordBatch, StringArray, UInt16Array, UInt32Array, UInt64Array,
};
use arrow_schema::{DataType, Field, Schema, SchemaRef};
use parquet::arrow::ArrowWriter;
use parquet::basic::{Compression, ZstdLevel};
use parquet::file::properties::{EnabledStatistics, WriterProperties};

use crate::Error;

/// Rows buffered before they are written as a row group.
const ROWS_PER_GROUP: usize = 64 * 1024;

/// A column's type.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum ColumnType {
    /// `uint16`.
    U16,
    /// `uint32`.
    U32,
    /// `uint64`.
    U64,
    /// `int32`.
    I32,
    /// `utf8`, dictionary-encoded by Parquet where it pays.
    Str,
    /// `list<uint32>`.
    ListU32,
}

/// Buffered values of one column.
enum Buffer {
    U16(Vec<Option<u16>>),
    U32(Vec<Option<u32>>),
    U64(Vec<Option<u64>>),
    I32(Vec<Option<i32>>),
    Str(Vec<Option<String>>),
    ListU32(Vec<Vec<u32>>),
}

/// A value for one cell.
#[derive(Clone, Debug, PartialEq)]
pub enum Cell<'a> {
    /// Null.
    Null,
    /// An unsigned number (fits the column's width).
    U(u64),
    /// A signed number.
    I(i64),
    /// Text.
    S(&'a str),
    /// A list of u32.
    L(&'a [u32]),
}

/// A Parquet table being written.
pub struct Table {
    schema: SchemaRef,
    columns: Vec<Buffer>,
    rows: usize,
    writer: ArrowWriter<File>,
}

impl Table {
    /// Creates `path` with the given columns `(name, type, nullable)`.
    pub fn create(path: &Path, columns: &[(&str, ColumnType, bool)]) -> Result<Table, Error> {
        let fields: Vec<Field> = columns
            .iter()
            .map(|&(name, ty, nullable)| {
                let dt = match ty {
                    ColumnType::U16 => DataType::UInt16,
                    ColumnType::U32 => DataType::UInt32,
                    ColumnType::U64 => DataType::UInt64,
                    ColumnType::I32 => DataType::Int32,
                    ColumnType::Str => DataType::Utf8,
                    ColumnType::ListU32 => {
                        DataType::List(Arc::new(Field::new("item", DataType::UInt32, true)))
                    }
                };
                Field::new(name, dt, nullable)
            })
            .collect();
        let schema: SchemaRef = Arc::new(Schema::new(fields));
        let props = WriterProperties::builder()
            .set_compression(Compression::ZSTD(
                ZstdLevel::try_new(3).map_err(|e| Error::parquet(path, e))?,
            ))
            .set_statistics_enabled(EnabledStatistics::Chunk)
            .set_dictionary_enabled(true)
            .build();
        let file = File::create(path).map_err(|e| Error::io(path, e))?;
        let writer = ArrowWriter::try_new(file, schema.clone(), Some(props))
            .map_err(|e| Error::parquet(path, e))?;
        let columns = columns
            .iter()
            .map(|&(_, ty, _)| match ty {
                ColumnType::U16 => Buffer::U16(Vec::new()),
                ColumnType::U32 => Buffer::U32(Vec::new()),
                ColumnType::U64 => Buffer::U64(Vec::new()),
                ColumnType::I32 => Buffer::I32(Vec::new()),
                ColumnType::Str => Buffer::Str(Vec::new()),
                ColumnType::ListU32 => Buffer::ListU32(Vec::new()),
            })
            .collect();
        Ok(Table {
            schema,
            columns,
            rows: 0,
            writer,
        })
    }

    /// Appends one row; `cells` are in column order. A cell of the wrong
    /// kind for its column is written as null (a caller bug, not input).
    pub fn push(&mut self, cells: &[Cell<'_>]) -> Result<(), Error> {
        for (buf, cell) in self.columns.iter_mut().zip(cells) {
            match (buf, cell) {
                (Buffer::U16(v), Cell::U(x)) => v.push(u16::try_from(*x).ok()),
                (Buffer::U32(v), Cell::U(x)) => v.push(u32::try_from(*x).ok()),
                (Buffer::U64(v), Cell::U(x)) => v.push(Some(*x)),
                (Buffer::I32(v), Cell::I(x)) => v.push(i32::try_from(*x).ok()),
                (Buffer::Str(v), Cell::S(x)) => v.push(Some((*x).to_string())),
                (Buffer::ListU32(v), Cell::L(x)) => v.push(x.to_vec()),
                (Buffer::U16(v), _) => v.push(None),
                (Buffer::U32(v), _) => v.push(None),
                (Buffer::U64(v), _) => v.push(None),
                (Buffer::I32(v), _) => v.push(None),
                (Buffer::Str(v), _) => v.push(None),
                (Buffer::ListU32(v), _) => v.push(Vec::new()),
            }
        }
        self.rows += 1;
        if self.rows >= ROWS_PER_GROUP {
            self.flush()?;
        }
        Ok(())
    }

    fn flush(&mut self) -> Result<(), Error> {
        if self.rows == 0 {
            return Ok(());
        }
        let arrays: Vec<ArrayRef> = self
            .columns
            .iter_mut()
            .map(|b| -> ArrayRef {
                match b {
                    Buffer::U16(v) => Arc::new(UInt16Array::from(std::mem::take(v))),
                    Buffer::U32(v) => Arc::new(UInt32Array::from(std::mem::take(v))),
                    Buffer::U64(v) => Arc::new(UInt64Array::from(std::mem::take(v))),
                    Buffer::I32(v) => Arc::new(Int32Array::from(std::mem::take(v))),
                    Buffer::Str(v) => Arc::new(StringArray::from(std::mem::take(v))),
                    Buffer::ListU32(v) => {
                        let mut lb = ListBuilder::new(UInt32Builder::new());
                        for list in std::mem::take(v) {
                            lb.values().append_slice(&list);
                            lb.append(true);
                        }
                        Arc::new(lb.finish())
                    }
                }
            })
            .collect();
        let batch = RecordBatch::try_new(self.schema.clone(), arrays)
            .map_err(|e| Error::Arrow(e.to_string()))?;
        self.writer
            .write(&batch)
            .map_err(|e| Error::Arrow(e.to_string()))?;
        self.writer
            .flush()
            .map_err(|e| Error::Arrow(e.to_string()))?;
        self.rows = 0;
        Ok(())
    }

    /// Writes what is buffered and closes the file.
    pub fn finish(mut self) -> Result<(), Error> {
        self.flush()?;
        self.writer
            .close()
            .map_err(|e| Error::Arrow(e.to_string()))?;
        Ok(())
    }
}
