//! Why a report could not be made: one readable line each.

use std::path::PathBuf;

/// Why a capture could not be reported.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum Error {
    /// The capture could not be opened.
    #[error(transparent)]
    Read(#[from] perfq_reader::Error),
    /// A stop was requested ([`perfq_stream::interrupt`]).
    #[error(transparent)]
    Interrupted(#[from] perfq_stream::Interrupted),
    /// The capture has no event of the name asked for.
    #[error("no event named {name:?} in {}", path.display())]
    NoEvent {
        /// The name asked for.
        name: String,
        /// The capture.
        path: PathBuf,
    },
}
