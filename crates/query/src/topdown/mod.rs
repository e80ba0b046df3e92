//! Top-down (TMA) shares per function, thread, process, DSO or time
//! interval, as SQL over the dataset.
//!
//! [`plan`] reads the small tables (capture, events, pmus), finds each
//! capture's CPU and formula sets and where each event role's per-sample
//! value is; [`run`] compiles the sets into SQL (`sql.rs`), runs the query
//! asked for and reads the rows back; [`register_views`] defines the same
//! queries as named views of the session, for SQL of one's own.

mod plan;
mod sql;

use std::collections::HashMap;

use datafusion::arrow::array::{Array, ArrayRef, AsArray};
use datafusion::arrow::compute::cast;
use datafusion::arrow::datatypes::{DataType, Float64Type, Int64Type};
use datafusion::arrow::record_batch::RecordBatch;

pub use plan::{plan, Plans, SetPlan};

use crate::{views, Error, Session};

/// What the rows are.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub enum By {
    /// Per function (DSO and symbol).
    #[default]
    Function,
    /// Per thread.
    Thread,
    /// Per process.
    Process,
    /// Per DSO (of the sample's own address).
    Dso,
    /// Per time interval (`interval_ms`).
    Interval,
}

/// Self or total (inclusive) attribution, for `By::Function`.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub enum Mode {
    /// Each sample counts for the function of its own address.
    #[default]
    SelfTime,
    /// Each sample counts once for every function on its stack.
    Total,
}

/// How to run.
#[derive(Clone, Debug)]
pub struct Options {
    /// Rows.
    pub by: By,
    /// Self or total.
    pub mode: Mode,
    /// 1 or 2 (level 2 rows keep level 1's values).
    pub level: u8,
    /// Interval length for `By::Interval`, in milliseconds.
    pub interval_ms: u64,
    /// Rows with fewer samples are marked `low_samples`.
    pub min_samples: u64,
    /// Use this model's formulas instead of the detected one's.
    pub cpu_model: Option<String>,
    /// Only this capture of the dataset.
    pub capture: Option<String>,
    /// Only the samples of these processes (ids sorted); all when `None`.
    pub pids: Option<Vec<u32>>,
}

impl Default for Options {
    fn default() -> Self {
        Options {
            by: By::Function,
            mode: Mode::SelfTime,
            level: 1,
            interval_ms: 1000,
            min_samples: 30,
            cpu_model: None,
            capture: None,
            pids: None,
        }
    }
}

/// One node's number in a row.
#[derive(Clone, Debug, PartialEq)]
pub struct NodeValue {
    /// The node (`frontend_bound`).
    pub name: String,
    /// Its share of slots, 0..1 (clamped; `issues` says when it was
    /// outside); `None` when it cannot be computed (no slots).
    pub value: Option<f64>,
    /// The standard error of the share.
    pub se: Option<f64>,
    /// Flagged as a bottleneck: its threshold holds and its parent is
    /// flagged.
    pub flagged: bool,
}

/// One row.
#[derive(Clone, Debug, PartialEq)]
pub struct Row {
    /// Key columns and values (`symbol`, `dso`; `pid`, `tid`, `comm`; ...).
    pub keys: Vec<(String, String)>,
    /// Samples behind the row.
    pub samples: u64,
    /// Fewer than `min_samples`.
    pub low_samples: bool,
    /// Node values in tree order (level 1, then level 2 when asked).
    pub nodes: Vec<NodeValue>,
    /// Values that were clamped, sums that were off.
    pub issues: Option<String>,
    /// The core type on a hybrid part (`cpu_core`, `cpu_atom`).
    pub core: Option<String>,
    /// The sums behind the values: each event role's count over the
    /// row's samples (`slots`, `td_retiring`, ...).
    pub counts: Vec<(String, f64)>,
    /// The row's pipeline slots (the set's `slots` over `counts`): a
    /// node's value in slots is its share times this. `None` when the
    /// capture lacks what `slots` needs.
    pub slots: Option<f64>,
}

impl Row {
    /// Node `name`'s value in slots: its share times the row's slots.
    pub fn slots_of(&self, name: &str) -> Option<f64> {
        Some(self.value(name)? * self.slots?)
    }
}

/// A node's description, for headers and legends.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct NodeInfo {
    /// The JSON name.
    pub name: String,
    /// The parent.
    pub parent: Option<String>,
    /// 1 or 2.
    pub level: u8,
    /// The vendor's name.
    pub label: String,
}

/// The answer.
#[derive(Clone, Debug)]
pub struct Report {
    /// The nodes the rows carry, in order.
    pub nodes: Vec<NodeInfo>,
    /// The rows of every formula set (one set unless the part is hybrid
    /// or the dataset mixes CPUs).
    pub rows: Vec<Row>,
    /// The CPU models and sets used (`sapphirerapids: intel-glc`).
    pub models: Vec<String>,
    /// What was left out, and why.
    pub warnings: Vec<String>,
    /// The key columns of the rows.
    pub keys: Vec<String>,
}

impl Report {
    /// The level-1 nodes, in perf's order (retiring, bad speculation,
    /// frontend, backend; AMD's SMT contention last).
    pub(crate) fn level1(&self) -> Vec<&NodeInfo> {
        let mut level1: Vec<&NodeInfo> = self.nodes.iter().filter(|n| n.level == 1).collect();
        level1.sort_by_key(|n| {
            perfq_topdown::LEVEL1
                .iter()
                .position(|l| *l == n.name)
                .unwrap_or(perfq_topdown::LEVEL1.len())
        });
        level1
    }

    /// Per key (the values of the key columns `keys`, in order), the row
    /// with the most samples: a hybrid part has a row per core type, the
    /// one with more samples speaks for the key (the first of equal ones).
    pub fn rows_by(&self, keys: &[&str]) -> HashMap<Vec<String>, &Row> {
        let mut best: HashMap<Vec<String>, &Row> = HashMap::new();
        for r in &self.rows {
            let key: Vec<String> = keys.iter().map(|k| r.key(k).to_string()).collect();
            let e = best.entry(key).or_insert(r);
            if r.samples > e.samples {
                *e = r;
            }
        }
        best
    }
}

impl Row {
    /// The value of key column `name` (`symbol`, `start_s`), empty when
    /// the row has none.
    pub fn key(&self, name: &str) -> &str {
        self.keys
            .iter()
            .find(|(n, _)| n == name)
            .map_or("", |(_, v)| v.as_str())
    }

    /// Node `name`'s value in the row.
    pub fn value(&self, name: &str) -> Option<f64> {
        self.nodes
            .iter()
            .find(|n| n.name == name)
            .and_then(|n| n.value)
    }
}

/// Plans and runs the query `opt` asks for (the views of
/// [`register_views`] are not needed for it).
pub fn run(session: &Session, opt: &Options) -> Result<Report, Error> {
    let plans = plan(session, opt.capture.as_deref(), opt.cpu_model.as_deref())?;
    if plans.sets.is_empty() && plans.unusable.is_empty() && !plans.warnings.is_empty() {
        // Captures without samples: an answer without rows.
        return Ok(Report {
            nodes: Vec::new(),
            rows: Vec::new(),
            models: Vec::new(),
            warnings: plans.warnings,
            keys: Vec::new(),
        });
    }
    if plans.sets.is_empty() {
        let why = if plans.unusable.is_empty() {
            "the dataset holds no capture".to_string()
        } else {
            plans.unusable.join("; ")
        };
        return Err(Error::NoTopdown(why));
    }
    let mut warnings = plans.warnings.clone();
    warnings.extend(plans.unusable.iter().cloned());
    let mut report = Report {
        nodes: Vec::new(),
        rows: Vec::new(),
        models: Vec::new(),
        warnings,
        keys: Vec::new(),
    };
    for p in &plans.sets {
        if let Some(w) = not_computed(p, opt.level) {
            report.warnings.push(w);
        }
        // Only what the level asked for is summed and planned.
        let leveled = SetPlan {
            compiled: p.compiled.up_to(opt.level),
            pids: opt.pids.clone(),
            ..p.clone()
        };
        run_set(session, &leveled, opt, &mut report)?;
    }
    Ok(report)
}

/// One line per set for what the capture's events leave out at `level`.
fn not_computed(p: &SetPlan, level: u8) -> Option<String> {
    let set = p.set_use.set;
    let mut nodes = Vec::new();
    let mut lacking: Vec<String> = Vec::new();
    for (node, roles) in &p.compiled.missing {
        if set.node(node).is_some_and(|n| n.level <= level) {
            nodes.push(node.clone());
            for r in roles {
                let name = set
                    .role(r)
                    .map_or(r.clone(), |d| format!("{r} ({})", d.text));
                if !lacking.contains(&name) {
                    lacking.push(name);
                }
            }
        }
    }
    if nodes.is_empty() {
        return None;
    }
    let shown = if level >= 2 && !p.compiled.has_level2() {
        "; showing level 1"
    } else {
        ""
    };
    Some(format!(
        "{}: {} not computed: the capture has no {}{shown}",
        set.name,
        nodes.join(", "),
        lacking.join(", ")
    ))
}

/// Runs one set's query and adds its rows, nodes, keys and models to
/// `report`.
fn run_set(
    session: &Session,
    p: &SetPlan,
    opt: &Options,
    report: &mut Report,
) -> Result<(), Error> {
    // Functions by frame name the rows of self and total.
    views::ensure(session, "frame_functions")?;
    if (opt.by, opt.mode) == (By::Function, Mode::Total) {
        views::keep_stack_tables(session)?;
    }
    let interval_ns = opt.interval_ms.max(1) * 1_000_000;
    let q = sql::query(p, opt.by, opt.mode, interval_ns, opt.min_samples);
    let batches = session.sql(&q)?;
    let keys = sql::key_columns(opt.by, p.captures.len() > 1);
    let nodes: Vec<NodeInfo> = p
        .compiled
        .nodes
        .iter()
        .filter(|n| n.level <= opt.level)
        .map(|n| NodeInfo {
            name: n.name.clone(),
            parent: n.parent.clone(),
            level: n.level,
            label: n.label.clone(),
        })
        .collect();
    for b in &batches {
        read_rows(
            b,
            &keys,
            &nodes,
            &p.compiled.roles,
            p.compiled.slots.as_ref(),
            p.core(),
            &mut report.rows,
        )?;
    }
    for n in nodes {
        if !report.nodes.iter().any(|x| x.name == n.name) {
            report.nodes.push(n);
        }
    }
    for k in keys {
        if !report.keys.iter().any(|x| x == k) {
            report.keys.push(k.to_string());
        }
    }
    report
        .models
        .push(format!("{}: {}", p.models.join(", "), p.set_use.set.name));
    Ok(())
}

/// Registers the per-sample and aggregated views of every plan:
/// `topdown_samples`, `topdown_function_self`, `topdown_function_total`,
/// `topdown_thread`, `topdown_process`, `topdown_dso`, each also with the
/// set's suffix (`topdown_samples_intel_glc`); the unsuffixed names are
/// the first set's.
pub fn register_views(session: &Session, plans: &Plans, opt: &Options) -> Result<(), Error> {
    views::register(session)?;
    for (name, q) in view_sql(plans, opt) {
        session.create_view(&name, &q)?;
    }
    Ok(())
}

/// The topdown views' names and SQL, in the order [`register_views`]
/// defines them: for another engine, over the same tables and the
/// standard views (`crate::views`).
pub fn view_sql(plans: &Plans, opt: &Options) -> Vec<(String, String)> {
    let interval_ns = opt.interval_ms.max(1) * 1_000_000;
    let mut out = Vec::new();
    for (i, p) in plans.sets.iter().enumerate() {
        let suffixes = if i == 0 {
            vec![String::new(), format!("_{}", p.view_suffix())]
        } else {
            vec![format!("_{}", p.view_suffix())]
        };
        let q = |by, mode| sql::query(p, by, mode, interval_ns, opt.min_samples);
        let views = [
            ("topdown_samples", sql::samples(p)),
            ("topdown_function_self", q(By::Function, Mode::SelfTime)),
            ("topdown_function_total", q(By::Function, Mode::Total)),
            ("topdown_thread", q(By::Thread, Mode::SelfTime)),
            ("topdown_process", q(By::Process, Mode::SelfTime)),
            ("topdown_dso", q(By::Dso, Mode::SelfTime)),
        ];
        for s in &suffixes {
            for (name, q) in &views {
                out.push((format!("{name}{s}"), q.clone()));
            }
        }
    }
    out
}

fn column<'a>(
    b: &'a RecordBatch,
    name: &str,
) -> Result<&'a datafusion::arrow::array::ArrayRef, Error> {
    b.column_by_name(name)
        .ok_or_else(|| Error::Shape(format!("no column {name}")))
}

fn read_rows(
    b: &RecordBatch,
    keys: &[&str],
    nodes: &[NodeInfo],
    roles: &std::collections::BTreeSet<String>,
    slots: Option<&perfq_topdown::Expr>,
    core: Option<&str>,
    out: &mut Vec<Row>,
) -> Result<(), Error> {
    let c = RowColumns::of(b, keys, nodes, roles)?;
    let n = c.n.as_primitive::<Int64Type>();
    let low = column(b, "low_samples")?.as_boolean();
    let issues = c.issues.as_string::<i32>();
    for i in 0..b.num_rows() {
        let counts: Vec<(String, f64)> = c
            .sums
            .iter()
            .map(|(r, v)| (r.clone(), float(v, i).unwrap_or(0.0)))
            .collect();
        let slots =
            slots.and_then(|e| e.eval(&|r| counts.iter().find(|(n, _)| n == r).map(|(_, v)| *v)));
        out.push(Row {
            keys: c.keys(keys, i),
            samples: n.value(i).max(0) as u64,
            low_samples: low.is_valid(i) && low.value(i),
            nodes: c.nodes(i),
            issues: (issues.is_valid(i) && !issues.value(i).is_empty())
                .then(|| issues.value(i).to_string()),
            core: core.map(str::to_string),
            counts,
            slots,
        });
    }
    Ok(())
}

/// Value `i` of a Float64 array, if it is not null.
fn float(a: &ArrayRef, i: usize) -> Option<f64> {
    let a = a.as_primitive::<Float64Type>();
    a.is_valid(i).then(|| a.value(i))
}

/// The columns of a batch of topdown rows, cast to the types they are
/// read as.
struct RowColumns {
    keys: Vec<ArrayRef>,
    n: ArrayRef,
    issues: ArrayRef,
    /// Per node: its name, value, standard error and flag.
    nodes: Vec<(String, ArrayRef, ArrayRef, ArrayRef)>,
    /// Per role: its name and sum.
    sums: Vec<(String, ArrayRef)>,
}

impl RowColumns {
    fn of(
        b: &RecordBatch,
        keys: &[&str],
        nodes: &[NodeInfo],
        roles: &std::collections::BTreeSet<String>,
    ) -> Result<Self, Error> {
        let shape = |e: datafusion::arrow::error::ArrowError| Error::Shape(e.to_string());
        let typed = |name: &str, t: &DataType| cast(column(b, name)?, t).map_err(shape);
        let mut c = RowColumns {
            keys: keys
                .iter()
                .map(|k| typed(k, &DataType::Utf8))
                .collect::<Result<Vec<_>, _>>()?,
            n: typed("n", &DataType::Int64)?,
            issues: typed("issues", &DataType::Utf8)?,
            nodes: Vec::new(),
            sums: Vec::new(),
        };
        for node in nodes {
            let v = typed(&node.name, &DataType::Float64)?;
            let se = typed(&format!("se_{}", node.name), &DataType::Float64)?;
            let flag = column(b, &format!("flag_{}", node.name))?.clone();
            c.nodes.push((node.name.clone(), v, se, flag));
        }
        for r in roles {
            c.sums
                .push((r.clone(), typed(&format!("s_{r}"), &DataType::Float64)?));
        }
        Ok(c)
    }

    /// Row `i`'s keys, by name (empty where null).
    fn keys(&self, names: &[&str], i: usize) -> Vec<(String, String)> {
        names
            .iter()
            .zip(&self.keys)
            .map(|(k, a)| {
                let a = a.as_string::<i32>();
                let v = match a.is_valid(i) {
                    true => a.value(i).to_string(),
                    false => String::new(),
                };
                (k.to_string(), v)
            })
            .collect()
    }

    /// Row `i`'s node values.
    fn nodes(&self, i: usize) -> Vec<NodeValue> {
        self.nodes
            .iter()
            .map(|(name, v, se, flag)| {
                let flag = flag.as_boolean();
                NodeValue {
                    name: name.clone(),
                    value: float(v, i),
                    se: float(se, i),
                    flagged: flag.is_valid(i) && flag.value(i),
                }
            })
            .collect()
    }
}
