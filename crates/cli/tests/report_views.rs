//! `perfq report` (which reads a capture: `perfq_report`) against
//! the standard views `function_self` and `function_total` (SQL over its
//! dataset) on every testdata capture and every corpus capture perf reads,
//! converted once into one dataset: two definitions of the same
//! aggregation, held equal per (event, DSO, symbol) — Self with
//! `--sort dso,sym`, Children with `--children` — and per (event, DSO)
//! with `--children --sort dso` against `function_total`'s definition per
//! DSO; samples and periods exactly. Both count the samples as perf
//! delivers them (`delivered_samples`): a group read once per member
//! whose counter moved, with its delta as period.
//!
//! Where they cannot be equal, each differing row must be one of these,
//! each checked, not assumed (docs/testing.md):
//!
//! - **DWARF inlining levels** (Children): an unwound user frame counts,
//!   in perf and `perfq report`, once per inlining level named by its
//!   DWARF function (`name (inlined)` where that is not the ELF symbol), in
//!   the views once for its ELF symbol. The row must equal
//!   `function_total` with those levels expanded from the `frames` table.
//! - **unresolved callchain entry** (Children): perf and `perfq report`
//!   name an unresolved frame of a callchain by the address recorded (a
//!   return address as it is), the views by its DSO offset, else its
//!   address, after the pc − 1 of return addresses: one frame, two names,
//!   so the row has no counterpart. It must be unresolved, and the totals
//!   of its (event, DSO), where names do not matter, must agree. A
//!   sample's own unresolved address has one name on both sides (Self is
//!   compared whole).
//!
//! Unresolved names are compared as numbers: perf prints 16 hex digits,
//! the views as few as it takes.

mod common;

use std::collections::{BTreeMap, BTreeSet, HashMap};
use std::path::{Path, PathBuf};

use perfq_testgen::{presets, Binary, CallTree, Workload};
use serde_json::Value;

/// (capture, event name, DSO, symbol): the key both sides are compared by.
/// Events are named, not numbered, because `perfq report` names them; two
/// events of one name add up.
type Key = (String, String, String, String);
/// Samples and period.
type Sums = BTreeMap<Key, (u64, u64)>;

/// Why a row differs.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord)]
enum Reason {
    InlineLevels,
    UnresolvedChainEntry,
}

impl Reason {
    fn text(self) -> &'static str {
        match self {
            Reason::InlineLevels => "DWARF inlining levels",
            Reason::UnresolvedChainEntry => "unresolved callchain entry named otherwise",
        }
    }
}

/// An unresolved frame's name as a number, so that `0x00007f..` (perf's
/// 16 digits, and 16 zeros for 0) and `0x7f..` (the views') meet.
fn address_name(symbol: &str) -> Option<u64> {
    if symbol == "0000000000000000" {
        return Some(0);
    }
    let digits = symbol.strip_prefix("0x")?;
    if digits.is_empty() || !digits.bytes().all(|b| b.is_ascii_hexdigit()) {
        return None;
    }
    u64::from_str_radix(digits, 16).ok()
}

fn normalized(symbol: &str) -> String {
    address_name(symbol).map_or_else(|| symbol.to_string(), |a| format!("{a:#x}"))
}

/// Runs `perfq query` over the dataset and parses its JSON rows.
fn query(dataset: &Path, sql: &str) -> Vec<Value> {
    common::perfq_rows(&[
        "query",
        dataset.to_str().expect("utf-8 path"),
        sql,
        "--format",
        "json",
    ])
}

/// Every event: (capture, event_id) → (name, carries a user stack).
type Events = HashMap<(String, u64), (String, bool)>;

fn events(dataset: &Path) -> Events {
    query(
        dataset,
        "SELECT capture, event_id, name, sample_type FROM events",
    )
    .iter()
    .map(|r| {
        let types = format!("|{}|", r["sample_type"].as_str().unwrap_or(""));
        (
            (
                r["capture"].as_str().unwrap_or("").to_string(),
                r["event_id"].as_u64().unwrap_or(u64::MAX),
            ),
            (
                r["name"].as_str().unwrap_or("").to_string(),
                types.contains("|STACK_USER|"),
            ),
        )
    })
    .collect()
}

/// Rows of (what, capture, event_id, symbol, dso, samples, period), summed
/// by [`Key`] per `what`.
fn sums(dataset: &Path, events: &Events, sql: &str) -> BTreeMap<String, Sums> {
    let mut out: BTreeMap<String, Sums> = BTreeMap::new();
    for r in query(dataset, sql) {
        let s = |k: &str| r[k].as_str().unwrap_or("").to_string();
        let id = (s("capture"), r["event_id"].as_u64().unwrap_or(u64::MAX));
        let event = events.get(&id).map_or_else(String::new, |e| e.0.clone());
        let key = (s("capture"), event, s("dso"), normalized(&s("symbol")));
        let e = out.entry(s("what")).or_default().entry(key).or_default();
        e.0 += r["samples"].as_u64().expect("samples");
        e.1 += r["period"].as_u64().expect("period");
    }
    out
}

/// Every oracle in one statement, so that `perfq query` computes the
/// stack tables `function_total` reads once. Rows are (what, capture,
/// event_id, symbol, dso, samples, period), `what` being
///
/// - `self`, `total`: the views `function_self` and `function_total`;
/// - `dso`: `function_total`'s definition per DSO (the delivered samples
///   whose stack holds a frame of the DSO, each once), where frames'
///   names do not matter (symbol empty);
/// - `expanded total`: `function_total` for the samples that carry a user
///   stack, every resolved user frame counted once per inlining level as
///   perf's `append_inlines` names them (the DWARF function, `(inlined)`
///   unless it is the ELF symbol, `??` without a name); kernel frames come
///   from the recorded callchain and keep their symbol.
const ORACLES: &str = "WITH ev AS ( \
       SELECT capture, event_id, \
         instr(concat('|', sample_type, '|'), '|STACK_USER|') > 0 AS unwound \
       FROM events \
     ), set_dsos AS (SELECT DISTINCT fs.set_id AS set_id, fn.dso AS dso FROM set_functions fs \
       JOIN functions fn ON fn.function_id = fs.function_id), \
     unwound AS ( \
       SELECT s.capture AS capture, s.sample_id AS sample_id, s.event_id AS event_id, \
         s.period AS period, s.leaf_frame_id AS leaf_frame_id, s.stack_id AS stack_id \
       FROM delivered_samples s JOIN ev e ON e.capture = s.capture AND e.event_id = s.event_id \
       WHERE e.unwound \
     ), unwound_frames AS ( \
       SELECT capture, stack_id, unnest(frame_ids) AS frame_id FROM stacks \
       WHERE frame_ids IS NOT NULL AND capture IN (SELECT capture FROM ev WHERE unwound) \
     ), levels AS ( \
       SELECT capture, frame_id, dso, \
         CASE WHEN COALESCE(function, '??') = symbol THEN symbol \
           ELSE concat(COALESCE(function, '??'), ' (inlined)') END AS symbol \
       FROM frames \
       WHERE symbol IS NOT NULL AND kind <> 'kernel' \
         AND capture IN (SELECT capture FROM ev WHERE unwound) \
     ), keyed AS ( \
       SELECT u.capture AS capture, u.sample_id AS sample_id, u.event_id AS event_id, \
         u.period AS period, ff.symbol AS symbol, ff.dso AS dso \
       FROM unwound u \
       JOIN frame_functions ff ON ff.capture = u.capture AND ff.frame_id = u.leaf_frame_id \
       UNION ALL \
       SELECT u.capture AS capture, u.sample_id AS sample_id, u.event_id AS event_id, \
         u.period AS period, COALESCE(l.symbol, ff.symbol) AS symbol, \
         COALESCE(l.dso, ff.dso) AS dso \
       FROM unwound u \
       JOIN unwound_frames uf ON uf.capture = u.capture AND uf.stack_id = u.stack_id \
       JOIN frame_functions ff ON ff.capture = uf.capture AND ff.frame_id = uf.frame_id \
       LEFT JOIN levels l ON l.capture = uf.capture AND l.frame_id = uf.frame_id \
     ) \
     SELECT 'self' AS what, capture, event_id, symbol, dso, \
       CAST(samples AS BIGINT) AS samples, period FROM function_self \
     UNION ALL \
     SELECT 'total' AS what, capture, event_id, symbol, dso, \
       CAST(samples AS BIGINT) AS samples, period FROM function_total \
     UNION ALL \
     SELECT 'dso' AS what, g.capture AS capture, g.event_id AS event_id, '' AS symbol, \
       d.dso AS dso, CAST(SUM(g.samples) AS BIGINT) AS samples, SUM(g.period) AS period \
     FROM ( \
       SELECT s.capture AS capture, s.event_id AS event_id, ss.set_id AS set_id, \
         COUNT(*) AS samples, SUM(s.period) AS period \
       FROM delivered_samples s \
       JOIN stack_sets ss ON ss.capture = s.capture AND ss.stack_id = s.stack_id \
       GROUP BY s.capture, s.event_id, ss.set_id \
     ) g JOIN set_dsos d ON d.set_id = g.set_id \
     GROUP BY g.capture, g.event_id, d.dso \
     UNION ALL \
     SELECT 'expanded total' AS what, capture, event_id, symbol, dso, \
       CAST(COUNT(*) AS BIGINT) AS samples, SUM(period) AS period \
     FROM (SELECT DISTINCT capture, sample_id, event_id, period, symbol, dso FROM keyed) k \
     GROUP BY capture, event_id, symbol, dso";

/// `perfq report --format json --sort SORT` of one capture (with
/// `--children`: its total columns), summed by [`Key`].
fn report(file: &Path, capture: &str, sort: &str, children: bool) -> Sums {
    let f = file.to_str().expect("utf-8 path");
    let mut args = vec!["report", "--sort", sort, "--format", "json", f];
    if children {
        args.push("--children");
    }
    let rows = common::perfq_rows(&args);
    let mut sums = Sums::new();
    for r in rows {
        let s = |k: &str| r[k].as_str().unwrap_or("").to_string();
        let u = |k: &str| r[k].as_u64().unwrap_or(0);
        let v = if children {
            (u("total_samples"), u("total_period"))
        } else {
            (u("samples"), u("period"))
        };
        if v.0 == 0 {
            continue;
        }
        let key = (
            capture.to_string(),
            s("event"),
            s("dso"),
            normalized(&s("symbol")),
        );
        let e = sums.entry(key).or_default();
        e.0 += v.0;
        e.1 += v.1;
    }
    sums
}

/// The captures: every testdata capture, a generated one with stacks 30
/// to 60 deep, then every corpus capture that perf (6.1, installed)
/// reads.
fn captures() -> Vec<PathBuf> {
    let mut files: Vec<PathBuf> = std::fs::read_dir(common::root().join("testdata"))
        .expect("testdata")
        .map(|e| e.expect("entry").path())
        .filter(|p| p.extension().is_some_and(|x| x == "data"))
        .collect();
    files.sort();
    files.push(deep_capture());
    match common::corpus() {
        Some(corpus) => files.extend(
            common::catalog(&corpus)
                .iter()
                .filter(|e| e["script61"].as_str().is_some_and(|s| s.starts_with("OK")))
                .map(|e| corpus.join(e["path"].as_str().expect("path"))),
        ),
        None => common::skip(
            "in part: ../shared/corpus is absent; report and views compared on testdata only",
        ),
    }
    files
}

/// A generated capture of deep stacks (random call paths 30 to 60 deep
/// through `testdata/td-demo`, group reads of ten members).
fn deep_capture() -> PathBuf {
    let demo = common::testdata("td-demo");
    let binary = Binary::open(&demo).expect("demo binary");
    let names: Vec<String> = binary.functions().iter().map(|f| f.name.clone()).collect();
    let file = common::scratch("report-views", "deep").join("deep.data");
    Workload::new(&binary, &demo.to_string_lossy())
        .write(
            &file,
            &presets::get("sapphirerapids").expect("preset"),
            &CallTree::random(&names, (30, 60), 40, 7),
            3000,
        )
        .expect("deep capture");
    file
}

/// The rows of one capture.
fn of_capture(m: Option<&Sums>, capture: &str) -> Sums {
    let from = (
        capture.to_string(),
        String::new(),
        String::new(),
        String::new(),
    );
    m.into_iter()
        .flat_map(|m| m.range(from.clone()..))
        .take_while(|(k, _)| k.0 == capture)
        .map(|(k, v)| (k.clone(), *v))
        .collect()
}

/// What comparing the report with the views found: rows compared and
/// equal per mode, rows with unresolved names, differing rows per reason,
/// and rows that differ for no known reason.
#[derive(Default)]
struct Tally {
    compared: BTreeMap<&'static str, (usize, usize)>,
    unresolved_names: usize,
    differences: BTreeMap<(&'static str, Reason), usize>,
    failures: Vec<String>,
}

#[test]
fn report_equals_function_views() {
    let files = captures();
    // One dataset for all of them, converted once.
    let dir = common::scratch("report-views", "dataset");
    let dataset = dir.join("ds");
    let mut args: Vec<&str> = vec!["convert", "-o", dataset.to_str().expect("utf-8 path")];
    args.extend(files.iter().map(|f| f.to_str().expect("utf-8 path")));
    let o = common::perfq(&args);
    // "FILE -> DIR/capture=<id>" per capture (identical files share one).
    let capture_of: BTreeMap<PathBuf, String> = String::from_utf8_lossy(&o.stdout)
        .lines()
        .filter_map(|l| l.split_once(" -> "))
        .filter_map(|(f, d)| {
            let (_, id) = d.split_once("capture=")?;
            let id = id.split(' ').next().unwrap_or(id);
            Some((PathBuf::from(f), id.to_string()))
        })
        .collect();

    let events = events(&dataset);
    let unwinding: BTreeSet<(&str, &str)> = events
        .iter()
        .filter(|(_, e)| e.1)
        .map(|(k, e)| (k.0.as_str(), e.0.as_str()))
        .collect();
    let oracles = sums(&dataset, &events, ORACLES);

    let mut tally = Tally::default();
    let mut done = BTreeSet::new();
    for file in &files {
        let Some(capture) = capture_of.get(file) else {
            panic!(
                "{} not converted: {}",
                file.display(),
                String::from_utf8_lossy(&o.stderr)
            );
        };
        // Identical files are one capture: compared once.
        if !done.insert(capture.clone()) {
            continue;
        }
        report_agrees_with_views(file, capture, &oracles, &unwinding, &mut tally);
    }
    let captures = done.len();
    let rows: Vec<String> = tally
        .compared
        .iter()
        .map(|(mode, (n, eq))| format!("{mode} {eq} of {n}"))
        .collect();
    let differ: Vec<String> = tally
        .differences
        .iter()
        .map(|((mode, r), n)| format!("{mode}: {n} {}", r.text()))
        .collect();
    println!(
        "report vs views: {captures} captures; rows (per event; dso,sym and per DSO) equal: {} \
         ({} rows with unresolved names); differences by reason: {}",
        rows.join(", "),
        tally.unresolved_names,
        if differ.is_empty() {
            "none".to_string()
        } else {
            differ.join(", ")
        }
    );
    assert!(
        tally.failures.is_empty(),
        "{} rows differ for no known reason:\n{}",
        tally.failures.len(),
        tally.failures.join("\n")
    );
    assert!(captures >= 8, "{captures} captures compared");
    let _ = std::fs::remove_dir_all(&dir);
}

/// One capture's report rows (per DSO, Self and Children) against the
/// views' (`oracles`), each differing row counted by its reason in `tally`
/// or listed there as a failure.
fn report_agrees_with_views(
    file: &Path,
    capture: &str,
    oracles: &BTreeMap<String, Sums>,
    unwinding: &BTreeSet<(&str, &str)>,
    tally: &mut Tally,
) {
    let oracle = |what: &str| of_capture(oracles.get(what), capture);
    // (event, DSO) whose totals per DSO agree: where frames' names do
    // not matter.
    let mut dso_agrees: BTreeSet<(String, String)> = BTreeSet::new();
    for (mode, sort, children) in [
        ("dso", "dso", true),
        ("self", "dso,sym", false),
        ("total", "dso,sym", true),
    ] {
        let ours = report(file, capture, sort, children);
        let theirs = oracle(mode);
        let expanded = oracle("expanded total");
        let keys: BTreeSet<&Key> = ours.keys().chain(theirs.keys()).collect();
        let counts = tally.compared.entry(mode).or_default();
        for key in keys {
            counts.0 += 1;
            let unresolved = address_name(&key.3).is_some();
            tally.unresolved_names += usize::from(unresolved);
            let (a, b) = (ours.get(key), theirs.get(key));
            if mode == "dso" && a == b {
                dso_agrees.insert((key.1.clone(), key.2.clone()));
            }
            if a == b {
                counts.1 += 1;
                continue;
            }
            let reason = if mode == "total"
                && unwinding.contains(&(capture, key.1.as_str()))
                && a == expanded.get(key)
            {
                Some(Reason::InlineLevels)
            } else if mode == "total"
                && unresolved
                && dso_agrees.contains(&(key.1.clone(), key.2.clone()))
            {
                Some(Reason::UnresolvedChainEntry)
            } else {
                None
            };
            match reason {
                Some(r) => *tally.differences.entry((mode, r)).or_default() += 1,
                None => tally.failures.push(format!(
                    "{} {mode} {key:?}: report {a:?}, oracle {b:?}",
                    file.display()
                )),
            }
        }
    }
}

/// (event, DSO, symbol) → (samples, period) from `perf report --no-group
/// -n --no-children --sort dso,sym` of `file`: each event's section.
fn perf_no_group(file: &Path) -> BTreeMap<(String, String, String), (u64, u64)> {
    let out = common::perf(&[
        "report",
        "-i",
        file.to_str().expect("path"),
        "--stdio",
        "--no-group",
        "--no-children",
        "-n",
        "-g",
        "none",
        "--sort",
        "dso,sym",
        "-F",
        "sample,period,dso,sym",
    ])
    .expect("perf report");
    let mut rows = BTreeMap::new();
    let mut event = String::new();
    for line in out.lines() {
        // "# Samples: 217  of events 'task-clock'"
        if let Some((_, name)) = line
            .split_once(" of event '")
            .or(line.split_once(" of events '"))
        {
            event = name.trim_end_matches('\'').to_string();
            continue;
        }
        if line.starts_with('#') || line.trim().is_empty() {
            continue;
        }
        // "  4   1020995  [kernel.kallsyms]  [k] 0xffffffff821ecc26"
        let mut it = line.split_whitespace();
        let (Some(n), Some(p), Some(dso), Some(_), Some(sym)) =
            (it.next(), it.next(), it.next(), it.next(), it.next())
        else {
            continue;
        };
        let (Ok(n), Ok(p)) = (n.parse::<u64>(), p.parse::<u64>()) else {
            continue;
        };
        let e = rows
            .entry((event.clone(), dso.to_string(), normalized(sym)))
            .or_insert((0, 0));
        e.0 += n;
        e.1 += p;
    }
    rows
}

/// JSON rows with `event`, `dso`, `symbol`, `samples` and `period`, keyed
/// as [`perf_no_group`] keys them.
fn event_rows(rows: &[Value]) -> BTreeMap<(String, String, String), (u64, u64)> {
    rows.iter()
        .map(|r| {
            let s = |k: &str| r[k].as_str().unwrap_or("").to_string();
            let u = |k: &str| r[k].as_u64().unwrap_or(0);
            (
                (s("event"), s("dso"), normalized(&s("symbol"))),
                (u("samples"), u("period")),
            )
        })
        .collect()
}

/// On a group-read capture every command and view counts a sample as perf
/// does: per member event, a sample for each read whose counter moved,
/// with its delta as period. `perfq report`, the views `function_self`
/// and `function_total` (Self per function here: a frame-pointer capture
/// whose stacks have no repeated function at their leaf) and `perfq diff
/// A A` give, per event, the members included, perf's samples and
/// periods per function.
#[test]
fn group_members_count_as_perf_report_no_group() {
    if !common::have_perf() {
        common::skip("perf is not installed; group reads not compared with it");
        return;
    }
    let file = common::testdata("group.data");
    let perf = perf_no_group(&file);
    let events: BTreeSet<&str> = perf.keys().map(|k| k.0.as_str()).collect();
    assert_eq!(
        events,
        BTreeSet::from(["context-switches", "page-faults", "task-clock"]),
        "perf's sections"
    );
    let f = file.to_str().expect("path");
    let mut report = event_rows(&common::perfq_rows(&[
        "report", "--sort", "dso,sym", "--format", "json", f,
    ]));
    report.retain(|_, v| v.0 > 0);
    assert_eq!(report, perf, "perfq report against perf report --no-group");

    // The views, through `perfq query` on the file.
    let views = |view: &str| -> BTreeMap<(String, String, String), (u64, u64)> {
        let sql = format!(
            "SELECT e.name AS event, v.dso AS dso, v.symbol AS symbol, \
             CAST(v.samples AS BIGINT) AS samples, v.period AS period \
             FROM {view} v JOIN events e ON e.capture = v.capture AND e.event_id = v.event_id"
        );
        event_rows(&common::perfq_rows(&["query", f, &sql, "--format", "json"]))
    };
    let own = views("function_self");
    assert_eq!(own, perf, "function_self against perf report --no-group");
    // Every member's total is at least its self, and the leaf functions'
    // totals carry every member.
    let total = views("function_total");
    for (key, (n, p)) in &perf {
        if address_name(&key.2).is_some() {
            continue;
        }
        let t = total.get(key).copied().unwrap_or_default();
        assert!(
            t.0 >= *n && t.1 >= *p,
            "function_total {key:?}: {t:?} below self {n}, {p}"
        );
    }

    // perfq diff of the capture with itself, per member event.
    for event in &events {
        let rows = common::perfq_rows(&["diff", f, f, "--event", event, "--format", "json"]);
        let ours: BTreeMap<(String, String), u64> = rows
            .iter()
            .map(|r| {
                let s = |k: &str| r[k].as_str().unwrap_or("").to_string();
                let n = r["a_samples"].as_u64().expect("a_samples");
                assert_eq!(r["b_samples"].as_u64(), Some(n));
                ((s("dso"), normalized(&s("symbol"))), n)
            })
            .filter(|(_, n)| *n > 0)
            .collect();
        let want: BTreeMap<(String, String), u64> = perf
            .iter()
            .filter(|(k, _)| k.0 == *event)
            .map(|(k, v)| ((k.1.clone(), k.2.clone()), v.0))
            .collect();
        assert_eq!(ours, want, "perfq diff --event {event} against perf");
    }
    println!(
        "group read: {} (event, function) rows of 3 events equal perf report --no-group in report, function_self and diff",
        perf.len()
    );
}
