//! `perfq report`: per-function self and total (inclusive) samples and
//! periods, as `perf report --no-children` / `--children` compute them.
//! The aggregation is `perfq_report`; this prints it.

use crate::input::CaptureFile;
use std::fmt::Write as _;
use std::io::Write;

use perfq_report::{self as report, Report, Row};
use perfq_symbolize::Config;
use rayon::prelude::*;
use serde_json::json;

use crate::damage::Policy;
use crate::progress::ReadBar;
use crate::Outcome;

/// How rows are keyed.
#[derive(Clone, Copy, Debug, PartialEq, Eq, clap::ValueEnum)]
pub enum SortKey {
    /// Shared object and symbol (perf's `--sort dso,sym`).
    #[value(name = "dso,sym")]
    DsoSym,
    /// Symbol only.
    Sym,
    /// Shared object only.
    Dso,
}

impl From<SortKey> for report::SortKey {
    fn from(k: SortKey) -> Self {
        match k {
            SortKey::DsoSym => report::SortKey::DsoSym,
            SortKey::Sym => report::SortKey::Sym,
            SortKey::Dso => report::SortKey::Dso,
        }
    }
}

/// Output formats of `perfq report`.
#[derive(Clone, Copy, Debug, PartialEq, Eq, clap::ValueEnum)]
pub enum ReportFormat {
    /// Aligned columns.
    Table,
    /// Comma-separated values with a header line.
    Csv,
    /// One JSON array of rows.
    Json,
}

/// Options of `perfq report`.
pub struct Options {
    pub children: bool,
    pub sort: SortKey,
    pub event: Option<String>,
    /// Only the samples of these processes (sorted).
    pub pids: Option<Vec<u32>>,
    pub format: ReportFormat,
    pub symbols: Config,
    pub policy: Policy,
    /// Time off CPU instead of samples (`crate::off_cpu` prints it).
    pub off_cpu: bool,
}

pub fn run(file: &CaptureFile, opt: &Options, out: &mut dyn Write) -> anyhow::Result<Outcome> {
    let report = compute(file, opt)?;
    match opt.format {
        ReportFormat::Json => json_rows(&report, opt.children, out)?,
        ReportFormat::Csv => csv_rows(&report, opt.children, out)?,
        ReportFormat::Table => table(&report, opt.children, out)?,
    }
    Ok(finish(file, &report, opt))
}

/// Says the symbolizer's notes, then what the read lost, once the rows
/// are out (a reader that closes the pipe early gets neither); returns
/// how the command ends.
pub fn finish(file: &CaptureFile, report: &Report, opt: &Options) -> Outcome {
    for n in &report.notes {
        crate::say::note(n);
    }
    let problem = opt
        .policy
        .say(&file.name.display().to_string(), &report.read);
    Outcome::from_problems(problem)
}

/// The answer as a table: the rows of `--format json`, columns in the
/// order of the CSV.
pub fn table_of(report: &Report, opt: &Options) -> anyhow::Result<crate::answer::Table> {
    let rows: Vec<serde_json::Value> = report
        .rows
        .iter()
        .filter_map(|r| row_json(report, r, opt.children))
        .collect();
    let first = [
        "event",
        "dso",
        "symbol",
        "samples",
        "period",
        "self_percent",
        "total_samples",
        "total_period",
        "total_percent",
        "unresolved_samples",
        "unresolved",
    ]
    .map(String::from);
    crate::answer::Table::from_rows(&rows, &first)
}

/// The report `opt` asks for, and how the command ends.
pub fn compute(file: &CaptureFile, opt: &Options) -> anyhow::Result<Report> {
    let path = file.name.as_path();
    let bar = ReadBar::new(&path.display().to_string());
    let report = report::run_with_progress(
        &file.path,
        &report::Options {
            children: opt.children,
            sort: opt.sort.into(),
            event: opt.event.clone(),
            pids: opt.pids.clone(),
            symbols: opt.symbols.clone(),
            pass_memory: None,
            off_cpu: opt.off_cpu,
        },
        &mut |done, total| {
            bar.update(done, total);
            if done == total {
                bar.stage("symbolizing");
            }
        },
    );
    bar.finish();
    report.map_err(|e| anyhow::anyhow!(file.named(e.to_string())))
}

/// Writes the text `line` makes of each row (given the row before it) in
/// the rows' order. Lines are made on every core, a block of rows at a
/// time (formatting a system-wide capture's rows was a noticeable part
/// of `report --children`), and each block is written whole.
fn write_lines(
    rows: &[Row],
    out: &mut dyn Write,
    line: impl Fn(&mut String, Option<&Row>, &Row) + Sync,
) -> anyhow::Result<()> {
    /// Rows made into text by one task.
    const TASK: usize = 1 << 13;
    /// Rows whose text is held at a time (a few megabytes).
    const BLOCK: usize = 1 << 16;
    for (b, block) in rows.chunks(BLOCK).enumerate() {
        let texts: Vec<String> = block
            .par_chunks(TASK)
            .enumerate()
            .map(|(t, task)| {
                let mut text = String::new();
                let first = b * BLOCK + t * TASK;
                for (i, r) in task.iter().enumerate() {
                    let previous = (first + i).checked_sub(1).map(|p| &rows[p]);
                    line(&mut text, previous, r);
                }
                text
            })
            .collect();
        for text in &texts {
            out.write_all(text.as_bytes())?;
        }
    }
    Ok(())
}

/// The total period of the row's event: what its percentages are of.
fn total_of(report: &Report, row: &Row) -> u64 {
    report
        .events
        .get(row.event as usize)
        .map_or(0, |e| e.period)
}

/// The name of the row's event.
fn event_name<'a>(report: &'a Report, row: &Row) -> &'a str {
    report
        .events
        .get(row.event as usize)
        .map_or("", |e| &e.name)
}

/// `value` right-aligned in `width` characters (ASCII: numbers), as
/// `{:>width$}` writes it.
fn right_aligned(line: &mut String, width: usize, value: &str) {
    pad(line, width.saturating_sub(value.len()));
    line.push_str(value);
}

/// Appends `n` spaces, a slice at a time (a `char` at a time, as an
/// iterator of spaces extends a string, costs more than the rest of a
/// row's padding).
fn pad(line: &mut String, n: usize) {
    const SPACES: &str = "                                ";
    let mut left = n;
    while left > 0 {
        let k = left.min(SPACES.len());
        line.push_str(&SPACES[..k]);
        left -= k;
    }
}

/// `x` as `{:>width$.2}` writes it. Rounded from its hundredths as an
/// integer where that is certain to give the same digits (the formatter's
/// exact decimal expansion costs more than the rest of a row); at a tie,
/// or for values the integer would not hold, by the formatter.
fn percent(line: &mut String, width: usize, x: f64) {
    let hundredths = x * 100.0;
    let frac = hundredths - hundredths.floor();
    // `hundredths` is within an ulp (under 1e-6 below 1e9) of x's exact
    // hundredths: away from .5 it rounds the same way.
    if (0.0..1e9).contains(&hundredths) && (frac - 0.5).abs() > 1e-6 {
        let n = (hundredths.floor() as u64) + u64::from(frac > 0.5);
        let mut digits = itoa::Buffer::new();
        let whole = digits.format(n / 100);
        let cents = (n % 100) as u8;
        let len = whole.len() + 3;
        pad(line, width.saturating_sub(len));
        line.push_str(whole);
        line.push('.');
        line.push(char::from(b'0' + cents / 10));
        line.push(char::from(b'0' + cents % 10));
        return;
    }
    let text = format!("{x:.2}");
    right_aligned(line, width, &text);
}

fn pct(v: u64, t: u64) -> f64 {
    if t == 0 {
        0.0
    } else {
        100.0 * v as f64 / t as f64
    }
}

fn json_rows(report: &Report, children: bool, out: &mut dyn Write) -> anyhow::Result<()> {
    // One array, written a row at a time as the other formats are (the
    // whole array as one value took far more memory than the report
    // itself on a system-wide capture). Each object is serialized alone
    // exactly as it would be inside the array.
    let first = report.rows.iter().find(|r| shown(r));
    out.write_all(b"[")?;
    write_lines(&report.rows, out, |line, _, r| {
        let Some(o) = row_json(report, r, children) else {
            return;
        };
        if !first.is_some_and(|f| std::ptr::eq(f, r)) {
            line.push(',');
        }
        let _ = write!(line, "{o}");
    })?;
    writeln!(out, "]")?;
    Ok(())
}

/// Whether a row is shown: it has a period of its own or in total.
fn shown(r: &Row) -> bool {
    r.period > 0 || r.total_period > 0
}

/// One row of `--format json`, if it is shown.
fn row_json(report: &Report, r: &Row, children: bool) -> Option<serde_json::Value> {
    if !shown(r) {
        return None;
    }
    let t = total_of(report, r);
    let mut o = json!({
        "event": event_name(report, r), "dso": report.dso(r), "symbol": report.symbol(r).to_string(),
        "samples": r.samples, "period": r.period,
        "self_percent": pct(r.period, t),
        "unresolved_samples": r.unresolved_samples,
    });
    if children {
        o["total_samples"] = json!(r.total_samples);
        o["total_period"] = json!(r.total_period);
        o["total_percent"] = json!(pct(r.total_period, t));
    }
    if let Some(why) = report.unresolved_reason(r) {
        o["unresolved"] = json!(why);
    }
    Some(o)
}

fn csv_rows(report: &Report, children: bool, out: &mut dyn Write) -> anyhow::Result<()> {
    writeln!(
        out,
        "event,dso,symbol,samples,period,self_percent{},unresolved",
        if children {
            ",total_samples,total_period,total_percent"
        } else {
            ""
        }
    )?;
    write_lines(&report.rows, out, |line, _, r| {
        let t = total_of(report, r);
        let q = crate::csv::field;
        let _ = write!(
            line,
            "{},{},{},{},{},{:.4}",
            q(event_name(report, r)),
            q(report.dso(r)),
            q(&report.symbol(r).to_string()),
            r.samples,
            r.period,
            pct(r.period, t)
        );
        if children {
            let _ = write!(
                line,
                ",{},{},{:.4}",
                r.total_samples,
                r.total_period,
                pct(r.total_period, t)
            );
        }
        let _ = writeln!(line, ",{}", report.unresolved_reason(r).unwrap_or(""));
    })?;
    Ok(())
}

fn table(report: &Report, children: bool, out: &mut dyn Write) -> anyhow::Result<()> {
    write_lines(&report.rows, out, |line, previous, r| {
        if previous.is_none_or(|p| p.event != r.event) {
            let (n, p) = report
                .events
                .get(r.event as usize)
                .map_or((0, 0), |e| (e.samples, e.period));
            let _ = writeln!(
                line,
                "# Event: {}  ({n} samples, total period {p})",
                event_name(report, r)
            );
            if children {
                let _ = writeln!(
                    line,
                    "# {:>8} {:>8} {:>9} {:>14}  {:<24} Symbol",
                    "Children", "Self", "Samples", "Period", "Shared Object"
                );
            } else {
                let _ = writeln!(
                    line,
                    "# {:>8} {:>9} {:>14}  {:<24} Symbol",
                    "Self", "Samples", "Period", "Shared Object"
                );
            }
        }
        if !children && r.period == 0 {
            return;
        }
        let t = total_of(report, r);
        // The columns of `"  {:>7.2}% {:>7.2}% {:>9} {:>14}  {:<24} {}"`
        // (Children only with `--children`), padded here: the formatter
        // pads a character at a time, a noticeable cost over a long report.
        line.push_str("  ");
        if children {
            percent(line, 7, pct(r.total_period, t));
            line.push_str("% ");
        }
        percent(line, 7, pct(r.period, t));
        line.push_str("% ");
        let mut digits = itoa::Buffer::new();
        right_aligned(line, 9, digits.format(r.samples));
        line.push(' ');
        right_aligned(line, 14, digits.format(r.period));
        line.push_str("  ");
        let dso = report.dso(r);
        line.push_str(dso);
        let width = dso.chars().count();
        pad(line, 24usize.saturating_sub(width));
        line.push(' ');
        match report.symbol(r) {
            perfq_report::Symbol::Name(name) => line.push_str(&name),
            other => {
                let _ = write!(line, "{other}");
            }
        }
        if let Some(why) = report.unresolved_reason(r) {
            let _ = write!(line, "  ({why})");
        }
        line.push('\n');
    })?;
    // What could not be resolved, by reason.
    let all = report.samples();
    for (why, n) in &report.unresolved {
        writeln!(out, "# unresolved: {n} of {all} samples ({why})")?;
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::{pad, pct, percent};

    #[test]
    fn padding_is_that_many_spaces() {
        for n in [0, 1, 31, 32, 33, 100] {
            let mut line = String::from("x");
            pad(&mut line, n);
            assert_eq!(line, format!("x{:n$}", ""));
        }
    }

    /// The percentages are the formatter's `{:>7.2}` exactly: shares of
    /// many totals, ties (1/8 %, 5/8 %), the ends and past them.
    #[test]
    fn percentages_are_written_as_the_formatter_writes_them() {
        let mut cases: Vec<f64> = vec![0.0, 0.125, 0.625, 2.675, 99.995, 100.0, 1234.5678, 1e12];
        for t in [1u64, 3, 7, 8, 400, 593_256, 118_674_930_240, u64::MAX] {
            let step = (t / 5000).max(1);
            cases.extend((0..=t.min(5000)).map(|i| pct(i.saturating_mul(step).min(t), t)));
        }
        for x in cases {
            let mut line = String::new();
            percent(&mut line, 7, x);
            assert_eq!(line, format!("{x:>7.2}"), "{x:e}");
        }
    }
}
