//! The commands' answers as data, for a host that is not a terminal (the
//! Python module, crates/python).
//!
//! A host hands [`answer`] the words of a command line, parsed by the
//! same definitions as `perfq`'s own (its options, names, defaults and
//! checks are those of `--help`), and gets back what the command would
//! have printed as data: a table for `query`, `topdown`, `report` and
//! `diff` (the rows of their `--format json`), the JSON object of `info
//! --format json`, or the text any other command prints. Warnings and
//! notes come back with it rather than on standard error, and a failure
//! is one line, the command line's `perfq: error:` message.

use std::ffi::OsString;
use std::sync::Arc;

pub use arrow_array::ffi_stream::FFI_ArrowArrayStream;
use arrow_array::RecordBatchIterator;
use clap::Parser;
use perfq_query::arrow::datatypes::{Schema, SchemaRef};
use perfq_query::arrow::record_batch::{RecordBatch, RecordBatchReader};
use serde_json::Value;

use crate::cli::{Cli, Command};
use crate::damage::Policy;
use crate::say::{self, Said};
use crate::Outcome;

/// A table held whole.
pub struct Table {
    /// Its columns (there even when no row is).
    pub schema: SchemaRef,
    /// Its rows.
    pub batches: Vec<RecordBatch>,
}

impl Table {
    /// The table of JSON `rows` (objects), with the columns named in
    /// `first` first, in that order, then the others by name. Column
    /// types are those the values have (whole numbers as 64-bit
    /// integers, others as doubles; an object's members as a struct).
    pub fn from_rows(rows: &[Value], first: &[String]) -> anyhow::Result<Table> {
        use arrow_json::reader::{infer_json_schema_from_iterator, ReaderBuilder};
        let inferred = infer_json_schema_from_iterator(rows.iter().map(|r| Ok(r.clone())))?;
        let mut fields: Vec<_> = inferred.fields().iter().cloned().collect();
        let rank = |name: &str| first.iter().position(|f| f == name).unwrap_or(first.len());
        fields.sort_by(|a, b| (rank(a.name()), a.name()).cmp(&(rank(b.name()), b.name())));
        let schema: SchemaRef = Arc::new(Schema::new(fields));
        let mut decoder = ReaderBuilder::new(schema.clone()).build_decoder()?;
        decoder.serialize(rows)?;
        let batches = decoder.flush()?.into_iter().collect();
        Ok(Table { schema, batches })
    }

    /// Its rows as an Arrow C stream ([`c_stream`]); the batches are
    /// shared, not copied.
    pub fn c_stream(&self) -> FFI_ArrowArrayStream {
        let batches = self.batches.clone().into_iter().map(Ok);
        c_stream(Box::new(RecordBatchIterator::new(
            batches,
            self.schema.clone(),
        )))
    }

    /// Its number of rows.
    pub fn num_rows(&self) -> usize {
        self.batches.iter().map(RecordBatch::num_rows).sum()
    }
}

/// `reader` as an Arrow C stream (the C data interface's
/// `ArrowArrayStream`): what another runtime reads batches from without
/// copying them (Python's Arrow PyCapsule interface hands it over).
pub fn c_stream(reader: Box<dyn RecordBatchReader + Send>) -> FFI_ArrowArrayStream {
    FFI_ArrowArrayStream::new(reader)
}

/// What a command answered.
pub enum Answer {
    /// Its result table.
    Table(Table),
    /// Its result, a batch at a time as it is computed.
    Batches(Batches),
    /// One JSON value (`info`).
    Json(String),
    /// What it printed on standard output.
    Printed(String),
}

/// A result read a batch at a time, and what its reading says at its end.
pub struct Batches {
    /// The batches.
    pub reader: Box<dyn RecordBatchReader + Send>,
    /// The warnings and notes of the reading, there once the reader has
    /// returned its last batch (or its error).
    pub later: say::Later,
}

/// An answer and what was said beside it.
pub struct Answered {
    /// The answer.
    pub answer: Answer,
    /// Its warnings and notes, in order.
    pub said: Vec<Said>,
}

/// Why there is no answer.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum FailureKind {
    /// The command line is wrong (an unknown option, a bad value).
    Usage,
    /// The command failed.
    Failed,
    /// The capture is damaged, and `--strict` makes that a failure.
    Damaged,
    /// A stop was requested ([`perfq_stream::interrupt`]).
    Interrupted,
    /// A defect of perfq (a panic), caught.
    Internal,
}

/// No answer: why, the command line's one-line message, and what was said
/// before.
pub struct Failure {
    /// Why.
    pub kind: FailureKind,
    /// The message `perfq` prints after `perfq: error: `.
    pub message: String,
    /// The warnings and notes said before it failed.
    pub said: Vec<Said>,
}

/// What [`answer`] should return for a `query` or a `dump`.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Rows {
    /// The whole result (for `dump`, what it prints).
    Whole,
    /// Batches as they are computed ([`Answer::Batches`]): a query's
    /// rows, or `dump`'s samples as a table.
    Streamed,
}

/// Runs the command `args` (without the program's name) and returns its
/// answer. Nothing is printed, and nothing of the process changes: no
/// signal handler, no allocator setting.
pub fn answer(args: &[OsString], rows: Rows) -> Result<Answered, Failure> {
    let words = std::iter::once(OsString::from("perfq")).chain(args.iter().cloned());
    let cli = Cli::try_parse_from(words).map_err(|e| Failure {
        kind: FailureKind::Usage,
        message: usage_message(&e),
        said: Vec::new(),
    })?;
    let policy = Policy { strict: cli.strict };
    let (result, said) = say::collecting(|| {
        std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| {
            dispatch(cli.command, policy, rows)
        }))
    });
    let failure = |kind, message| Failure {
        kind,
        message,
        said: said.clone(),
    };
    match result {
        Ok(Ok((answer, Outcome::Ok))) => Ok(Answered { answer, said }),
        Ok(Ok((_, Outcome::Failed(message)))) => Err(failure(FailureKind::Damaged, message)),
        Ok(Err(_)) if perfq_stream::interrupt::requested() => {
            Err(failure(FailureKind::Interrupted, "interrupted".into()))
        }
        Ok(Err(e)) => Err(failure(FailureKind::Failed, format!("{e:#}"))),
        Err(panic) => Err(failure(
            FailureKind::Internal,
            perfq_writer::batch::internal_error(panic.as_ref()),
        )),
    }
}

/// The command's answer.
fn dispatch(command: Command, policy: Policy, rows: Rows) -> anyhow::Result<(Answer, Outcome)> {
    let mut out = Vec::new();
    let printed = match command {
        Command::Query(args) => return args.answer(policy, rows),
        Command::Topdown(args) => return args.answer(policy),
        Command::Report(args) => return args.answer(policy),
        Command::Diff(args) => return args.answer(policy),
        Command::Dump(args) if rows == Rows::Streamed => return args.batches(policy),
        Command::Info(args) => {
            let outcome = args.run(policy, &mut out)?;
            let text = String::from_utf8(out)?;
            return Ok((Answer::Json(text), outcome));
        }
        command => crate::run_command(command, policy, &mut out)?,
    };
    Ok((Answer::Printed(String::from_utf8(out)?), printed))
}

/// clap's message without its `error: ` prefix and its advice to try
/// `--help` (a caller of [`answer`] has no command line to add it to).
fn usage_message(e: &clap::Error) -> String {
    let text = e.render().to_string();
    let first = text.split("\n\n").next().unwrap_or_default().trim();
    first.strip_prefix("error: ").unwrap_or(first).to_string()
}

/// The options of `command` that have a default, with it, as `--help`
/// shows them (long name without dashes, value): what a host's own
/// defaults are checked against. `None` for no such command.
pub fn defaults(command: &str) -> Option<Vec<(String, String)>> {
    use clap::CommandFactory;
    let cli = Cli::command();
    let sub = cli.find_subcommand(command)?;
    let options = sub.get_arguments().filter_map(|a| {
        let long = a.get_long()?;
        let value = a.get_default_values().first()?;
        Some((long.to_string(), value.to_string_lossy().into_owned()))
    });
    Some(options.collect())
}
