//! Text columns dictionary-encoded by their writer rather than by Parquet.
//!
//! A frames table's names, files and paths repeat: hundreds of thousands
//! of rows share a few thousand functions and a few dozen DSOs, and the
//! caller already holds each distinct value once (shared strings).
//! Handed to Parquet as plain strings, every cell was copied into a row
//! group's buffers and then hashed and compared again by Parquet's
//! dictionary encoder (its interner), most of the cost of writing the
//! frames table on the thread every other step waits for.
//!
//! Here the caller builds each row group's dictionary as it goes, looking
//! a value up by where it is stored (its address) and only a value new to
//! the group by its text, and hands the group on as an Arrow dictionary
//! array. [`encode`] writes that array as the column chunk Parquet's
//! writer would have (see `pages`): a PLAIN dictionary page and an
//! `RLE_DICTIONARY` data page, compressed as the file's properties say. Its
//! dictionary is the same (values in order of first appearance, each
//! once), so the file reads back the same rows.

use std::hash::Hasher;
use std::marker::PhantomData;
use std::sync::Arc;

use arrow_array::types::UInt32Type;
use arrow_array::{Array, ArrayRef, DictionaryArray, StringArray, UInt32Array};
use arrow_buffer::{BooleanBuffer, Buffer, NullBuffer, OffsetBuffer, ScalarBuffer};
use hashbrown::HashTable;
use parquet::errors::ParquetError;
use parquet::file::properties::WriterProperties;
use parquet::schema::types::ColumnDescPtr;
use rustc_hash::{FxHashMap, FxHasher};

use crate::pages::{self, general, Chunk};

/// One row group's text column being built: a key per row into the
/// group's dictionary of distinct values.
///
/// Values borrowed for `'a` ([`TextDictionary::push`]) are looked up by
/// address first: no other value can be stored there while they are
/// borrowed, and most cells are a value stored once and shared (a
/// function's name, a DSO's path). Any other value
/// ([`TextDictionary::push_text`]), and a borrowed one at an address new
/// to the group, is looked up by its text, so that equal values are one
/// dictionary entry wherever they are stored.
pub(crate) struct TextDictionary<'a> {
    /// The dictionary key of each row, [`NULL`] for a null.
    keys: Vec<u32>,
    nulls: usize,
    /// The dictionary: where each value ends in `bytes`, after a leading 0.
    offsets: Vec<i32>,
    bytes: Vec<u8>,
    /// Keys by (address, length) of values borrowed for `'a`.
    by_address: FxHashMap<(usize, usize), u32>,
    /// Keys by text: entries of the dictionary, by their hash.
    by_text: HashTable<u32>,
    /// Borrowed values seen lately, by a hash of their address: a
    /// column's few DSOs or kinds, or a function's rows one after the
    /// other, are found here without a probe of `by_address`.
    recent: [Recent; RECENT],
    /// The key of the previous value looked up by text.
    last_text: Option<u32>,
    borrowed: PhantomData<&'a str>,
}

impl<'a> TextDictionary<'a> {
    /// Dictionary bytes a row group holds at most: past it the group is
    /// handed on early, far from where 32-bit offsets end.
    pub(crate) const GROUP_BYTES: usize = 1 << 30;

    /// Room for `rows` rows.
    pub(crate) fn with_capacity(rows: usize) -> TextDictionary<'a> {
        TextDictionary {
            keys: Vec::with_capacity(rows),
            nulls: 0,
            offsets: vec![0],
            bytes: Vec::new(),
            by_address: FxHashMap::default(),
            by_text: HashTable::new(),
            recent: [Recent::NONE; RECENT],
            last_text: None,
            borrowed: PhantomData,
        }
    }

    /// The dictionary's bytes so far.
    pub(crate) fn dictionary_bytes(&self) -> usize {
        self.bytes.len()
    }

    /// Appends a value, or a null.
    #[inline]
    pub(crate) fn put(&mut self, v: Option<Text<'a, '_>>) {
        match v {
            Some(Text::Kept(s)) => self.push(Some(s)),
            Some(Text::Made(s)) => self.push_text(Some(s)),
            None => self.append(None),
        }
    }

    /// Appends a value borrowed for `'a`, or a null.
    #[inline]
    pub(crate) fn push(&mut self, v: Option<&'a str>) {
        let key = v.and_then(|s| {
            let at = (s.as_ptr() as usize, s.len());
            // Fibonacci hashing of the address picks the slot.
            let slot = ((at.0 as u64).wrapping_mul(0x9e37_79b9_7f4a_7c15) >> 60) as usize % RECENT;
            match self.recent[slot] {
                Recent { at: seen, key } if seen == at => Some(key),
                _ => self.not_recent(slot, at, s),
            }
        });
        self.append(key);
    }

    /// The key of a borrowed value not in slot `slot` of the recent ones,
    /// which it then takes.
    #[inline(never)]
    fn not_recent(&mut self, slot: usize, at: (usize, usize), s: &str) -> Option<u32> {
        let key = match self.by_address.get(&at) {
            Some(&key) => key,
            None => {
                let key = self.key_of(s)?;
                self.by_address.insert(at, key);
                key
            }
        };
        self.recent[slot] = Recent { at, key };
        Some(key)
    }

    /// Appends a value looked up by its text (one not borrowed for `'a`),
    /// or a null.
    pub(crate) fn push_text(&mut self, v: Option<&str>) {
        let key = v.and_then(|s| match self.last_text {
            Some(key) if self.entry(key) == s.as_bytes() => Some(key),
            _ => {
                let key = self.key_of(s);
                self.last_text = key;
                key
            }
        });
        self.append(key);
    }

    #[inline]
    fn append(&mut self, key: Option<u32>) {
        self.keys.push(key.unwrap_or(NULL));
        self.nulls += usize::from(key.is_none());
    }

    /// The key of the value `s`, appended to the dictionary if new; `None`
    /// if it would take the dictionary past 32-bit offsets.
    fn key_of(&mut self, s: &str) -> Option<u32> {
        let hash = text_hash(s.as_bytes());
        let (offsets, bytes) = (&self.offsets, &self.bytes);
        let entry = |key: u32| {
            let key = key as usize;
            let (from, to) = (offsets[key] as usize, offsets[key + 1] as usize);
            &bytes[from..to]
        };
        if let Some(&key) = self.by_text.find(hash, |&k| entry(k) == s.as_bytes()) {
            return Some(key);
        }
        let end = i32::try_from(self.bytes.len() + s.len()).ok()?;
        let key = u32::try_from(self.offsets.len() - 1)
            .ok()
            .filter(|&k| k != NULL)?;
        self.bytes.extend_from_slice(s.as_bytes());
        self.offsets.push(end);
        let (offsets, bytes) = (&self.offsets, &self.bytes);
        let rehash = |&k: &u32| {
            let k = k as usize;
            text_hash(&bytes[offsets[k] as usize..offsets[k + 1] as usize])
        };
        self.by_text.insert_unique(hash, key, rehash);
        Some(key)
    }

    /// The dictionary entry `key` (a key this group handed out).
    fn entry(&self, key: u32) -> &[u8] {
        let key = key as usize;
        match (self.offsets.get(key), self.offsets.get(key + 1)) {
            (Some(&from), Some(&to)) => self.bytes.get(from as usize..to as usize).unwrap_or(&[]),
            _ => &[],
        }
    }

    /// The group's column: an Arrow dictionary array, its dictionary in
    /// order of first appearance. The builder is left empty for the next
    /// group.
    pub(crate) fn finish(&mut self) -> ArrayRef {
        let rows = self.keys.len();
        let mut keys = std::mem::replace(&mut self.keys, Vec::with_capacity(rows));
        let nulls = (self.nulls > 0).then(|| validity(&mut keys));
        let keys = UInt32Array::new(ScalarBuffer::from(keys), nulls);
        let offsets = std::mem::replace(&mut self.offsets, vec![0]);
        let offsets = OffsetBuffer::new(ScalarBuffer::from(offsets));
        let bytes = Buffer::from_vec(std::mem::take(&mut self.bytes));
        // SAFETY: every value was appended from a `&str`, so the bytes are
        // UTF-8 and each offset (taken after a whole value) is on a
        // character boundary; offsets start at 0, never decrease, and the
        // last is the length of the bytes (`key_of` checks it fits).
        let values = unsafe { StringArray::new_unchecked(offsets, bytes, None) };
        // SAFETY: every key is an index `key_of` handed out for an entry
        // it appended, or 0 under a null.
        let array = unsafe { DictionaryArray::<UInt32Type>::new_unchecked(keys, Arc::new(values)) };
        self.nulls = 0;
        self.by_address.clear();
        self.by_text.clear();
        self.recent = [Recent::NONE; RECENT];
        self.last_text = None;
        Arc::new(array)
    }
}

/// The validity of `keys` ([`NULL`] where a row is null), whose nulls
/// then hold 0, as Arrow's builders leave them.
fn validity(keys: &mut [u32]) -> NullBuffer {
    let mut bits: Vec<u8> = Vec::with_capacity(keys.len().div_ceil(8));
    for group in keys.chunks_mut(8) {
        let mut byte = 0u8;
        for (i, k) in group.iter_mut().enumerate() {
            let valid = *k != NULL;
            byte |= u8::from(valid) << i;
            *k *= u32::from(valid);
        }
        bits.push(byte);
    }
    NullBuffer::new(BooleanBuffer::new(Buffer::from_vec(bits), 0, keys.len()))
}

/// The key a null row holds while its group is built.
const NULL: u32 = u32::MAX;

/// Slots of [`TextDictionary`]'s cache of recent values.
const RECENT: usize = 16;

/// A borrowed value's (address, length) and key.
#[derive(Clone, Copy)]
struct Recent {
    at: (usize, usize),
    key: u32,
}

impl Recent {
    /// No value: no `&str` is `usize::MAX` bytes long.
    const NONE: Recent = Recent {
        at: (0, usize::MAX),
        key: NULL,
    };
}

/// A value for [`TextDictionary::put`].
#[derive(Clone, Copy, Debug)]
pub(crate) enum Text<'a, 'b> {
    /// Borrowed for the dictionary's whole life: looked up by address.
    Kept(&'a str),
    /// Any other: looked up by its text.
    Made(&'b str),
}

/// The hash of a dictionary value's text.
fn text_hash(bytes: &[u8]) -> u64 {
    let mut h = FxHasher::default();
    h.write(bytes);
    h.finish()
}

/// Writes `array` (`u32` keys into a string dictionary) as the column
/// chunk of `descr`, a string column, compressed as `props` say: a PLAIN
/// dictionary page, then one `RLE_DICTIONARY` data page.
pub(crate) fn encode(
    descr: &ColumnDescPtr,
    props: &WriterProperties,
    array: &DictionaryArray<UInt32Type>,
) -> Result<Chunk, ParquetError> {
    let values = array
        .values()
        .as_any()
        .downcast_ref::<StringArray>()
        .ok_or_else(|| general("a dictionary column's values are not strings"))?;
    if values.null_count() > 0 {
        return Err(general("a dictionary column's dictionary holds a null"));
    }
    let keys = array.keys();
    // The dictionary page: each value's length (4 bytes) then its bytes.
    let mut plain = Vec::with_capacity(values.values().len() + 4 * values.len());
    for v in values.iter().flatten() {
        let len = u32::try_from(v.len()).map_err(|_| general("a dictionary value over 4 GiB"))?;
        plain.extend_from_slice(&len.to_le_bytes());
        plain.extend_from_slice(v.as_bytes());
    }
    let dictionary = pages::Dictionary {
        plain: &plain,
        values: u32::try_from(values.len()).map_err(|_| general("dictionary too long"))?,
    };
    let present = pages::present(keys.values(), keys.nulls());
    let (nulls, rows) = (keys.nulls(), keys.len());
    pages::keyed_chunk(descr, props, dictionary, &present, nulls, rows, None)
}

#[cfg(test)]
mod tests {
    use std::fs::File;

    use arrow_array::cast::AsArray;
    use parquet::arrow::arrow_reader::ParquetRecordBatchReaderBuilder;
    use parquet::basic::Encoding;
    use parquet::file::reader::{FileReader, SerializedFileReader};

    use super::*;
    use crate::pages::rle;
    use crate::table::ROWS_PER_GROUP;
    use crate::{Column, ColumnType, Table};
    use parquet::column::page::Page;

    /// Row groups of `(nullable, required)` values, the nullable
    /// column's values given to the dictionary by text and the required
    /// one's by address (`kept`: the strings outlive the builder).
    fn groups(kept: &[String]) -> Vec<Vec<(Option<String>, String)>> {
        let mut groups = Vec::new();
        let mut rng = 0x2545_f491_4f6c_dd1du64;
        let mut next = move || {
            rng ^= rng << 13;
            rng ^= rng >> 7;
            rng ^= rng << 17;
            rng
        };
        // Patterns that meet every branch of the run/literal encoder:
        // runs of every length around 8 at every alignment, alternations,
        // nulls only, one value, and many distinct values (wide keys).
        for pattern in 0..6 {
            let n = match pattern {
                5 => ROWS_PER_GROUP,
                _ => 1 + (next() % 3000) as usize,
            };
            let mut rows = Vec::with_capacity(n);
            let mut i = 0;
            while rows.len() < n {
                let run = 1 + (next() % if pattern == 3 { 40 } else { 20 }) as usize;
                let v = match pattern {
                    0 => (next() % 5) as usize,
                    1 => i % 2,
                    2 => 0,
                    3 => (next() % 3) as usize,
                    _ => (next() % kept.len() as u64) as usize,
                };
                for _ in 0..run.min(n - rows.len()) {
                    let text = match pattern {
                        2 => None,
                        3 if v == 0 => None,
                        _ => Some(format!("t{v}")),
                    };
                    rows.push((text, kept[v % kept.len()].clone()));
                }
                i += 1;
            }
            groups.push(rows);
        }
        groups
    }

    fn read(path: &std::path::Path) -> Vec<(Option<String>, String)> {
        let r = ParquetRecordBatchReaderBuilder::try_new(File::open(path).unwrap())
            .unwrap()
            .build()
            .unwrap();
        let mut rows = Vec::new();
        for b in r {
            let b = b.unwrap();
            let (a, c) = (
                b.column(0).as_string::<i32>(),
                b.column(1).as_string::<i32>(),
            );
            for i in 0..b.num_rows() {
                let a = a.is_valid(i).then(|| a.value(i).to_string());
                rows.push((a, c.value(i).to_string()));
            }
        }
        rows
    }

    /// Parquet's own reader is the oracle: a file whose text columns were
    /// dictionary-encoded here reads back the rows given, the same rows as
    /// the file Parquet's writer makes from plain strings.
    #[test]
    fn dictionary_columns_read_back_as_written() {
        let dir = crate::oracle::scratch("dictionary");
        let columns = [
            Column::new("nullable", ColumnType::Str)
                .nullable()
                .without_statistics(),
            Column::new("required", ColumnType::Str).without_statistics(),
        ];
        let kept: Vec<String> = (0..70_000).map(|i| format!("value {i}")).collect();
        let groups = groups(&kept);
        let (ours, theirs) = (dir.join("ours.parquet"), dir.join("theirs.parquet"));
        let mut t = Table::create(&ours, &columns).unwrap();
        let mut u = Table::create(&theirs, &columns).unwrap();
        for rows in &groups {
            let (mut a, mut b) = (
                TextDictionary::with_capacity(rows.len()),
                TextDictionary::with_capacity(rows.len()),
            );
            for (x, y) in rows {
                a.put(x.as_deref().map(Text::Made));
                b.push(Some(kept_str(&kept, y)));
            }
            t.push_group(vec![a.finish(), b.finish()]).unwrap();
            let plain: Vec<ArrayRef> = vec![
                Arc::new(StringArray::from_iter(rows.iter().map(|r| r.0.as_deref()))),
                Arc::new(StringArray::from_iter_values(
                    rows.iter().map(|r| r.1.as_str()),
                )),
            ];
            u.push_group(plain).unwrap();
        }
        t.finish().unwrap();
        u.finish().unwrap();
        let expected: Vec<_> = groups.concat();
        assert_eq!(read(&ours), expected);
        assert_eq!(read(&theirs), expected);

        // The chunks are dictionary-encoded, with the dictionaries
        // Parquet's writer makes: the same number of entries.
        let (r, s) = (
            SerializedFileReader::new(File::open(&ours).unwrap()).unwrap(),
            SerializedFileReader::new(File::open(&theirs).unwrap()).unwrap(),
        );
        assert_eq!(r.metadata().num_row_groups(), groups.len());
        for (g, rows) in groups.iter().enumerate() {
            for c in 0..2 {
                let ours = r.metadata().row_group(g).column(c);
                assert!(ours.encodings().any(|e| e == Encoding::RLE_DICTIONARY));
                assert_eq!(ours.num_values(), rows.len() as i64);
                let dictionary_values = |reader: &SerializedFileReader<File>| {
                    let mut pages = reader
                        .get_row_group(g)
                        .unwrap()
                        .get_column_page_reader(c)
                        .unwrap();
                    match pages.get_next_page().unwrap() {
                        Some(Page::DictionaryPage { num_values, .. }) => num_values,
                        _ => panic!("no dictionary page"),
                    }
                };
                assert_eq!(
                    dictionary_values(&r),
                    dictionary_values(&s),
                    "group {g} column {c}"
                );
            }
        }
        std::fs::remove_dir_all(&dir).unwrap();
    }

    /// The string of `kept` equal to `v` (borrowed from `kept`, so that the
    /// dictionary sees each value at one address).
    fn kept_str<'a>(kept: &'a [String], v: &str) -> &'a str {
        let i: usize = v.trim_start_matches("value ").parse().unwrap();
        &kept[i]
    }

    #[test]
    fn equal_values_stored_apart_are_one_entry() {
        let (a, b) = (String::from("same"), String::from("same"));
        let mut d = TextDictionary::with_capacity(4);
        d.push(Some(&a));
        d.push(Some(&b));
        d.push_text(Some("same"));
        d.push(None);
        let array = d.finish();
        let array = array.as_dictionary::<UInt32Type>();
        assert_eq!(array.values().len(), 1);
        assert_eq!(
            array.keys().iter().collect::<Vec<_>>(),
            [Some(0), Some(0), Some(0), None]
        );
    }

    #[test]
    fn run_and_literal_encoding() {
        // Twelve equal values then three: a run of twelve (header 12 << 1,
        // the value in a byte), then one group of eight literals (header
        // 1 << 1 | 1; 1, 2 and 3 in three bits each from the lowest bit,
        // zero-padded to 24 bits).
        let mut out = Vec::new();
        rle::encode(&[5, 5, 5, 5, 5, 5, 5, 5, 5, 5, 5, 5, 1, 2, 3], 3, &mut out);
        assert_eq!(out, [24, 5, 3, 0b1101_0001, 0, 0]);
        // A run that starts inside a group is packed up to the group's
        // end; what is left of it, eight or more, is repeated.
        let mut out = Vec::new();
        let values: Vec<u32> = [1, 2].into_iter().chain([7; 14]).collect();
        rle::encode(&values, 3, &mut out);
        assert_eq!(out, [3, 0b1101_0001, 0b1111_1111, 0b1111_1111, 8 << 1, 7]);
    }
}
