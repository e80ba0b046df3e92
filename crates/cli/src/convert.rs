//! `perfq convert`: captures into a normalized Parquet dataset
//! (`docs/schema.md`), one `capture=<id>/` folder each. It is a batch
//! (`perfq_writer::batch`) run one capture at a time, reported one line
//! per capture.

use std::io::Write;
use std::path::PathBuf;

use perfq_symbolize::Config;
use perfq_writer::batch::{self, Status};
use perfq_writer::convert;

use crate::damage::Policy;
use crate::destination::Destination;
use crate::Outcome;

/// Options of `perfq convert`.
pub struct Options {
    pub files: Vec<PathBuf>,
    pub output: PathBuf,
    pub force: bool,
    pub symbols: Option<Config>,
    pub stack_memory: Option<u64>,
    pub policy: Policy,
}

pub fn run(opt: &Options, out: &mut dyn Write) -> anyhow::Result<Outcome> {
    let destination = Destination::of(&opt.output)?;
    let bopt = batch::Options {
        jobs: 1,
        convert: convert::Options {
            force: opt.force,
            symbols: opt.symbols.clone(),
            stack_memory: opt.stack_memory,
            source: None,
            read_values: convert::ReadValues::Rows,
        },
        publish: destination.bucket.clone(),
    };
    let bar = crate::progress::Bar::new();
    crate::scratch::writing_into(&destination.folder);
    let outcomes = batch::run(&opt.files, &destination.folder, &bopt, &bar)?;
    bar.finish();
    let mut problems = Vec::new();
    for o in outcomes {
        let dir = || destination.capture(o.capture.as_deref().unwrap_or(""));
        match &o.status {
            Status::Present(_) => writeln!(
                out,
                "{} -> {} (already in the dataset; --force converts it again)",
                o.input,
                dir()
            )?,
            Status::Converted { .. } => writeln!(out, "{} -> {}", o.input, dir())?,
            Status::Failed(e) if e.contains(&o.input) => problems.push(e.clone()),
            Status::Failed(e) => problems.push(format!("{}: {e}", o.input)),
        }
        if let Some(notes) = o.notes() {
            problems.extend(opt.policy.say(&o.input, notes));
        }
    }
    Ok(Outcome::from_problems(problems))
}
