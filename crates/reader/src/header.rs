//! The file header (`perf_file_header`) and the pipe header.

use crate::endian::Endian;
use crate::error::{Error, ErrorKind, Result};

/// `PERFILE2` as written by a little-endian machine.
const MAGIC2_LE: &[u8; 8] = b"PERFILE2";
/// `PERFILE2` as written by a big-endian machine.
const MAGIC2_BE: &[u8; 8] = b"2ELIFREP";
/// The version-1 magic, the string "PERFFILE" (perf before 2.6.37-ish).
const MAGIC1: &[u8; 8] = b"PERFFILE";

/// Whether `start` (a file's first bytes) opens a perf.data capture, in
/// file or pipe mode, of either byte order or the version-1 format: what
/// tells a capture from any other file when searching folders.
pub fn is_capture_magic(start: &[u8]) -> bool {
    start.len() >= 8
        && [MAGIC2_LE, MAGIC2_BE, MAGIC1]
            .iter()
            .any(|m| &start[..8] == *m)
}

/// A `{offset, size}` pair pointing into the file.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Section {
    /// Start in the file.
    pub offset: u64,
    /// Length in bytes.
    pub size: u64,
}

/// How the capture was written.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Mode {
    /// `perf record -o FILE`: header, attr section, data, feature sections.
    File,
    /// `perf record -o -`: a 16-byte header, then only records; attrs and
    /// features arrive as `HEADER_ATTR` / `HEADER_FEATURE` records.
    Pipe,
}

/// The decoded file header.
#[derive(Clone, Debug)]
pub struct FileHeader {
    /// Byte order.
    pub endian: Endian,
    /// File or pipe.
    pub mode: Mode,
    /// The header's own size field.
    pub size: u64,
    /// Size of one attr-section entry (attr + ids section).
    pub attr_size: u64,
    /// The attr section.
    pub attrs: Section,
    /// The data section, as written in the header.
    pub data: Section,
    /// The legacy event-types section.
    pub event_types: Section,
    /// The feature bitmap (256 bits).
    pub features: [u64; 4],
}

impl FileHeader {
    /// Decodes the header at the start of `file`.
    pub fn parse(file: &[u8]) -> Result<FileHeader> {
        let magic: [u8; 8] = file
            .get(..8)
            .and_then(|m| m.try_into().ok())
            .ok_or_else(|| Error::at(0, ErrorKind::ShortHeader(file.len() as u64)))?;
        let endian = match &magic {
            m if m == MAGIC2_LE => Endian::Little,
            m if m == MAGIC2_BE => Endian::Big,
            m if m == MAGIC1 => {
                // Version 1 wrote the magic as a string, so it says nothing
                // about byte order; the header size (a u64 that is small)
                // tells instead.
                match file.get(8..16) {
                    Some(b) if b[0] != 0 => Endian::Little,
                    Some(_) => Endian::Big,
                    None => return Err(Error::at(0, ErrorKind::ShortHeader(file.len() as u64))),
                }
            }
            _ => return Err(Error::at(0, ErrorKind::BadMagic(magic))),
        };
        let u64_at = |o: usize| {
            endian
                .u64_at(file, o)
                .ok_or_else(|| Error::at(o as u64, ErrorKind::ShortHeader(file.len() as u64)))
        };
        let size = u64_at(8)?;
        if size == 16 {
            return Ok(FileHeader {
                endian,
                mode: Mode::Pipe,
                size,
                attr_size: 0,
                attrs: Section::default(),
                data: Section {
                    offset: 16,
                    size: 0,
                },
                event_types: Section::default(),
                features: [0; 4],
            });
        }
        // perf accepts any header at least as large as the v2 fields it
        // reads; a larger one has fields perfq does not know.
        if size < 72 {
            return Err(Error::at(
                8,
                ErrorKind::BadHeader(format!("header size {size} is neither 16 (pipe) nor >= 72")),
            ));
        }
        let section = |o: usize| -> Result<Section> {
            Ok(Section {
                offset: u64_at(o)?,
                size: u64_at(o + 8)?,
            })
        };
        let mut features = [0u64; 4];
        if size >= 104 {
            for (i, f) in features.iter_mut().enumerate() {
                *f = u64_at(72 + 8 * i)?;
            }
        }
        Ok(FileHeader {
            endian,
            mode: Mode::File,
            size,
            attr_size: u64_at(16)?,
            attrs: section(24)?,
            data: section(40)?,
            event_types: section(56)?,
            features,
        })
    }

    /// The feature bits that are set, lowest first.
    pub fn feature_ids(&self) -> impl Iterator<Item = u32> + '_ {
        (0..256u32).filter(|&b| self.features[(b / 64) as usize] & (1u64 << (b % 64)) != 0)
    }
}
