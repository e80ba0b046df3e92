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
`report --archive` and `dump --archive` their build-id caches.
*/
#![deny(missing_docs)]

pub mod archive;
pub mod inputs;

pub use archive::{unpack_symbols, ArchiveKind, BuildIds, Member, SpoolDir, SpoolFile, Unpacked};
pub use inputs::Item;

use std::path::PathBuf;

/// Why an archive could not be read.
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
}
