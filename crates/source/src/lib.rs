/*!
Where perf.data captures come from, before any of them is decoded.

A command names its inputs as files, folders, patterns and archives;
[`inputs::expand`] turns them into [`Item`]s in a fixed order, each file
once. An archive's captures are streamed out of it one member at a time
into spool files ([`archive::stream`]), and a `perf archive` tarball's
build-id cache is unpacked for the symbolizer ([`unpack_symbols`]), with
the same bounds on what an archive may expand to and where its members
may go.

`perfq batch` and `perfq convert` read their inputs through this crate;
`report --archive` and `dump --archive` their build-id caches. Captures,
archives and datasets in object storage are named by URL
([`store::Location`]).
*/
#![deny(missing_docs)]

pub mod archive;
pub mod inputs;
pub mod store;

pub use archive::{unpack_symbols, ArchiveKind, BuildIds, Member, SpoolDir, SpoolFile, Unpacked};
pub use inputs::Item;
pub use store::{block_on, Location, ObjectUrl};

use std::path::PathBuf;

/// Why an input could not be read.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum Error {
    /// An archive could not be read, or expanded past perfq's bounds.
    #[error("{path}: {why}")]
    Archive {
        /// The archive.
        path: PathBuf,
        /// What stopped its reading, naming the member.
        why: String,
    },
    /// A URL perfq cannot read.
    #[error("{text}: {why}")]
    NotAUrl {
        /// The text given.
        text: String,
        /// What is wrong with it.
        why: String,
    },
    /// A store could not be reached, or refused a request.
    #[error("{url}: {why}")]
    Store {
        /// The store, or the object asked for.
        url: String,
        /// Its answer, on one line, without secrets.
        why: String,
    },
}
