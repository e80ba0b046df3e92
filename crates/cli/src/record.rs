//! `perfq record`: the top-down capture this machine can take, recorded by
//! perf and answered as `perfq topdown` answers, in one command. The
//! machine is read under `PERFQ_SYSROOT` (default `/`) and the choice is
//! `perfq_record::plan`'s; this runs perf as a child that has the
//! terminal, then converts what it wrote.

use std::io::Write;
use std::path::{Path, PathBuf};
use std::process::Command;

use anyhow::Context;
use clap::Args;
use perfq_record::{
    explain, plan, shell_line, Machine, Perf, Privilege, Rate, Refusal, Request, Target,
};

use crate::damage::Policy;
use crate::scratch::{self, Scratch};
use crate::{report, topdown, Outcome};

/// The arguments of `perfq record`.
#[derive(Args)]
pub struct RecordArgs {
    /// Record every CPU (perf's -a); with a command, while it runs.
    #[arg(short = 'a', long = "all-cpus")]
    all_cpus: bool,
    /// Record these running processes (ids, comma-separated).
    #[arg(
        short = 'p',
        long = "pid",
        value_delimiter = ',',
        conflicts_with = "all_cpus"
    )]
    pids: Vec<u32>,
    /// Sample every thread and process the command starts. perf 6.13
    /// and later do that anyway; with an older perf, every CPU is recorded
    /// while the command runs (-a's permissions) and the answer keeps the
    /// command's processes.
    #[arg(long, conflicts_with_all = ["all_cpus", "pids"])]
    all_threads: bool,
    /// Stop after this many seconds (the command, if any, is interrupted).
    #[arg(long, value_name = "SECONDS")]
    duration: Option<f64>,
    /// Call graphs from frame pointers (--call-graph fp).
    #[arg(short = 'g', conflicts_with = "call_graph")]
    g: bool,
    /// Call graphs: fp, dwarf (or dwarf,SIZE) or lbr.
    #[arg(long = "call-graph", value_name = "MODE")]
    call_graph: Option<String>,
    /// Samples per second (perf's -F).
    #[arg(
        short = 'F',
        long = "freq",
        value_name = "HZ",
        conflicts_with = "count"
    )]
    freq: Option<u32>,
    /// One sample every this many events of the sampler (perf's -c).
    #[arg(short = 'c', long = "count", value_name = "PERIOD")]
    count: Option<u64>,
    /// 1: Retiring, Bad Speculation, Frontend and Backend Bound; 2: their
    /// children too (where the core can record them).
    #[arg(long, default_value_t = 1, value_parser = clap::value_parser!(u8).range(1..=2))]
    level: u8,
    /// Keep the capture in this file (by default a temporary file, removed
    /// once answered).
    #[arg(short, long, value_name = "FILE")]
    output: Option<PathBuf>,
    /// Record this perf event group instead of the top-down events (for
    /// another question, or a machine without a hardware PMU); answered
    /// as `perfq report` answers.
    #[arg(long, value_name = "GROUP")]
    events: Option<String>,
    /// Record for this CPU model's formulas instead of the one detected
    /// (as `perfq topdown --cpu-model`).
    #[arg(long, value_name = "NAME")]
    cpu_model: Option<String>,
    /// Print the method chosen, why, and the perf command line; run nothing.
    #[arg(long)]
    print: bool,
    /// Record where threads wait too (sched:sched_switch with callchains,
    /// or context-switch records, as this machine allows), and answer
    /// with the time off CPU per function (`perfq report --off-cpu`).
    #[arg(long)]
    off_cpu: bool,
    /// Row key of the answer.
    #[arg(long, value_enum, default_value_t = topdown::ByArg::Function)]
    by: topdown::ByArg,
    /// Output format of the answer.
    #[arg(long, value_enum, default_value_t = topdown::Format::Table)]
    format: topdown::Format,
    /// The command to record, after `--`.
    #[arg(last = true, value_name = "CMD")]
    command: Vec<String>,
}

/// Where the machine's files are read.
fn sysroot() -> PathBuf {
    std::env::var_os("PERFQ_SYSROOT").map_or_else(|| PathBuf::from("/"), PathBuf::from)
}

impl RecordArgs {
    fn request(&self, output: PathBuf) -> anyhow::Result<Request> {
        let target = match (self.all_cpus, self.pids.is_empty(), self.command.is_empty()) {
            (all_cpus, true, false) => Target::Command {
                argv: self.command.clone(),
                all_cpus,
            },
            (true, true, true) => Target::SystemWide,
            (false, false, true) => Target::Pids(self.pids.clone()),
            (false, true, true) => anyhow::bail!(
                "nothing to record: give a command after `--`, -a for every CPU, or -p PID"
            ),
            _ if self.all_threads => {
                anyhow::bail!("--all-threads samples a command's threads: give one after `--`")
            }
            _ => anyhow::bail!("-p records running processes: give no command with it"),
        };
        let call_graph = match (&self.call_graph, self.g) {
            (Some(cg), _) => Some(cg.clone()),
            (None, true) => Some("fp".to_string()),
            (None, false) => None,
        };
        let rate = match (self.freq, self.count) {
            (Some(hz), _) => Some(Rate::Frequency(hz)),
            (None, Some(p)) => Some(Rate::Period(p)),
            (None, None) => None,
        };
        Ok(Request {
            target,
            duration: self.duration,
            call_graph,
            rate,
            level: self.level,
            events: self.events.clone(),
            cpu_model: self.cpu_model.clone(),
            output,
            all_threads: self.all_threads,
            off_cpu: self.off_cpu,
        })
    }

    pub fn run(self, policy: Policy, out: &mut dyn Write) -> anyhow::Result<Outcome> {
        let root = sysroot();
        let machine = Machine::read(&root);
        let perf =
            Perf::find(&std::env::var_os("PATH").unwrap_or_default()).ok_or(Refusal::NoPerf)?;
        let privilege = Privilege::read(&root);
        // The capture: where asked, else a temporary file removed once
        // answered.
        // (--print shows perf's own default name.)
        let scratch = match (&self.output, self.print) {
            (None, false) => Some(Scratch::new("record")?),
            _ => None,
        };
        let output = match (&self.output, &scratch) {
            (Some(o), _) => o.clone(),
            (None, Some(s)) => s.path().join("perf.data"),
            (None, None) => PathBuf::from("perf.data"),
        };
        let request = self.request(output.clone())?;
        let planned = plan(&machine, &perf, privilege, &request)?;
        if self.print {
            out.write_all(explain(&machine, &perf, &planned).as_bytes())?;
            return Ok(Outcome::Ok);
        }
        for note in &planned.notes {
            eprintln!("perfq: note: {note}");
        }
        let argv = &planned.argv;
        eprintln!("perfq: {}", shell_line(argv));
        let stop_after = self.duration.filter(|_| !self.command.is_empty());
        // A capture already at `-o` is not perf's answer this time (perf
        // moves it to `.old` once it starts writing).
        let before = identity(&output);
        let (status, perf_pid) = run_perf(&perf.path, &argv[1..], stop_after)?;
        if !output.is_file() || identity(&output) == before {
            anyhow::bail!(
                "perf record {} and wrote no capture; {}",
                describe(status),
                explanation(&planned)
            );
        }
        if !status.success() {
            eprintln!(
                "perfq: perf record {}; converting what it wrote",
                describe(status)
            );
        }
        // Recorded on every CPU for the command's sake: its processes
        // are the ones perf started, and theirs.
        let pids = match planned.only_command {
            true => Some(started_by(&output, perf_pid)?),
            false => None,
        };
        let outcome = answer(&self, &output, pids, policy, out);
        drop(scratch);
        outcome
    }
}

/// The file at `path` (inode and change time), if there is one.
fn identity(path: &Path) -> Option<(u64, i64, i64)> {
    use std::os::unix::fs::MetadataExt;
    std::fs::metadata(path)
        .ok()
        .map(|m| (m.ino(), m.ctime(), m.ctime_nsec()))
}

fn describe(status: std::process::ExitStatus) -> String {
    use std::os::unix::process::ExitStatusExt;
    match (status.code(), status.signal()) {
        (Some(0), _) => "succeeded".into(),
        (Some(c), _) => format!("failed (exit status {c})"),
        (None, Some(s)) => format!("was ended by signal {s}"),
        (None, None) => "ended".into(),
    }
}

/// What likely went wrong when perf wrote nothing.
fn explanation(planned: &perfq_record::Plan) -> String {
    match planned.chosen.first() {
        Some(c) => format!(
            "perf's message above says why it could not record {} ({}); `perfq record --print` \
             shows the choice, and --events records another group",
            c.method.set.name, c.method.name
        ),
        None => "perf's message above says why".into(),
    }
}

/// Runs perf with the terminal; Ctrl-C reaches perf (and the workload)
/// directly, and perfq waits for perf to write what it recorded. With
/// `stop_after`, perf is interrupted then, as Ctrl-C would.
fn run_perf(
    perf: &Path,
    args: &[String],
    stop_after: Option<f64>,
) -> anyhow::Result<(std::process::ExitStatus, u32)> {
    let mut child = Command::new(perf)
        .args(args)
        .spawn()
        .with_context(|| format!("cannot run {}", perf.display()))?;
    let pid = child.id();
    let status = scratch::while_child_runs(pid, || -> anyhow::Result<_> {
        if let Some(secs) = stop_after {
            let until =
                std::time::Instant::now() + std::time::Duration::from_secs_f64(secs.max(0.0));
            loop {
                if let Some(status) = child.try_wait()? {
                    return Ok(status);
                }
                if std::time::Instant::now() >= until {
                    // SAFETY: kill(2) with a pid this process started and
                    // has not reaped.
                    unsafe {
                        libc::kill(child.id() as libc::pid_t, libc::SIGINT);
                    }
                    break;
                }
                std::thread::sleep(std::time::Duration::from_millis(20));
            }
        }
        Ok(child.wait()?)
    })?;
    Ok((status, pid))
}

/// The answer: `perfq topdown`'s table for a top-down capture,
/// `perfq report`'s for `--events`, `perfq report --off-cpu`'s with
/// `--off-cpu`.
fn answer(
    args: &RecordArgs,
    capture: &Path,
    pids: Option<Vec<u32>>,
    policy: Policy,
    out: &mut dyn Write,
) -> anyhow::Result<Outcome> {
    if args.off_cpu || args.events.is_some() {
        let sources = crate::symbols::SymbolSources::default().resolve(Some(&[capture]))?;
        let opt = report::Options {
            // Off CPU, where the time went is the question: the stacks too.
            children: args.off_cpu,
            sort: report::SortKey::DsoSym,
            event: None,
            pids,
            format: report_format(args.format),
            symbols: sources.config(false),
            policy,
            off_cpu: args.off_cpu,
        };
        let file = crate::input::CaptureFile::open(capture)?;
        return match args.off_cpu {
            true => crate::off_cpu::run(&file, &opt, out),
            false => report::run(&file, &opt, out),
        };
    }
    let opt = topdown::Options {
        input: capture.to_path_buf(),
        level: args.level,
        by: args.by,
        total: false,
        interval_ms: None,
        cpu_model: args.cpu_model.clone(),
        min_samples: 30,
        pids,
        format: args.format,
        conversion: crate::input::InputArgs::default().resolve(policy, &[capture])?,
    };
    topdown::run(&opt, out)
}

/// The report format of `format`.
fn report_format(format: topdown::Format) -> report::ReportFormat {
    match format {
        topdown::Format::Table => report::ReportFormat::Table,
        topdown::Format::Csv => report::ReportFormat::Csv,
        topdown::Format::Json => report::ReportFormat::Json,
    }
}

/// The processes `parent` started, and theirs, in the capture at `path`
/// (`perfq_stream::process_tree`).
fn started_by(path: &Path, parent: u32) -> anyhow::Result<Vec<u32>> {
    let capture = perfq_reader::Capture::open(path)
        .with_context(|| format!("cannot read {}", path.display()))?;
    Ok(perfq_stream::process_tree::started_by(&capture, parent)?)
}
