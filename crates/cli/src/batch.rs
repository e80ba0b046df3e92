//! `perfq batch`: many captures into one dataset (`perfq_writer::batch`),
//! with an overall progress bar on a terminal and a summary table at the
//! end: what was converted, skipped (already in the dataset) or failed,
//! and why.

use std::io::Write;
use std::path::PathBuf;
use std::sync::Arc;

use perfq_query::arrow::array::{ArrayRef, Float64Array, StringArray, UInt64Array};
use perfq_query::arrow::datatypes::{DataType, Field, Schema};
use perfq_query::arrow::record_batch::RecordBatch;
use perfq_symbolize::Config;
use perfq_writer::batch::{self, Outcome as Capture, Status};
use perfq_writer::convert;

use crate::damage::Policy;
use crate::destination::Destination;
use crate::output::{self, QueryFormat};
use crate::progress::Bar;
use crate::Outcome;

/// Options of `perfq batch`.
pub struct Options {
    pub inputs: Vec<PathBuf>,
    pub output: PathBuf,
    pub jobs: usize,
    pub force: bool,
    pub symbols: Option<Config>,
    pub stack_memory: Option<u64>,
    pub format: QueryFormat,
    pub policy: Policy,
}

pub fn run(opt: &Options, out: &mut dyn Write) -> anyhow::Result<Outcome> {
    output::check(opt.format, None)?;
    let destination = Destination::of(&opt.output)?;
    let bar = Bar::new();
    let bopt = batch::Options {
        jobs: opt.jobs,
        convert: convert::Options {
            force: opt.force,
            symbols: opt.symbols.clone(),
            stack_memory: opt.stack_memory,
            source: None,
            read_values: convert::ReadValues::Rows,
        },
        publish: destination.bucket.clone(),
    };
    crate::scratch::writing_into(&destination.folder);
    let outcomes = batch::run(&opt.inputs, &destination.folder, &bopt, &bar)?;
    bar.finish();
    let mut problems = Vec::new();
    for o in &outcomes {
        if let Some(notes) = o.notes() {
            problems.extend(opt.policy.say(&o.input, notes));
        }
    }
    let (schema, rows) = summary(&outcomes)?;
    output::emit(opt.format, None, &schema, &[rows], out)?;
    let count = |f: fn(&Capture) -> bool| outcomes.iter().filter(|o| f(o)).count();
    let converted = count(|o| matches!(o.status, Status::Converted { .. }));
    let skipped = count(|o| matches!(o.status, Status::Present(_)));
    let failed = count(Capture::is_failure);
    let line = format!(
        "{converted} converted, {skipped} skipped (already in {}), {failed} failed",
        destination.name
    );
    // The table's own last line; beside CSV or JSON, on stderr.
    if opt.format == QueryFormat::Table {
        writeln!(out, "{line}")?;
    } else {
        eprintln!("perfq: {line}");
    }
    if failed > 0 {
        problems.insert(
            0,
            format!(
                "{failed} of {} inputs failed (see the summary)",
                outcomes.len()
            ),
        );
    }
    Ok(Outcome::from_problems(problems))
}

/// One row per capture (and per input that gave none).
fn summary(outcomes: &[Capture]) -> anyhow::Result<(Arc<Schema>, RecordBatch)> {
    let schema = Arc::new(Schema::new(vec![
        Field::new("input", DataType::Utf8, false),
        Field::new("status", DataType::Utf8, false),
        Field::new("capture", DataType::Utf8, true),
        Field::new("samples", DataType::UInt64, true),
        Field::new("bytes", DataType::UInt64, false),
        Field::new("seconds", DataType::Float64, false),
        Field::new("reason", DataType::Utf8, true),
    ]));
    let status = |o: &Capture| match &o.status {
        Status::Converted { notes, .. } if notes.damage.is_some() => "partial",
        Status::Converted { .. } => "converted",
        Status::Present(_) => "skipped",
        Status::Failed(_) => "failed",
    };
    let reason = |o: &Capture| match &o.status {
        Status::Converted { notes, .. } if notes.damage.is_some() => notes.damage.clone(),
        Status::Converted { notes, .. } => match notes.warnings.as_slice() {
            [] => None,
            [w] => Some(format!("warning: {w}")),
            [w, rest @ ..] => Some(format!("{} warnings: {w}; ...", rest.len() + 1)),
        },
        Status::Present(_) => Some("already in the dataset".to_string()),
        Status::Failed(e) => Some(e.clone()),
    };
    let samples = |o: &Capture| match &o.status {
        Status::Converted { samples, .. } => Some(*samples),
        _ => None,
    };
    let columns: Vec<ArrayRef> = vec![
        Arc::new(StringArray::from_iter_values(
            outcomes.iter().map(|o| o.input.as_str()),
        )),
        Arc::new(StringArray::from_iter_values(outcomes.iter().map(status))),
        Arc::new(StringArray::from_iter(
            outcomes.iter().map(|o| o.capture.as_deref()),
        )),
        Arc::new(UInt64Array::from_iter(outcomes.iter().map(samples))),
        Arc::new(UInt64Array::from_iter_values(
            outcomes.iter().map(|o| o.bytes),
        )),
        Arc::new(Float64Array::from_iter_values(
            // Milliseconds are what a person reads; more digits are noise.
            outcomes
                .iter()
                .map(|o| (o.seconds * 1000.0).round() / 1000.0),
        )),
        Arc::new(StringArray::from_iter(outcomes.iter().map(reason))),
    ];
    Ok((schema.clone(), RecordBatch::try_new(schema, columns)?))
}
