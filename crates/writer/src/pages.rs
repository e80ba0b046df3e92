//! Column chunks whose pages perfq encodes itself, spliced into a row
//! group beside those Parquet's writer makes (`table.rs`): for columns
//! where perfq knows more than the writer does (a text column's
//! dictionary, built as its rows came; integers that mostly differ by
//! little from the row before). One data page (version 1) a chunk, with
//! a dictionary page before it if the encoding has one, compressed as
//! the file's properties say, with the offset index and page encoding
//! statistics Parquet's writer would give.

use std::borrow::Cow;

use arrow_buffer::NullBuffer;
use bytes::Bytes;
use parquet::basic::{Compression, Encoding, PageType};
use parquet::column::page::{CompressedPage, Page, PageWriteSpec, PageWriter};
use parquet::column::writer::ColumnCloseResult;
use parquet::errors::ParquetError;
use parquet::file::metadata::{ColumnChunkMetaData, OffsetIndexBuilder, PageEncodingStats};
use parquet::file::properties::WriterProperties;
use parquet::file::statistics::Statistics;
use parquet::file::writer::{SerializedPageWriter, TrackedWrite};
use parquet::schema::types::ColumnDescPtr;

/// An encoded column chunk: its bytes, and what the row group writer
/// needs to splice them in (`SerializedRowGroupWriter::append_column`).
pub(crate) type Chunk = (Bytes, ColumnCloseResult);

/// A dictionary page's values, PLAIN-encoded, and how many.
pub(crate) struct Dictionary<'a> {
    pub(crate) plain: &'a [u8],
    pub(crate) values: u32,
}

/// Writes the chunk of `descr` (a top-level column of `rows` rows, those
/// `nulls` marks valid having values) whose dictionary is `dictionary`
/// and whose present values are `keys` into it: the dictionary page, then
/// one `RLE_DICTIONARY` data page of the levels and the keys bit-packed.
pub(crate) fn keyed_chunk(
    descr: &ColumnDescPtr,
    props: &WriterProperties,
    dictionary: Dictionary<'_>,
    keys: &[u32],
    nulls: Option<&NullBuffer>,
    rows: usize,
    statistics: Option<Statistics>,
) -> Result<Chunk, ParquetError> {
    let mut data = Vec::with_capacity(keys.len() / 2 + rows / 4 + 16);
    levels(descr, nulls, rows, &mut data)?;
    let width = rle::width(u64::from(dictionary.values.saturating_sub(1)));
    data.push(width);
    rle::encode(keys, width, &mut data);
    let page = DataPage::top_level(&data, Encoding::RLE_DICTIONARY, rows);
    chunk(descr, props, Some(dictionary), page, statistics)
}

/// The values of the rows `nulls` marks valid (all of them without
/// `nulls`): what a data page holds after its levels.
pub(crate) fn present<'a, T: Copy>(values: &'a [T], nulls: Option<&NullBuffer>) -> Cow<'a, [T]> {
    match nulls {
        None => Cow::Borrowed(values),
        Some(nulls) => Cow::Owned(nulls.valid_indices().map(|i| values[i]).collect()),
    }
}

/// Appends `levels` (each below 2^`width`) to a data page being made, as
/// version 1 pages have them: their length in 4 bytes, then the levels.
pub(crate) fn length_prefixed(
    levels: &[u32],
    width: u8,
    data: &mut Vec<u8>,
) -> Result<(), ParquetError> {
    with_length(data, |data| rle::encode(levels, width, data))
}

/// Appends what `write` appends to `data`, after its length in 4 bytes.
fn with_length(data: &mut Vec<u8>, write: impl FnOnce(&mut Vec<u8>)) -> Result<(), ParquetError> {
    let at = data.len();
    data.extend_from_slice(&[0; 4]);
    write(data);
    let len = u32::try_from(data.len() - at - 4).map_err(|_| general("levels too long"))?;
    data[at..at + 4].copy_from_slice(&len.to_le_bytes());
    Ok(())
}

/// Appends the definition levels of a top-level column of `rows` rows
/// with validity `nulls` to a data page being made, as version 1 pages
/// have them (their length in 4 bytes, then the levels): nothing for a
/// column that allows no nulls, which then must have none.
pub(crate) fn levels(
    descr: &ColumnDescPtr,
    nulls: Option<&NullBuffer>,
    rows: usize,
    data: &mut Vec<u8>,
) -> Result<(), ParquetError> {
    if descr.max_rep_level() > 0 || descr.max_def_level() > 1 {
        return Err(general("perfq encodes top-level columns only"));
    }
    if descr.max_def_level() == 0 {
        return match nulls.is_some_and(|n| n.null_count() > 0) {
            true => Err(general("nulls in a column that allows none")),
            false => Ok(()),
        };
    }
    with_length(data, |data| rle::levels(nulls, rows, data))
}

/// A chunk's one data page.
pub(crate) struct DataPage<'a> {
    /// The levels, then the values.
    pub(crate) data: &'a [u8],
    /// The values' encoding.
    pub(crate) encoding: Encoding,
    /// Levels (values, nulls included): the rows of a top-level column,
    /// more for a list column.
    pub(crate) levels: usize,
    /// Rows.
    pub(crate) rows: usize,
}

impl<'a> DataPage<'a> {
    /// The page of a top-level column of `rows` rows.
    pub(crate) fn top_level(data: &'a [u8], encoding: Encoding, rows: usize) -> Self {
        DataPage {
            data,
            encoding,
            levels: rows,
            rows,
        }
    }
}

/// Writes the chunk of `descr`: `dictionary`'s page if any, then `page`;
/// `statistics` are the chunk's, if it has any.
pub(crate) fn chunk(
    descr: &ColumnDescPtr,
    props: &WriterProperties,
    dictionary: Option<Dictionary<'_>>,
    page: DataPage<'_>,
    statistics: Option<Statistics>,
) -> Result<Chunk, ParquetError> {
    let DataPage {
        data,
        encoding,
        levels,
        rows,
    } = page;
    let codec = props.compression(descr.path());
    let mut compress = Compressor::new(codec)?;
    let dictionary = match dictionary {
        Some(d) => Some(CompressedPage::new(
            Page::DictionaryPage {
                buf: compress.bytes(d.plain)?,
                num_values: d.values,
                encoding: Encoding::PLAIN,
                is_sorted: false,
            },
            d.plain.len(),
        )),
        None => None,
    };
    let page = CompressedPage::new(
        Page::DataPage {
            buf: compress.bytes(data)?,
            num_values: u32::try_from(levels).map_err(|_| general("too many values"))?,
            encoding,
            def_level_encoding: Encoding::RLE,
            rep_level_encoding: Encoding::RLE,
            statistics: None,
        },
        data.len(),
    );
    let mut sink = TrackedWrite::new(Vec::new());
    let (dict, page) = {
        let mut pages = SerializedPageWriter::new(&mut sink);
        let dict = dictionary.map(|d| pages.write_page(d)).transpose()?;
        let page = pages.write_page(page)?;
        pages.close()?;
        (dict, page)
    };
    let mut offsets = OffsetIndexBuilder::new();
    offsets.append_offset_and_size(
        page.offset as i64,
        i32::try_from(page.compressed_size).map_err(|_| general("page too large"))?,
    );
    offsets.append_row_count(rows as i64);
    let written = Written {
        codec,
        encoding,
        levels,
        dict,
        page,
    };
    let metadata = written.metadata(descr, statistics)?;
    let bytes = Bytes::from(sink.into_inner()?);
    let close = ColumnCloseResult {
        bytes_written: bytes.len() as u64,
        rows_written: rows as u64,
        metadata,
        bloom_filter: None,
        column_index: None,
        offset_index: Some(offsets.build()),
    };
    Ok((bytes, close))
}

/// A column chunk's pages as written: what its metadata says of them.
struct Written {
    codec: Compression,
    encoding: Encoding,
    levels: usize,
    dict: Option<PageWriteSpec>,
    page: PageWriteSpec,
}

impl Written {
    /// The chunk's metadata: its encodings, sizes, offsets and
    /// `statistics`.
    fn metadata(
        &self,
        descr: &ColumnDescPtr,
        statistics: Option<Statistics>,
    ) -> Result<ColumnChunkMetaData, ParquetError> {
        let Written {
            codec,
            encoding,
            levels,
            dict,
            page,
        } = self;
        let stats = |page_type, encoding| PageEncodingStats {
            page_type,
            encoding,
            count: 1,
        };
        let mut encodings = vec![Encoding::RLE, *encoding];
        let mut page_stats = vec![stats(PageType::DATA_PAGE, *encoding)];
        if dict.is_some() {
            encodings.push(Encoding::PLAIN);
            page_stats.insert(0, stats(PageType::DICTIONARY_PAGE, Encoding::PLAIN));
        }
        let size = |f: fn(&PageWriteSpec) -> usize| (dict.as_ref().map_or(0, f) + f(page)) as i64;
        let mut metadata = ColumnChunkMetaData::builder(descr.clone())
            .set_compression(*codec)
            .set_encodings(encodings)
            .set_page_encoding_stats(page_stats)
            .set_num_values(*levels as i64)
            .set_total_compressed_size(size(|p| p.compressed_size))
            .set_total_uncompressed_size(size(|p| p.uncompressed_size))
            .set_dictionary_page_offset(dict.as_ref().map(|d| d.offset as i64))
            .set_data_page_offset(page.offset as i64);
        if let Some(statistics) = statistics {
            metadata = metadata.set_statistics(statistics);
        }
        metadata.build()
    }
}

pub(crate) fn general(why: &str) -> ParquetError {
    ParquetError::General(why.to_string())
}

/// Compresses pages with the file's codec.
enum Compressor {
    None,
    /// zstd at this level, through the thread's context ([`ZSTD`]).
    Zstd(i32),
}

/// zstd's levels up to this one take [`HASH_LOG`] and a minimum match of
/// perfq's: perfq writes at 1, and columns of counter values at
/// [`COUNTER_LEVEL`].
const FAST_LEVELS: i32 = 2;

/// The level of columns of counter values (`Column::counters`): zstd's
/// fast strategy, as level 1, but with matches from [`COUNTER_MIN_MATCH`]
/// bytes. A counter's value has four or five significant bytes of its
/// eight; values near each other share their upper bytes, which matches
/// of six bytes mostly miss.
pub(crate) const COUNTER_LEVEL: i32 = 2;

/// The size (log 2) of zstd's match table for pages of perfq's own
/// encoding. At level 1 zstd takes a table of 2^14 entries and, for inputs
/// over 256 KB, matches of 7 bytes or more (6 up to it). perfq writes a
/// chunk as one page of up to 64 Ki rows, and its pages of random 64-bit
/// values (addresses, ids) came out larger than Parquet's pages of 20,000
/// rows. A 2^16-entry table made up for it; the shorter matches
/// ([`MIN_MATCH`]) do as well with the 2^14-entry table (64 KB, within a
/// core's L2 cache), and compress faster though they take more
/// instructions (fewer cache misses).
const HASH_LOG: u32 = 14;
/// The shortest match zstd looks for (what level 1 takes for inputs up to
/// 256 KB).
const MIN_MATCH: u32 = 6;
/// The shortest match in pages of counter values ([`COUNTER_LEVEL`]).
const COUNTER_MIN_MATCH: u32 = 4;

thread_local! {
    /// The encoding thread's zstd context and the level it is set for:
    /// made once per thread rather than once per column chunk (a context
    /// is a few hundred kilobytes, allocated and cleared; there are
    /// thousands of chunks in a system-wide capture's dataset), and set
    /// anew when a chunk of another level comes.
    static ZSTD: std::cell::RefCell<Option<(i32, zstd::bulk::Compressor<'static>)>> =
        const { std::cell::RefCell::new(None) };
}

/// Sets context `c` for `level`: at [`FAST_LEVELS`], perfq's table size
/// and minimum match; above, the level's own.
fn set_level(c: &mut zstd::bulk::Compressor<'static>, level: i32) -> std::io::Result<()> {
    use zstd::zstd_safe::CParameter;
    let (hash_log, min_match) = match level {
        COUNTER_LEVEL => (HASH_LOG, COUNTER_MIN_MATCH),
        ..=FAST_LEVELS => (HASH_LOG, MIN_MATCH),
        // 0: the level's own.
        _ => (0, 0),
    };
    c.set_parameter(CParameter::CompressionLevel(level))?;
    c.set_parameter(CParameter::HashLog(hash_log))?;
    c.set_parameter(CParameter::MinMatch(min_match))
}

impl Compressor {
    fn new(codec: Compression) -> Result<Compressor, ParquetError> {
        match codec {
            Compression::UNCOMPRESSED => Ok(Compressor::None),
            Compression::ZSTD(level) => Ok(Compressor::Zstd(level.compression_level())),
            other => Err(general(&format!(
                "perfq encodes pages uncompressed or with zstd, not {other}"
            ))),
        }
    }

    fn bytes(&mut self, data: &[u8]) -> Result<Bytes, ParquetError> {
        let zstd = |e: std::io::Error| general(&format!("zstd: {e}"));
        match *self {
            Compressor::None => Ok(Bytes::copy_from_slice(data)),
            Compressor::Zstd(level) => ZSTD.with(|z| {
                let mut z = z.borrow_mut();
                let z = match &mut *z {
                    Some((l, c)) if *l == level => c,
                    Some((l, c)) => {
                        set_level(c, level).map_err(zstd)?;
                        *l = level;
                        c
                    }
                    slot @ None => {
                        let mut c = zstd::bulk::Compressor::new(level).map_err(zstd)?;
                        set_level(&mut c, level).map_err(zstd)?;
                        &mut slot.insert((level, c)).1
                    }
                };
                z.compress(data).map(Bytes::from).map_err(zstd)
            }),
        }
    }
}

/// Parquet's RLE / bit-packing hybrid encoding (of definition levels and
/// dictionary keys).
pub(crate) mod rle {
    use arrow_buffer::NullBuffer;

    /// Bits a value up to `max` takes.
    pub(crate) fn width(max: u64) -> u8 {
        (u64::BITS - max.leading_zeros()) as u8
    }

    /// Appends `values`, each below 2^`width`, to `out`: eight or more
    /// equal values from the start of a group of eight as one repeated
    /// value, the rest bit-packed in groups of eight (the last group
    /// padded with zeros, which readers ignore: they know how many values
    /// a page holds).
    pub(crate) fn encode(values: &[u32], width: u8, out: &mut Vec<u8>) {
        let n = values.len();
        // Values from `literal` on are not written yet; `i` is at a group
        // boundary counted from `literal`.
        let (mut i, mut literal) = (0, 0);
        while i + 8 <= n {
            let v = values[i];
            if values[i + 1..i + 8].iter().all(|&x| x == v) {
                let mut j = i + 8;
                while j < n && values[j] == v {
                    j += 1;
                }
                bit_packed(&values[literal..i], width, out);
                repeated(u64::from(v), j - i, width, out);
                (i, literal) = (j, j);
            } else {
                i += 8;
            }
        }
        bit_packed(&values[literal..], width, out);
    }

    /// Appends the definition levels (width 1) of a column of `rows` rows
    /// with validity `nulls` (all valid if `None`). A bitmap byte is a
    /// group of eight levels as bit packing lays them out, so groups are
    /// copied whole; runs of all-valid or all-null bytes are repeated.
    pub(crate) fn levels(nulls: Option<&NullBuffer>, rows: usize, out: &mut Vec<u8>) {
        let Some(nulls) = nulls else {
            if rows > 0 {
                repeated(1, rows, 1, out);
            }
            return;
        };
        let bits = nulls.inner();
        if bits.offset() != 0 {
            // Not from a builder here: level by level.
            let levels: Vec<u32> = bits.iter().map(u32::from).collect();
            return encode(&levels, 1, out);
        }
        let bytes = bits.values();
        let full = rows / 8;
        let (mut i, mut literal) = (0, 0);
        while i < full {
            let b = bytes[i];
            let mut j = i + 1;
            if b == 0 || b == 0xff {
                while j < full && bytes[j] == b {
                    j += 1;
                }
            }
            // A run of two bytes or more: shorter ones pack as small.
            if j - i >= 2 {
                packed_bytes(&bytes[literal..i], out);
                repeated(u64::from(b & 1), (j - i) * 8, 1, out);
                literal = j;
            }
            i = j;
        }
        let tail = rows % 8;
        let mut rest = bytes[literal..full].to_vec();
        if tail > 0 {
            // The last byte's bits past `rows` may be anything: cleared.
            rest.push(bytes[full] & ((1u8 << tail) - 1));
        }
        packed_bytes(&rest, out);
    }

    /// Groups of eight 1-bit values, a byte each, as one bit-packed run.
    fn packed_bytes(groups: &[u8], out: &mut Vec<u8>) {
        if !groups.is_empty() {
            uleb128(((groups.len() as u64) << 1) | 1, out);
            out.extend_from_slice(groups);
        }
    }

    fn repeated(v: u64, n: usize, width: u8, out: &mut Vec<u8>) {
        uleb128((n as u64) << 1, out);
        let bytes = usize::from(width).div_ceil(8);
        out.extend_from_slice(&v.to_le_bytes()[..bytes]);
    }

    /// `values` as one bit-packed run, zero-padded to a group of eight.
    fn bit_packed(values: &[u32], width: u8, out: &mut Vec<u8>) {
        if values.is_empty() {
            return;
        }
        let groups = values.len().div_ceil(8);
        uleb128(((groups as u64) << 1) | 1, out);
        out.reserve(groups * usize::from(width));
        let width = u32::from(width);
        let padding = std::iter::repeat_n(&0, groups * 8 - values.len());
        let (mut acc, mut bits) = (0u64, 0u32);
        for &v in values.iter().chain(padding) {
            // `bits` is below 8 and `width` at most 32: nothing of a value
            // is shifted out of `acc`.
            acc |= u64::from(v) << bits;
            bits += width;
            while bits >= 8 {
                out.push(acc as u8);
                acc >>= 8;
                bits -= 8;
            }
        }
    }

    /// `v` as an unsigned LEB128 varint (Parquet's run headers, and the
    /// delta encoding's header and minimums).
    pub(crate) fn uleb128(mut v: u64, out: &mut Vec<u8>) {
        while v >= 0x80 {
            out.push((v as u8) | 0x80);
            v >>= 7;
        }
        out.push(v as u8);
    }
}
