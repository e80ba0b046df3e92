//! What the page holds, from a session: `perfq_query::stack_counts`'
//! samples as a call tree of functions per time interval and thread,
//! `perfq_query::function_sums`' per-function sums, the `capture` table's
//! header, `perfq_query::topdown`'s answers, and off-CPU time
//! (`super::off_cpu`).

use std::collections::HashMap;

use perfq_query::columns;
use perfq_query::profile;
use perfq_query::stack_counts::{self, Unplaced};
use perfq_query::topdown::{self, Report};
use perfq_query::Session;
use serde::Serialize;
use serde_json::{json, Value};

use super::call_tree::SampleColumns;
use super::functions::{self, Shown, SumColumns};
use crate::Error;

/// What to show.
pub struct Options<'a> {
    /// The page's title.
    pub title: String,
    /// Only this event; by default the first sampled.
    pub event: Option<String>,
    /// Time-line intervals (about; each a whole number of milliseconds).
    pub intervals: u64,
    /// Call-tree nodes with fewer than this share of the samples are cut,
    /// their samples counted in their caller (said in the page).
    pub prune: f64,
    /// A capture to compare with (`perfq diff BASE THIS` per function),
    /// and the name to show for it.
    pub base: Option<(&'a Session, String)>,
}

impl Default for Options<'_> {
    fn default() -> Self {
        Options {
            title: String::from("perfq"),
            event: None,
            intervals: 100,
            prune: 1e-4,
            base: None,
        }
    }
}

/// A page's contents, ready to write.
#[derive(Clone, Debug)]
pub struct Page {
    /// The title.
    pub title: String,
    /// The data the page's script reads, as JSON.
    pub data: String,
    /// Whether there are top-down numbers, and level-2 ones.
    pub topdown: bool,
    /// Whether level 2 is there.
    pub level2: bool,
    /// What the page says was left out (also for the command line).
    pub notes: Vec<String>,
}

/// What the page's script reads, fields in the order a JSON object's keys
/// are written (sorted); the large columns written as they are, not made
/// into a JSON value each first.
#[derive(Serialize)]
struct Data<'a> {
    buckets: Value,
    diff: Option<Value>,
    event: Value,
    function_sums: SumColumns,
    functions: &'a [(String, String)],
    meta: Vec<(String, String)>,
    nodes: NodeColumns<'a>,
    notes: &'a [String],
    /// Left out without off-CPU time: such a page's data is as it was.
    #[serde(skip_serializing_if = "Option::is_none")]
    off_cpu: Option<super::off_cpu::OffCpu>,
    samples: SampleColumns,
    threads: Vec<(i32, i32, &'a str)>,
    topdown: Option<&'a Value>,
}

/// The kept call-tree nodes: each one's function (page id; -1 for the
/// root) and parent.
#[derive(Serialize)]
struct NodeColumns<'a> {
    r#fn: Vec<i64>,
    parent: &'a [usize],
}

/// A node's colour: a level-1 category's own, a level-2 node a shade of
/// its parent's (darker or lighter by its place among its siblings, so
/// that siblings differ in lightness, which every eye tells apart).
fn color(node: &str, parent: Option<&str>, nth_child: usize) -> String {
    let base = crate::palette::category;
    match (parent.and_then(base), base(node)) {
        (Some((r, g, b)), _) => {
            // Towards black for the first child, towards white for the others.
            let (target, t) = match nth_child % 3 {
                0 => (0.0, 0.3),
                1 => (255.0, 0.4),
                _ => (255.0, 0.7),
            };
            let mix = |c: u8| (f64::from(c) + (target - f64::from(c)) * t).round() as u8;
            format!("rgb({},{},{})", mix(r), mix(g), mix(b))
        }
        (None, Some((r, g, b))) => format!("rgb({r},{g},{b})"),
        _ => {
            let (r, g, b) = crate::palette::NO_TOPDOWN;
            format!("rgb({r},{g},{b})")
        }
    }
}

/// What the page shows, chosen while its samples were read: the event
/// (with its unit), the intervals' width, the captures' span, and a note
/// when other events were sampled too.
struct Chosen {
    event: profile::Event,
    interval_ns: u64,
    width_ms: u64,
    duration_ns: u64,
    notes: Vec<String>,
}

/// The event's samples read, to be counted per interval, and what was
/// chosen.
fn counted(session: &Session, opt: &Options<'_>) -> Result<(Unplaced, Chosen), Error> {
    // The event shown, and the captures' span, which gives the intervals'
    // length: chosen before the samples are read (once, into those
    // intervals), while the stack tables are made.
    let choose = || -> Result<_, Error> {
        let sampled = perfq_query::events::sampled_events(session)?;
        let Some(event) = opt.event.clone().or_else(|| sampled.first().cloned()) else {
            return Err(Error::Empty);
        };
        let duration_ns = duration(session)?;
        let width_ms = (duration_ns / 1_000_000 / opt.intervals.max(1)).max(1) + 1;
        Ok(stack_counts::Choice {
            event,
            interval_ns: width_ms * 1_000_000,
            rest: (sampled, duration_ns, width_ms),
        })
    };
    let (read, choice) = stack_counts::read_chosen(session, choose)?;
    let (sampled, duration_ns, width_ms) = choice.rest;
    let Some(event) = profile::events_of(session, &[choice.event])?.pop() else {
        return Err(Error::Empty);
    };
    let mut notes = Vec::new();
    if opt.event.is_none() && sampled.len() > 1 {
        notes.push(format!(
            "showing {} (the first event sampled); also sampled: {} (choose with --event)",
            event.name,
            sampled[1..].join(", ")
        ));
    }
    let chosen = Chosen {
        event,
        interval_ns: choice.interval_ns,
        width_ms,
        duration_ns,
        notes,
    };
    Ok((read, chosen))
}

/// Builds the page's contents.
pub fn build(session: &Session, opt: &Options<'_>) -> Result<Page, Error> {
    let (read, chosen) = counted(session, opt)?;
    let Chosen {
        event,
        interval_ns,
        width_ms,
        duration_ns,
        mut notes,
    } = chosen;
    let functions::Made {
        counted,
        tree,
        pruned,
        sums,
        below,
    } = functions::tree_and_sums(read, opt.prune)?;
    // The samples' cells need only the cut tree: counted on a thread of
    // their own while the rest of the page is chosen and queried.
    let (rest, samples) = perfq_ids::beside(
        || -> Result<_, Error> {
            let shown = Shown::choose(&tree, &pruned, &sums, below);
            notes.extend(left_out(pruned.cut, shown.dropped, opt.prune));
            let td = topdown_data(session, &shown.ids(), width_ms, &mut notes)?;
            let meta = meta(session, &event.name, &counted, duration_ns, td.as_ref())?;
            let diff = match &opt.base {
                Some((base, name)) => Some(diff_data(base, name, session, &event.name)?),
                None => None,
            };
            let off_cpu = super::off_cpu::of(session, interval_ns)?;
            let function_sums = shown.sums(sums);
            Ok((shown, function_sums, td, meta, diff, off_cpu))
        },
        || pruned.samples(&counted),
    );
    let (shown, function_sums, td, meta, diff, off_cpu) = rest?;
    let level2 = td
        .as_ref()
        .is_some_and(|(_, nodes, _)| nodes.iter().any(|n| n.2 == 2));
    let data = Data {
        buckets: json!({ "count": counted.intervals.max(1), "width_ms": width_ms }),
        diff,
        event: json!({ "name": event.name, "unit": event.unit.name() }),
        function_sums,
        nodes: NodeColumns {
            r#fn: shown.nodes(&pruned),
            parent: &pruned.parent,
        },
        functions: &shown.functions,
        meta,
        notes: &notes,
        off_cpu,
        samples,
        threads: (counted.threads.iter())
            .map(|t| (t.pid, t.tid, t.comm.as_str()))
            .collect(),
        topdown: td.as_ref().map(|(v, _, _)| v),
    };
    let json = serde_json::to_string(&data)?;
    drop(data);
    // What the page is made from (hundreds of megabytes on a system-wide
    // capture) is freed while the page is written.
    perfq_ids::drop_beside((counted, tree, pruned, shown));
    Ok(Page {
        title: opt.title.clone(),
        data: json,
        topdown: td.is_some(),
        level2,
        notes,
    })
}

/// The captures' span: from the first sample of the earliest to the last
/// of the latest (ns; 0 without samples).
fn duration(session: &Session) -> Result<u64, Error> {
    let span = session.sql("SELECT MIN(time_first) AS a, MAX(time_last) AS z FROM capture")?;
    let bound = |c: &str| -> Result<Option<u64>, Error> {
        Ok(match span.first() {
            Some(b) => columns::u64s(b, c)?.first().copied().flatten(),
            None => None,
        })
    };
    Ok(match (bound("a")?, bound("z")?) {
        (Some(a), Some(z)) => z.saturating_sub(a),
        _ => 0,
    })
}

/// What the page says of the nodes and functions left out.
fn left_out(cut: usize, dropped: usize, prune: f64) -> Vec<String> {
    let pct = prune * 100.0;
    let mut notes = Vec::new();
    if cut > 0 {
        notes.push(format!(
            "{cut} call-tree nodes with fewer than {pct:.2}% of the samples each are left out of the flame graph and of callers and callees; their samples count in their callers",
        ));
    }
    if dropped > 0 {
        notes.push(format!(
            "{dropped} functions with fewer than {pct:.2}% of the samples each are left out of the top functions",
        ));
    }
    notes
}

/// Node (name, label, level, colour, parent) of a top-down answer.
type NodeRow = (String, String, u8, String, Option<String>);

/// The page's top-down data, its nodes and the models (CPU: set) used.
type Topdown = (Value, Vec<NodeRow>, Vec<String>);

/// The top-down part of the page: per function of `tree` (self and
/// total, level 2 where the capture has it) and per interval; `None`
/// without top-down events.
fn topdown_data(
    session: &Session,
    functions: &HashMap<(String, String), usize>,
    width_ms: u64,
    notes: &mut Vec<String>,
) -> Result<Option<Topdown>, Error> {
    let run = |by, mode| {
        topdown::run(
            session,
            &topdown::Options {
                by,
                mode,
                level: 2,
                min_samples: 0,
                interval_ms: width_ms,
                ..topdown::Options::default()
            },
        )
    };
    let own = match run(topdown::By::Function, topdown::Mode::SelfTime) {
        Ok(r) => r,
        Err(perfq_query::Error::NoTopdown(_)) => return Ok(None),
        Err(e) => return Err(e.into()),
    };
    let total = run(topdown::By::Function, topdown::Mode::Total)?;
    let intervals = run(topdown::By::Interval, topdown::Mode::SelfTime)?;
    notes.extend(own.warnings.iter().cloned());
    let mut nth: HashMap<Option<String>, usize> = HashMap::new();
    let nodes: Vec<NodeRow> = own
        .nodes
        .iter()
        .map(|n| {
            let k = nth.entry(n.parent.clone()).or_default();
            let c = color(&n.name, n.parent.as_deref(), *k);
            *k += 1;
            (
                n.name.clone(),
                n.label.clone(),
                n.level,
                c,
                n.parent.clone(),
            )
        })
        .collect();
    let names: Vec<String> = nodes.iter().map(|n| n.0.clone()).collect();
    let per_function = |r: &Report| -> Value {
        // A function's row: the one with the most samples (a hybrid
        // part's core types, several captures).
        let mut best: HashMap<usize, &topdown::Row> = HashMap::new();
        for (key, row) in r.rows_by(&["symbol", "dso"]) {
            if let [symbol, dso] = &key[..] {
                if let Some(&f) = functions.get(&(symbol.clone(), dso.clone())) {
                    best.insert(f, row);
                }
            }
        }
        let mut out = serde_json::Map::new();
        for (f, row) in best {
            out.insert(f.to_string(), row_json(row, &names));
        }
        Value::Object(out)
    };
    let mut ivs = Vec::new();
    for row in &intervals.rows {
        let start_s: f64 = row.key("start_s").parse().unwrap_or(0.0);
        let bucket = (start_s * 1000.0 / width_ms as f64).round() as u64;
        let mut v = row_json(row, &names);
        v["bucket"] = bucket.into();
        ivs.push(v);
    }
    let value = json!({
        "nodes": nodes.iter().map(|n| json!({"name": n.0, "label": n.1, "level": n.2, "color": n.3, "parent": n.4})).collect::<Vec<_>>(),
        "self": per_function(&own),
        "total": per_function(&total),
        "intervals": ivs,
        "models": own.models,
    });
    Ok(Some((value, nodes, own.models.clone())))
}

/// The comparison with a base capture: `perfq diff BASE THIS`'s rows per
/// function (`perfq_query::diff`), as the page shows them.
fn diff_data(base: &Session, name: &str, this: &Session, event: &str) -> Result<Value, Error> {
    use perfq_query::diff;
    let a = diff::counts(base, diff::By::Function, event)?;
    let b = diff::counts(this, diff::By::Function, event)?;
    let (schema, batch) = diff::compare(&a, &b, diff::By::Function)?;
    let mut by_column = serde_json::Map::new();
    for f in schema.fields() {
        let text = f.data_type() == &perfq_query::arrow::datatypes::DataType::Utf8;
        let values: Vec<Value> = columns::strings(&batch, f.name())?
            .into_iter()
            .map(|v| match v {
                None => Value::Null,
                Some(v) if text => v.into(),
                Some(v) => v
                    .parse::<f64>()
                    .ok()
                    .and_then(serde_json::Number::from_f64)
                    .map_or(Value::Null, Value::Number),
            })
            .collect();
        by_column.insert(f.name().clone(), Value::Array(values));
    }
    Ok(json!({
        "base": name,
        "base_samples": a.samples,
        "samples": b.samples,
        "event": event,
        "columns": by_column,
    }))
}

/// A top-down row as the page reads it: its samples, slots, each node's
/// value, standard error and slots, and the flagged nodes.
fn row_json(row: &topdown::Row, names: &[String]) -> Value {
    let num = |x: Option<f64>| {
        x.and_then(serde_json::Number::from_f64)
            .map_or(Value::Null, Value::Number)
    };
    json!({
        "samples": row.samples,
        "slots": num(row.slots),
        "values": names.iter().map(|n| num(row.value(n))).collect::<Vec<_>>(),
        "se": names.iter().map(|n| num(row.nodes.iter().find(|x| &x.name == n).and_then(|x| x.se))).collect::<Vec<_>>(),
        "node_slots": names.iter().map(|n| num(row.slots_of(n))).collect::<Vec<_>>(),
        "flagged": row.nodes.iter().filter(|n| n.flagged).map(|n| n.name.clone()).collect::<Vec<_>>(),
    })
}

/// A capture's path as the page shows it: relative to the folder perfq
/// runs in when it lies below it, as the user named it there (the
/// dataset keeps the absolute path, and a page passed around should not
/// show more of the writer's folders than the user typed).
fn shown_path(path: &str) -> String {
    std::env::current_dir()
        .ok()
        .and_then(|cwd| {
            let rel = std::path::Path::new(path).strip_prefix(cwd).ok()?;
            Some(rel.display().to_string())
        })
        .unwrap_or_else(|| path.to_string())
}

/// The header: the captures as the `capture` table describes them.
fn meta(
    session: &Session,
    event: &str,
    counts: &stack_counts::StackCounts,
    duration_ns: u64,
    td: Option<&Topdown>,
) -> Result<Vec<(String, String)>, Error> {
    let (resolved, all) = (counts.resolved, counts.all);
    let c = Captures::read(session)?;
    let mut out: Vec<(String, String)> = c
        .fields
        .into_iter()
        .map(|(k, v)| (k, v.join("; ")))
        .collect();
    if let Some((_, _, models)) = td {
        out.push(("top-down".into(), models.join("; ")));
    }
    out.push(("event shown".into(), event.to_string()));
    out.push((
        "duration".into(),
        format!("{:.3} s", duration_ns as f64 / 1e9),
    ));
    out.push(("sample records".into(), c.samples.to_string()));
    out.push((format!("{event} samples"), all.to_string()));
    let (records, samples, undecoded) = c.lost;
    out.push((
        "lost".into(),
        format!("{records} records, {samples} samples"),
    ));
    out.push((
        "damaged".into(),
        if c.damaged.is_empty() && undecoded == 0 {
            "none".into()
        } else {
            format!("{undecoded} undecoded samples; {}", c.damaged.join("; "))
        },
    ));
    let coverage = match all {
        0 => 0.0,
        _ => 100.0 * resolved as f64 / all as f64,
    };
    out.push((
        "symbol coverage".into(),
        format!("{coverage:.2}% of samples in a resolved function"),
    ));
    Ok(out)
}

/// The `capture` table's rows, as the header sums and lists them.
struct Captures {
    /// Each field's distinct values, fields in the order met.
    fields: Vec<(String, Vec<String>)>,
    samples: u64,
    /// Lost records, lost samples, undecoded samples.
    lost: (u64, u64, u64),
    /// What could not be read, per damaged capture.
    damaged: Vec<String>,
}

/// The columns of `capture` the header reads.
const CAPTURE_COLUMNS: [&str; 12] = [
    "capture",
    "source_path",
    "hostname",
    "cpudesc",
    "cpuid",
    "perf_version",
    "cmdline",
    "samples",
    "lost_records",
    "lost_samples",
    "decode_errors",
    "read_error",
];

impl Captures {
    fn read(session: &Session) -> Result<Self, Error> {
        let rows = session.sql(&format!(
            "SELECT {} FROM capture ORDER BY capture",
            CAPTURE_COLUMNS.join(", ")
        ))?;
        let mut c = Captures {
            fields: Vec::new(),
            samples: 0,
            lost: (0, 0, 0),
            damaged: Vec::new(),
        };
        for b in &rows {
            let mut cols: HashMap<&str, Vec<Option<String>>> = HashMap::new();
            for k in CAPTURE_COLUMNS {
                cols.insert(k, columns::strings(b, k)?);
            }
            for i in 0..b.num_rows() {
                let cell = |k: &str| cols.get(k).and_then(|v| v.get(i)).cloned().flatten();
                c.row(&cell);
            }
        }
        Ok(c)
    }

    /// Adds one capture, whose column `k` is `cell(k)`.
    fn row(&mut self, cell: &dyn Fn(&str) -> Option<String>) {
        let get = |k: &str| cell(k).unwrap_or_default();
        let num = |k: &str| get(k).parse::<u64>().unwrap_or(0);
        let path = shown_path(&get("source_path"));
        self.add("capture", format!("{path} ({})", get("capture")));
        self.add("host", get("hostname"));
        self.add("CPU", format!("{} ({})", get("cpudesc"), get("cpuid")));
        self.add("perf", get("perf_version"));
        self.add("command", get("cmdline"));
        self.samples += num("samples");
        self.lost.0 += num("lost_records");
        self.lost.1 += num("lost_samples");
        self.lost.2 += num("decode_errors");
        if let Some(e) = cell("read_error") {
            self.damaged.push(e);
        }
    }

    /// Adds `v` to field `k`'s values, unless it is there.
    fn add(&mut self, k: &str, v: String) {
        match self.fields.iter_mut().find(|f| f.0 == k) {
            Some(f) if !f.1.contains(&v) => f.1.push(v),
            Some(_) => {}
            None => self.fields.push((k.to_string(), vec![v])),
        }
    }
}
