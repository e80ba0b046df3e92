//! Errors of the query layer: one readable line each.

use std::path::PathBuf;

/// Why a query could not be answered.
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
    /// The folder is not a dataset.
    #[error("{path} is not a perfq dataset: {why}")]
    NotDataset {
        /// The folder.
        path: PathBuf,
        /// Why not.
        why: String,
    },
    /// The dataset's store could not be reached, or refused a request
    /// (the message names the store or object).
    #[error("{0}")]
    Source(String),
    /// DataFusion refused or failed a query.
    #[error("{context}: {message}")]
    Query {
        /// What was being done.
        context: String,
        /// DataFusion's message, on one line.
        message: String,
    },
    /// A statement that writes or defines (DDL, DML, `COPY`) where only
    /// reading is allowed; holds the statement's first words.
    #[error("queries only read: `{0} …` would write or define; nothing was run")]
    ReadOnly(String),
    /// The CPU could not be told or has no formulas.
    #[error(transparent)]
    Cpu(#[from] perfq_topdown::DetectError),
    /// The capture has no topdown events (or not enough of them).
    #[error("{0}")]
    NoTopdown(String),
    /// There are no samples to answer with (none at all, or none of the
    /// event asked for).
    #[error("{0}")]
    NoSamples(String),
    /// A stop was requested ([`perfq_ids::interrupt`]) while the query
    /// ran.
    #[error("interrupted")]
    Interrupted,
    /// A statement with more operators, keywords and brackets, each of
    /// which can nest it one level deeper, than perfq plans.
    #[error(
        "the statement has {levels} operators, keywords and brackets, more than the {max} \
         a statement may have (each can nest it one level deeper); nothing was run"
    )]
    TooDeep {
        /// How many the statement has.
        levels: usize,
        /// The most there may be ([`crate::nesting::MAX_LEVELS`]).
        max: usize,
    },
    /// A result had an unexpected shape (a defect of perfq).
    #[error("unexpected result: {0}")]
    Shape(String),
}

impl Error {
    pub(crate) fn query(context: &str, e: datafusion::error::DataFusionError) -> Error {
        // DataFusion's messages can span lines (plans, backtraces): keep
        // the first meaningful line.
        let text = e.to_string();
        let message = text
            .lines()
            .map(str::trim)
            .find(|l| !l.is_empty())
            .unwrap_or("unknown error")
            .to_string();
        Error::Query {
            context: context.into(),
            message,
        }
    }
}
