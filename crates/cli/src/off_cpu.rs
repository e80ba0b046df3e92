//! `perfq report --off-cpu`: where threads waited, per function, in time
//! rather than samples: self (the function the thread left the CPU in)
//! and, with `--children`, total (every function on its stack then), each
//! split by why the threads waited: for a CPU (runnable), asleep, or
//! blocked. The sums are `perfq_report`'s with `off_cpu` (the
//! `off_cpu_function` view's, docs/off-cpu.md); this merges its states
//! into those three and prints them.

use std::collections::HashMap;
use std::io::Write;

use perfq_report::Report;
use serde_json::json;

use crate::answer::Table;
use crate::input::CaptureFile;
use crate::output::{self, QueryFormat};
use crate::report::{self, ReportFormat};
use crate::Outcome;

/// The report's rows and how the command ends; a capture without
/// off-CPU time is an error that says what to record.
pub fn compute(file: &CaptureFile, opt: &report::Options) -> anyhow::Result<(Vec<Row>, Outcome)> {
    let report = report::compute(file, opt)?;
    let rows = rows(&report, opt.children);
    // (Said first: a warning may say why there is no time.)
    let outcome = report::finish(file, &report, opt);
    if rows.is_empty() {
        anyhow::bail!(
            "{}: no off-CPU time: record sched:sched_switch with callchains \
             (perf record -g -e sched:sched_switch, with -a for every thread) \
             or context switches (--switch-events); see docs/off-cpu.md",
            file.name.display()
        );
    }
    Ok((rows, outcome))
}

/// The rows as a table: the columns of `--format json`.
pub fn table(rows: &[Row], children: bool) -> anyhow::Result<Table> {
    let json: Vec<_> = rows.iter().map(|r| r.json(children)).collect();
    let first = [
        "symbol",
        "dso",
        "self_ns",
        "total_ns",
        "runnable_ns",
        "sleeping_ns",
        "blocked_ns",
    ]
    .map(String::from);
    Table::from_rows(&json, &first)
}

/// Prints `file`'s report.
pub fn run(
    file: &CaptureFile,
    opt: &report::Options,
    out: &mut dyn Write,
) -> anyhow::Result<Outcome> {
    let (rows, outcome) = compute(file, opt)?;
    let mut emit = |format| {
        let table = table(&rows, opt.children)?;
        output::emit(format, None, &table.schema, &table.batches, out)
    };
    match opt.format {
        ReportFormat::Json => emit(QueryFormat::Json)?,
        ReportFormat::Csv => emit(QueryFormat::Csv)?,
        ReportFormat::Table => print_table(&rows, opt.children, out)?,
    }
    Ok(outcome)
}

/// One row: a function's off-CPU time.
pub struct Row {
    symbol: String,
    dso: String,
    /// self, total (with children), runnable, sleeping, blocked.
    ns: [u64; 5],
}

impl Row {
    fn json(&self, children: bool) -> serde_json::Value {
        let mut row = json!({
            "symbol": self.symbol,
            "dso": self.dso,
            "self_ns": self.ns[0],
            "runnable_ns": self.ns[2],
            "sleeping_ns": self.ns[3],
            "blocked_ns": self.ns[4],
        });
        if children {
            row["total_ns"] = json!(self.ns[1]);
        }
        row
    }
}

/// Where a state's time goes among the printed three: runnable, sleeping
/// (every state but these two), blocked.
fn column(state: &str) -> usize {
    match state {
        "runnable" => 2,
        "blocked" => 4,
        _ => 3,
    }
}

/// The report's rows of every state merged per function, the time of
/// intervals without a stack as `[unknown]` (self and total: nothing is
/// known of it), sorted by the time shown first (total with `children`),
/// then by symbol and DSO; functions with none of it left out.
fn rows(report: &Report, children: bool) -> Vec<Row> {
    let sorted = if children { 1 } else { 0 };
    let mut at: HashMap<(String, String), usize> = HashMap::new();
    let mut rows: Vec<Row> = Vec::new();
    let mut add = |symbol: String, dso: String, state: &str, own: u64, total: u64| {
        let i = *at.entry((symbol.clone(), dso.clone())).or_insert_with(|| {
            rows.push(Row {
                symbol,
                dso,
                ns: [0; 5],
            });
            rows.len() - 1
        });
        let ns = &mut rows[i].ns;
        ns[0] += own;
        ns[1] += total;
        ns[column(state)] += if children { total } else { own };
    };
    for r in &report.rows {
        let state = &report.events[r.event as usize].name;
        let (symbol, dso) = (report.symbol(r).to_string(), report.dso(r).to_string());
        add(symbol, dso, state, r.period, r.total_period);
    }
    for (state, &ns) in report.events.iter().zip(&report.without_stack) {
        let unknown = || "[unknown]".to_string();
        add(unknown(), unknown(), &state.name, ns, ns);
    }
    rows.retain(|r| r.ns[sorted] > 0);
    rows.sort_by(|a, b| (b.ns[sorted], &a.symbol, &a.dso).cmp(&(a.ns[sorted], &b.symbol, &b.dso)));
    rows
}

/// perf report's look: a header with the whole off-CPU time, then a line
/// per function, its share of that time first.
fn print_table(rows: &[Row], children: bool, out: &mut dyn Write) -> anyhow::Result<()> {
    // Each interval has one leaf: the self times add up to all the time.
    let all: u64 = rows.iter().map(|r| r.ns[0]).sum();
    let ms = |ns: u64| ns as f64 / 1e6;
    let share = |ns: u64| 100.0 * ns as f64 / all.max(1) as f64;
    writeln!(out, "# Off-CPU time: {:.3} ms", ms(all))?;
    writeln!(
        out,
        "# time in ms; the states split the {} time: runnable = waiting for a CPU, blocked = uninterruptible (I/O)",
        if children { "children" } else { "self" }
    )?;
    let first = if children { "Children  " } else { "" };
    writeln!(
        out,
        "# {first}    Self    Self ms  Runnable  Sleeping   Blocked  Shared Object         Symbol"
    )?;
    for r in rows {
        if children {
            write!(out, "  {:>7.2}% ", share(r.ns[1]))?;
        }
        writeln!(
            out,
            "  {:>7.2}% {:>10.3} {:>9.3} {:>9.3} {:>9.3}  {:<20}  {}",
            share(r.ns[0]),
            ms(r.ns[0]),
            ms(r.ns[2]),
            ms(r.ns[3]),
            ms(r.ns[4]),
            r.dso,
            r.symbol
        )?;
    }
    Ok(())
}
