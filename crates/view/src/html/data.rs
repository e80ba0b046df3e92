//! What the page holds, from a session: `perfq_query::profile`'s samples
//! as a call tree of functions per time interval and thread, the
//! `capture` table's header, and `perfq_query::topdown`'s answers.

use std::collections::HashMap;

use perfq_query::columns;
use perfq_query::profile::{self, Profile};
use perfq_query::topdown::{self, Report};
use perfq_query::Session;
use serde_json::{json, Value};

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
    /// The data the page's script reads.
    pub data: Value,
    /// Whether there are top-down numbers, and level-2 ones.
    pub topdown: bool,
    /// Whether level 2 is there.
    pub level2: bool,
    /// What the page says was left out (also for the command line).
    pub notes: Vec<String>,
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

/// The call tree of the profile's stacks: nodes (parent, function),
/// functions named as `perf report` names them.
#[derive(Default)]
struct Tree {
    parent: Vec<usize>,
    function: Vec<usize>,
    ids: HashMap<(usize, usize), usize>,
    functions: Vec<(String, String)>,
    function_ids: HashMap<(String, String), usize>,
}

impl Tree {
    fn new() -> Self {
        Tree {
            parent: vec![0],
            function: vec![usize::MAX],
            ..Tree::default()
        }
    }

    fn function(&mut self, name: &str, dso: &str) -> usize {
        let key = (name.to_string(), dso.to_string());
        if let Some(&f) = self.function_ids.get(&key) {
            return f;
        }
        self.functions.push(key.clone());
        self.function_ids.insert(key, self.functions.len() - 1);
        self.functions.len() - 1
    }

    fn child(&mut self, parent: usize, function: usize) -> usize {
        *self.ids.entry((parent, function)).or_insert_with(|| {
            self.parent.push(parent);
            self.function.push(function);
            self.parent.len() - 1
        })
    }
}

/// The function a location counts for: `perf report`'s (symbol, DSO).
fn location_key(p: &Profile, l: usize) -> (String, String) {
    let f = &p.functions[p.locations[l].symbol.function];
    let dso = f
        .mapping
        .map_or_else(|| "[unknown]".to_string(), |m| p.mappings[m].name.clone());
    (f.name.clone(), dso)
}

/// Builds the page's contents.
pub fn build(session: &Session, opt: &Options<'_>) -> Result<Page, Error> {
    // The event shown, and the captures' span, which gives the intervals'
    // length: from the events and capture tables, before the samples are
    // read (once, into those intervals).
    let sampled = perfq_query::events::sampled_events(session)?;
    let Some(event) = opt.event.clone().or_else(|| sampled.first().cloned()) else {
        return Err(Error::Empty);
    };
    let span = session.sql("SELECT MIN(time_first) AS a, MAX(time_last) AS z FROM capture")?;
    let bound = |c: &str| -> Result<Option<u64>, Error> {
        Ok(match span.first() {
            Some(b) => columns::u64s(b, c)?.first().copied().flatten(),
            None => None,
        })
    };
    let duration_ns = match (bound("a")?, bound("z")?) {
        (Some(a), Some(z)) => z.saturating_sub(a),
        _ => 0,
    };
    let width_ms = (duration_ns / 1_000_000 / opt.intervals.max(1)).max(1) + 1;
    let interval_ns = width_ms * 1_000_000;
    let p = profile::profile(
        session,
        &profile::Options {
            event: Some(event.clone()),
            interval_ns,
            ..profile::Options::default()
        },
    )?;
    let Some(event) = p.events.first().cloned() else {
        return Err(Error::Empty);
    };
    let mut notes = p.notes.clone();
    if opt.event.is_none() && sampled.len() > 1 {
        notes.push(format!(
            "showing {} (the first event sampled); also sampled: {} (choose with --event)",
            event.name,
            sampled[1..].join(", ")
        ));
    }

    // The call tree, each stack's leaf node, and the samples per
    // (interval, thread, node).
    let mut tree = Tree::new();
    let mut leaf_of: Vec<usize> = Vec::with_capacity(p.stacks.len());
    for stack in &p.stacks {
        let mut node = 0;
        for &l in stack.iter().rev() {
            let (name, dso) = location_key(&p, l);
            let f = tree.function(&name, &dso);
            node = tree.child(node, f);
        }
        leaf_of.push(node);
    }
    // Each stack's function (of its leaf) and distinct functions.
    let stack_functions: Vec<(usize, Vec<usize>)> = leaf_of
        .iter()
        .map(|&leaf| {
            let mut fns = Vec::new();
            let mut n = leaf;
            while n != 0 {
                fns.push(tree.function[n]);
                n = tree.parent[n];
            }
            let own = fns.first().copied().unwrap_or(usize::MAX);
            fns.sort_unstable();
            fns.dedup();
            (own, fns)
        })
        .collect();
    let mut cells: HashMap<(u64, usize, usize), (u64, u64)> = HashMap::new();
    // Per (interval, function): self and total samples and periods, exact
    // (the top functions), whatever the call tree keeps.
    let mut sums: HashMap<(u64, usize), [u64; 4]> = HashMap::new();
    let (mut resolved, mut all) = (0u64, 0u64);
    let mut buckets = 0;
    for r in &p.runs {
        let node = r.stack.map_or(0, |s| leaf_of[s]);
        let b = p.interval(r, interval_ns);
        buckets = buckets.max(b + 1);
        let e = cells.entry((b, r.thread, node)).or_default();
        e.0 += r.samples;
        e.1 = e.1.wrapping_add(r.period);
        all += r.samples;
        if let Some(s) = r.stack {
            let (own, fns) = &stack_functions[s];
            for &f in fns {
                let e = sums.entry((b, f)).or_default();
                e[1] += r.samples;
                e[3] = e[3].wrapping_add(r.period);
                if f == *own {
                    e[0] += r.samples;
                    e[2] = e[2].wrapping_add(r.period);
                }
            }
        }
        if r.stack
            .and_then(|s| p.stacks[s].first())
            .is_some_and(|&l| p.locations[l].resolved)
        {
            resolved += r.samples;
        }
    }

    // Nodes below the threshold are cut: their samples count in their
    // nearest kept caller.
    let n = tree.parent.len();
    let mut tot = vec![0u64; n];
    for ((_, _, node), (c, _)) in &cells {
        tot[*node] += c;
    }
    for i in (1..n).rev() {
        tot[tree.parent[i]] += tot[i];
    }
    let threshold = (opt.prune * all as f64).ceil() as u64;
    let mut kept = vec![0usize; n];
    let (mut parent, mut function) = (vec![0usize], vec![usize::MAX]);
    let mut cut = 0usize;
    for i in 1..n {
        if tot[i] >= threshold.max(1) {
            kept[i] = parent.len();
            parent.push(kept[tree.parent[i]]);
            function.push(tree.function[i]);
        } else {
            kept[i] = kept[tree.parent[i]];
            cut += usize::from(tot[i] > 0);
        }
    }
    if cut > 0 {
        notes.push(format!(
            "{cut} call-tree nodes with fewer than {:.2}% of the samples each are left out of the flame graph and of callers and callees; their samples count in their callers",
            opt.prune * 100.0
        ));
    }
    // Functions below the threshold (total samples) are left out of the
    // top functions too; the ones kept are numbered anew.
    let mut function_total = vec![0u64; tree.functions.len()];
    for ((_, f), v) in &sums {
        function_total[*f] += v[1];
    }
    let mut renumber = vec![usize::MAX; tree.functions.len()];
    let mut functions: Vec<(String, String)> = Vec::new();
    for &f in function.iter().skip(1) {
        if renumber[f] == usize::MAX {
            renumber[f] = functions.len();
            functions.push(tree.functions[f].clone());
        }
    }
    let mut dropped = 0usize;
    for (f, &t) in function_total.iter().enumerate() {
        if renumber[f] == usize::MAX {
            if t >= threshold.max(1) {
                renumber[f] = functions.len();
                functions.push(tree.functions[f].clone());
            } else if t > 0 {
                dropped += 1;
            }
        }
    }
    if dropped > 0 {
        notes.push(format!(
            "{dropped} functions with fewer than {:.2}% of the samples each are left out of the top functions",
            opt.prune * 100.0
        ));
    }
    let function: Vec<usize> = function
        .iter()
        .map(|&f| if f == usize::MAX { f } else { renumber[f] })
        .collect();
    let mut sums: Vec<_> = sums
        .into_iter()
        .filter(|((_, f), _)| renumber[*f] != usize::MAX)
        .map(|((b, f), v)| ((b, renumber[f]), v))
        .collect();
    sums.sort_unstable();
    let function_sums = json!({
        "bucket": sums.iter().map(|c| c.0 .0).collect::<Vec<_>>(),
        "fn": sums.iter().map(|c| c.0 .1).collect::<Vec<_>>(),
        "self": sums.iter().map(|c| c.1[0]).collect::<Vec<_>>(),
        "total": sums.iter().map(|c| c.1[1]).collect::<Vec<_>>(),
        "self_period": sums.iter().map(|c| c.1[2]).collect::<Vec<_>>(),
        "total_period": sums.iter().map(|c| c.1[3]).collect::<Vec<_>>(),
    });
    let ids: HashMap<(String, String), usize> = functions
        .iter()
        .enumerate()
        .map(|(i, k)| (k.clone(), i))
        .collect();
    let mut merged: HashMap<(u64, usize, usize), (u64, u64)> = HashMap::new();
    for ((b, t, node), (c, w)) in cells {
        let e = merged.entry((b, t, kept[node])).or_default();
        e.0 += c;
        e.1 = e.1.wrapping_add(w);
    }
    let mut cells: Vec<_> = merged.into_iter().collect();
    cells.sort_unstable();
    let samples = json!({
        "bucket": cells.iter().map(|c| c.0 .0).collect::<Vec<_>>(),
        "thread": cells.iter().map(|c| c.0 .1).collect::<Vec<_>>(),
        "node": cells.iter().map(|c| c.0 .2).collect::<Vec<_>>(),
        "count": cells.iter().map(|c| c.1 .0).collect::<Vec<_>>(),
        "period": cells.iter().map(|c| c.1 .1).collect::<Vec<_>>(),
    });

    // Top-down: per function (self and total) and per interval.
    let td = topdown_data(session, &ids, width_ms, &mut notes)?;
    let level2 = td
        .as_ref()
        .is_some_and(|(_, nodes, _)| nodes.iter().any(|n| n.2 == 2));

    let meta = meta(
        session,
        &p,
        &event.name,
        resolved,
        all,
        duration_ns,
        td.as_ref(),
    )?;
    let diff = match &opt.base {
        Some((base, name)) => Some(diff_data(base, name, session, &event.name)?),
        None => None,
    };
    let data = json!({
        "meta": meta,
        "notes": notes,
        "event": { "name": event.name, "unit": event.unit.name() },
        "functions": functions,
        "function_sums": function_sums,
        "nodes": { "parent": parent, "fn": function.iter().map(|&f| if f == usize::MAX { -1 } else { f as i64 }).collect::<Vec<_>>() },
        "threads": p.threads.iter().map(|t| json!([t.pid, t.tid, t.comm])).collect::<Vec<_>>(),
        "buckets": { "count": buckets.max(1), "width_ms": width_ms },
        "samples": samples,
        "topdown": td.as_ref().map(|(v, _, _)| v.clone()),
        "diff": diff,
    });
    Ok(Page {
        title: opt.title.clone(),
        data,
        topdown: td.is_some(),
        level2,
        notes,
    })
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
    p: &Profile,
    event: &str,
    resolved: u64,
    all: u64,
    duration_ns: u64,
    td: Option<&Topdown>,
) -> Result<Vec<(String, String)>, Error> {
    let rows = session.sql(
        "SELECT capture, source_path, hostname, cpudesc, cpuid, perf_version, cmdline, \
         samples, lost_records, lost_samples, decode_errors, read_error FROM capture ORDER BY capture",
    )?;
    let mut fields: Vec<(String, Vec<String>)> = Vec::new();
    let mut add = |k: &str, v: String| match fields.iter_mut().find(|f| f.0 == k) {
        Some(f) => {
            if !f.1.contains(&v) {
                f.1.push(v)
            }
        }
        None => fields.push((k.to_string(), vec![v])),
    };
    let mut lost = (0u64, 0u64, 0u64);
    let mut samples = 0u64;
    let mut damaged = Vec::new();
    for b in &rows {
        let text = |c: &str| columns::strings(b, c);
        let cols = [
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
        let mut c: HashMap<&str, Vec<Option<String>>> = HashMap::new();
        for k in cols {
            c.insert(k, text(k)?);
        }
        for i in 0..b.num_rows() {
            let cell = |k: &str| c.get(k).and_then(|v| v.get(i)).cloned().flatten();
            let get = |k: &str| cell(k).unwrap_or_default();
            let num = |k: &str| get(k).parse::<u64>().unwrap_or(0);
            add(
                "capture",
                format!("{} ({})", shown_path(&get("source_path")), get("capture")),
            );
            add("host", get("hostname"));
            add("CPU", format!("{} ({})", get("cpudesc"), get("cpuid")));
            add("perf", get("perf_version"));
            add("command", get("cmdline"));
            samples += num("samples");
            lost.0 += num("lost_records");
            lost.1 += num("lost_samples");
            lost.2 += num("decode_errors");
            if let Some(e) = cell("read_error") {
                damaged.push(e);
            }
        }
    }
    let mut out: Vec<(String, String)> =
        fields.into_iter().map(|(k, v)| (k, v.join("; "))).collect();
    if let Some((_, _, models)) = td {
        out.push(("top-down".into(), models.join("; ")));
    }
    let mut events: Vec<String> = Vec::new();
    for e in &p.events {
        events.push(e.name.clone());
    }
    out.push(("event shown".into(), events.join(", ")));
    out.push((
        "duration".into(),
        format!("{:.3} s", duration_ns as f64 / 1e9),
    ));
    out.push(("sample records".into(), samples.to_string()));
    out.push((format!("{event} samples"), all.to_string()));
    out.push((
        "lost".into(),
        format!("{} records, {} samples", lost.0, lost.1),
    ));
    out.push((
        "damaged".into(),
        if damaged.is_empty() && lost.2 == 0 {
            "none".into()
        } else {
            format!("{} undecoded samples; {}", lost.2, damaged.join("; "))
        },
    ));
    out.push((
        "symbol coverage".into(),
        format!(
            "{:.2}% of samples in a resolved function",
            if all == 0 {
                0.0
            } else {
                100.0 * resolved as f64 / all as f64
            }
        ),
    ));
    Ok(out)
}
