//! Integer columns written as Parquet's `DELTA_BINARY_PACKED` by perfq's
//! own encoder (see `pages`): row ids and times, which ascend, and the
//! stack tree's links.
//!
//! The stacks table's links are mostly a row's neighbours: a new stack is
//! most often made just after its caller (its parent is the row before),
//! a depth is its parent's plus one, and a stack's frame often the one
//! interned after its caller's. As plain 32-bit values the three columns
//! were a large input for zstd to compress on a system-wide capture;
//! Parquet's own delta encoder makes them small but costs as much time
//! per value as compressing the plain values did (and as much again for
//! the ids and times it already encoded). This one packs a block of
//! deltas in a few instructions a value.

use arrow_array::cast::AsArray;
use arrow_array::types::{ArrowPrimitiveType, UInt32Type, UInt64Type};
use arrow_array::{Array, ArrayRef, PrimitiveArray};
use parquet::basic::Encoding;
use parquet::errors::ParquetError;
use parquet::file::properties::WriterProperties;
use parquet::schema::types::ColumnDescPtr;

use crate::pages::rle::uleb128;
use crate::pages::{self, Chunk};
use crate::plain::{self, PlainInt};

/// Values a block holds, and its miniblocks (Parquet's writer's choice).
const BLOCK: usize = 128;
const MINIBLOCKS: usize = 4;
const MINIBLOCK: usize = BLOCK / MINIBLOCKS;

/// An unsigned integer type stored as Parquet's INT32 or INT64 of the
/// same width (its bits; the column's logical type says unsigned).
pub(crate) trait DeltaInt: PlainInt + Default {
    /// The value as its physical type reads it, widened.
    fn signed(self) -> i64;
    /// `self - other`, wrapping around in the type's width, as a signed
    /// number of that width, widened.
    fn signed_delta(self, other: Self) -> i64;
    /// The type's width.
    const BITS: u32;
}

impl DeltaInt for u32 {
    fn signed(self) -> i64 {
        i64::from(self as i32)
    }
    fn signed_delta(self, other: Self) -> i64 {
        self.wrapping_sub(other).signed()
    }
    const BITS: u32 = 32;
}

impl DeltaInt for u64 {
    fn signed(self) -> i64 {
        self as i64
    }
    fn signed_delta(self, other: Self) -> i64 {
        self.wrapping_sub(other).signed()
    }
    const BITS: u32 = 64;
}

/// Writes `array`, a `u32` or `u64` column, as the column chunk of
/// `descr` ([`encode`]); an error for any other type.
pub(crate) fn encode_column(
    descr: &ColumnDescPtr,
    props: &WriterProperties,
    array: &ArrayRef,
) -> Result<Chunk, ParquetError> {
    if let Some(a) = array.as_primitive_opt::<UInt32Type>() {
        encode(descr, props, a)
    } else if let Some(a) = array.as_primitive_opt::<UInt64Type>() {
        encode(descr, props, a)
    } else {
        Err(pages::general("a delta column of no u32 or u64"))
    }
}

/// Writes `array` as the column chunk of `descr`, an unsigned integer
/// column of `T`'s width: one `DELTA_BINARY_PACKED` data page, and the
/// chunk's statistics if `props` ask for them.
pub(crate) fn encode<A>(
    descr: &ColumnDescPtr,
    props: &WriterProperties,
    array: &PrimitiveArray<A>,
) -> Result<Chunk, ParquetError>
where
    A: ArrowPrimitiveType,
    A::Native: DeltaInt,
{
    let mut data = Vec::with_capacity(array.len() / 2 + 64);
    pages::levels(descr, array.nulls(), array.len(), &mut data)?;
    let values = pages::present(array.values(), array.nulls());
    deltas(&values, &mut data);
    let encoding = Encoding::DELTA_BINARY_PACKED;
    plain::integer_chunk(descr, props, &data, encoding, &values, array.len())
}

/// Appends `values` (as their physical type's bits) in the
/// `DELTA_BINARY_PACKED` encoding: a header (block size, miniblocks a
/// block, value count, first value), then blocks of deltas from the value
/// before, each its smallest delta and its miniblocks' bit widths, then
/// each miniblock's deltas less that smallest, bit-packed. Deltas wrap
/// around in the type's width, as Parquet's own writer takes them
/// (readers then never meet a width over it).
pub(crate) fn deltas<T: DeltaInt>(values: &[T], out: &mut Vec<u8>) {
    uleb128(BLOCK as u64, out);
    uleb128(MINIBLOCKS as u64, out);
    uleb128(values.len() as u64, out);
    uleb128(zigzag(values.first().map_or(0, |v| v.signed())), out);
    // Cuts a 64-bit difference to the type's width.
    let mask = u64::MAX >> (64 - T::BITS);
    // Each delta as a signed number of the type's width: the smallest is
    // then a plain minimum, and a delta less it, cut to the type's width,
    // is the one of the wrapped bits.
    let mut deltas = [0i64; BLOCK];
    let mut at = 1;
    while at < values.len() {
        let n = BLOCK.min(values.len() - at);
        // The smallest is found in the same pass, not in a second one.
        let mut min = i64::MAX;
        for (j, d) in deltas[..n].iter_mut().enumerate() {
            *d = values[at + j].signed_delta(values[at + j - 1]);
            min = min.min(*d);
        }
        uleb128(zigzag(min), out);
        let widths_at = out.len();
        out.extend_from_slice(&[0; MINIBLOCKS]);
        for (m, mini) in deltas[..n].chunks(MINIBLOCK).enumerate() {
            // Each delta less the smallest (a short last miniblock is
            // padded with zeros); their bits together give the width.
            let mut less = [0u64; MINIBLOCK];
            let mut bits = 0u64;
            for (l, &d) in less.iter_mut().zip(mini) {
                *l = (d.wrapping_sub(min) as u64) & mask;
                bits |= *l;
            }
            let width = u64::BITS - bits.leading_zeros();
            out[widths_at + m] = width as u8;
            bit_pack(&less, width, out);
        }
        at += n;
    }
}

/// A miniblock's values at `width` bits each (at most 64), from the
/// lowest bit: `4 * width` bytes, made in a buffer of their own and
/// appended at once (appending word by word checked the vector's
/// capacity for each).
fn bit_pack(values: &[u64; MINIBLOCK], width: u32, out: &mut Vec<u8>) {
    let mut packed = [0u8; 4 * 64];
    let len = 4 * width as usize;
    if width <= 32 {
        // Four bytes at a time; a value joins at most 31 bits left.
        let (mut acc, mut bits, mut at) = (0u64, 0u32, 0usize);
        for &v in values {
            acc |= v << bits;
            bits += width;
            if bits >= 32 {
                packed[at..at + 4].copy_from_slice(&(acc as u32).to_le_bytes());
                at += 4;
                acc >>= 32;
                bits -= 32;
            }
        }
    } else {
        let (mut acc, mut bits, mut at) = (0u128, 0u32, 0usize);
        for &v in values {
            acc |= u128::from(v) << bits;
            bits += width;
            if bits >= 64 {
                packed[at..at + 8].copy_from_slice(&(acc as u64).to_le_bytes());
                at += 8;
                acc >>= 64;
                bits -= 64;
            }
        }
        // 32 values of an odd width end half way through eight bytes.
        let rest = (bits / 8) as usize;
        packed[at..at + rest].copy_from_slice(&acc.to_le_bytes()[..rest]);
    }
    out.extend_from_slice(&packed[..len]);
}

fn zigzag(v: i64) -> u64 {
    ((v << 1) ^ (v >> 63)) as u64
}

#[cfg(test)]
mod tests {
    use std::fs::File;
    use std::sync::Arc;

    use arrow_array::cast::AsArray;
    use arrow_array::types::UInt32Type;
    use arrow_array::ArrayRef;
    use parquet::arrow::arrow_reader::ParquetRecordBatchReaderBuilder;
    use parquet::file::reader::{FileReader, SerializedFileReader};

    use crate::{Column, ColumnType, Table};

    /// Parquet's own reader is the oracle: columns delta-encoded here read
    /// back the values given, nulls included, for groups of every length
    /// around the block and miniblock sizes and values across all of u32.
    #[test]
    fn delta_columns_read_back_as_written() {
        let dir = crate::oracle::scratch("delta");
        let path = dir.join("t.parquet");
        let columns = [
            Column::new("required", ColumnType::U32)
                .delta()
                .without_statistics(),
            Column::new("nullable", ColumnType::U32)
                .nullable()
                .delta()
                .without_statistics(),
        ];
        let mut rng = 0x2545_f491_4f6c_dd1du64;
        let mut next = move || {
            rng ^= rng << 13;
            rng ^= rng >> 7;
            rng ^= rng << 17;
            rng
        };
        let mut expected: Vec<Vec<(u32, Option<u32>)>> = Vec::new();
        for (i, n) in [1usize, 2, 31, 32, 33, 127, 128, 129, 130, 257, 1000, 65536]
            .into_iter()
            .enumerate()
        {
            let mut at = next() as u32;
            let rows: Vec<(u32, Option<u32>)> = (0..n)
                .map(|_| {
                    at = match i % 3 {
                        // Mostly one more than the row before.
                        0 => at.wrapping_add(if next() % 8 == 0 { next() as u32 } else { 1 }),
                        1 => next() as u32,
                        _ => (next() % 100) as u32,
                    };
                    let nullable = (next() % 4 != 0).then_some(at ^ 0x8000_0000);
                    (at, nullable)
                })
                .collect();
            expected.push(rows);
        }
        let mut t = Table::create(&path, &columns).unwrap();
        for rows in &expected {
            let a: ArrayRef = Arc::new(arrow_array::UInt32Array::from_iter_values(
                rows.iter().map(|r| r.0),
            ));
            let b: ArrayRef = Arc::new(arrow_array::UInt32Array::from_iter(
                rows.iter().map(|r| r.1),
            ));
            t.push_group(vec![a, b]).unwrap();
        }
        t.finish().unwrap();
        let r = SerializedFileReader::new(File::open(&path).unwrap()).unwrap();
        for g in 0..expected.len() {
            for c in 0..2 {
                let chunk = r.metadata().row_group(g).column(c);
                assert!(chunk
                    .encodings()
                    .any(|e| e == Encoding::DELTA_BINARY_PACKED));
            }
        }
        let reader = ParquetRecordBatchReaderBuilder::try_new(File::open(&path).unwrap())
            .unwrap()
            .build()
            .unwrap();
        let mut read = Vec::new();
        for b in reader {
            let b = b.unwrap();
            let (x, y) = (
                b.column(0).as_primitive::<UInt32Type>(),
                b.column(1).as_primitive::<UInt32Type>(),
            );
            for i in 0..b.num_rows() {
                read.push((x.value(i), y.is_valid(i).then(|| y.value(i))));
            }
        }
        assert_eq!(read, expected.concat());
        std::fs::remove_dir_all(&dir).unwrap();
    }

    /// Chunk statistics of `u32` and `u64` delta columns (nulls, values
    /// past the signed range) are those Parquet's writer gives the same
    /// values, and the values read back.
    #[test]
    fn statistics_are_parquets() {
        use arrow_array::{UInt32Array, UInt64Array};
        use arrow_schema::{DataType, Field, Schema};
        use parquet::file::properties::WriterProperties;

        let columns = [
            Column::new("a", ColumnType::U32).delta(),
            Column::new("b", ColumnType::U64).nullable().delta(),
        ];
        let groups: Vec<(Vec<u32>, Vec<Option<u64>>)> = vec![
            (
                (0..1000).collect(),
                (0..1000).map(|i| Some(1_000_000 + i * 7)).collect(),
            ),
            (
                vec![5, u32::MAX, 3, 0x8000_0000],
                vec![None, Some(u64::MAX), Some(2), Some(1 << 63)],
            ),
            (vec![7], vec![None]),
            // Deltas of 0 and 2^32: 33 bits, an odd width past 32.
            (
                (0..100).collect(),
                (0..100u64).map(|i| Some((i / 2) << 32)).collect(),
            ),
        ];
        let groups: Vec<Vec<ArrayRef>> = groups
            .into_iter()
            .map(|(a, b)| -> Vec<ArrayRef> {
                vec![
                    Arc::new(UInt32Array::from(a)),
                    Arc::new(UInt64Array::from(b)),
                ]
            })
            .collect();
        let schema = Arc::new(Schema::new(vec![
            Field::new("a", DataType::UInt32, false),
            Field::new("b", DataType::UInt64, true),
        ]));
        let props = WriterProperties::builder()
            .set_dictionary_enabled(false)
            .set_encoding(Encoding::DELTA_BINARY_PACKED)
            .set_statistics_enabled(parquet::file::properties::EnabledStatistics::Chunk)
            .build();
        let both = crate::oracle::write_both("delta-stats", &columns, &schema, props, &groups);
        both.agree(|_, _, ours, _| {
            assert!(ours.encodings().any(|e| e == Encoding::DELTA_BINARY_PACKED));
        });
    }

    use super::*;
}
