//! Walking the data section record by record, in file order.
//!
//! This is where record sizes are checked, where the payloads that follow
//! some records (`AUXTRACE`, pipe-mode `HEADER_TRACING_DATA`) are stepped
//! over, where zstd `COMPRESSED`/`COMPRESSED2` records are expanded into
//! the records they hold, and where every record type is counted.

mod decompress;
mod stats;

use perfq_ids::prefetch_line;

use crate::endian::Endian;
use crate::error::{Error, ErrorKind, FileOffset, Result, Warning};
use crate::events::{EventRef, Events};
use crate::record_type::RecordType;
use decompress::Decompressor;
use stats::account;

pub use stats::{Stats, TypeCount};

/// Size of `perf_event_header`.
pub const HEADER_LEN: usize = 8;

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

/// How far past the read position [`FileRecords`] asks for cache lines:
/// a few records of a system-wide capture.
const PREFETCH_AHEAD: usize = 2048;

/// The bytes of a cache line (on the processors perfq is built for; a
/// larger one only asks for some lines twice).
const CACHE_LINE: usize = 64;

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
    /// Where the cache lines asked for ahead of the read end
    /// ([`PREFETCH_AHEAD`]).
    prefetched: usize,
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
            prefetched: start,
            z: None,
            z_failed: false,
            no_decompression: false,
            done: false,
            stats: Stats::for_events(events.len()),
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

    /// Asks for the cache lines up to [`PREFETCH_AHEAD`] bytes past the
    /// read position, each once. Each record's first bytes were otherwise
    /// a cache miss: the work on a sample between two records (its stack,
    /// its rows) evicts what the processor fetched ahead on its own.
    #[inline]
    fn prefetch(&mut self) {
        let target = (self.pos + PREFETCH_AHEAD).min(self.end);
        while self.prefetched < target {
            if let Some(b) = self.file.get(self.prefetched) {
                prefetch_line(b);
            }
            self.prefetched += CACHE_LINE;
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
        let Some((kind, misc, size)) = self.top_level_header(off, remaining)? else {
            return Ok(None);
        };
        let body_start = self.pos + HEADER_LEN;
        let body_end = self.pos + size;
        let body = &self.file[body_start..body_end];
        let Some(payload_len) = self.trailing_payload(kind, body, off, size, remaining)? else {
            return Ok(None);
        };
        self.pos = body_end + payload_len;
        self.prefetch();
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

    /// The type, misc and size (`COMPRESSED2`'s corrected) of the record
    /// at `off`, with `remaining` bytes of the data section left; `None`,
    /// with a warning, where the capture is cut inside the record.
    #[inline]
    fn top_level_header(
        &mut self,
        off: u64,
        remaining: usize,
    ) -> Result<Option<(RecordType, u16, usize)>> {
        if remaining < HEADER_LEN {
            self.warnings.push(Warning::at(
                off,
                format!("{remaining} bytes after the last complete record are too few for a record header; the capture is cut there"),
            ));
            return Ok(None);
        }
        let h = &self.file[self.pos..self.pos + HEADER_LEN];
        let (kind, misc, mut size) = record_header(self.endian, h, off)?;
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
        Ok(Some((kind, misc, size)))
    }

    /// The length of the data that follows the record at `off` (`size`
    /// bytes, `remaining` left with it) outside its size; `None`, with a
    /// warning, where the capture is cut inside that data.
    #[inline]
    fn trailing_payload(
        &mut self,
        kind: RecordType,
        body: &[u8],
        off: u64,
        size: usize,
        remaining: usize,
    ) -> Result<Option<usize>> {
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
        Ok(Some(payload_len))
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

/// The type, misc and size of the record header at the start of `h`
/// (at least [`HEADER_LEN`] bytes); a size smaller than the header is an
/// error at file offset `off`.
#[inline]
fn record_header(e: Endian, h: &[u8], off: u64) -> Result<(RecordType, u16, usize)> {
    let kind = RecordType(e.u32_at(h, 0).unwrap_or(0));
    let misc = e.u16_at(h, 4).unwrap_or(0);
    let size = e.u16_at(h, 6).unwrap_or(0) as usize;
    if size < HEADER_LEN {
        return Err(Error::at(
            off,
            ErrorKind::BadRecordSize {
                record_type: kind.0,
                size: size as u64,
            },
        ));
    }
    Ok((kind, misc, size))
}
