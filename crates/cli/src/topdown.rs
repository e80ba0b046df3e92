//! `perfq topdown`: top-down shares per function (thread, process, DSO,
//! interval) from a dataset or a perf.data file (`input.rs`). The work is
//! `perfq_query::topdown`; this picks the input and prints.

use std::io::Write;
use std::path::PathBuf;

use perfq_query::topdown::{self, By, Mode, NodeInfo, Report, Row};
use serde_json::Value;

use crate::input::{Conversion, Input};
use crate::progress::Spinner;
use crate::Outcome;

/// Output formats.
#[derive(Clone, Copy, Debug, PartialEq, Eq, clap::ValueEnum)]
pub enum Format {
    /// A table for a terminal.
    Table,
    /// Comma-separated values with a header line.
    Csv,
    /// One JSON array of row objects.
    Json,
}

/// Row keys.
#[derive(Clone, Copy, Debug, PartialEq, Eq, clap::ValueEnum)]
pub enum ByArg {
    /// Per function.
    Function,
    /// Per thread.
    Thread,
    /// Per process.
    Process,
    /// Per DSO.
    Dso,
}

/// Options of `perfq topdown`.
pub struct Options {
    pub input: PathBuf,
    pub level: u8,
    pub by: ByArg,
    pub total: bool,
    pub interval_ms: Option<u64>,
    pub cpu_model: Option<String>,
    pub min_samples: u64,
    /// Only the samples of these processes (sorted).
    pub pids: Option<Vec<u32>>,
    pub format: Format,
    pub conversion: Conversion,
}

pub fn run(opt: &Options, out: &mut dyn Write) -> anyhow::Result<Outcome> {
    let (report, outcome) = compute(opt)?;
    match opt.format {
        Format::Table => table(&report, opt, out)?,
        Format::Csv => csv(&report, out)?,
        Format::Json => {
            serde_json::to_writer(&mut *out, &Value::Array(json_rows(&report)))?;
            writeln!(out)?;
        }
    }
    Ok(outcome)
}

/// The answer as a table: the rows of `--format json`, columns in the
/// order of the text table (keys, samples, the nodes, then the rest).
pub fn table_of(report: &Report) -> anyhow::Result<crate::answer::Table> {
    let mut first: Vec<String> = report.rows.first().map_or_else(Vec::new, |r| {
        r.keys.iter().map(|(k, _)| k.clone()).collect()
    });
    first.extend(["samples".into(), "low_samples".into()]);
    for n in report.rows.first().into_iter().flat_map(|r| &r.nodes) {
        first.extend([n.name.clone(), format!("{}_se", n.name)]);
    }
    crate::answer::Table::from_rows(&json_rows(report), &first)
}

/// The top-down shares `opt` asks for, and how the command ends.
pub fn compute(opt: &Options) -> anyhow::Result<(Report, Outcome)> {
    let input = Input::open(&opt.input, &opt.conversion)?;
    let session = input.session()?;
    let capture = input.capture.clone();
    let by = match (opt.interval_ms, opt.by) {
        (Some(_), _) => By::Interval,
        (None, ByArg::Function) => By::Function,
        (None, ByArg::Thread) => By::Thread,
        (None, ByArg::Process) => By::Process,
        (None, ByArg::Dso) => By::Dso,
    };
    let topt = topdown::Options {
        by,
        mode: if opt.total {
            Mode::Total
        } else {
            Mode::SelfTime
        },
        level: opt.level,
        interval_ms: opt.interval_ms.unwrap_or(1000),
        min_samples: opt.min_samples,
        cpu_model: opt.cpu_model.clone(),
        capture,
        pids: opt.pids.clone(),
    };
    // A file's errors and warnings name the file rather than its id in the
    // cache.
    let named = |w: &str| match &topt.capture {
        Some(id) => w.replace(&format!("capture {id}"), &opt.input.display().to_string()),
        None => w.to_string(),
    };
    let spinner = Spinner::start("computing top-down shares");
    let report = topdown::run(&session, &topt);
    drop(spinner);
    let report = report.map_err(|e| anyhow::anyhow!("{}", named(&e.to_string())))?;
    for w in &report.warnings {
        crate::say::warning(format_args!("{}", named(w)));
    }
    Ok((report, input.outcome()))
}

fn value<'a>(row: &'a Row, node: &str) -> Option<&'a topdown::NodeValue> {
    row.nodes.iter().find(|n| n.name == node)
}

/// Short column headers, so that level 2 fits a terminal.
fn short(node: &str) -> &str {
    match node {
        "retiring" => "Retire",
        "bad_speculation" => "BadSpec",
        "frontend_bound" => "Frontend",
        "backend_bound" => "Backend",
        "smt_contention" => "SMT",
        "heavy_operations" => "heavy",
        "light_operations" => "light",
        "branch_mispredicts" => "mispr",
        "machine_clears" => "clears",
        "fetch_latency" => "lat",
        "fetch_bandwidth" => "bw",
        "memory_bound" => "mem",
        "core_bound" => "core",
        "resource_bound" => "resrc",
        other => other,
    }
}

fn table(report: &Report, opt: &Options, out: &mut dyn Write) -> anyhow::Result<()> {
    write_table_title(report, opt, out)?;
    let cols = columns(report);
    let hybrid = report.rows.iter().any(|r| r.core.is_some());
    writeln!(out, "{}", table_header(report, &cols, hybrid))?;
    for r in &report.rows {
        writeln!(out, "{}", table_line(r, &cols, hybrid))?;
    }
    Ok(())
}

/// The two comment lines above the table: the CPU models, and what the
/// columns and marks mean.
fn write_table_title(report: &Report, opt: &Options, out: &mut dyn Write) -> anyhow::Result<()> {
    writeln!(out, "# CPU: {}", report.models.join("; "))?;
    writeln!(
        out,
        "# {} topdown, {} by {}; % of pipeline slots; * = flagged bottleneck (its parent too); ~ = fewer than {} samples",
        if opt.level >= 2 { "level-1 and level-2" } else { "level-1" },
        if opt.total { "total (inclusive)" } else { "self" },
        match opt.interval_ms {
            Some(ms) => format!("{ms} ms interval"),
            None => format!("{:?}", opt.by).to_lowercase(),
        },
        opt.min_samples
    )?;
    Ok(())
}

/// The table's node columns: level-1 nodes, each followed by its children.
fn columns(report: &Report) -> Vec<&NodeInfo> {
    let mut cols: Vec<&NodeInfo> = Vec::new();
    // Level 1 in one order for every family (perf stat's: retiring, bad
    // speculation, frontend, backend), AMD's SMT contention last.
    let mut level1: Vec<&NodeInfo> = report.nodes.iter().filter(|n| n.level == 1).collect();
    level1.sort_by_key(|n| {
        perfq_topdown::LEVEL1
            .iter()
            .position(|l| *l == n.name)
            .unwrap_or(9)
    });
    for n in level1 {
        cols.push(n);
        cols.extend(
            report
                .nodes
                .iter()
                .filter(|c| c.parent.as_deref() == Some(&n.name)),
        );
    }
    cols
}

fn table_header(report: &Report, cols: &[&NodeInfo], hybrid: bool) -> String {
    let mut header = format!("{:>9}", "samples");
    for c in cols {
        let h = if c.level == 1 {
            short(&c.name).to_string()
        } else {
            format!(".{}", short(&c.name))
        };
        header.push_str(&format!(" {h:>8}"));
    }
    if hybrid {
        header.push_str("  core    ");
    }
    header.push_str("  ");
    header.push_str(&report.keys.join(" "));
    header
}

/// One row: its samples (marked when few), a share per column, its core
/// type, its keys and what is wrong with it.
fn table_line(r: &Row, cols: &[&NodeInfo], hybrid: bool) -> String {
    let mark = if r.low_samples { "~" } else { " " };
    let mut line = format!("{mark}{:>8}", r.samples);
    for c in cols {
        let cell = match value(r, &c.name) {
            Some(v) => match v.value {
                Some(x) => format!("{:.1}{}", x * 100.0, if v.flagged { "*" } else { " " }),
                None => "-  ".into(),
            },
            None => "".into(),
        };
        line.push_str(&format!(" {cell:>8}"));
    }
    if hybrid {
        line.push_str(&format!("  {:<8}", r.core.as_deref().unwrap_or("")));
    }
    line.push_str("  ");
    let keys: Vec<String> = r
        .keys
        .iter()
        .map(|(k, v)| {
            if k == "dso" {
                format!("[{v}]")
            } else {
                v.clone()
            }
        })
        .collect();
    line.push_str(&keys.join(" "));
    if let Some(i) = &r.issues {
        line.push_str(&format!("  ({i})"));
    }
    line
}

fn csv_field(s: &str) -> String {
    if s.contains([',', '"', '\n']) {
        format!("\"{}\"", s.replace('"', "\"\""))
    } else {
        s.to_string()
    }
}

fn opt_num(v: Option<f64>) -> String {
    v.map(|x| format!("{x}")).unwrap_or_default()
}

fn csv(report: &Report, out: &mut dyn Write) -> anyhow::Result<()> {
    let mut header: Vec<String> = report.keys.clone();
    header.push("samples".into());
    header.push("low_samples".into());
    header.push("slots".into());
    for n in &report.nodes {
        header.push(n.name.clone());
        header.push(format!("{}_se", n.name));
        header.push(format!("{}_flagged", n.name));
    }
    header.push("core".into());
    header.push("issues".into());
    writeln!(out, "{}", header.join(","))?;
    for r in &report.rows {
        let mut f: Vec<String> = report
            .keys
            .iter()
            .map(|k| csv_field(r.keys.iter().find(|x| &x.0 == k).map_or("", |x| &x.1)))
            .collect();
        f.push(r.samples.to_string());
        f.push(r.low_samples.to_string());
        f.push(opt_num(r.slots));
        for n in &report.nodes {
            let v = value(r, &n.name);
            f.push(opt_num(v.and_then(|v| v.value)));
            f.push(opt_num(v.and_then(|v| v.se)));
            f.push(v.map(|v| v.flagged.to_string()).unwrap_or_default());
        }
        f.push(r.core.clone().unwrap_or_default());
        f.push(csv_field(r.issues.as_deref().unwrap_or("")));
        writeln!(out, "{}", f.join(","))?;
    }
    Ok(())
}

/// The rows of `--format json` (and of the answer's table).
fn json_rows(report: &Report) -> Vec<Value> {
    use serde_json::Map;
    let num = |x: Option<f64>| {
        x.and_then(serde_json::Number::from_f64)
            .map_or(Value::Null, Value::Number)
    };
    report
        .rows
        .iter()
        .map(|r| {
            let mut o = Map::new();
            for (k, v) in &r.keys {
                let v = match k.as_str() {
                    "pid" | "tid" => v.parse::<i64>().map_or(Value::Null, Value::from),
                    "start_s" => num(v.parse::<f64>().ok()),
                    _ => Value::from(v.as_str()),
                };
                o.insert(k.clone(), v);
            }
            o.insert("samples".into(), r.samples.into());
            o.insert("low_samples".into(), r.low_samples.into());
            for n in &r.nodes {
                o.insert(n.name.clone(), num(n.value));
                o.insert(format!("{}_se", n.name), num(n.se));
            }
            let flagged: Vec<Value> = r
                .nodes
                .iter()
                .filter(|n| n.flagged)
                .map(|n| Value::from(n.name.as_str()))
                .collect();
            o.insert("flagged".into(), Value::Array(flagged));
            let counts: Map<String, Value> = r
                .counts
                .iter()
                .map(|(k, v)| (k.clone(), num(Some(*v))))
                .collect();
            o.insert("counts".into(), Value::Object(counts));
            o.insert("slots".into(), num(r.slots));
            let node_slots: Map<String, Value> = r
                .nodes
                .iter()
                .map(|n| (n.name.clone(), num(r.slots_of(&n.name))))
                .collect();
            o.insert("node_slots".into(), Value::Object(node_slots));
            if let Some(c) = &r.core {
                o.insert("core".into(), c.as_str().into());
            }
            o.insert(
                "issues".into(),
                r.issues.as_deref().map_or(Value::Null, Value::from),
            );
            Value::Object(o)
        })
        .collect()
}
