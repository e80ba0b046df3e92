//! Integer columns dictionary-encoded by perfq rather than by Parquet's
//! column writer: a group read's event, id and delta columns, the samples
//! table's `m0..m15`, and every other integer column with a dictionary.
//!
//! Parquet's writer interns each value through its generic path and then
//! puts each key through its RLE encoder one at a time; on a top-down
//! capture (ten read values a sample) that was the largest cost of
//! writing the dataset after compression. Here each row group's
//! dictionary is built in one pass over the values, and the keys are
//! RLE/bit-packed in bulk (`pages::rle`): a PLAIN dictionary page, then
//! one `RLE_DICTIONARY` data page, as [`crate::dictionary`] writes text.
//! A dictionary larger than the file's dictionary page limit is not
//! written: the chunk is then PLAIN, as Parquet's writer falls back to.

use std::hash::Hash;

use arrow_array::types::ArrowPrimitiveType;
use arrow_array::{Array, PrimitiveArray};
use parquet::errors::ParquetError;
use parquet::file::properties::WriterProperties;
use parquet::schema::types::ColumnDescPtr;
use rustc_hash::FxHashMap;

use crate::pages::{self, general, Chunk};
use crate::plain::{self, PlainInt};

/// Writes `array` as the column chunk of `descr`: a PLAIN dictionary page
/// of its distinct values in order of first appearance and an
/// `RLE_DICTIONARY` data page of their keys, with the chunk's statistics
/// if `props` ask for them. A column without values, or whose dictionary
/// would pass the page limit, is written PLAIN.
pub(crate) fn encode<A>(
    descr: &ColumnDescPtr,
    props: &WriterProperties,
    array: &PrimitiveArray<A>,
) -> Result<Chunk, ParquetError>
where
    A: ArrowPrimitiveType,
    A::Native: PlainInt + Hash,
{
    let values = pages::present(array.values(), array.nulls());
    let limit = props.dictionary_page_size_limit() / A::Native::WIDTH;
    let Some((distinct, keys)) = keyed(&values, limit) else {
        return plain::encode(descr, props, array);
    };
    let mut plain = Vec::with_capacity(distinct.len() * A::Native::WIDTH);
    plain::put_all(&distinct, &mut plain);
    let dictionary = pages::Dictionary {
        plain: &plain,
        values: u32::try_from(distinct.len()).map_err(|_| general("dictionary too long"))?,
    };
    let statistics = plain::statistics(descr, props, &values, array.len());
    let (nulls, rows) = (array.nulls(), array.len());
    pages::keyed_chunk(descr, props, dictionary, &keys, nulls, rows, statistics)
}

/// The distinct `values` in order of first appearance, and each value's
/// key (its place among them); `None` without values or with more than
/// `limit` distinct ones.
fn keyed<T: Copy + Eq + Hash>(values: &[T], limit: usize) -> Option<(Vec<T>, Vec<u32>)> {
    let first = *values.first()?;
    let mut distinct = vec![first];
    let mut index: FxHashMap<T, u32> = FxHashMap::default();
    index.insert(first, 0);
    let mut keys = Vec::with_capacity(values.len());
    // Runs of one value (a sample's null members, a thread's repeated
    // event) cost a comparison each.
    let (mut last, mut last_key) = (first, 0);
    for &v in values {
        if v != last {
            let next = distinct.len() as u32;
            last_key = *index.entry(v).or_insert(next);
            if last_key == next {
                if distinct.len() >= limit {
                    return None;
                }
                distinct.push(v);
            }
            last = v;
        }
        keys.push(last_key);
    }
    Some((distinct, keys))
}

#[cfg(test)]
mod tests {
    use std::sync::Arc;

    use arrow_array::{ArrayRef, Int32Array, UInt16Array, UInt32Array, UInt64Array, UInt8Array};
    use parquet::basic::Encoding;
    use parquet::file::properties::EnabledStatistics;

    use super::*;
    use crate::oracle::{int_columns, write_both};

    /// Parquet's own writer and reader are the oracle: each integer type,
    /// over runs, alternations, nulls, one value, all nulls and many
    /// distinct values, reads back as written, dictionary-encoded where
    /// it has values, with the chunk statistics Parquet's writer gives.
    #[test]
    fn dictionary_columns_read_back_with_parquets_statistics() {
        let (columns, schema) = int_columns(true);
        // `kinds` distinct values, in runs of `run`.
        let group = |n: usize, kinds: u64, run: usize, nulls: bool| -> Vec<ArrayRef> {
            let keep = |i: usize| !nulls || i % 5 != 2;
            let v = |i: usize| ((i / run) as u64 % kinds).wrapping_mul(0x9e37_79b9_7f4a_7c15);
            vec![
                Arc::new(UInt64Array::from_iter(
                    (0..n).map(|i| keep(i).then(|| v(i))),
                )),
                Arc::new(UInt32Array::from_iter_values((0..n).map(|i| v(i) as u32))),
                Arc::new(Int32Array::from_iter(
                    (0..n).map(|i| keep(i).then(|| (v(i) >> 7) as i32)),
                )),
                Arc::new(UInt16Array::from_iter(
                    (0..n).map(|i| keep(i).then(|| (v(i) >> 40) as u16)),
                )),
                Arc::new(UInt8Array::from_iter_values((0..n).map(|i| v(i) as u8))),
            ]
        };
        let all_null: Vec<ArrayRef> = vec![
            Arc::new(UInt64Array::from(vec![None; 5])),
            Arc::new(UInt32Array::from(vec![7; 5])),
            Arc::new(Int32Array::from(vec![None; 5])),
            Arc::new(UInt16Array::from(vec![None; 5])),
            Arc::new(UInt8Array::from(vec![u8::MAX, 0, 1, 0x80, 7])),
        ];
        let groups = vec![
            group(1000, 10, 1, false),
            group(777, 3, 9, true),
            all_null,
            group(1, 1, 1, true),
            group(65_536, 40_000, 1, true),
            group(4096, 1, 1, false),
        ];
        let props = WriterProperties::builder()
            .set_statistics_enabled(EnabledStatistics::Chunk)
            .build();
        let both = write_both("int-dictionary", &columns, &schema, props, &groups);
        both.agree(|g, c, ours, theirs| {
            let keyed = |m: &parquet::file::metadata::ColumnChunkMetaData| {
                m.encodings().any(|e| e == Encoding::RLE_DICTIONARY)
            };
            if ours.statistics().and_then(|s| s.null_count_opt()) != Some(ours.num_values() as u64)
            {
                assert!(keyed(ours) && keyed(theirs), "group {g} column {c}");
            }
        });
    }

    /// Keys number the distinct values in order of first appearance; a
    /// dictionary past the limit is refused.
    #[test]
    fn keys_follow_first_appearance() {
        let (d, k) = keyed(&[7u64, 7, 3, 9, 3, 7, 9, 9], 8).expect("within the limit");
        assert_eq!(d, [7, 3, 9]);
        assert_eq!(k, [0, 0, 1, 2, 1, 0, 2, 2]);
        assert!(keyed(&[1u32, 2, 3], 2).is_none());
        assert!(keyed::<u8>(&[], 8).is_none());
    }
}
