//! The oracle of the tests of perfq's own column encoders (`delta`,
//! `plain`, `int_dictionary`): Parquet's own writer and reader. A test writes the same row
//! groups with perfq's [`Table`] and with Parquet's `ArrowWriter`, then
//! compares the chunks' metadata and what both files read back as.

use std::fs::File;
use std::path::PathBuf;

use arrow_array::{ArrayRef, RecordBatch};
use arrow_schema::SchemaRef;
use parquet::arrow::arrow_reader::ParquetRecordBatchReaderBuilder;
use parquet::arrow::ArrowWriter;
use parquet::file::metadata::ColumnChunkMetaData;
use parquet::file::properties::WriterProperties;
use parquet::file::reader::{FileReader, SerializedFileReader};

use crate::{Column, ColumnType, Table};

/// One column of each integer type perfq writes (`u64`, `i32` and `u16`
/// nullable), with dictionaries or plain, and their Arrow schema.
pub(crate) fn int_columns(dictionary: bool) -> (Vec<Column<'static>>, SchemaRef) {
    use arrow_schema::{DataType, Field, Schema};
    let types = [
        ("u64", ColumnType::U64, DataType::UInt64, true),
        ("u32", ColumnType::U32, DataType::UInt32, false),
        ("i32", ColumnType::I32, DataType::Int32, true),
        ("u16", ColumnType::U16, DataType::UInt16, true),
        ("u8", ColumnType::U8, DataType::UInt8, false),
    ];
    let columns = types
        .iter()
        .map(|&(name, ty, _, nullable)| {
            let c = Column::new(name, ty);
            let c = if nullable { c.nullable() } else { c };
            if dictionary {
                c
            } else {
                c.plain()
            }
        })
        .collect();
    let fields: Vec<Field> = types
        .into_iter()
        .map(|(name, _, dt, nullable)| Field::new(name, dt, nullable))
        .collect();
    (columns, std::sync::Arc::new(Schema::new(fields)))
}

/// A fresh folder for test `test`'s files (the caller removes it).
pub(crate) fn scratch(test: &str) -> PathBuf {
    let dir = std::env::temp_dir().join(format!("perfq-{test}-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    dir
}

/// Two files of the same row groups: perfq's and Parquet's writer's.
pub(crate) struct Both {
    dir: PathBuf,
    ours: PathBuf,
    theirs: PathBuf,
    groups: usize,
    columns: usize,
}

/// Writes each of `groups` as one row group, with perfq's table of
/// `columns` and with Parquet's writer of `schema` and `props`, into a
/// fresh folder named after `test`.
pub(crate) fn write_both(
    test: &str,
    columns: &[Column<'_>],
    schema: &SchemaRef,
    props: WriterProperties,
    groups: &[Vec<ArrayRef>],
) -> Both {
    let dir = scratch(test);
    let (ours, theirs) = (dir.join("ours.parquet"), dir.join("theirs.parquet"));
    let mut reference =
        ArrowWriter::try_new(File::create(&theirs).unwrap(), schema.clone(), Some(props)).unwrap();
    let mut t = Table::create(&ours, columns).unwrap();
    for arrays in groups {
        t.push_group(arrays.clone()).unwrap();
        reference
            .write(&RecordBatch::try_new(schema.clone(), arrays.clone()).unwrap())
            .unwrap();
        reference.flush().unwrap();
    }
    t.finish().unwrap();
    reference.close().unwrap();
    Both {
        dir,
        ours,
        theirs,
        groups: groups.len(),
        columns: columns.len(),
    }
}

impl Both {
    /// Asserts that the two files agree: for every chunk `check` (group,
    /// column, our chunk, theirs) holds and the chunk statistics are
    /// equal, and both files read back as the same batches.
    pub(crate) fn agree(
        &self,
        mut check: impl FnMut(usize, usize, &ColumnChunkMetaData, &ColumnChunkMetaData),
    ) {
        self.chunks(|g, c, ours, theirs| {
            check(g, c, ours, theirs);
            assert_eq!(
                ours.statistics(),
                theirs.statistics(),
                "group {g} column {c}"
            );
        });
        let (ours, theirs) = self.batches();
        assert_eq!(ours, theirs);
    }

    /// Calls `check` with (group, column, our chunk, their chunk) for
    /// every chunk.
    fn chunks(
        &self,
        mut check: impl FnMut(usize, usize, &ColumnChunkMetaData, &ColumnChunkMetaData),
    ) {
        let open = |p: &PathBuf| SerializedFileReader::new(File::open(p).unwrap()).unwrap();
        let (r, s) = (open(&self.ours), open(&self.theirs));
        for g in 0..self.groups {
            for c in 0..self.columns {
                check(
                    g,
                    c,
                    r.metadata().row_group(g).column(c),
                    s.metadata().row_group(g).column(c),
                );
            }
        }
    }

    /// What the two files read back as: the same row groups, so the
    /// reader cuts both into the same batches.
    fn batches(&self) -> (Vec<RecordBatch>, Vec<RecordBatch>) {
        let read = |p: &PathBuf| -> Vec<RecordBatch> {
            ParquetRecordBatchReaderBuilder::try_new(File::open(p).unwrap())
                .unwrap()
                .build()
                .unwrap()
                .map(Result::unwrap)
                .collect()
        };
        (read(&self.ours), read(&self.theirs))
    }
}

impl Drop for Both {
    fn drop(&mut self) {
        let _ = std::fs::remove_dir_all(&self.dir);
    }
}
