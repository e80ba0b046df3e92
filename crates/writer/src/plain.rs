//! Integer columns written as Parquet's `PLAIN` encoding by perfq's own
//! encoder (see `pages`): the samples table's ids, addresses and periods,
//! and every other integer column without a dictionary or deltas.
//!
//! Parquet's column writer takes an Arrow column through its generic
//! levels and value paths, a few calls per value, and makes a new zstd
//! compressor and decompressor for every column chunk; for a column whose
//! page is its values' bytes as they are in memory, that was most of
//! encoding it. Here a page is the levels, then the values copied.

use arrow_array::cast::AsArray;
use arrow_array::types::{
    ArrowPrimitiveType, Int32Type, UInt16Type, UInt32Type, UInt64Type, UInt8Type,
};
use arrow_array::{Array, ArrayRef, PrimitiveArray};
use parquet::basic::Encoding;
use parquet::errors::ParquetError;
use parquet::file::properties::{EnabledStatistics, WriterProperties};
use parquet::file::statistics::{Statistics, ValueStatistics};
use parquet::schema::types::ColumnDescPtr;

use crate::pages::{self, Chunk};

/// An integer type stored as Parquet's INT32 or INT64: the value as that
/// physical type holds it, and chunk statistics as Parquet's writer makes
/// them.
trait PlainInt: Copy + Ord {
    /// Appends the value as its physical type's little-endian bytes.
    fn put(self, out: &mut Vec<u8>);
    /// Min and max (in the type's own order) and nulls, as Parquet's
    /// writer gives them: as the physical type, marked backwards
    /// compatible only for a signed sort order.
    fn statistics(min: Option<Self>, max: Option<Self>, nulls: u64) -> Statistics;
}

/// Statistics of an INT32 column whose sort order is `signed` or not.
fn int32(min: Option<i32>, max: Option<i32>, nulls: u64, signed: bool) -> Statistics {
    Statistics::Int32(
        ValueStatistics::new(min, max, None, Some(nulls), false)
            .with_backwards_compatible_min_max(signed),
    )
}

/// Unsigned types narrower than 64 bits: INT32, zero-extended.
macro_rules! unsigned_int32 {
    ($($t:ty),*) => {$(
        impl PlainInt for $t {
            fn put(self, out: &mut Vec<u8>) {
                out.extend_from_slice(&u32::from(self).to_le_bytes());
            }
            fn statistics(min: Option<Self>, max: Option<Self>, nulls: u64) -> Statistics {
                let bits = |v: Self| u32::from(v) as i32;
                int32(min.map(bits), max.map(bits), nulls, false)
            }
        }
    )*};
}
unsigned_int32!(u8, u16, u32);

impl PlainInt for i32 {
    fn put(self, out: &mut Vec<u8>) {
        out.extend_from_slice(&self.to_le_bytes());
    }
    fn statistics(min: Option<Self>, max: Option<Self>, nulls: u64) -> Statistics {
        int32(min, max, nulls, true)
    }
}

impl PlainInt for u64 {
    fn put(self, out: &mut Vec<u8>) {
        out.extend_from_slice(&self.to_le_bytes());
    }
    fn statistics(min: Option<Self>, max: Option<Self>, nulls: u64) -> Statistics {
        let bits = |v: u64| v as i64;
        Statistics::Int64(
            ValueStatistics::new(min.map(bits), max.map(bits), None, Some(nulls), false)
                .with_backwards_compatible_min_max(false),
        )
    }
}

/// Whether perfq writes a column of `data_type` itself ([`encode_column`]).
pub(crate) fn encodes(data_type: &arrow_schema::DataType) -> bool {
    use arrow_schema::DataType::*;
    matches!(data_type, UInt8 | UInt16 | UInt32 | UInt64 | Int32)
}

/// Writes `array`, an integer column of a type [`encodes`] takes, as the
/// column chunk of `descr` ([`encode`]); an error for any other type.
pub(crate) fn encode_column(
    descr: &ColumnDescPtr,
    props: &WriterProperties,
    array: &ArrayRef,
) -> Result<Chunk, ParquetError> {
    if let Some(a) = array.as_primitive_opt::<UInt64Type>() {
        encode(descr, props, a)
    } else if let Some(a) = array.as_primitive_opt::<UInt32Type>() {
        encode(descr, props, a)
    } else if let Some(a) = array.as_primitive_opt::<Int32Type>() {
        encode(descr, props, a)
    } else if let Some(a) = array.as_primitive_opt::<UInt16Type>() {
        encode(descr, props, a)
    } else if let Some(a) = array.as_primitive_opt::<UInt8Type>() {
        encode(descr, props, a)
    } else {
        Err(pages::general("a plain column of no integer type"))
    }
}

/// Writes `array` as the column chunk of `descr`: one `PLAIN` data page,
/// and the chunk's statistics if `props` ask for them.
fn encode<A>(
    descr: &ColumnDescPtr,
    props: &WriterProperties,
    array: &PrimitiveArray<A>,
) -> Result<Chunk, ParquetError>
where
    A: ArrowPrimitiveType,
    A::Native: PlainInt,
{
    let values = pages::present(array.values(), array.nulls());
    let width = if std::mem::size_of::<A::Native>() == 8 {
        8
    } else {
        4
    };
    let mut data = Vec::with_capacity(values.len() * width + array.len() / 4 + 16);
    pages::levels(descr, array.nulls(), array.len(), &mut data)?;
    for &v in values.iter() {
        v.put(&mut data);
    }
    let statistics =
        (props.statistics_enabled(descr.path()) != EnabledStatistics::None).then(|| {
            let nulls = (array.len() - values.len()) as u64;
            PlainInt::statistics(
                values.iter().min().copied(),
                values.iter().max().copied(),
                nulls,
            )
        });
    pages::chunk(
        descr,
        props,
        None,
        &data,
        Encoding::PLAIN,
        array.len(),
        statistics,
    )
}

#[cfg(test)]
mod tests {
    use std::fs::File;
    use std::sync::Arc;

    use arrow_array::{
        ArrayRef, Int32Array, RecordBatch, UInt16Array, UInt32Array, UInt64Array, UInt8Array,
    };
    use arrow_schema::{DataType, Field, Schema};
    use parquet::arrow::arrow_reader::ParquetRecordBatchReaderBuilder;
    use parquet::arrow::ArrowWriter;
    use parquet::basic::Encoding;
    use parquet::file::properties::{EnabledStatistics, WriterProperties};
    use parquet::file::reader::{FileReader, SerializedFileReader};

    use crate::{Column, ColumnType, Table};

    /// Parquet's own writer and reader are the oracle: each integer type,
    /// with and without nulls, at the ends of its range and all null,
    /// reads back as written, with the chunk statistics Parquet's writer
    /// gives the same values.
    #[test]
    fn plain_columns_read_back_with_parquets_statistics() {
        let dir = std::env::temp_dir().join(format!("perfq-plain-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        let (ours, theirs) = (dir.join("ours.parquet"), dir.join("theirs.parquet"));
        let columns = [
            Column::new("u64", ColumnType::U64).nullable().plain(),
            Column::new("u32", ColumnType::U32).plain(),
            Column::new("i32", ColumnType::I32).nullable().plain(),
            Column::new("u16", ColumnType::U16).nullable().plain(),
            Column::new("u8", ColumnType::U8).plain(),
        ];
        let schema = Arc::new(Schema::new(vec![
            Field::new("u64", DataType::UInt64, true),
            Field::new("u32", DataType::UInt32, false),
            Field::new("i32", DataType::Int32, true),
            Field::new("u16", DataType::UInt16, true),
            Field::new("u8", DataType::UInt8, false),
        ]));
        let group = |n: usize, nulls: bool| -> Vec<ArrayRef> {
            let keep = |i: usize| !nulls || i % 3 != 1;
            vec![
                Arc::new(UInt64Array::from_iter((0..n).map(|i| {
                    keep(i).then(|| (i as u64).wrapping_mul(0x9e37_79b9_7f4a_7c15))
                }))),
                Arc::new(UInt32Array::from_iter_values(
                    (0..n).map(|i| (i as u32).wrapping_mul(0x9e37_79b9)),
                )),
                Arc::new(Int32Array::from_iter(
                    (0..n).map(|i| keep(i).then(|| (i as i32).wrapping_mul(-0x6e37_79b9))),
                )),
                Arc::new(UInt16Array::from_iter(
                    (0..n).map(|i| keep(i).then(|| (i as u16).wrapping_mul(40_503))),
                )),
                Arc::new(UInt8Array::from_iter_values(
                    (0..n).map(|i| (i as u8).wrapping_mul(151)),
                )),
            ]
        };
        let all_null: Vec<ArrayRef> = vec![
            Arc::new(UInt64Array::from(vec![None; 5])),
            Arc::new(UInt32Array::from(vec![u32::MAX, 0, 1, 0x8000_0000, 7])),
            Arc::new(Int32Array::from(vec![None; 5])),
            Arc::new(UInt16Array::from(vec![None; 5])),
            Arc::new(UInt8Array::from(vec![u8::MAX, 0, 1, 0x80, 7])),
        ];
        let groups = vec![
            group(1000, false),
            group(777, true),
            all_null,
            group(1, true),
        ];
        let props = WriterProperties::builder()
            .set_dictionary_enabled(false)
            .set_statistics_enabled(EnabledStatistics::Chunk)
            .build();
        let mut reference =
            ArrowWriter::try_new(File::create(&theirs).unwrap(), schema.clone(), Some(props))
                .unwrap();
        let mut t = Table::create(&ours, &columns).unwrap();
        for arrays in &groups {
            t.push_group(arrays.clone()).unwrap();
            reference
                .write(&RecordBatch::try_new(schema.clone(), arrays.clone()).unwrap())
                .unwrap();
            reference.flush().unwrap();
        }
        t.finish().unwrap();
        reference.close().unwrap();
        let (r, s) = (
            SerializedFileReader::new(File::open(&ours).unwrap()).unwrap(),
            SerializedFileReader::new(File::open(&theirs).unwrap()).unwrap(),
        );
        for g in 0..groups.len() {
            for c in 0..columns.len() {
                let (x, y) = (
                    r.metadata().row_group(g).column(c),
                    s.metadata().row_group(g).column(c),
                );
                assert!(x.encodings().any(|e| e == Encoding::PLAIN));
                assert_eq!(x.statistics(), y.statistics(), "group {g} column {c}");
            }
        }
        let read = |path| -> Vec<RecordBatch> {
            ParquetRecordBatchReaderBuilder::try_new(File::open(path).unwrap())
                .unwrap()
                .build()
                .unwrap()
                .map(Result::unwrap)
                .collect()
        };
        // The same row groups: the reader cuts both files into the same
        // batches.
        assert_eq!(read(&ours), read(&theirs));
        std::fs::remove_dir_all(&dir).unwrap();
    }
}
