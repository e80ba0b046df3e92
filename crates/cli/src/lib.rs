//! `perfq`: the command line as a library. [`main_with`] is the whole
//! program (the `perfq` binary and the Python module's console script both
//! call it): it parses arguments, calls the library crates and prints;
//! errors become one line on stderr and exit status 1. [`answer`] runs
//! the same commands, parsed by the same definitions, and returns their
//! results as Arrow tables instead of printing them (the Python module).

mod answer;
pub use answer::{
    answer, c_stream, defaults, Answer, Answered, Batches, FFI_ArrowArrayStream, Failure,
    FailureKind, Rows, Table,
};
/// The Arrow crates the answers are made of.
pub use perfq_query::arrow;
pub use perfq_query::arrow::record_batch::RecordBatchReader;
pub use perfq_stream::interrupt;
mod batch;
mod cache;
mod cli;
mod convert;
mod csv;
mod damage;
mod destination;
mod diff;
mod diff_table;
mod dump;
mod examples;
mod export;
mod flamegraph;
mod heap;
mod html;
pub mod huge_pages;
mod info;
mod input;
mod jsonw;
mod manual;
mod off_cpu;
mod output;
mod progress;
mod query;
mod record;
mod report;
pub mod say;
mod scratch;
mod size;
mod symbols;
mod topdown;

use std::io::Write;

use clap::Parser;

use cli::{Cli, Command};

/// What a command ended with: success, or failure after having printed what
/// it could.
pub enum Outcome {
    /// All read.
    Ok,
    /// Something could not be read; the message says what.
    Failed(String),
}

impl Outcome {
    /// Success when nothing went wrong, else one line naming every problem.
    pub fn from_problems(problems: impl IntoIterator<Item = String>) -> Outcome {
        let problems: Vec<String> = problems.into_iter().collect();
        if problems.is_empty() {
            Outcome::Ok
        } else {
            Outcome::Failed(problems.join("; "))
        }
    }
}

fn run(cli: Cli) -> anyhow::Result<Outcome> {
    let stdout = std::io::stdout();
    let mut out = std::io::BufWriter::with_capacity(1 << 16, stdout.lock());
    let policy = damage::Policy { strict: cli.strict };
    let outcome = run_command(cli.command, policy, &mut out)?;
    out.flush()?;
    Ok(outcome)
}

/// Runs one command, printing its answer to `out`.
fn run_command(
    command: Command,
    policy: damage::Policy,
    out: &mut dyn Write,
) -> anyhow::Result<Outcome> {
    let outcome = match command {
        Command::Info(args) => args.run(policy, out)?,
        Command::Dump(args) => args.run(policy, out)?,
        Command::Convert(args) => args.run(policy, out)?,
        Command::Report(args) => args.run(policy, out)?,
        Command::Topdown(args) => args.run(policy, out)?,
        Command::Record(args) => args.run(policy, out)?,
        Command::Query(args) => args.run(policy, out)?,
        Command::Flamegraph(args) => args.run(policy, out)?,
        Command::Diff(args) => args.run(policy, out)?,
        Command::Export(args) => args.run(policy)?,
        Command::Html(args) => args.run(policy)?,
        Command::Batch(args) => args.run(policy, out)?,
        Command::Cache { action } => cache::run(&action, out)?,
        Command::Completions { shell } => manual::completions(shell, out)?,
        Command::Man(args) => args.run(out)?,
    };
    Ok(outcome)
}

/// The whole command line: `args` as `std::env::args_os` gives them (the
/// program's name first). Argument errors, `--help` and `--version` exit
/// the process as clap does. Returns the exit status.
pub fn main_with<I, T>(args: I) -> u8
where
    I: IntoIterator<Item = T>,
    T: Into<std::ffi::OsString> + Clone,
{
    let cli = Cli::parse_from(args);
    heap::give_back_freed_memory(match cli.command {
        Command::Convert(_) | Command::Batch(_) => heap::CONVERSION,
        _ => heap::PHASES,
    });
    scratch::remove_on_interrupt();
    // A bug must still end with a one-line error and status 1, not a
    // panic's status 101.
    std::panic::set_hook(Box::new(|info| {
        eprintln!("perfq: internal error (please report): {info}");
    }));
    let result = std::panic::catch_unwind(|| run(cli));
    scratch::wait_if_interrupted();
    match result {
        Ok(Ok(Outcome::Ok)) => 0,
        Ok(Ok(Outcome::Failed(msg))) => {
            eprintln!("perfq: error: {msg}");
            1
        }
        Ok(Err(e)) => {
            if is_broken_pipe(&e) {
                return 0;
            }
            eprintln!("perfq: error: {e:#}");
            1
        }
        Err(_) => 1,
    }
}

/// Whether the error is a reader closing the pipe (`perfq ... | head`):
/// an io error as it is, or inside a JSON or Arrow writer's error.
fn is_broken_pipe(e: &anyhow::Error) -> bool {
    use std::io::ErrorKind::BrokenPipe;
    e.chain().any(|c| {
        c.downcast_ref::<std::io::Error>()
            .is_some_and(|io| io.kind() == BrokenPipe)
            || c.downcast_ref::<serde_json::Error>()
                .is_some_and(|j| j.io_error_kind() == Some(BrokenPipe))
            || c.downcast_ref::<perfq_query::arrow::error::ArrowError>()
                .is_some_and(|a| {
                    matches!(a, perfq_query::arrow::error::ArrowError::IoError(_, io) if io.kind() == BrokenPipe)
                })
    })
}
