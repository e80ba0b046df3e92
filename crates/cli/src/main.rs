//! `perfq`: the command line. Parses arguments, calls the library crates,
//! prints. Errors become one line on stderr and exit status 1.

mod batch;
mod convert;
mod csv;
mod damage;
mod diff;
mod dump;
mod flamegraph;
mod heap;
mod huge_pages;
mod info;
mod input;
mod jsonw;
mod output;
mod progress;
mod query;
mod report;
mod sideband;
mod size;
mod symbols;
mod topdown;

use std::io::Write;
use std::path::PathBuf;
use std::process::ExitCode;

use clap::{Parser, Subcommand, ValueEnum};

/// Large blocks on huge pages: see [`huge_pages`].
#[global_allocator]
static ALLOCATOR: huge_pages::HugePageBlocks = huge_pages::HugePageBlocks;

/// Turn perf.data captures into answers.
#[derive(Parser)]
#[command(name = "perfq", version, about)]
struct Cli {
    #[command(subcommand)]
    command: Command,
    /// Fail (exit 1) when a capture is damaged: by default what could be
    /// read is used and what could not is said as a warning.
    #[arg(long, global = true)]
    strict: bool,
}

#[derive(Subcommand)]
enum Command {
    /// Describe a capture: header, events, record counts, losses, warnings.
    Info {
        /// The perf.data file (`-` for standard input).
        file: PathBuf,
        /// Print one JSON object instead of text.
        #[arg(long)]
        json: bool,
    },
    /// Print every sample with all its decoded fields, in time order.
    Dump {
        /// The perf.data file (`-` for standard input).
        file: PathBuf,
        /// Output format.
        #[arg(long, value_enum, default_value_t = DumpFormat::Jsonl)]
        format: DumpFormat,
        /// Which records: samples only, or every record (JSON lines only).
        #[arg(long, value_enum, default_value_t = DumpRecords::Samples)]
        records: DumpRecords,
        /// Symbolize every frame: DSO, function, inline chain, file:line
        /// (JSON lines only).
        #[arg(long)]
        symbols: bool,
        #[command(flatten)]
        sources: symbols::SymbolSources,
    },
    /// Write captures as a normalized Parquet dataset (docs/schema.md).
    Convert {
        /// The perf.data files.
        #[arg(required = true)]
        files: Vec<PathBuf>,
        /// The dataset folder; each capture becomes `capture=<id>/` in it.
        #[arg(short, long)]
        output: PathBuf,
        /// Replace captures already in the dataset.
        #[arg(long)]
        force: bool,
        /// Store addresses only: no binaries, kallsyms or DWARF are read.
        #[arg(long)]
        no_symbols: bool,
        /// Keep at most about this much of stacks and distinct frames in
        /// memory (e.g. 256M): past it, those so far are written and
        /// interning starts afresh, so memory stays flat however long the
        /// capture, and a stack or frame met on both sides of a cut is
        /// stored twice (docs/schema.md). Default: no limit, each once.
        #[arg(long, value_name = "SIZE", value_parser = size::parse)]
        stack_memory: Option<u64>,
        #[command(flatten)]
        sources: symbols::SymbolSources,
    },
    /// Per-function self (and with --children, total) samples, periods and
    /// percentages, like `perf report --stdio`.
    Report {
        /// The perf.data file (`-` for standard input).
        file: PathBuf,
        /// Also total (inclusive) time from callchains, like `perf report --children`.
        #[arg(long)]
        children: bool,
        /// Row key.
        #[arg(long, value_enum, default_value_t = report::SortKey::DsoSym)]
        sort: report::SortKey,
        /// Only this event.
        #[arg(long)]
        event: Option<String>,
        /// Output format.
        #[arg(long, value_enum, default_value_t = report::ReportFormat::Table)]
        format: report::ReportFormat,
        #[command(flatten)]
        sources: symbols::SymbolSources,
    },
    /// Top-down (TMA) shares of pipeline slots per function, thread,
    /// process, DSO or time interval (docs/topdown.md).
    Topdown {
        /// A perf.data file (converted once into a cache dataset) or a
        /// dataset folder.
        input: PathBuf,
        /// 1: Retiring, Bad Speculation, Frontend and Backend Bound; 2: their
        /// children too.
        #[arg(long, default_value_t = 1, value_parser = clap::value_parser!(u8).range(1..=2))]
        level: u8,
        /// Row key.
        #[arg(long, value_enum, default_value_t = topdown::ByArg::Function)]
        by: topdown::ByArg,
        /// Each sample counts for the function of its own address (the default).
        #[arg(long = "self", conflicts_with = "total")]
        self_: bool,
        /// Each sample counts once for every function on its stack.
        #[arg(long)]
        total: bool,
        /// Rows per time interval of this many milliseconds (like perf stat -I).
        #[arg(long, value_name = "MS", value_parser = clap::value_parser!(u64).range(1..))]
        interval: Option<u64>,
        /// Use this CPU model's formulas (perf's name: sapphirerapids, icelake,
        /// skylake, amdzen4, amdzen5, neoverse-v2, ...) instead of the
        /// capture's.
        #[arg(long, value_name = "NAME")]
        cpu_model: Option<String>,
        /// Rows with fewer samples are marked (not hidden).
        #[arg(long, default_value_t = 30)]
        min_samples: u64,
        /// Output format.
        #[arg(long, value_enum, default_value_t = topdown::Format::Table)]
        format: topdown::Format,
        #[command(flatten)]
        input_args: input::InputArgs,
    },
    /// Run SQL over a dataset or a perf.data file: every table and the
    /// documented views (docs/schema.md) are registered.
    Query {
        /// A perf.data file (converted once into the cache dataset, as for
        /// `topdown`) or a dataset folder.
        input: PathBuf,
        /// One SQL statement (DataFusion's dialect).
        sql: String,
        /// Output format.
        #[arg(long, value_enum, default_value_t = output::QueryFormat::Table)]
        format: output::QueryFormat,
        /// Write the result to this file (atomically) instead of standard
        /// output.
        #[arg(short, long)]
        output: Option<PathBuf>,
        /// Only this capture of a dataset (its id, `capture=<id>`).
        #[arg(long, value_name = "ID")]
        capture: Option<String>,
        #[command(flatten)]
        input_args: input::InputArgs,
    },
    /// Folded stacks, or an interactive flame graph (SVG), optionally
    /// coloured by each function's dominant top-down category.
    Flamegraph {
        /// A perf.data file (converted once into the cache dataset), a
        /// dataset folder, or one capture's `capture=<id>` folder.
        input: PathBuf,
        /// Write to this file (atomically) instead of standard output.
        #[arg(short, long)]
        output: Option<PathBuf>,
        /// Folded stacks (`comm;caller;...;leaf count`) instead of an SVG.
        #[arg(long)]
        folded: bool,
        /// Count samples rather than add up their periods (the count
        /// stackcollapse-perf.pl and inferno take from `perf script`).
        #[arg(long)]
        samples: bool,
        /// Only this event (its name as `perfq info` shows it).
        #[arg(long)]
        event: Option<String>,
        /// How frames are coloured.
        #[arg(long, value_enum, default_value_t = flamegraph::Color::Default)]
        color: flamegraph::Color,
        /// Only this capture of a dataset (its id, `capture=<id>`).
        #[arg(long, value_name = "ID")]
        capture: Option<String>,
        #[command(flatten)]
        input_args: input::InputArgs,
    },
    /// Compare two captures per function or DSO: the change in share of
    /// samples (or period) and in top-down categories, largest first, with
    /// its significance.
    Diff {
        /// The baseline: a perf.data file, or a dataset's `capture=<id>` folder.
        a: PathBuf,
        /// The capture compared with it.
        b: PathBuf,
        /// Row key.
        #[arg(long, value_enum, default_value_t = diff::By::Function)]
        by: diff::By,
        /// Only this event (by default the first event sampled in A that B
        /// has samples of too).
        #[arg(long)]
        event: Option<String>,
        /// Output format.
        #[arg(long, value_enum, default_value_t = output::QueryFormat::Table)]
        format: output::QueryFormat,
        /// Write the result to this file (atomically) instead of standard output.
        #[arg(short, long)]
        output: Option<PathBuf>,
        #[command(flatten)]
        input_args: input::InputArgs,
    },
    /// Convert many captures into one dataset, in parallel: perf.data files,
    /// folders (searched recursively), globs and archives (.tar, .tar.gz,
    /// .tar.bz2, .tar.zst, .zip). Captures already in the dataset are
    /// skipped, so an interrupted batch resumes where it stopped.
    Batch {
        /// Files, folders, globs and archives.
        #[arg(required = true)]
        inputs: Vec<PathBuf>,
        /// The dataset folder.
        #[arg(short, long)]
        output: PathBuf,
        /// Conversions at once (default: one per core).
        #[arg(short, long, value_parser = clap::value_parser!(u32).range(1..))]
        jobs: Option<u32>,
        /// Replace captures already in the dataset.
        #[arg(long)]
        force: bool,
        /// Store addresses only: no binaries, kallsyms or DWARF are read.
        #[arg(long)]
        no_symbols: bool,
        /// Keep at most about this much of stacks and distinct frames in
        /// memory (e.g. 256M): past it, those so far are written and
        /// interning starts afresh, so memory stays flat however long the
        /// capture, and a stack or frame met on both sides of a cut is
        /// stored twice (docs/schema.md). Each capture converted at once has
        /// its own. Default: no limit, each once.
        #[arg(long, value_name = "SIZE", value_parser = size::parse)]
        stack_memory: Option<u64>,
        /// Format of the summary table.
        #[arg(long, value_enum, default_value_t = output::QueryFormat::Table)]
        format: output::QueryFormat,
        #[command(flatten)]
        sources: symbols::SymbolSources,
    },
}

/// Formats of `perfq dump`.
#[derive(Clone, Copy, ValueEnum)]
pub enum DumpFormat {
    /// One JSON object per line.
    Jsonl,
    /// Comma-separated values with a header line.
    Csv,
}

/// Which records `perfq dump` prints.
#[derive(Clone, Copy, PartialEq, Eq, ValueEnum)]
pub enum DumpRecords {
    /// PERF_RECORD_SAMPLE only.
    Samples,
    /// Every record: samples and the sideband (mmap, comm, fork, exit, lost, ...).
    All,
}

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
    let outcome = match cli.command {
        Command::Info { file, json } => info::run(&file, json, policy, &mut out)?,
        Command::Dump {
            file,
            format,
            records,
            symbols,
            sources,
        } => {
            let resolved = if symbols {
                Some(sources.resolve()?)
            } else {
                None
            };
            let config = resolved.as_ref().map(|r| r.config(true));
            dump::run(&file, format, records, config, policy, &mut out)?
        }
        Command::Convert {
            files,
            output,
            force,
            no_symbols,
            stack_memory,
            sources,
        } => {
            let sources = sources.resolve()?;
            let opt = convert::Options {
                files,
                output,
                force,
                stack_memory,
                symbols: (!no_symbols).then(|| sources.config(true)),
                policy,
            };
            convert::run(&opt, &mut out)?
        }
        Command::Report {
            file,
            children,
            sort,
            event,
            format,
            sources,
        } => {
            let sources = sources.resolve()?;
            let opt = report::Options {
                children,
                sort,
                event,
                format,
                symbols: sources.config(false),
                policy,
            };
            report::run(&file, &opt, &mut out)?
        }
        Command::Topdown {
            input,
            level,
            by,
            self_: _,
            total,
            interval,
            cpu_model,
            min_samples,
            format,
            input_args,
        } => {
            let opt = topdown::Options {
                input,
                level,
                by,
                total,
                interval_ms: interval,
                cpu_model,
                min_samples,
                format,
                conversion: input_args.resolve(policy)?,
            };
            topdown::run(&opt, &mut out)?
        }
        Command::Query {
            input,
            sql,
            format,
            output,
            capture,
            input_args,
        } => {
            let opt = query::Options {
                input,
                sql,
                format,
                output,
                capture,
                conversion: input_args.resolve(policy)?,
            };
            query::run(&opt, &mut out)?
        }
        Command::Flamegraph {
            input,
            output,
            folded,
            samples,
            event,
            color,
            capture,
            input_args,
        } => {
            let opt = flamegraph::Options {
                input,
                output,
                folded,
                event,
                color,
                capture,
                samples,
                conversion: input_args.resolve(policy)?,
            };
            flamegraph::run(&opt, &mut out)?
        }
        Command::Diff {
            a,
            b,
            by,
            event,
            format,
            output,
            input_args,
        } => {
            let opt = diff::Options {
                a,
                b,
                by,
                event,
                format,
                output,
                conversion: input_args.resolve(policy)?,
            };
            diff::run(&opt, &mut out)?
        }
        Command::Batch {
            inputs,
            output,
            jobs,
            force,
            no_symbols,
            stack_memory,
            format,
            sources,
        } => {
            let sources = sources.resolve()?;
            let opt = batch::Options {
                inputs,
                output,
                jobs: jobs.map_or_else(
                    || std::thread::available_parallelism().map_or(1, |n| n.get()),
                    |j| j as usize,
                ),
                force,
                symbols: (!no_symbols).then(|| sources.config(true)),
                stack_memory,
                format,
                policy,
            };
            batch::run(&opt, &mut out)?
        }
    };
    out.flush()?;
    Ok(outcome)
}

fn main() -> ExitCode {
    let cli = Cli::parse();
    heap::give_back_freed_memory(match cli.command {
        Command::Convert { .. } | Command::Batch { .. } => heap::CONVERSION,
        _ => heap::PHASES,
    });
    // A bug must still end with a one-line error and status 1, not a
    // panic's status 101.
    std::panic::set_hook(Box::new(|info| {
        eprintln!("perfq: internal error (please report): {info}");
    }));
    match std::panic::catch_unwind(|| run(cli)) {
        Ok(Ok(Outcome::Ok)) => ExitCode::SUCCESS,
        Ok(Ok(Outcome::Failed(msg))) => {
            eprintln!("perfq: error: {msg}");
            ExitCode::from(1)
        }
        Ok(Err(e)) => {
            if is_broken_pipe(&e) {
                return ExitCode::SUCCESS;
            }
            eprintln!("perfq: error: {e:#}");
            ExitCode::from(1)
        }
        Err(_) => ExitCode::from(1),
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
