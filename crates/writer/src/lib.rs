/*!
Write a perf.data capture as a normalized Parquet dataset.

A dataset is a directory; each capture is a Hive-style folder
`capture=<id>/` of tables (see `docs/schema.md`). [`CaptureWriter`] writes
one capture into a temporary folder beside it and renames it into place on
[`CaptureWriter::finish`], so a dataset never shows a half-written capture.
[`Table`] writes one Parquet file from typed column buffers, a row group at
a time, zstd-compressed with dictionary encoding and statistics.
*/
#![deny(missing_docs)]

pub mod batch;
pub mod convert;
mod dataset;
mod delta;
mod dictionary;
mod int_dictionary;
#[cfg(test)]
mod oracle;
mod pages;
mod plain;
pub mod publish;
mod table;

pub use crate::dataset::{
    notes, remove_capture, remove_own_temporaries, remove_stale, source_path, CaptureWriter,
};
pub use crate::table::{Cell, Column, ColumnType, Row, Table};
pub use perfq_stream::Notes;

use std::path::{Path, PathBuf};

/// Why a dataset could not be written.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum Error {
    /// A file operation failed.
    #[error("{path}: {err}")]
    Io {
        /// The file or folder.
        path: PathBuf,
        /// The error.
        err: std::io::Error,
    },
    /// Parquet refused a setting or file.
    #[error("{path}: {err}")]
    Parquet {
        /// The file.
        path: PathBuf,
        /// The error.
        err: String,
    },
    /// A thread of the conversion could not start, or ended without
    /// doing its part.
    #[error("the {thread} thread {failure}")]
    Thread {
        /// Its name ("samples", "frames").
        thread: &'static str,
        /// What happened to it.
        failure: ThreadFailure,
    },
    /// More frame lookups than 32-bit location ids can number: the
    /// stacks written would be wrong.
    #[error(
        "more than {} location lookups: the capture is too large to convert whole",
        u32::MAX
    )]
    TooManyLocations,
    /// The capture could not be read.
    #[error(transparent)]
    Read(#[from] perfq_reader::Error),
    /// A stop was requested ([`perfq_stream::interrupt`]): the capture
    /// being written was removed.
    #[error(transparent)]
    Interrupted(#[from] perfq_stream::Interrupted),
    /// A dataset's store could not be reached, or refused a request.
    #[error("{url}: {why}")]
    Store {
        /// The store, or the object asked for.
        url: String,
        /// Its answer, on one line, without secrets.
        why: String,
    },
    /// The capture is already in the dataset.
    #[error("{0} exists; use --force to replace it")]
    Exists(PathBuf),
}

/// What happened to a thread of a conversion ([`Error::Thread`]).
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum ThreadFailure {
    /// The system would not start it.
    #[error("could not start: {0}")]
    Start(std::io::Error),
    /// It panicked.
    #[error("panicked")]
    Panicked,
    /// It ended before its work was done, without an error of its own.
    #[error("stopped early")]
    StoppedEarly,
}

impl From<perfq_source::Error> for Error {
    fn from(e: perfq_source::Error) -> Error {
        match e {
            perfq_source::Error::Store { url, why } => Error::Store { url, why },
            other => Error::Store {
                url: String::new(),
                why: other.to_string(),
            },
        }
    }
}

impl Error {
    fn io(path: &Path, err: std::io::Error) -> Error {
        Error::Io {
            path: path.into(),
            err,
        }
    }

    fn thread(thread: &'static str, failure: ThreadFailure) -> Error {
        Error::Thread { thread, failure }
    }

    fn parquet(path: &Path, err: impl std::fmt::Display) -> Error {
        Error::Parquet {
            path: path.into(),
            err: err.to_string(),
        }
    }
}
