//! Opening a capture: the header, the events and the feature sections, in
//! file mode or pipe mode, tolerant of cut and damaged files.

mod event_list;
mod layout;
mod meta;

use std::io::Read;
use std::ops::{Deref, Range};
use std::path::{Path, PathBuf};

use crate::endian::Endian;
use crate::error::{Error, ErrorKind, Result, Warning};
use crate::events::Events;
use crate::framing::{FileRecords, RawRecord};
use crate::header::{FileHeader, Mode};
use crate::order::TimeOrdered;
use crate::record_type::RecordType;
use crate::records::{parse_record, RecordData, SampleId};
use crate::sample::{parse_sample, Sample};
use crate::tracepoint::TracingData;

pub use meta::Meta;

/// The bytes of a capture: mapped from a file, or read into memory (stdin,
/// pipes, tests).
enum Backing {
    Mapped(memmap2::Mmap),
    Owned(Vec<u8>),
}

impl Deref for Backing {
    type Target = [u8];
    fn deref(&self) -> &[u8] {
        match self {
            Backing::Mapped(m) => m,
            Backing::Owned(v) => v,
        }
    }
}

/// An open perf.data capture.
///
/// ```no_run
/// let capture = perfq_reader::Capture::open("perf.data")?;
/// let mut records = capture.records();
/// while let Some(record) = records.next_record()? {
///     println!("{} at {}", record.kind, record.offset);
/// }
/// println!("{} samples", records.stats().samples());
/// # Ok::<(), perfq_reader::Error>(())
/// ```
pub struct Capture {
    bytes: Backing,
    path: PathBuf,
    header: FileHeader,
    meta: Meta,
    events: Events,
    data: Range<usize>,
    features: Vec<(u32, Range<usize>)>,
    /// Pipe mode: `EVENT_UPDATE` names by id, applied when events are built.
    pipe_names: Vec<(u64, String)>,
    warnings: Vec<Warning>,
}

impl Capture {
    /// Opens a capture file; `-` reads standard input.
    pub fn open(path: impl AsRef<Path>) -> Result<Capture> {
        let path = path.as_ref();
        let with_path = |e: Error| e.with_path(path);
        let bytes = if path == Path::new("-") {
            let mut v = Vec::new();
            std::io::stdin()
                .lock()
                .read_to_end(&mut v)
                .map_err(|e| with_path(Error::at(0, e)))?;
            Backing::Owned(v)
        } else {
            let mut file = std::fs::File::open(path).map_err(|e| with_path(Error::at(0, e)))?;
            // SAFETY: the map is read-only and perfq never writes the file.
            // Another process truncating it while we read would be undefined
            // behaviour; perf.data captures are not rewritten once perf has
            // exited, the same trade-off ripgrep makes for searched files.
            match unsafe { memmap2::Mmap::map(&file) } {
                Ok(m) => Backing::Mapped(m),
                // Pipes and other unmappable files are read instead.
                Err(_) => {
                    let mut v = Vec::new();
                    file.read_to_end(&mut v)
                        .map_err(|e| with_path(Error::at(0, e)))?;
                    Backing::Owned(v)
                }
            }
        };
        Self::from_backing(bytes, path.to_path_buf()).map_err(with_path)
    }

    /// Lets the OS take back the mapped pages of the file's first `upto`
    /// bytes: a capture read once from front to back then keeps only a
    /// window of itself resident, whatever its length. The bytes stay
    /// readable (touched again, they are paged in from the file). Does
    /// nothing for captures held in memory.
    pub fn release_before(&self, upto: u64) {
        if let Backing::Mapped(m) = &self.bytes {
            // Whole 64 KiB blocks: a multiple of every page size Linux uses.
            let len = (upto.min(m.len() as u64) & !0xffff) as usize;
            if len > 0 {
                // SAFETY: the map is a read-only shared mapping of a file
                // perfq does not write; MADV_DONTNEED only drops this
                // process's page table entries, and the next access reads
                // the same bytes from the page cache or the file. No
                // reference into the map is invalidated.
                let _ =
                    unsafe { m.unchecked_advise_range(memmap2::UncheckedAdvice::DontNeed, 0, len) };
            }
        }
    }

    /// Reads a capture held in memory.
    pub fn from_bytes(bytes: Vec<u8>) -> Result<Capture> {
        Self::from_backing(Backing::Owned(bytes), PathBuf::from("<memory>"))
    }

    fn from_backing(bytes: Backing, path: PathBuf) -> Result<Capture> {
        let header = FileHeader::parse(&bytes)?;
        let mut c = Capture {
            bytes,
            path,
            header,
            meta: Meta::default(),
            events: Events::default(),
            data: 0..0,
            features: Vec::new(),
            pipe_names: Vec::new(),
            warnings: Vec::new(),
        };
        let attrs = match c.header.mode {
            Mode::File => c.read_file_layout()?,
            Mode::Pipe => c.read_pipe_layout()?,
        };
        c.read_meta();
        c.build_events(attrs);
        c.infer_groups();
        Ok(c)
    }

    /// The file's path (`-` for stdin).
    pub fn path(&self) -> &Path {
        &self.path
    }

    /// The header.
    pub fn header(&self) -> &FileHeader {
        &self.header
    }

    /// Byte order.
    pub fn endian(&self) -> Endian {
        self.header.endian
    }

    /// Host, CPU and session facts.
    pub fn meta(&self) -> &Meta {
        &self.meta
    }

    /// The events.
    pub fn events(&self) -> &Events {
        &self.events
    }

    /// Problems found while opening that did not stop it.
    pub fn warnings(&self) -> &[Warning] {
        &self.warnings
    }

    /// The whole capture's bytes (mapped, not copied).
    pub fn bytes(&self) -> &[u8] {
        &self.bytes
    }

    /// Size of the file in bytes.
    pub fn file_len(&self) -> u64 {
        self.bytes.len() as u64
    }

    /// The raw bytes of feature `f`, if present.
    pub fn feature_data(&self, f: u32) -> Option<&[u8]> {
        let r = self.features.iter().find(|(id, _)| *id == f)?.1.clone();
        self.bytes.get(r)
    }

    /// The tracepoints' formats, from the capture's tracing data: `None`
    /// without tracing data, an error (with the file offset) if it cannot
    /// be read.
    pub fn tracing_data(&self) -> Option<Result<TracingData>> {
        let id = crate::features::id::TRACING_DATA;
        let r = self.features.iter().find(|(f, _)| *f == id)?.1.clone();
        let bytes = self.bytes.get(r.clone())?;
        Some(TracingData::parse(bytes).map_err(|why| {
            Error::at(r.start as u64, ErrorKind::BadTracingData(why)).with_path(self.path.clone())
        }))
    }

    /// A warning about feature `f`, placed at its section.
    fn feature_warning(&self, f: u32, message: &str) -> Warning {
        match self.features.iter().find(|(id, _)| *id == f) {
            Some((_, r)) => Warning::at(r.start as u64, message),
            None => Warning::general(message),
        }
    }

    /// Where the records are: the data section as read (to the end of the
    /// file when the header gives no size or the file is cut; after the
    /// pipe header in pipe mode).
    pub fn data_range(&self) -> Range<u64> {
        self.data.start as u64..self.data.end as u64
    }

    /// The records in file order (fastest; what perf's counts are of).
    pub fn records(&self) -> FileRecords<'_> {
        FileRecords::new(
            &self.bytes,
            self.data.start,
            self.data.end,
            self.endian(),
            &self.events,
        )
    }

    /// The records in time order, as perf delivers them to its tools.
    pub fn records_by_time(&self) -> TimeOrdered<'_> {
        TimeOrdered::new(self.records())
    }

    /// Decodes a record's fields.
    pub fn parse<'a>(&self, r: &RawRecord<'a>) -> Result<(RecordData<'a>, Option<SampleId>)> {
        self.record_fields(r)
            .map_err(|kind| self.record_error(r, kind))
    }

    /// [`Capture::parse`] with the error as its kind alone
    /// ([`Capture::record_error`] places it): for the read loop, which
    /// borrows the record's fields where they were decoded. They take some
    /// 600 bytes (a sample's fields among them), and changing the result's
    /// error type copies them.
    #[inline]
    pub fn record_fields<'a>(
        &self,
        r: &RawRecord<'a>,
    ) -> std::result::Result<(RecordData<'a>, Option<SampleId>), ErrorKind> {
        let attr = r
            .event
            .index()
            .and_then(|i| self.events.get(i))
            .map(|e| &e.attr);
        parse_record(r.kind, r.misc, r.body, r.payload, attr, self.endian())
    }

    /// The error of record `r` that [`Capture::record_fields`] or
    /// [`Capture::sample_fields`] could not decode, with its file and
    /// offset.
    #[cold]
    pub fn record_error(&self, r: &RawRecord<'_>, kind: ErrorKind) -> Error {
        let mut e = Error::at(r.offset.0, kind);
        e.path = Some(self.path.clone());
        e
    }

    /// Decodes a `SAMPLE` record of a known event. Cheaper than
    /// [`Capture::parse`] for loops over samples: no enum to move through.
    pub fn sample<'a>(&self, r: &RawRecord<'a>) -> Result<Sample<'a>> {
        self.sample_fields(r)
            .map_err(|kind| self.record_error(r, kind))
    }

    /// [`Capture::sample`] with the error as its kind alone
    /// ([`Capture::record_error`] places it): for the read loop, which
    /// borrows the sample where it was decoded. A sample is some 500
    /// bytes, and changing the result's error type copies them.
    #[inline]
    pub fn sample_fields<'a>(
        &self,
        r: &RawRecord<'a>,
    ) -> std::result::Result<Sample<'a>, ErrorKind> {
        let attr = match r.event.index().and_then(|i| self.events.get(i)) {
            Some(e) if r.kind == RecordType::SAMPLE => &e.attr,
            _ => {
                return Err(ErrorKind::ShortRecord {
                    what: "SAMPLE",
                    why: "not a sample of a known event".into(),
                })
            }
        };
        parse_sample(r.body, r.misc, attr, self.endian())
    }
}

/// Hands back a capture's mapped pages behind a reading position that
/// only moves forward (records read once, front to back), a block of
/// [`ReleaseBehind::EVERY`] bytes at a time: [`Capture::release_before`]
/// paced for a read loop.
#[derive(Debug, Default)]
pub struct ReleaseBehind {
    released: u64,
}

impl ReleaseBehind {
    /// Bytes read between two releases: with a much larger step the pages
    /// kept were a noticeable part of convert's peak RSS on a system-wide
    /// capture; a call is cheap next to reading this much.
    pub const EVERY: u64 = 8 << 20;

    /// The read has reached `offset` of `capture`.
    #[inline]
    pub fn reached(&mut self, capture: &Capture, offset: u64) {
        if offset >= self.released + Self::EVERY {
            capture.release_before(offset);
            self.released = offset;
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::attr::SampleType;

    /// A file header with the given sections and feature bits.
    fn header(attrs: (u64, u64), attr_size: u64, data: (u64, u64), features: u64) -> Vec<u8> {
        let mut b = Vec::new();
        b.extend_from_slice(b"PERFILE2");
        for v in [
            104, attr_size, attrs.0, attrs.1, data.0, data.1, 0, 0, features, 0, 0, 0,
        ] {
            b.extend_from_slice(&u64::to_le_bytes(v));
        }
        b
    }

    #[test]
    fn huge_section_offsets_are_warnings_not_overflows() {
        // Found by fuzzing: data offset + size near u64::MAX with features.
        let b = header((0, 0), 0, (u64::MAX - 4, 8), 0b1111);
        let c = Capture::from_bytes(b).expect("opens");
        assert!(!c.warnings().is_empty());
        let mut r = c.records();
        assert!(r.next_record().expect("no error").is_none());
    }

    #[test]
    fn pmu_features_are_read_and_a_malformed_one_is_a_warning() {
        // No attrs; 8 bytes of data; then the feature table for bits 16
        // (PMU_MAPPINGS) and 30 (HYBRID_TOPOLOGY).
        let mut b = header((0, 0), 0, (104, 8), (1 << 16) | (1 << 30));
        b.extend_from_slice(&[0; 8]); // data
        let table_at = b.len() as u64;
        #[rustfmt::skip]
        let mappings: Vec<u8> = [
            &1u32.to_le_bytes()[..],          // nr
            &4u32.to_le_bytes(),              // type
            &4u32.to_le_bytes(), b"cpu\0",    // name
        ]
        .concat();
        #[rustfmt::skip]
        let hybrid: Vec<u8> = [
            &1u32.to_le_bytes()[..],          // nr
            &64u32.to_le_bytes(), b"cpu_core", // name: 64 bytes claimed, 8 there
        ]
        .concat();
        let mut at = table_at + 32;
        for section in [&mappings, &hybrid] {
            b.extend_from_slice(&at.to_le_bytes());
            b.extend_from_slice(&(section.len() as u64).to_le_bytes());
            at += section.len() as u64;
        }
        b.extend_from_slice(&mappings);
        b.extend_from_slice(&hybrid);
        let c = Capture::from_bytes(b).expect("opens");
        let m = c.meta();
        assert_eq!(
            m.pmu_mappings,
            [crate::features::PmuMapping {
                type_: 4,
                name: "cpu".into()
            }]
        );
        assert!(m.hybrid_topology.is_empty());
        let w: Vec<String> = c.warnings().iter().map(|w| w.to_string()).collect();
        assert_eq!(w.len(), 1, "{w:?}");
        assert!(w[0].contains("HYBRID_TOPOLOGY"), "{w:?}");
    }

    #[test]
    fn attr_section_ids_map_events_without_event_desc() {
        // Two attrs (64 bytes each, VER0) with ids sections, no features.
        let mut b = header((104, 160), 80, (0, 0), 0);
        let ids_at = 104 + 160;
        for (i, ty) in [(0u64, 1u32), (1, 1)] {
            let mut a = vec![0u8; 64];
            a[0..4].copy_from_slice(&ty.to_le_bytes());
            a[4..8].copy_from_slice(&64u32.to_le_bytes());
            a[8..16].copy_from_slice(&(i * 2).to_le_bytes()); // cpu-clock, page-faults
            a[24..32].copy_from_slice(&(SampleType::IP | SampleType::ID).bits().to_le_bytes());
            b.extend_from_slice(&a);
            b.extend_from_slice(&(ids_at + 8 * i).to_le_bytes());
            b.extend_from_slice(&8u64.to_le_bytes());
        }
        b.extend_from_slice(&100u64.to_le_bytes());
        b.extend_from_slice(&200u64.to_le_bytes());
        let data_at = b.len() as u64;
        // One sample of each event id, then one with an id nobody has.
        for id in [200u64, 100, 300] {
            b.extend_from_slice(&9u32.to_le_bytes());
            b.extend_from_slice(&0u16.to_le_bytes());
            b.extend_from_slice(&24u16.to_le_bytes());
            b.extend_from_slice(&0x1234u64.to_le_bytes());
            b.extend_from_slice(&id.to_le_bytes());
        }
        b[40..48].copy_from_slice(&data_at.to_le_bytes());
        b[48..56].copy_from_slice(&72u64.to_le_bytes());
        let c = Capture::from_bytes(b).expect("opens");
        let names: Vec<_> = c.events().list().iter().map(|e| e.name.as_str()).collect();
        assert_eq!(names, ["cpu-clock", "page-faults"]);
        let mut r = c.records();
        while r.next_record().expect("valid").is_some() {}
        assert_eq!(r.stats().samples_per_event, [1, 1]);
        assert_eq!(r.stats().samples_unknown_id, 1);
    }
}
