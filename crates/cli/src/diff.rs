//! `perfq diff`: two captures compared per function or DSO
//! (`perfq_query::diff`), printed as a table, CSV, JSON or Parquet
//! (`output.rs`). Each capture is read from its own session, so A and B
//! may be files, captures of different datasets, or both.

use std::io::Write;
use std::path::{Path, PathBuf};

use anyhow::Context;
use perfq_query::arrow::datatypes::SchemaRef;
use perfq_query::arrow::record_batch::RecordBatch;
use perfq_query::diff::{self, Counts};
use perfq_query::{events, Session};

use crate::input::{Conversion, Input};
use crate::output::{self, QueryFormat};
use crate::progress::Spinner;
use crate::{diff_table, Outcome};

/// Row keys.
#[derive(Clone, Copy, Debug, PartialEq, Eq, clap::ValueEnum)]
pub enum By {
    /// Per function (symbol and DSO).
    Function,
    /// Per DSO.
    Dso,
}

/// Options of `perfq diff`.
pub struct Options {
    pub a: PathBuf,
    pub b: PathBuf,
    pub by: By,
    pub event: Option<String>,
    pub format: QueryFormat,
    pub output: Option<PathBuf>,
    pub conversion: Conversion,
}

/// Two captures compared.
pub struct Compared {
    /// The table's columns.
    pub schema: SchemaRef,
    /// Its rows.
    pub batch: RecordBatch,
    /// The event compared.
    event: String,
    /// The samples of that event in A and in B.
    samples: (u64, u64),
    by: diff::By,
}

pub fn run(opt: &Options, out: &mut dyn Write) -> anyhow::Result<Outcome> {
    output::check(opt.format, opt.output.as_deref())?;
    let (c, outcome) = compute(opt)?;
    if opt.format == QueryFormat::Table {
        let (a_name, b_name) = (opt.a.display().to_string(), opt.b.display().to_string());
        let sides = diff_table::Sides {
            a: &a_name,
            b: &b_name,
            a_samples: c.samples.0,
            b_samples: c.samples.1,
            event: &c.event,
            keys: c.by.keys(),
        };
        match opt.output.as_deref() {
            Some(path) => {
                output::write_atomically(path, |w| diff_table::write(&sides, &c.batch, w))?
            }
            None => diff_table::write(&sides, &c.batch, out)?,
        }
    } else {
        let batches = [c.batch];
        output::emit(opt.format, opt.output.as_deref(), &c.schema, &batches, out)?;
    }
    Ok(outcome)
}

/// The comparison `opt` asks for, and how the command ends.
pub fn compute(opt: &Options) -> anyhow::Result<(Compared, Outcome)> {
    let a = Input::open(&opt.a, &opt.conversion)?;
    let b = Input::open(&opt.b, &opt.conversion)?;
    let sa = a.one_capture(&opt.a)?;
    let sb = b.one_capture(&opt.b)?;
    let event = compared_event(opt, &sa, &sb)?;
    let by = match opt.by {
        By::Function => diff::By::Function,
        By::Dso => diff::By::Dso,
    };
    let spinner = Spinner::start("comparing");
    let counts =
        side(&sa, by, &event, &opt.a).and_then(|a| Ok((a, side(&sb, by, &event, &opt.b)?)));
    drop(spinner);
    let (ca, cb) = counts?;
    if ca.topdown.is_some() != cb.topdown.is_some() {
        let (has, lacks) = if ca.topdown.is_some() {
            (&opt.a, &opt.b)
        } else {
            (&opt.b, &opt.a)
        };
        crate::say::note(format_args!(
            "{} has top-down events and {} has none: no top-down columns",
            has.display(),
            lacks.display()
        ));
    }
    let (schema, batch) = diff::compare(&ca, &cb, by)?;
    let compared = Compared {
        schema,
        batch,
        event,
        samples: (ca.samples, cb.samples),
        by,
    };
    let outcome = Outcome::from_problems(a.problem.into_iter().chain(b.problem));
    Ok((compared, outcome))
}

/// The event compared: the one asked for, which both must have sampled,
/// else the first both sampled (said when either sampled others).
fn compared_event(opt: &Options, sa: &Session, sb: &Session) -> anyhow::Result<String> {
    let ea = events::sampled_events(sa).with_context(|| opt.a.display().to_string())?;
    let eb = events::sampled_events(sb).with_context(|| opt.b.display().to_string())?;
    if let Some(e) = &opt.event {
        for (events, path) in [(&ea, &opt.a), (&eb, &opt.b)] {
            if !events.contains(e) {
                anyhow::bail!(
                    "{} has no samples of event {e} (it has samples of {})",
                    path.display(),
                    list(events)
                );
            }
        }
        return Ok(e.clone());
    }
    let common: Vec<&String> = ea.iter().filter(|e| eb.contains(e)).collect();
    let Some(first) = common.first() else {
        anyhow::bail!(
            "{} and {} sampled no event in common ({} against {})",
            opt.a.display(),
            opt.b.display(),
            list(&ea),
            list(&eb)
        );
    };
    if ea.len() > 1 || eb.len() > 1 {
        crate::say::note(format_args!(
            "comparing samples of {first} (choose with --event)"
        ));
    }
    Ok((*first).clone())
}

fn side(session: &Session, by: diff::By, event: &str, path: &Path) -> anyhow::Result<Counts> {
    diff::counts(session, by, event).with_context(|| path.display().to_string())
}

fn list(events: &[String]) -> String {
    if events.is_empty() {
        "no event".into()
    } else {
        events.join(", ")
    }
}
