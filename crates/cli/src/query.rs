//! `perfq query`: SQL over a dataset, or over a perf.data file through the
//! conversion cache (`input.rs`), with every table and the documented
//! views registered (docs/schema.md). Results as a table, CSV, JSON or
//! Parquet, on standard output or written atomically to a file.

use std::io::Write;
use std::path::PathBuf;

use perfq_query::arrow::datatypes::SchemaRef;
use perfq_query::arrow::error::ArrowError;
use perfq_query::arrow::record_batch::{RecordBatch, RecordBatchReader};
use perfq_query::topdown;
use perfq_query::Session;

use crate::answer::Table;

use crate::input::{Conversion, Input};
use crate::output::{self, QueryFormat};
use crate::progress::Spinner;
use crate::Outcome;

/// Options of `perfq query`.
pub struct Options {
    pub input: PathBuf,
    pub sql: String,
    pub format: QueryFormat,
    pub output: Option<PathBuf>,
    pub capture: Option<String>,
    pub conversion: Conversion,
}

pub fn run(opt: &Options, out: &mut dyn Write) -> anyhow::Result<Outcome> {
    output::check(opt.format, opt.output.as_deref())?;
    let (table, outcome) = table(opt)?;
    output::emit(
        opt.format,
        opt.output.as_deref(),
        &table.schema,
        &table.batches,
        out,
    )?;
    Ok(outcome)
}

/// The statement's result, and how the command ends.
pub fn table(opt: &Options) -> anyhow::Result<(Table, Outcome)> {
    let (input, session) = opened(opt)?;
    let spinner = Spinner::start("querying");
    register_views(&session, &opt.sql)?;
    let (schema, batches) = session.query_read_only(&opt.sql)?;
    drop(spinner);
    Ok((Table { schema, batches }, input.outcome()))
}

/// The statement's result as it is computed, a batch at a time, and how
/// the command ends. The input (a temporary dataset, a copy of a
/// capture) stays until the batches are dropped.
pub fn batches(opt: Options) -> anyhow::Result<(Box<dyn RecordBatchReader + Send>, Outcome)> {
    let (input, session) = opened(&opt)?;
    register_views(&session, &opt.sql)?;
    let batches = session.into_batches(&opt.sql)?;
    let outcome = input.outcome();
    Ok((
        Box::new(Holding {
            batches,
            _input: input,
        }),
        outcome,
    ))
}

/// The input's dataset (a file converted first), and a session over it
/// (or over the capture asked for).
fn opened(opt: &Options) -> anyhow::Result<(Input, Session)> {
    let input = Input::open(&opt.input, &opt.conversion)?;
    let (session, _) = input.session_for(&opt.input, opt.capture.as_deref())?;
    Ok((input, session))
}

/// Batches, and what must live as long as they are read.
struct Holding {
    batches: perfq_query::Batches,
    _input: Input,
}

impl Iterator for Holding {
    type Item = Result<RecordBatch, ArrowError>;

    fn next(&mut self) -> Option<Self::Item> {
        self.batches.next()
    }
}

impl RecordBatchReader for Holding {
    fn schema(&self) -> SchemaRef {
        self.batches.schema()
    }
}

/// The standard views the statement reads (`perfq_query::views`: those
/// it names and the views they read; every one for a statement that
/// lists them), and the topdown views of the captures whose CPU and
/// events allow them (a capture without topdown events simply has
/// none). What only some statements need is prepared for those that name
/// it: the stack tables computed once and kept (inclusive sums), the
/// topdown plan (a scan of the samples).
fn register_views(session: &Session, statement: &str) -> anyhow::Result<()> {
    if perfq_query::views::reads_stack_tables(statement) {
        perfq_query::views::keep_stack_tables_for(session, statement)?;
        // Computing them read every frame and stack and freed most of
        // it, in blocks glibc keeps: a large part of what the process
        // holds after a long capture's stack tables, which the
        // statement's own aggregations would not all reuse.
        crate::heap::release_free_pages();
    }
    perfq_query::views::register_read_by(session, statement)?;
    if statement.to_ascii_lowercase().contains("topdown_") {
        if let Ok(plans) = topdown::plan(session, None, None) {
            if !plans.sets.is_empty() {
                topdown::register_views(session, &plans, &topdown::Options::default())?;
            }
        }
    }
    Ok(())
}
