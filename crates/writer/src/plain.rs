//! Integer columns written as Parquet's `PLAIN` encoding by perfq's own
//! encoder (see `pages`): the samples table's ids, addresses and periods,
//! every other integer column without a dictionary or deltas, and lists
//! of `u32` (the stacks' `frame_ids`).
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

use crate::int_dictionary;
use crate::pages::{self, Chunk};

/// An integer type stored as Parquet's INT32 or INT64: the value as that
/// physical type holds it, and chunk statistics as Parquet's writer makes
/// them.
pub(crate) trait PlainInt: Copy + Ord {
    /// Bytes of the physical type.
    const WIDTH: usize;
    /// Writes the value as its physical type's little-endian bytes into
    /// `out`, [`PlainInt::WIDTH`] long.
    fn put(self, out: &mut [u8]);
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
            const WIDTH: usize = 4;
            fn put(self, out: &mut [u8]) {
                out.copy_from_slice(&u32::from(self).to_le_bytes());
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
    const WIDTH: usize = 4;
    fn put(self, out: &mut [u8]) {
        out.copy_from_slice(&self.to_le_bytes());
    }
    fn statistics(min: Option<Self>, max: Option<Self>, nulls: u64) -> Statistics {
        int32(min, max, nulls, true)
    }
}

impl PlainInt for u64 {
    const WIDTH: usize = 8;
    fn put(self, out: &mut [u8]) {
        out.copy_from_slice(&self.to_le_bytes());
    }
    fn statistics(min: Option<Self>, max: Option<Self>, nulls: u64) -> Statistics {
        let bits = |v: u64| v as i64;
        Statistics::Int64(
            ValueStatistics::new(min.map(bits), max.map(bits), None, Some(nulls), false)
                .with_backwards_compatible_min_max(false),
        )
    }
}

/// Appends `values` PLAIN-encoded: each as its physical type's bytes
/// (into room made at once, a loop the compiler turns into wide copies).
pub(crate) fn put_all<T: PlainInt>(values: &[T], out: &mut Vec<u8>) {
    let at = out.len();
    out.resize(at + values.len() * T::WIDTH, 0);
    if let Some(room) = out.get_mut(at..) {
        for (bytes, &v) in room.chunks_exact_mut(T::WIDTH).zip(values) {
            v.put(bytes);
        }
    }
}

/// Whether perfq writes a column of `data_type` itself ([`encode_column`]).
pub(crate) fn encodes(data_type: &arrow_schema::DataType) -> bool {
    use arrow_schema::DataType::*;
    matches!(data_type, UInt8 | UInt16 | UInt32 | UInt64 | Int32)
}

/// How perfq writes an integer column without deltas.
#[derive(Clone, Copy, Debug)]
pub(crate) enum IntEncoding {
    /// `PLAIN` ([`encode`]).
    Plain,
    /// A dictionary ([`int_dictionary::encode`]).
    Dictionary,
}

/// Writes `array`, an integer column of a type [`encodes`] takes, as the
/// column chunk of `descr`, encoded `how`; an error for any other type.
pub(crate) fn encode_column(
    descr: &ColumnDescPtr,
    props: &WriterProperties,
    array: &ArrayRef,
    how: IntEncoding,
) -> Result<Chunk, ParquetError> {
    if let Some(a) = array.as_primitive_opt::<UInt64Type>() {
        encode_as(descr, props, a, how)
    } else if let Some(a) = array.as_primitive_opt::<UInt32Type>() {
        encode_as(descr, props, a, how)
    } else if let Some(a) = array.as_primitive_opt::<Int32Type>() {
        encode_as(descr, props, a, how)
    } else if let Some(a) = array.as_primitive_opt::<UInt16Type>() {
        encode_as(descr, props, a, how)
    } else if let Some(a) = array.as_primitive_opt::<UInt8Type>() {
        encode_as(descr, props, a, how)
    } else {
        Err(pages::general("an integer column of no integer type"))
    }
}

/// [`encode_column`] of an array of one integer type.
fn encode_as<A>(
    descr: &ColumnDescPtr,
    props: &WriterProperties,
    array: &PrimitiveArray<A>,
    how: IntEncoding,
) -> Result<Chunk, ParquetError>
where
    A: ArrowPrimitiveType,
    A::Native: PlainInt + std::hash::Hash,
{
    match how {
        IntEncoding::Plain => encode(descr, props, array),
        IntEncoding::Dictionary => int_dictionary::encode(descr, props, array),
    }
}

/// Writes `array`, a list of nullable `u32` (itself nullable or not), as
/// the column chunk of `descr` (its items): one data page of repetition
/// and definition levels and the present items, `PLAIN`.
pub(crate) fn encode_list(
    descr: &ColumnDescPtr,
    props: &WriterProperties,
    array: &ArrayRef,
) -> Result<Chunk, ParquetError> {
    // A list's definition levels start at 1 if it may be null (0 then).
    let empty = match (descr.max_def_level(), descr.max_rep_level()) {
        (3, 1) => 1,
        (2, 1) => 0,
        _ => return Err(pages::general("a list column of another shape")),
    };
    let Some(list) = array.as_list_opt::<i32>() else {
        return Err(pages::general("a list column of no list"));
    };
    if empty == 0 && list.null_count() > 0 {
        return Err(pages::general("nulls in a list column that allows none"));
    }
    let Some(items) = list.values().as_primitive_opt::<UInt32Type>() else {
        return Err(pages::general("a list of other than u32"));
    };
    let offsets = list.value_offsets();
    let levels = items.len() + list.len();
    // One level per item, one for each null or empty list: repetition 0
    // at a row's start (1 within it); definition 0 for a null list,
    // `empty` for an empty one, one more for a null item and two more
    // for a present one.
    let (mut reps, mut defs) = (Vec::with_capacity(levels), Vec::with_capacity(levels));
    let mut values: Vec<u32> = Vec::with_capacity(items.len());
    for (row, ends) in offsets.windows(2).enumerate() {
        let (start, end) = (ends[0] as usize, ends[1] as usize);
        if list.is_null(row) || start >= end {
            reps.push(0);
            defs.push(if list.is_valid(row) { empty } else { 0 });
            continue;
        }
        // A row's levels are filled a run at a time: stacks are lists of
        // tens of frames, millions of them.
        let at = reps.len();
        reps.resize(at + (end - start), 1);
        reps[at] = 0;
        match items.nulls() {
            None => {
                defs.resize(at + (end - start), empty + 2);
                values.extend_from_slice(items.values().get(start..end).unwrap_or_default());
            }
            Some(nulls) => {
                for i in start..end {
                    if nulls.is_valid(i) {
                        defs.push(empty + 2);
                        values.push(items.value(i));
                    } else {
                        defs.push(empty + 1);
                    }
                }
            }
        }
    }
    let mut data = Vec::with_capacity(values.len() * 4 + reps.len() / 2 + 16);
    pages::length_prefixed(&reps, 1, &mut data)?;
    pages::length_prefixed(&defs, pages::rle::width(u64::from(empty + 2)), &mut data)?;
    put_all(&values, &mut data);
    let statistics =
        (props.statistics_enabled(descr.path()) != EnabledStatistics::None).then(|| {
            PlainInt::statistics(
                values.iter().min().copied(),
                values.iter().max().copied(),
                (defs.len() - values.len()) as u64,
            )
        });
    let page = pages::DataPage {
        data: &data,
        encoding: Encoding::PLAIN,
        levels: defs.len(),
        rows: list.len(),
    };
    pages::chunk(descr, props, None, page, statistics)
}

/// Writes `array` as the column chunk of `descr`: one `PLAIN` data page,
/// and the chunk's statistics if `props` ask for them.
pub(crate) fn encode<A>(
    descr: &ColumnDescPtr,
    props: &WriterProperties,
    array: &PrimitiveArray<A>,
) -> Result<Chunk, ParquetError>
where
    A: ArrowPrimitiveType,
    A::Native: PlainInt,
{
    let values = pages::present(array.values(), array.nulls());
    let mut data = Vec::with_capacity(values.len() * A::Native::WIDTH + array.len() / 4 + 16);
    pages::levels(descr, array.nulls(), array.len(), &mut data)?;
    put_all(&values, &mut data);
    integer_chunk(descr, props, &data, Encoding::PLAIN, &values, array.len())
}

/// The chunk of a top-level integer column of `rows` rows whose one page
/// is `data`: its levels, then `values` (the present ones) encoded as
/// `encoding`; with the chunk statistics of `values` if `props` ask for
/// them.
pub(crate) fn integer_chunk<T: PlainInt>(
    descr: &ColumnDescPtr,
    props: &WriterProperties,
    data: &[u8],
    encoding: Encoding,
    values: &[T],
    rows: usize,
) -> Result<Chunk, ParquetError> {
    let statistics = statistics(descr, props, values, rows);
    let page = pages::DataPage::top_level(data, encoding, rows);
    pages::chunk(descr, props, None, page, statistics)
}

/// The chunk statistics of a top-level integer column of `rows` rows whose
/// present values are `values`, if `props` ask for them.
pub(crate) fn statistics<T: PlainInt>(
    descr: &ColumnDescPtr,
    props: &WriterProperties,
    values: &[T],
    rows: usize,
) -> Option<Statistics> {
    (props.statistics_enabled(descr.path()) != EnabledStatistics::None).then(|| {
        let (min, max) = min_max(values).unzip();
        PlainInt::statistics(min, max, (rows - values.len()) as u64)
    })
}

/// The smallest and the largest of `values`, in one pass of eight
/// running pairs (two passes of `Iterator::min` and `max` compared one
/// value at a time, each waiting for the comparison before).
fn min_max<T: Copy + Ord>(values: &[T]) -> Option<(T, T)> {
    let first = *values.first()?;
    let (mut lo, mut hi) = ([first; 8], [first; 8]);
    let (chunks, rest) = values.as_chunks::<8>();
    for chunk in chunks {
        for ((l, h), &v) in lo.iter_mut().zip(hi.iter_mut()).zip(chunk) {
            *l = (*l).min(v);
            *h = (*h).max(v);
        }
    }
    let lo = lo.into_iter().chain(rest.iter().copied()).min()?;
    let hi = hi.into_iter().chain(rest.iter().copied()).max()?;
    Some((lo, hi))
}

#[cfg(test)]
mod tests {
    use std::sync::Arc;

    use arrow_array::{ArrayRef, Int32Array, UInt16Array, UInt32Array, UInt64Array, UInt8Array};
    use arrow_schema::{DataType, Field, Schema};
    use parquet::basic::Encoding;
    use parquet::file::properties::{EnabledStatistics, WriterProperties};
    use parquet::schema::types::ColumnPath;

    use crate::oracle::{int_columns, write_both};
    use crate::{Column, ColumnType};

    /// Parquet's own writer and reader are the oracle: each integer type,
    /// with and without nulls, at the ends of its range and all null,
    /// reads back as written, with the chunk statistics Parquet's writer
    /// gives the same values.
    #[test]
    fn plain_columns_read_back_with_parquets_statistics() {
        let (columns, schema) = int_columns(false);
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
        let both = write_both("plain", &columns, &schema, props, &groups);
        both.agree(|_, _, ours, _| {
            assert!(ours.encodings().any(|e| e == Encoding::PLAIN));
        });
    }

    /// Lists of u32 (null lists, empty lists, null items, long lists
    /// across many bit-packed level groups; lists that may not be null)
    /// read back as written, with the statistics Parquet's writer gives
    /// them.
    #[test]
    fn list_columns_read_back_with_parquets_statistics() {
        use arrow_array::builder::{ListBuilder, UInt32Builder};

        let columns = [
            Column::new("a", ColumnType::ListU32).nullable().plain(),
            Column::new("b", ColumnType::ListU32)
                .nullable()
                .plain()
                .without_statistics(),
            Column::new("c", ColumnType::ListU32).plain(),
        ];
        let item = Arc::new(Field::new("item", DataType::UInt32, true));
        let schema = Arc::new(Schema::new(vec![
            Field::new("a", DataType::List(item.clone()), true),
            Field::new("b", DataType::List(item.clone()), true),
            Field::new("c", DataType::List(item), false),
        ]));
        let list = |rows: usize, seed: u32| -> ArrayRef {
            let mut b = ListBuilder::new(UInt32Builder::new());
            for r in 0..rows {
                let k = (r as u32).wrapping_mul(seed) % 23;
                match k % 7 {
                    // Column c is never null.
                    0 if seed != 1 => b.append(false),
                    1 => b.append(true),
                    _ => {
                        for j in 0..k * 3 {
                            let v = j.wrapping_mul(0x9e37_79b9) ^ seed;
                            b.values().append_option((j % 11 != 5).then_some(v));
                        }
                        b.append(true);
                    }
                }
            }
            Arc::new(b.finish())
        };
        let groups: Vec<Vec<ArrayRef>> = vec![
            vec![list(500, 7), list(500, 13), list(500, 1)],
            vec![list(1, 3), list(1, 5), list(1, 1)],
            vec![list(64, 29), list(64, 31), list(64, 1)],
        ];
        let props = WriterProperties::builder()
            .set_dictionary_enabled(false)
            .set_statistics_enabled(EnabledStatistics::Chunk)
            .set_column_statistics_enabled(
                ColumnPath::new(vec!["b".into(), "list".into(), "item".into()]),
                EnabledStatistics::None,
            )
            .build();
        let both = write_both("plain-list", &columns, &schema, props, &groups);
        both.agree(|g, c, ours, theirs| {
            assert_eq!(
                ours.num_values(),
                theirs.num_values(),
                "group {g} column {c}"
            );
        });
    }
}
