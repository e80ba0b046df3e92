//! `perfq report --off-cpu`: where threads waited, per function, in time
//! rather than samples: the `off_cpu_function` view (docs/off-cpu.md),
//! self (the function the thread left the CPU in) and, with `--children`,
//! total (every function on its stack then), each split by why the
//! threads waited: for a CPU (runnable), asleep, or blocked.

use std::io::Write;
use std::path::{Path, PathBuf};

use perfq_query::arrow::array::{Array, AsArray};
use perfq_query::arrow::compute::cast;
use perfq_query::arrow::datatypes::{DataType, UInt64Type};
use perfq_query::arrow::record_batch::RecordBatch;

use crate::answer::Table;
use crate::input::Conversion;
use crate::output::{self, QueryFormat};
use crate::report::ReportFormat;
use crate::{query, Outcome};

/// What `report --off-cpu` was asked.
pub struct Options {
    /// Total time per function too, sorted by it.
    pub children: bool,
    /// How the rows are printed.
    pub format: ReportFormat,
}

/// The rows: per function, its self time (and total time), and the part
/// of the time sorted by that each state holds.
fn statement(children: bool) -> String {
    let sorted = if children { "total_ns" } else { "self_ns" };
    let total = if children {
        "SUM(total_ns) AS total_ns, "
    } else {
        ""
    };
    let state = |name: &str, test: &str| {
        format!("SUM(CASE WHEN {test} THEN {sorted} ELSE 0 END) AS {name}")
    };
    format!(
        "SELECT * FROM (SELECT symbol, dso, SUM(self_ns) AS self_ns, {total}{}, {}, {} \
         FROM off_cpu_function GROUP BY symbol, dso) f WHERE {sorted} > 0 \
         ORDER BY {sorted} DESC, symbol, dso",
        state("runnable_ns", "state = 'runnable'"),
        state("sleeping_ns", "state NOT IN ('runnable', 'blocked')"),
        state("blocked_ns", "state = 'blocked'"),
    )
}

/// The rows of `file`'s report, and how the command ends.
pub fn table(
    file: &Path,
    opt: &Options,
    conversion: Conversion,
) -> anyhow::Result<(Table, Outcome)> {
    let q = query::Options {
        input: PathBuf::from(file),
        sql: statement(opt.children),
        format: QueryFormat::Json,
        output: None,
        capture: None,
        conversion,
    };
    let (table, outcome) = query::table(&q)?;
    if table.num_rows() == 0 {
        anyhow::bail!(
            "{}: no off-CPU time: record sched:sched_switch with callchains \
             (perf record -g -e sched:sched_switch, with -a for every thread) \
             or context switches (--switch-events); see docs/off-cpu.md",
            file.display()
        );
    }
    Ok((table, outcome))
}

/// Prints `file`'s report.
pub fn run(
    file: &Path,
    opt: &Options,
    conversion: Conversion,
    out: &mut dyn Write,
) -> anyhow::Result<Outcome> {
    let (table, outcome) = table(file, opt, conversion)?;
    let mut emit = |format| output::emit(format, None, &table.schema, &table.batches, out);
    match opt.format {
        ReportFormat::Json => emit(QueryFormat::Json)?,
        ReportFormat::Csv => emit(QueryFormat::Csv)?,
        ReportFormat::Table => print_table(&table.batches, opt.children, out)?,
    }
    Ok(outcome)
}

/// One row, as printed.
struct Row {
    symbol: String,
    dso: String,
    /// self, total (with children), runnable, sleeping, blocked.
    ns: [u64; 5],
}

/// The rows of the result's batches.
fn rows(batches: &[RecordBatch], children: bool) -> anyhow::Result<Vec<Row>> {
    let mut rows = Vec::new();
    for b in batches {
        let text = |name: &str| -> anyhow::Result<Vec<String>> {
            let col = cast(
                b.column_by_name(name).ok_or_else(|| missing(name))?,
                &DataType::Utf8,
            )?;
            let col = col.as_string::<i32>();
            Ok((0..col.len()).map(|i| col.value(i).to_string()).collect())
        };
        let number = |name: &str| -> anyhow::Result<Vec<u64>> {
            let Some(col) = b.column_by_name(name) else {
                return Ok(vec![0; b.num_rows()]);
            };
            let col = cast(col, &DataType::UInt64)?;
            let col = col.as_primitive::<UInt64Type>();
            Ok((0..col.len()).map(|i| col.value(i)).collect())
        };
        let (symbols, dsos) = (text("symbol")?, text("dso")?);
        let total = if children {
            number("total_ns")?
        } else {
            vec![0; b.num_rows()]
        };
        let columns = [number("self_ns")?, total, number("runnable_ns")?];
        let rest = [number("sleeping_ns")?, number("blocked_ns")?];
        for (i, (symbol, dso)) in symbols.into_iter().zip(dsos).enumerate() {
            let ns = [
                columns[0][i],
                columns[1][i],
                columns[2][i],
                rest[0][i],
                rest[1][i],
            ];
            rows.push(Row { symbol, dso, ns });
        }
    }
    Ok(rows)
}

fn missing(name: &str) -> anyhow::Error {
    anyhow::anyhow!("internal error (please report): the off-CPU rows have no {name}")
}

/// perf report's look: a header with the whole off-CPU time, then a line
/// per function, its share of that time first.
fn print_table(batches: &[RecordBatch], children: bool, out: &mut dyn Write) -> anyhow::Result<()> {
    let rows = rows(batches, children)?;
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
    for r in &rows {
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
