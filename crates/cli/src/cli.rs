//! The command line: each command's arguments (their doc comments are
//! `--help`'s text) and how they become the call of the command's module.

use std::io::Write;
use std::path::{Path, PathBuf};

use clap::{Args, Parser, Subcommand};
use perfq_writer::convert::ReadValues;

use crate::answer::{Answer, Rows};
use crate::damage::Policy;
use crate::dump::{DumpFormat, DumpRecords};
use crate::input::CaptureFile;
use crate::{
    batch, convert, diff, dump, examples, export, flamegraph, html, info, input, output, query,
    report, size, symbols, topdown, Outcome,
};

/// Turn perf.data captures into answers: per-function reports, top-down
/// (TMA) shares, SQL over Parquet datasets, flame graphs and HTML reports.
#[derive(Parser)]
#[command(name = "perfq", version, about, after_help = examples::PERFQ)]
pub struct Cli {
    #[command(subcommand)]
    pub command: Command,
    /// Fail (exit 1) when a capture is damaged: by default what could be
    /// read is used and what could not is said as a warning.
    #[arg(long, global = true)]
    pub strict: bool,
}

#[derive(Subcommand)]
pub enum Command {
    /// Describe a capture: header, events, record counts, losses, warnings.
    #[command(after_help = examples::INFO)]
    Info(InfoArgs),
    /// Print every sample with all its decoded fields, in time order.
    #[command(after_help = examples::DUMP)]
    Dump(DumpArgs),
    /// Write captures as a normalized Parquet dataset (docs/schema.md).
    #[command(after_help = examples::CONVERT)]
    Convert(ConvertArgs),
    /// Per-function self (and with --children, total) samples, periods and
    /// percentages, like `perf report --stdio`.
    #[command(after_help = examples::REPORT)]
    Report(ReportArgs),
    /// Top-down (TMA) shares of pipeline slots per function, thread,
    /// process, DSO or time interval (docs/topdown.md).
    #[command(after_help = examples::TOPDOWN)]
    Topdown(TopdownArgs),
    /// Record the top-down events this machine's CPU, kernel and perf can
    /// take (chosen for it; --print shows the choice and the perf command
    /// line), then answer as `topdown` does (docs/topdown.md).
    #[command(after_help = examples::RECORD)]
    Record(crate::record::RecordArgs),
    /// Run SQL over a dataset or a perf.data file: every table and the
    /// documented views (docs/schema.md) are registered.
    #[command(after_help = examples::QUERY)]
    Query(QueryArgs),
    /// Folded stacks, or an interactive flame graph (SVG), optionally
    /// coloured by each function's dominant top-down category.
    #[command(after_help = examples::FLAMEGRAPH)]
    Flamegraph(FlamegraphArgs),
    /// Compare two captures per function or DSO: the change in share of
    /// samples (or period) and in top-down categories, largest first, with
    /// its significance.
    #[command(after_help = examples::DIFF)]
    Diff(DiffArgs),
    /// Write the samples for the viewers people use: pprof (`go tool
    /// pprof`, Pyroscope, Parca) or speedscope (docs/viewing.md).
    #[command(after_help = examples::EXPORT)]
    Export(ExportArgs),
    /// One self-contained HTML report (docs/viewing.md): header, top
    /// functions with their top-down shares, callers and callees, a time
    /// line whose selection filters the rest, a flame graph; off-CPU time
    /// where the capture has it.
    #[command(after_help = examples::HTML)]
    Html(HtmlArgs),
    /// Convert many captures into one dataset, in parallel: perf.data files,
    /// folders (searched recursively), globs and archives (.tar, .tar.gz,
    /// .tar.bz2, .tar.zst, .zip). Captures already in the dataset are
    /// skipped, so an interrupted batch resumes where it stopped.
    #[command(after_help = examples::BATCH)]
    Batch(BatchArgs),
    /// See, prune or clear perfq's cache of converted captures and symbol
    /// tables (bounded by PERFQ_CACHE_MAX, by default a tenth of its file
    /// system; least recently used removed first).
    #[command(after_help = examples::CACHE)]
    Cache {
        #[command(subcommand)]
        action: crate::cache::CacheAction,
    },
    /// Print a completion script for a shell (bash, zsh, fish, elvish,
    /// powershell), to be saved where the shell looks for completions.
    #[command(after_help = examples::COMPLETIONS)]
    Completions {
        /// The shell.
        shell: clap_complete::Shell,
    },
    /// Print perfq's manual page (roff), or one command's, or write every
    /// page into a folder.
    #[command(after_help = examples::MAN)]
    Man(crate::manual::ManArgs),
}

/// The arguments of `perfq info`.
#[derive(Args)]
pub struct InfoArgs {
    /// The perf.data file (`-` for standard input), or its URL
    /// (`s3://bucket/key`).
    file: PathBuf,
    /// Output format: text, or one JSON object.
    #[arg(long, value_enum, default_value_t = info::InfoFormat::Text)]
    format: info::InfoFormat,
    /// The same as --format json.
    #[arg(long, hide = true)]
    json: bool,
}

impl InfoArgs {
    pub fn run(self, policy: Policy, out: &mut dyn Write) -> anyhow::Result<Outcome> {
        let json = self.json || self.format == info::InfoFormat::Json;
        let file = CaptureFile::open(&self.file)?;
        info::run(&file, json, policy, out)
    }
}

/// The arguments of `perfq dump`.
#[derive(Args)]
pub struct DumpArgs {
    /// The perf.data file (`-` for standard input), or its URL
    /// (`s3://bucket/key`).
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
}

impl DumpArgs {
    pub fn run(self, policy: Policy, out: &mut dyn Write) -> anyhow::Result<Outcome> {
        let file = CaptureFile::open(&self.file)?;
        // Unpacked archives stay until the command ends.
        let resolved = if self.symbols {
            Some(self.sources.resolve(Some(&[&file.path]))?)
        } else {
            None
        };
        let config = resolved.as_ref().map(|r| r.config(true));
        dump::run(&file, self.format, self.records, config, policy, out)
    }

    /// The samples as Arrow batches, streamed: the fields of `--format
    /// csv`, and with `--symbols` the frames of `--format jsonl`
    /// (`--records all` is not taken there).
    pub fn batches(self, policy: Policy) -> anyhow::Result<(Answer, Outcome)> {
        if self.records != DumpRecords::Samples {
            anyhow::bail!("samples as a table are read without --records all");
        }
        let file = CaptureFile::open(&self.file)?;
        let symbols = match self.symbols {
            true => Some(self.sources.resolve(Some(&[&file.path]))?),
            false => None,
        };
        let batches = dump::batches(file, symbols, policy)?;
        Ok((Answer::Batches(batches), Outcome::Ok))
    }
}

/// The arguments of `perfq convert`.
#[derive(Args)]
pub struct ConvertArgs {
    /// The perf.data files.
    #[arg(required = true)]
    files: Vec<PathBuf>,
    /// The dataset folder; each capture becomes `capture=<id>/` in it.
    #[arg(short, long, value_name = "DATASET")]
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
}

impl ConvertArgs {
    pub fn run(self, policy: Policy, out: &mut dyn Write) -> anyhow::Result<Outcome> {
        let files: Vec<&Path> = self.files.iter().map(PathBuf::as_path).collect();
        let sources = self.sources.resolve(Some(&files))?;
        let opt = convert::Options {
            files: self.files,
            output: self.output,
            force: self.force,
            stack_memory: self.stack_memory,
            symbols: (!self.no_symbols).then(|| sources.config(true)),
            policy,
        };
        convert::run(&opt, out)
    }
}

/// `--pid`'s processes, sorted, or no filter when none is given.
fn pid_filter(mut pids: Vec<u32>) -> Option<Vec<u32>> {
    pids.sort_unstable();
    pids.dedup();
    (!pids.is_empty()).then_some(pids)
}

/// The arguments of `perfq report`.
#[derive(Args)]
pub struct ReportArgs {
    /// The perf.data file (`-` for standard input), or its URL
    /// (`s3://bucket/key`).
    file: PathBuf,
    /// Also total (inclusive) time from callchains, like `perf report --children`.
    #[arg(long)]
    children: bool,
    /// Row key (perf's --sort; --by as in topdown and diff).
    #[arg(long, visible_alias = "by", value_enum, default_value_t = report::SortKey::DsoSym)]
    sort: report::SortKey,
    /// Only this event.
    #[arg(long)]
    event: Option<String>,
    /// Only the samples of these processes (like perf report --pid).
    #[arg(long = "pid", value_name = "PID", value_delimiter = ',')]
    pids: Vec<u32>,
    /// Output format.
    #[arg(long, value_enum, default_value_t = report::ReportFormat::Table)]
    format: report::ReportFormat,
    /// Time off CPU instead of samples: where threads waited (from
    /// sched:sched_switch or context-switch records; docs/off-cpu.md).
    #[arg(long, conflicts_with = "event")]
    off_cpu: bool,
    #[command(flatten)]
    sources: symbols::SymbolSources,
}

impl ReportArgs {
    pub fn run(self, policy: Policy, out: &mut dyn Write) -> anyhow::Result<Outcome> {
        let (file, opt, _sources) = self.prepare(policy)?;
        match opt.off_cpu {
            true => crate::off_cpu::run(&file, &opt, out),
            false => report::run(&file, &opt, out),
        }
    }

    pub fn answer(self, policy: Policy) -> anyhow::Result<(Answer, Outcome)> {
        let (file, opt, _sources) = self.prepare(policy)?;
        if opt.off_cpu {
            let (rows, outcome) = crate::off_cpu::compute(&file, &opt)?;
            let table = crate::off_cpu::table(&rows, opt.children)?;
            return Ok((Answer::Table(table), outcome));
        }
        let report = report::compute(&file, &opt)?;
        let table = report::table_of(&report, &opt)?;
        Ok((Answer::Table(table), report::finish(&file, &report, &opt)))
    }

    /// The capture (a capture in object storage is read from a copy
    /// here), the options, and the symbol sources they name.
    fn prepare(
        self,
        policy: Policy,
    ) -> anyhow::Result<(CaptureFile, report::Options, symbols::ResolvedSources)> {
        if self.off_cpu && self.sort != report::SortKey::DsoSym {
            anyhow::bail!("--off-cpu takes --sort dso,sym only (off-CPU time per function)");
        }
        let file = CaptureFile::open(&self.file)?;
        let sources = self.sources.resolve(Some(&[&file.path]))?;
        let opt = report::Options {
            children: self.children,
            sort: self.sort,
            event: self.event,
            pids: pid_filter(self.pids),
            format: self.format,
            symbols: sources.config(false),
            policy,
            off_cpu: self.off_cpu,
        };
        Ok((file, opt, sources))
    }
}

/// The arguments of `perfq topdown`.
#[derive(Args)]
pub struct TopdownArgs {
    /// A perf.data file (converted once into a cache dataset) or a
    /// dataset folder; either may be a URL (s3://bucket/key).
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
    #[arg(long, value_name = "N", default_value_t = 30)]
    min_samples: u64,
    /// Only the samples of these processes.
    #[arg(long = "pid", value_name = "PID", value_delimiter = ',')]
    pids: Vec<u32>,
    /// Output format.
    #[arg(long, value_enum, default_value_t = topdown::Format::Table)]
    format: topdown::Format,
    #[command(flatten)]
    input_args: input::InputArgs,
}

impl TopdownArgs {
    pub fn run(self, policy: Policy, out: &mut dyn Write) -> anyhow::Result<Outcome> {
        topdown::run(&self.options(policy)?, out)
    }

    pub fn answer(self, policy: Policy) -> anyhow::Result<(Answer, Outcome)> {
        let (report, outcome) = topdown::compute(&self.options(policy)?)?;
        Ok((Answer::Table(topdown::table_of(&report)?), outcome))
    }

    fn options(self, policy: Policy) -> anyhow::Result<topdown::Options> {
        let mut conversion = self.input_args.resolve(policy, &[&self.input])?;
        // Top-down takes each sample's member deltas from the samples
        // table's m0..m15, never from read_values.
        conversion.scratch_reads = ReadValues::Empty;
        Ok(topdown::Options {
            input: self.input,
            level: self.level,
            by: self.by,
            total: self.total,
            interval_ms: self.interval,
            cpu_model: self.cpu_model,
            min_samples: self.min_samples,
            pids: pid_filter(self.pids),
            format: self.format,
            conversion,
        })
    }
}

/// The arguments of `perfq query`.
#[derive(Args)]
pub struct QueryArgs {
    /// A perf.data file (converted once into the cache dataset, as for
    /// `topdown`) or a dataset folder; either may be a URL
    /// (s3://bucket/key).
    input: PathBuf,
    /// One SQL statement (DataFusion's dialect).
    sql: String,
    /// Output format.
    #[arg(long, value_enum, default_value_t = output::QueryFormat::Table)]
    format: output::QueryFormat,
    /// Write the result to this file (atomically; a URL, s3://bucket/key,
    /// names an object) instead of standard output.
    #[arg(short, long, value_name = "FILE")]
    output: Option<PathBuf>,
    /// Only this capture of a dataset (its id, `capture=<id>`).
    #[arg(long, value_name = "ID")]
    capture: Option<String>,
    #[command(flatten)]
    input_args: input::InputArgs,
}

impl QueryArgs {
    pub fn run(self, policy: Policy, out: &mut dyn Write) -> anyhow::Result<Outcome> {
        query::run(&self.options(policy)?, out)
    }

    pub fn answer(self, policy: Policy, rows: Rows) -> anyhow::Result<(Answer, Outcome)> {
        let opt = self.options(policy)?;
        match rows {
            Rows::Whole => {
                let (table, outcome) = query::table(&opt)?;
                Ok((Answer::Table(table), outcome))
            }
            Rows::Streamed => {
                let (batches, outcome) = query::batches(opt)?;
                Ok((
                    Answer::Batches(crate::Batches {
                        reader: batches,
                        later: crate::say::Later::nothing(),
                    }),
                    outcome,
                ))
            }
        }
    }

    fn options(self, policy: Policy) -> anyhow::Result<query::Options> {
        let conversion = self.input_args.resolve(policy, &[&self.input])?;
        Ok(query::Options {
            input: self.input,
            sql: self.sql,
            format: self.format,
            output: self.output,
            capture: self.capture,
            conversion,
        })
    }
}

/// The arguments of `perfq flamegraph`.
#[derive(Args)]
pub struct FlamegraphArgs {
    /// A perf.data file (converted once into the cache dataset), a
    /// dataset folder, or one capture's `capture=<id>` folder; any of
    /// them may be a URL (s3://bucket/key).
    input: PathBuf,
    /// Write to this file (atomically; a URL, s3://bucket/key, names an
    /// object) instead of standard output.
    #[arg(short, long, value_name = "FILE")]
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
    /// Time off CPU instead of samples: where threads waited, each stack
    /// as wide as the time spent there (docs/off-cpu.md); with
    /// --samples, as the number of waits.
    #[arg(long, conflicts_with = "event")]
    off_cpu: bool,
    /// How frames are coloured.
    #[arg(long, value_enum, default_value_t = flamegraph::Color::Default)]
    color: flamegraph::Color,
    /// Only this capture of a dataset (its id, `capture=<id>`).
    #[arg(long, value_name = "ID")]
    capture: Option<String>,
    #[command(flatten)]
    input_args: input::InputArgs,
}

impl FlamegraphArgs {
    pub fn run(self, policy: Policy, out: &mut dyn Write) -> anyhow::Result<Outcome> {
        let conversion = self.input_args.resolve(policy, &[&self.input])?;
        let opt = flamegraph::Options {
            input: self.input,
            output: self.output,
            folded: self.folded,
            event: self.event,
            color: self.color,
            capture: self.capture,
            samples: self.samples,
            off_cpu: self.off_cpu,
            conversion,
        };
        flamegraph::run(&opt, out)
    }
}

/// What `perfq export` and `perfq html` share: a dataset's samples of one
/// event written to a file.
#[derive(Args)]
pub struct ViewArgs {
    /// A perf.data file (converted once into the cache dataset), a
    /// dataset folder, or one capture's `capture=<id>` folder; any of
    /// them may be a URL (s3://bucket/key).
    input: PathBuf,
    /// The file to write (atomically; a URL, s3://bucket/key, names an
    /// object).
    #[arg(short, long, value_name = "FILE")]
    output: PathBuf,
    /// Only this event (its name as `perfq info` shows it). pprof takes
    /// every event by default, speedscope and html the first sampled.
    #[arg(long)]
    event: Option<String>,
    /// Only this capture of a dataset (its id, `capture=<id>`).
    #[arg(long, value_name = "ID")]
    capture: Option<String>,
    #[command(flatten)]
    input_args: input::InputArgs,
}

impl ViewArgs {
    fn resolve(self, policy: Policy) -> anyhow::Result<crate::input::View> {
        let conversion = self.input_args.resolve(policy, &[&self.input])?;
        Ok(crate::input::View {
            input: self.input,
            output: self.output,
            event: self.event,
            capture: self.capture,
            conversion,
        })
    }
}

/// The arguments of `perfq export`.
#[derive(Args)]
pub struct ExportArgs {
    /// The format.
    #[arg(long, value_enum, value_name = "FORMAT")]
    to: export::Format,
    #[command(flatten)]
    view: ViewArgs,
}

impl ExportArgs {
    pub fn run(self, policy: Policy) -> anyhow::Result<Outcome> {
        export::run(self.to, &self.view.resolve(policy)?)
    }
}

/// The arguments of `perfq html`.
#[derive(Args)]
pub struct HtmlArgs {
    /// Compare with this capture (a perf.data file or a `capture=<id>`
    /// folder), as `perfq diff BASE INPUT` does: the change per function
    /// and a flame graph coloured by it.
    #[arg(long, value_name = "BASE")]
    diff: Option<PathBuf>,
    #[command(flatten)]
    view: ViewArgs,
}

impl HtmlArgs {
    pub fn run(self, policy: Policy) -> anyhow::Result<Outcome> {
        html::run(&self.view.resolve(policy)?, self.diff.as_deref())
    }
}

/// The arguments of `perfq diff`.
#[derive(Args)]
pub struct DiffArgs {
    /// The baseline: a perf.data file, or a dataset's `capture=<id>`
    /// folder (either may be a URL, s3://bucket/key).
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
    /// Write the result to this file (atomically; a URL, s3://bucket/key,
    /// names an object) instead of standard output.
    #[arg(short, long, value_name = "FILE")]
    output: Option<PathBuf>,
    #[command(flatten)]
    input_args: input::InputArgs,
}

impl DiffArgs {
    pub fn run(self, policy: Policy, out: &mut dyn Write) -> anyhow::Result<Outcome> {
        diff::run(&self.options(policy)?, out)
    }

    pub fn answer(self, policy: Policy) -> anyhow::Result<(Answer, Outcome)> {
        let (compared, outcome) = diff::compute(&self.options(policy)?)?;
        let table = crate::answer::Table {
            schema: compared.schema,
            batches: vec![compared.batch],
        };
        Ok((Answer::Table(table), outcome))
    }

    fn options(self, policy: Policy) -> anyhow::Result<diff::Options> {
        let conversion = self.input_args.resolve(policy, &[&self.a, &self.b])?;
        Ok(diff::Options {
            a: self.a,
            b: self.b,
            by: self.by,
            event: self.event,
            format: self.format,
            output: self.output,
            conversion,
        })
    }
}

/// The arguments of `perfq batch`.
#[derive(Args)]
pub struct BatchArgs {
    /// Files, folders, globs and archives.
    #[arg(required = true)]
    inputs: Vec<PathBuf>,
    /// The dataset folder.
    #[arg(short, long, value_name = "DATASET")]
    output: PathBuf,
    /// Conversions at once (default: one per core).
    #[arg(short, long, value_name = "N", value_parser = clap::value_parser!(u32).range(1..))]
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
}

impl BatchArgs {
    pub fn run(self, policy: Policy, out: &mut dyn Write) -> anyhow::Result<Outcome> {
        // A batch's captures are found as it runs: every build id of
        // an archive given is unpacked.
        let sources = self.sources.resolve(None)?;
        let opt = batch::Options {
            inputs: self.inputs,
            output: self.output,
            jobs: self.jobs.map_or_else(
                || std::thread::available_parallelism().map_or(1, |n| n.get()),
                |j| j as usize,
            ),
            force: self.force,
            symbols: (!self.no_symbols).then(|| sources.config(true)),
            stack_memory: self.stack_memory,
            format: self.format,
            policy,
        };
        batch::run(&opt, out)
    }
}
