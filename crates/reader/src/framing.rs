//! Walking the data section record by record, in file order.
//!
//! This is where record sizes are checked, where the payloads that follow
//! some records (`AUXTRACE`, pipe-mode `HEADER_TRACING_DATA`) are stepped
//! over, where zstd `COMPRESSED`/`COMPRESSED2` records are expanded into
//! the records they hold, and where every record type is counted.

use std::collections::BTreeMap;

use crate::endian::Endian;
use crate::error::{Error, ErrorKind, FileOffset, Result, Warning};
use crate::events::{EventRef, Events};
use crate::record_type::RecordType;

/// Size of `perf_event_header`.
pub const HEADER_LEN: usize = 8;

/// Decompressed bytes that may pile up without forming one complete record
/// (records are at most 64 KiB, so this only trips on corrupt input).
const MAX_PENDING_DECOMPRESSED: usize = 64 << 20;

/// A record as found in the file, not yet decoded.
#[derive(Clone, Copy, Debug)]
pub struct RawRecord<'a> {
    /// Record type.
    pub kind: RecordType,
    /// `header.misc`.
    pub misc: u16,
    /// File offset of the record, or of the compressed record it came from.
    pub offset: FileOffset,
    /// Whether it came out of a zstd-compressed record.
    pub compressed: bool,
    /// The bytes after the 8-byte header.
    pub body: &'a [u8],
    /// Data that follows the record outside its size (`AUXTRACE` trace
    /// data, pipe-mode tracing data); empty for other records.
    pub payload: &'a [u8],
    /// The event it belongs to.
    pub event: EventRef,
    /// Its timestamp, when it carries one.
    pub time: Option<u64>,
}

/// Counts of one record type.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct TypeCount {
    /// Records at the top level of the data section.
    pub top: u64,
    /// Records found inside compressed records.
    pub compressed: u64,
}

impl TypeCount {
    /// Both together.
    pub fn total(&self) -> u64 {
        self.top + self.compressed
    }
}

/// What a pass over the records saw.
#[derive(Clone, Debug, Default)]
pub struct Stats {
    /// Counts of types below 128, indexed by type (the hot path: no
    /// lookup structure per record).
    small: Vec<TypeCount>,
    /// Counts of other types.
    large: BTreeMap<RecordType, TypeCount>,
    /// Samples per event index.
    pub samples_per_event: Vec<u64>,
    /// Samples whose id matches no event.
    pub samples_unknown_id: u64,
    /// Samples whose event could not be told (no id in a multi-event capture).
    pub samples_no_event: u64,
    /// Sum of `LOST.lost`: records the kernel dropped.
    pub lost_records: u64,
    /// Sum of `LOST_SAMPLES.lost`.
    pub lost_samples: u64,
    /// Bytes produced by decompression.
    pub decompressed_bytes: u64,
    /// Bytes of the data section walked.
    pub data_bytes: u64,
    /// First and last sample time.
    pub sample_time: Option<(u64, u64)>,
}

impl Stats {
    /// Total `SAMPLE` records, inside compressed records too.
    pub fn samples(&self) -> u64 {
        self.count(RecordType::SAMPLE).total()
    }

    /// The counts of one record type.
    pub fn count(&self, t: RecordType) -> TypeCount {
        match self.small.get(t.0 as usize) {
            Some(c) => *c,
            None => self.large.get(&t).copied().unwrap_or_default(),
        }
    }

    /// Every record type seen, in type order, with its counts.
    pub fn by_type(&self) -> impl Iterator<Item = (RecordType, TypeCount)> + '_ {
        let small = self
            .small
            .iter()
            .enumerate()
            .map(|(t, c)| (RecordType(t as u32), *c));
        small
            .chain(self.large.iter().map(|(t, c)| (*t, *c)))
            .filter(|(_, c)| c.total() > 0)
    }

    fn entry(&mut self, t: RecordType) -> &mut TypeCount {
        if self.small.is_empty() {
            self.small = vec![TypeCount::default(); 128];
        }
        match self.small.get_mut(t.0 as usize) {
            Some(c) => c,
            None => self.large.entry(t).or_default(),
        }
    }
}

struct Decompressor {
    dec: zstd::stream::raw::Decoder<'static>,
    /// Decompressed bytes not yet split into records.
    buf: Vec<u8>,
    /// How much of `buf` has been handed out.
    pos: usize,
    /// The compressed record the bytes at `pos` came from.
    container: u64,
}

/// Iterates the records of a data section in file order.
///
/// A lending iterator: each record borrows the iterator until the next
/// call. After an error, iteration stops.
pub struct FileRecords<'f> {
    file: &'f [u8],
    endian: Endian,
    events: &'f Events,
    pos: usize,
    end: usize,
    z: Option<Decompressor>,
    z_failed: bool,
    /// Skip decompression (the pipe-mode metadata pass needs only the top level).
    no_decompression: bool,
    done: bool,
    stats: Stats,
    warnings: Vec<Warning>,
}

impl<'f> FileRecords<'f> {
    /// Records of `file[start..end]`.
    pub(crate) fn new(
        file: &'f [u8],
        start: usize,
        end: usize,
        endian: Endian,
        events: &'f Events,
    ) -> Self {
        FileRecords {
            file,
            endian,
            events,
            pos: start,
            end: end.min(file.len()),
            z: None,
            z_failed: false,
            no_decompression: false,
            done: false,
            stats: Stats {
                samples_per_event: vec![0; events.len()],
                ..Stats::default()
            },
            warnings: Vec::new(),
        }
    }

    /// Walks only the top-level records, leaving compressed ones packed.
    pub(crate) fn without_decompression(mut self) -> Self {
        self.no_decompression = true;
        self
    }

    /// The whole file the records are in.
    pub(crate) fn file(&self) -> &'f [u8] {
        self.file
    }

    /// What has been counted so far.
    pub fn stats(&self) -> &Stats {
        &self.stats
    }

    /// Problems met so far that did not stop reading.
    pub fn warnings(&self) -> &[Warning] {
        &self.warnings
    }

    /// The capture's events.
    pub fn events(&self) -> &'f Events {
        self.events
    }

    /// Byte order.
    pub fn endian(&self) -> Endian {
        self.endian
    }

    /// The next record; at the end, or at an error (stored in `error`, for
    /// the caller to report after it has used what came before), `None`.
    pub fn next_ok(&mut self, error: &mut Option<Error>) -> Option<RawRecord<'_>> {
        match self.next_record() {
            Ok(r) => r,
            Err(e) => {
                *error = Some(e);
                None
            }
        }
    }

    /// The next record, or `None` at the end (or after an error).
    pub fn next_record(&mut self) -> Result<Option<RawRecord<'_>>> {
        if self.done {
            return Ok(None);
        }
        match self.step() {
            Ok(Some(loc)) => Ok(Some(self.materialize(loc))),
            Ok(None) => {
                self.done = true;
                self.finish();
                Ok(None)
            }
            Err(e) => {
                self.done = true;
                self.finish();
                Err(e)
            }
        }
    }

    fn finish(&mut self) {
        if let Some(z) = &self.z {
            let left = z.buf.len() - z.pos;
            if left > 0 {
                self.warnings.push(Warning::at(
                    z.container,
                    format!("{left} decompressed bytes at the end of the compressed data form no complete record; they were dropped"),
                ));
            }
        }
    }

    /// Finds the next record and returns where it is.
    fn step(&mut self) -> Result<Option<Loc>> {
        // First hand out what decompression produced.
        if let Some(loc) = self.next_decompressed()? {
            return Ok(Some(loc));
        }
        let remaining = self.end.saturating_sub(self.pos);
        if remaining == 0 {
            return Ok(None);
        }
        let off = self.pos as u64;
        if remaining < HEADER_LEN {
            self.warnings.push(Warning::at(
                off,
                format!("{remaining} bytes after the last complete record are too few for a record header; the capture is cut there"),
            ));
            return Ok(None);
        }
        let h = &self.file[self.pos..self.pos + HEADER_LEN];
        let e = self.endian;
        let kind = RecordType(e.u32_at(h, 0).unwrap_or(0));
        let misc = e.u16_at(h, 4).unwrap_or(0);
        let mut size = e.u16_at(h, 6).unwrap_or(0) as usize;
        if size < HEADER_LEN {
            return Err(Error::at(
                off,
                ErrorKind::BadRecordSize {
                    record_type: kind.0,
                    size: size as u64,
                },
            ));
        }
        if kind == RecordType::COMPRESSED2 {
            size = self.compressed2_size(off, size)?;
        }
        if size > remaining {
            self.warnings.push(Warning::at(
                off,
                format!(
                    "{kind} record needs {size} bytes but only {remaining} remain: the capture is cut; the partial record was dropped"
                ),
            ));
            return Ok(None);
        }
        let body_start = self.pos + HEADER_LEN;
        let body_end = self.pos + size;
        let body = &self.file[body_start..body_end];
        let payload_len = self.payload_len(kind, body, off)?;
        if payload_len > self.file.len() {
            // More than the whole file: not a cut capture but a wrong size.
            return Err(Error::at(
                off,
                ErrorKind::BadRecordSize {
                    record_type: kind.0,
                    size: (size as u64).saturating_add(payload_len as u64),
                },
            ));
        }
        if payload_len > remaining - size {
            self.warnings.push(Warning::at(
                off,
                format!(
                    "{kind} record's {payload_len} bytes of trailing data are cut after {} bytes; the record was dropped",
                    remaining - size
                ),
            ));
            return Ok(None);
        }
        self.pos = body_end + payload_len;
        self.stats.data_bytes += (size + payload_len) as u64;
        self.stats.entry(kind).top += 1;
        if kind == RecordType::COMPRESSED || kind == RecordType::COMPRESSED2 {
            self.decompress(kind, body, off)?;
        }
        Ok(Some(Loc::File {
            off,
            body_start,
            body_end,
            payload_len,
            kind,
            misc,
        }))
    }

    /// perf >= 6.16 can write a COMPRESSED2 whose u16 size wrapped; the
    /// explicit data size tells the real one.
    fn compressed2_size(&mut self, off: u64, size: usize) -> Result<usize> {
        let at = self.pos + HEADER_LEN;
        let Some(data_size) = self.endian.u64_at(self.file, at) else {
            return Ok(size);
        };
        let real = data_size.checked_add(16).map(|n| n.next_multiple_of(8));
        match real {
            Some(real) if real > size as u64 && real % 65536 == size as u64 % 65536 => {
                let real = usize::try_from(real).map_err(|_| {
                    Error::at(
                        off,
                        ErrorKind::BadRecordSize {
                            record_type: 83,
                            size: real,
                        },
                    )
                })?;
                self.warnings.push(Warning::at(
                    off,
                    format!("COMPRESSED2 size field {size} wrapped (perf >= 6.16 writer bug); using the data size, {real} bytes"),
                ));
                Ok(real)
            }
            _ => Ok(size),
        }
    }

    /// Bytes that follow a record outside its size.
    fn payload_len(&self, kind: RecordType, body: &[u8], off: u64) -> Result<usize> {
        let e = self.endian;
        let n = match kind {
            RecordType::AUXTRACE => e.u64_at(body, 0).unwrap_or(0),
            RecordType::HEADER_TRACING_DATA => {
                let size = e.u32_at(body, 0).unwrap_or(0) as u64;
                // perf writes the tracing data after a 12-byte record;
                // simpleperf keeps it inside the record.
                if body.len() as u64 >= 4 + size {
                    0
                } else {
                    size.next_multiple_of(8)
                }
            }
            _ => 0,
        };
        usize::try_from(n).map_err(|_| {
            Error::at(
                off,
                ErrorKind::BadRecordSize {
                    record_type: kind.0,
                    size: n,
                },
            )
        })
    }

    fn decompress(&mut self, kind: RecordType, body: &[u8], off: u64) -> Result<()> {
        if self.z_failed || self.no_decompression {
            return Ok(());
        }
        let data = if kind == RecordType::COMPRESSED2 {
            let n = self.endian.u64_at(body, 0).unwrap_or(0);
            match usize::try_from(n)
                .ok()
                .and_then(|n| body.get(8..8usize.checked_add(n)?))
            {
                Some(d) => d,
                None => {
                    return Err(Error::at(
                        off,
                        ErrorKind::ShortRecord {
                            what: "COMPRESSED2",
                            why: format!("data size {n} exceeds the record"),
                        },
                    ))
                }
            }
        } else {
            body
        };
        if self.z.is_none() {
            let dec = zstd::stream::raw::Decoder::new()
                .map_err(|e| Error::at(off, ErrorKind::Decompress(e.to_string())))?;
            self.z = Some(Decompressor {
                dec,
                buf: Vec::new(),
                pos: 0,
                container: off,
            });
        }
        let Some(z) = self.z.as_mut() else {
            return Ok(());
        };
        // Keep only the unconsumed tail (a record split across chunks).
        z.buf.drain(..z.pos);
        z.pos = 0;
        z.container = off;
        use zstd::stream::raw::{InBuffer, Operation, OutBuffer};
        let mut input = InBuffer::around(data);
        let mut chunk = vec![0u8; 256 << 10];
        loop {
            let before = input.pos();
            let mut out = OutBuffer::around(&mut chunk[..]);
            let r = z.dec.run(&mut input, &mut out);
            let produced = out.pos();
            if let Err(e) = r {
                self.z_failed = true;
                self.warnings.push(Warning::at(
                    off,
                    format!("zstd decompression failed ({e}); the records in this and later compressed records are skipped"),
                ));
                return Ok(());
            }
            z.buf.extend_from_slice(&chunk[..produced]);
            self.stats.decompressed_bytes += produced as u64;
            if z.buf.len() > MAX_PENDING_DECOMPRESSED {
                return Err(Error::at(
                    off,
                    ErrorKind::DecompressBomb(MAX_PENDING_DECOMPRESSED),
                ));
            }
            let stalled = produced == 0 && input.pos() == before;
            if stalled || (input.pos() >= data.len() && produced < chunk.len()) {
                break;
            }
        }
        Ok(())
    }

    fn next_decompressed(&mut self) -> Result<Option<Loc>> {
        let Some(z) = self.z.as_mut() else {
            return Ok(None);
        };
        let rest = &z.buf[z.pos..];
        if rest.len() < HEADER_LEN {
            return Ok(None);
        }
        let e = self.endian;
        let kind = RecordType(e.u32_at(rest, 0).unwrap_or(0));
        let misc = e.u16_at(rest, 4).unwrap_or(0);
        let size = e.u16_at(rest, 6).unwrap_or(0) as usize;
        if size < HEADER_LEN {
            return Err(Error::at(
                z.container,
                ErrorKind::BadRecordSize {
                    record_type: kind.0,
                    size: size as u64,
                },
            ));
        }
        if size > rest.len() {
            // The rest comes with the next compressed record.
            return Ok(None);
        }
        let start = z.pos;
        z.pos += size;
        let container = z.container;
        self.stats.entry(kind).compressed += 1;
        Ok(Some(Loc::Decompressed {
            container,
            start,
            end: start + size,
            kind,
            misc,
        }))
    }

    fn materialize(&mut self, loc: Loc) -> RawRecord<'_> {
        let (kind, misc, offset, compressed, body, payload): (_, _, _, _, &[u8], &[u8]) = match loc
        {
            Loc::File {
                off,
                body_start,
                body_end,
                payload_len,
                kind,
                misc,
            } => (
                kind,
                misc,
                off,
                false,
                &self.file[body_start..body_end],
                &self.file[body_end..body_end + payload_len],
            ),
            Loc::Decompressed {
                container,
                start,
                end,
                kind,
                misc,
            } => {
                let buf = self.z.as_ref().map_or(&[][..], |z| &z.buf[..]);
                (
                    kind,
                    misc,
                    container,
                    true,
                    &buf[start + HEADER_LEN..end],
                    &[][..],
                )
            }
        };
        let event = self.events.resolve(kind, body, self.endian);
        let time = self.events.record_time(kind, body, event, self.endian);
        account(&mut self.stats, kind, body, event, time, self.endian);
        RawRecord {
            kind,
            misc,
            offset: FileOffset(offset),
            compressed,
            body,
            payload,
            event,
            time,
        }
    }
}

/// Per-record statistics that need the record's content.
fn account(
    stats: &mut Stats,
    kind: RecordType,
    body: &[u8],
    event: EventRef,
    time: Option<u64>,
    e: Endian,
) {
    match kind {
        RecordType::SAMPLE => {
            match event {
                EventRef::Known(i) => {
                    if let Some(n) = stats.samples_per_event.get_mut(i.0) {
                        *n += 1;
                    }
                }
                EventRef::UnknownId(_) => stats.samples_unknown_id += 1,
                EventRef::None => stats.samples_no_event += 1,
            }
            if let Some(t) = time {
                stats.sample_time = Some(match stats.sample_time {
                    Some((a, b)) => (a.min(t), b.max(t)),
                    None => (t, t),
                });
            }
        }
        RecordType::LOST => {
            stats.lost_records = stats
                .lost_records
                .saturating_add(e.u64_at(body, 8).unwrap_or(0))
        }
        RecordType::LOST_SAMPLES => {
            stats.lost_samples = stats
                .lost_samples
                .saturating_add(e.u64_at(body, 0).unwrap_or(0))
        }
        _ => {}
    }
}

#[derive(Clone, Copy, Debug)]
enum Loc {
    File {
        off: u64,
        body_start: usize,
        body_end: usize,
        payload_len: usize,
        kind: RecordType,
        misc: u16,
    },
    Decompressed {
        container: u64,
        start: usize,
        end: usize,
        kind: RecordType,
        misc: u16,
    },
}
