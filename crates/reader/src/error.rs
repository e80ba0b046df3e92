//! Errors and warnings, each naming where in the file it happened.

use std::fmt;
use std::path::PathBuf;

/// A byte offset in the capture file.
///
/// For records that came out of a zstd `COMPRESSED` record, this is the
/// offset of that compressed record (the decompressed bytes have no file
/// offset of their own).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct FileOffset(pub u64);

impl fmt::Display for FileOffset {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{:#x}", self.0)
    }
}

/// Why a capture, or part of it, could not be read.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum ErrorKind {
    /// The file could not be opened or read.
    #[error("{0}")]
    Io(#[from] std::io::Error),
    /// The first eight bytes are not a perf.data magic.
    #[error("not a perf.data file: it starts with \"{}\", not PERFILE2", .0.escape_ascii())]
    BadMagic([u8; 8]),
    /// The file is shorter than its header.
    #[error("file too short for a perf.data header ({0} bytes)")]
    ShortHeader(u64),
    /// A header field holds an impossible value.
    #[error("bad header: {0}")]
    BadHeader(String),
    /// An attr (event description) cannot be decoded.
    #[error("bad event attr #{index}: {why}")]
    BadAttr {
        /// Index of the attr in the attr section or stream.
        index: usize,
        /// What is wrong.
        why: String,
    },
    /// A record's size field is impossible (smaller than its header, or a
    /// payload that cannot fit).
    #[error("bad record size {size} for record type {record_type}")]
    BadRecordSize {
        /// The record type.
        record_type: u32,
        /// The size the record claims.
        size: u64,
    },
    /// A record body is shorter than its layout requires.
    #[error("{what} record too short: {why}")]
    ShortRecord {
        /// The record type's name.
        what: &'static str,
        /// What was missing.
        why: String,
    },
    /// zstd could not decompress a compressed record.
    #[error("zstd decompression failed: {0}")]
    Decompress(String),
    /// Decompressed data grew past the reader's bound without forming a
    /// complete record.
    #[error("decompressed data exceeds {0} bytes without a complete record")]
    DecompressBomb(usize),
    /// The tracing data (the tracepoints' formats) cannot be read.
    #[error("bad tracing data: {0}")]
    BadTracingData(String),
    /// The capture uses a layout perfq does not read.
    #[error("unsupported: {0}")]
    Unsupported(String),
}

/// An error with the file offset it happened at.
#[derive(Debug)]
pub struct Error {
    /// Where in the file.
    pub offset: FileOffset,
    /// What went wrong.
    pub kind: ErrorKind,
    /// The file, when known.
    pub path: Option<PathBuf>,
}

impl Error {
    /// An error at `offset`.
    pub fn at(offset: u64, kind: impl Into<ErrorKind>) -> Self {
        Error {
            offset: FileOffset(offset),
            kind: kind.into(),
            path: None,
        }
    }

    /// Attaches the file's path.
    pub fn with_path(mut self, path: impl Into<PathBuf>) -> Self {
        self.path = Some(path.into());
        self
    }
}

impl fmt::Display for Error {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        if let Some(p) = &self.path {
            write!(f, "{}: ", p.display())?;
        }
        write!(f, "{} at file offset {}", self.kind, self.offset)
    }
}

impl std::error::Error for Error {
    fn source(&self) -> Option<&(dyn std::error::Error + 'static)> {
        self.kind.source()
    }
}

/// Result with this crate's [`Error`].
pub type Result<T, E = Error> = std::result::Result<T, E>;

/// Something wrong with the input that did not stop reading: what was lost
/// and where.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Warning {
    /// Where in the file, when the problem has a place.
    pub offset: Option<FileOffset>,
    /// A sentence saying what happened and what was lost.
    pub message: String,
}

impl Warning {
    /// A warning at `offset`.
    pub fn at(offset: u64, message: impl Into<String>) -> Self {
        Warning {
            offset: Some(FileOffset(offset)),
            message: message.into(),
        }
    }

    /// A warning about the capture as a whole.
    pub fn general(message: impl Into<String>) -> Self {
        Warning {
            offset: None,
            message: message.into(),
        }
    }
}

impl fmt::Display for Warning {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self.offset {
            Some(o) => write!(f, "{} (at file offset {o})", self.message),
            None => write!(f, "{}", self.message),
        }
    }
}
