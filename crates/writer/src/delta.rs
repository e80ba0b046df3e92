//! Integer columns written as Parquet's `DELTA_BINARY_PACKED` by perfq's
//! own encoder (see `pages`).
//!
//! The stacks table's links are mostly a row's neighbours: a new stack is
//! most often made just after its caller (its parent is the row before),
//! a depth is its parent's plus one, and a stack's frame often the one
//! interned after its caller's. As plain 32-bit values the three columns
//! were 35 MB of a system-wide capture's stacks for zstd to compress;
//! Parquet's own delta encoder makes them small but costs as much time
//! per value as compressing the plain values did. This one packs a block
//! of deltas in a few instructions a value.

use arrow_array::{Array, UInt32Array};
use parquet::basic::Encoding;
use parquet::errors::ParquetError;
use parquet::file::properties::WriterProperties;
use parquet::schema::types::ColumnDescPtr;

use crate::pages::{self, Chunk};

/// Values a block holds, and its miniblocks (Parquet's writer's choice).
const BLOCK: usize = 128;
const MINIBLOCKS: usize = 4;
const MINIBLOCK: usize = BLOCK / MINIBLOCKS;

/// Writes `array` as the column chunk of `descr`, a 32-bit integer
/// column: one `DELTA_BINARY_PACKED` data page.
pub(crate) fn encode(
    descr: &ColumnDescPtr,
    props: &WriterProperties,
    array: &UInt32Array,
) -> Result<Chunk, ParquetError> {
    let mut data = Vec::with_capacity(array.len() / 2 + 64);
    pages::levels(descr, array.nulls(), array.len(), &mut data)?;
    match array.nulls() {
        None => deltas(array.values(), &mut data),
        Some(nulls) => {
            let all = array.values();
            let present: Vec<u32> = nulls.valid_indices().map(|i| all[i]).collect();
            deltas(&present, &mut data);
        }
    }
    pages::chunk(
        descr,
        props,
        None,
        &data,
        Encoding::DELTA_BINARY_PACKED,
        array.len(),
    )
}

/// Appends `values` (an INT32 column's, as their bits) in the
/// `DELTA_BINARY_PACKED` encoding: a header (block size, miniblocks a
/// block, value count, first value), then blocks of deltas from the value
/// before, each its smallest delta and its miniblocks' bit widths, then
/// each miniblock's deltas less that smallest, bit-packed. Deltas wrap
/// around in 32 bits, as Parquet's own writer takes them (readers then
/// never meet a width over 32).
pub(crate) fn deltas(values: &[u32], out: &mut Vec<u8>) {
    uleb128(BLOCK as u64, out);
    uleb128(MINIBLOCKS as u64, out);
    uleb128(values.len() as u64, out);
    uleb128(
        zigzag(i64::from(values.first().map_or(0, |&v| v as i32))),
        out,
    );
    let mut deltas = [0u32; BLOCK];
    let mut at = 1;
    while at < values.len() {
        let n = BLOCK.min(values.len() - at);
        for (j, d) in deltas[..n].iter_mut().enumerate() {
            *d = values[at + j].wrapping_sub(values[at + j - 1]);
        }
        // The smallest delta as a signed 32-bit number.
        let min = deltas[..n].iter().map(|&d| d as i32).min().unwrap_or(0);
        uleb128(zigzag(i64::from(min)), out);
        let widths_at = out.len();
        out.extend_from_slice(&[0; MINIBLOCKS]);
        for (m, mini) in deltas[..n].chunks(MINIBLOCK).enumerate() {
            let less = |d: u32| d.wrapping_sub(min as u32);
            let max = mini.iter().map(|&d| less(d)).max().unwrap_or(0);
            let width = u32::BITS - max.leading_zeros();
            out[widths_at + m] = width as u8;
            // A short last miniblock is padded to its full length.
            let padded = (mini.iter().map(|&d| less(d))).chain(std::iter::repeat(0));
            bit_pack(padded.take(MINIBLOCK), width, out);
        }
        at += n;
    }
}

/// `values` at `width` bits each (at most 32), from the lowest bit.
fn bit_pack(values: impl Iterator<Item = u32>, width: u32, out: &mut Vec<u8>) {
    if width == 0 {
        return;
    }
    let (mut acc, mut bits) = (0u64, 0u32);
    for v in values {
        // `bits` is below 8 here: nothing of `v` is shifted out.
        acc |= u64::from(v) << bits;
        bits += width;
        while bits >= 8 {
            out.push(acc as u8);
            acc >>= 8;
            bits -= 8;
        }
    }
    // 32 values of any width fill whole bytes.
    debug_assert_eq!(bits, 0);
}

fn zigzag(v: i64) -> u64 {
    ((v << 1) ^ (v >> 63)) as u64
}

fn uleb128(mut v: u64, out: &mut Vec<u8>) {
    while v >= 0x80 {
        out.push((v as u8) | 0x80);
        v >>= 7;
    }
    out.push(v as u8);
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
        let dir = std::env::temp_dir().join(format!("perfq-delta-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
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

    use super::*;
}
