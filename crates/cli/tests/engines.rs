//! The dataset read by engines that are not perfq: DuckDB, pyarrow,
//! Polars and pyspark from PyPI, in the virtualenv `.ci/setup.sh` makes
//! (Spark also needs Java). The example queries of docs/schema.md, run as
//! written, give perfq report's numbers; perfq's standard and topdown
//! views, created unchanged in DuckDB and in Spark SQL, give `perfq
//! query`'s.

mod common;

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::process::Command;
use std::sync::OnceLock;

use serde_json::Value;

/// The SQL blocks of docs/schema.md, in order.
fn doc_queries() -> Vec<String> {
    let doc =
        std::fs::read_to_string(common::root().join("docs/schema.md")).expect("docs/schema.md");
    let mut out = Vec::new();
    let mut cur: Option<String> = None;
    // Only the DuckDB examples: later sections hold perfq-query's SQL.
    let mut in_section = false;
    for line in doc.lines() {
        if line.starts_with("## ") {
            in_section = line.starts_with("## Example queries (DuckDB)");
        }
        if !in_section {
            continue;
        }
        match (&mut cur, line.trim_start()) {
            (None, "```sql") => cur = Some(String::new()),
            (Some(_), "```") => out.push(cur.take().unwrap_or_default()),
            (Some(q), l) => {
                q.push_str(l);
                q.push('\n');
            }
            _ => {}
        }
    }
    out
}

/// The Python that has DuckDB, pyarrow and Polars (`common::python_with`).
fn venv() -> Option<PathBuf> {
    static FOUND: OnceLock<Option<PathBuf>> = OnceLock::new();
    FOUND
        .get_or_init(|| common::python_with("duckdb, pyarrow, polars"))
        .clone()
}

/// Why no Python runs the engines, for the skip message.
const NO_PYTHON: &str =
    "no Python with duckdb, pyarrow and polars (bash .ci/setup.sh installs them)";

/// Whether `py` can run Spark: pyspark and a Java runtime for it.
fn spark(py: &Path) -> bool {
    Command::new("java").arg("-version").output().is_ok() && common::imports(py, "pyspark")
}

/// Runs `script` with `args` in `py`: the JSON it prints, once it has
/// succeeded (`what` names the run in the failure message).
fn python_json(py: &Path, script: &str, args: &[&str], what: &str) -> Value {
    let run = Command::new(py)
        .arg("-c")
        .arg(script)
        .args(args)
        .output()
        .expect("python");
    serde_json::from_str(&common::succeeded(&run, what)).expect("json from python")
}

/// The tables docs/schema.md lists, each a file in every capture folder:
/// the ones a query session registers.
const TABLES: &[&str] = perfq_query::TABLES;

/// pyarrow, Polars and (with Java) Spark read every table of a dataset
/// unchanged, with the same row counts.
#[test]
fn every_table_reads_in_pyarrow_polars_and_spark() {
    let Some(py) = venv() else {
        common::skip(format_args!("{NO_PYTHON}; engines not checked"));
        return;
    };
    let out = std::env::temp_dir().join(format!("perfq-engines-all-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&out);
    let files: Vec<PathBuf> = ["fp.data", "group.data", "multi.data"]
        .iter()
        .map(|f| common::testdata(f))
        .collect();
    let mut args = vec!["convert", "-o", out.to_str().expect("path")];
    args.extend(files.iter().map(|f| f.to_str().expect("path")));
    common::perfq_ok(&args);
    let with_spark = spark(&py);
    let script = r#"
import json, sys, glob, os
import pyarrow.parquet as pq, polars as pl
d, tables, with_spark = sys.argv[1], json.loads(sys.argv[2]), sys.argv[3] == "1"
counts = {}
for t in tables:
    files = sorted(glob.glob(d + "/capture=*/" + t + ".parquet"))
    assert len(files) == 3, (t, files)
    a = sum(pq.read_table(f).num_rows for f in files)
    p = pl.scan_parquet(d + "/capture=*/" + t + ".parquet", hive_partitioning=True).select(pl.len()).collect().item()
    assert a == p, (t, a, p)
    counts[t] = a
if with_spark:
    from pyspark.sql import SparkSession
    spark = SparkSession.builder.master("local[1]").config("spark.ui.enabled", "false").getOrCreate()
    spark.sparkContext.setLogLevel("ERROR")
    for t in tables:
        n = spark.read.option("basePath", d).parquet(d + "/capture=*/" + t + ".parquet").count()
        assert n == counts[t], (t, n, counts[t])
    spark.stop()
print(json.dumps(counts))
"#;
    let counts = python_json(
        &py,
        script,
        &[
            out.to_str().expect("path"),
            &serde_json::to_string(TABLES).expect("json"),
            if with_spark { "1" } else { "0" },
        ],
        "python",
    );
    let samples: u64 = files
        .iter()
        .map(|f| {
            let info = common::perfq_json(&["info", "--json", f.to_str().expect("path")]);
            info["samples"].as_u64().expect("samples")
        })
        .sum();
    assert_eq!(counts["samples"].as_u64(), Some(samples));
    if !with_spark {
        common::skip("no Java or pyspark (bash .ci/setup.sh installs them); Spark not checked");
    }
    println!(
        "engines: {} tables of 3 captures read by pyarrow and Polars{} with equal row counts",
        TABLES.len(),
        if with_spark { " and Spark" } else { "" }
    );
    std::fs::remove_dir_all(&out).ok();
}

#[test]
fn duckdb_and_pyarrow_read_the_dataset_and_the_doc_queries_agree_with_perfq() {
    let Some(py) = venv() else {
        common::skip(format_args!("{NO_PYTHON}; engines not checked"));
        return;
    };
    let file = common::testdata("fp.data");
    let group_file = common::testdata("group.data");
    let out = std::env::temp_dir().join(format!("perfq-engines-{}", std::process::id()));
    let group_out = out.join("group");
    let _ = std::fs::remove_dir_all(&out);
    for (capture, dataset) in [(&file, out.join("fp")), (&group_file, group_out.clone())] {
        common::perfq_ok(&[
            "convert",
            "-o",
            dataset.to_str().expect("path"),
            capture.to_str().expect("path"),
        ]);
    }
    let queries = doc_queries();
    assert_eq!(
        queries.len(),
        5,
        "docs/schema.md: views, self, total, group from m columns, group from read_values"
    );
    let script = r#"
import duckdb, json, sys, pyarrow.parquet as pq, glob
d, g = sys.argv[1], sys.argv[2]
# pyarrow reads every table.
for t in json.loads(sys.argv[4]):
    for f in glob.glob(d + "/*/" + t + ".parquet"):
        pq.read_table(f)
views, top_self, total, group_m, group = json.loads(sys.argv[3])
def connect(dataset):
    con = duckdb.connect()
    for stmt in views.replace("DATASET", dataset).strip().split(";"):
        if stmt.strip():
            con.sql(stmt)
    return con
def rows(con, q):
    q = q.strip().rstrip(";").replace("limit 20", "limit 100000")
    return [list(map(lambda v: v if isinstance(v, (str, type(None))) else int(v), r)) for r in con.sql(q).fetchall()]
con, gcon = connect(d), connect(g)
print(json.dumps({"self": rows(con, top_self), "total": rows(con, total), "group_m": rows(gcon, group_m), "group": rows(gcon, group)}))
"#;
    let got = python_json(
        &py,
        script,
        &[
            out.join("fp").to_str().expect("path"),
            group_out.to_str().expect("path"),
            &serde_json::to_string(&queries).expect("json"),
            &serde_json::to_string(TABLES).expect("json"),
        ],
        "python",
    );
    doc_self_and_total_agree_with_report(&got, &file);
    doc_group_queries_agree_with_report(&got, &group_file);
    std::fs::remove_dir_all(Path::new(&out)).ok();
}

/// `perfq report --format json` of `capture` with `extra` arguments.
fn report_of(capture: &Path, extra: &[&str]) -> Vec<Value> {
    let mut args = vec!["report", "--format", "json"];
    args.extend_from_slice(extra);
    args.push(capture.to_str().expect("path"));
    common::perfq_rows(&args)
}

/// The doc's self and total queries (`got["self"]`, `got["total"]`: dso,
/// symbol, period rows) on `file`'s dataset give perfq report's periods.
fn doc_self_and_total_agree_with_report(got: &Value, file: &Path) {
    let report = |extra: &[&str]| report_of(file, extra);
    // Self: every (dso, symbol) row equals perfq report's period.
    let mut ours: BTreeMap<(String, String), u64> = BTreeMap::new();
    for r in got["self"].as_array().expect("rows") {
        ours.insert(
            (
                r[0].as_str().unwrap_or("").into(),
                r[1].as_str().unwrap_or("").into(),
            ),
            r[2].as_u64().expect("period"),
        );
    }
    for r in report(&[]) {
        let key = (
            r["dso"].as_str().unwrap_or("").to_string(),
            r["symbol"].as_str().unwrap_or("").to_string(),
        );
        assert_eq!(
            ours.get(&key).copied(),
            r["period"].as_u64(),
            "self {key:?}"
        );
    }
    // Total: resolved functions equal perfq report --children.
    let mut totals: BTreeMap<(String, String), u64> = BTreeMap::new();
    for r in got["total"].as_array().expect("rows") {
        totals.insert(
            (
                r[0].as_str().unwrap_or("").into(),
                r[1].as_str().unwrap_or("").into(),
            ),
            r[2].as_u64().expect("total"),
        );
    }
    let mut checked = 0;
    for r in report(&["--children"])
        .iter()
        .filter(|r| r.get("unresolved").is_none())
    {
        let key = (
            r["dso"].as_str().unwrap_or("").to_string(),
            r["symbol"].as_str().unwrap_or("").to_string(),
        );
        assert_eq!(
            totals.get(&key).copied(),
            r["total_period"].as_u64(),
            "total {key:?}"
        );
        checked += 1;
    }
    match common::recorded_binaries_here(file) {
        Ok(()) => assert!(checked > 20, "{checked} totals compared"),
        Err(why) => common::skip(format_args!(
            "in part: {why}; {checked} named totals compared"
        )),
    }
}

/// The doc's group queries (`got["group"]`, `got["group_m"]`) on the
/// dataset of `group_file`, a `{task-clock,page-faults,context-switches}:S`
/// capture: each member's deltas per symbol equal perfq report's period of
/// that event per symbol (resolved symbols; report's rows summed over
/// DSOs, as the queries group by symbol alone).
fn doc_group_queries_agree_with_report(got: &Value, group_file: &Path) {
    let member_periods = |event: &str| -> BTreeMap<String, u64> {
        let mut per = BTreeMap::new();
        for r in report_of(group_file, &["--event", event])
            .iter()
            .filter(|r| r.get("unresolved").is_none())
        {
            let symbol = r["symbol"].as_str().unwrap_or("").to_string();
            *per.entry(symbol).or_insert(0) += r["period"].as_u64().expect("period");
        }
        per
    };
    let members = ["context-switches", "page-faults", "task-clock"];
    let want: BTreeMap<&str, BTreeMap<String, u64>> =
        members.iter().map(|m| (*m, member_periods(m))).collect();
    let mut from_read_values: BTreeMap<&str, BTreeMap<String, u64>> = BTreeMap::new();
    for r in got["group"].as_array().expect("rows") {
        let (Some(symbol), Some(member)) = (r[0].as_str(), r[1].as_str()) else {
            continue;
        };
        let member = members
            .iter()
            .find(|m| **m == member)
            .unwrap_or_else(|| panic!("unknown member {member}"));
        let delta = r[2].as_u64().expect("delta");
        if delta > 0 {
            from_read_values
                .entry(member)
                .or_default()
                .insert(symbol.to_string(), delta);
        }
    }
    let nonzero = |m: &BTreeMap<String, u64>| -> BTreeMap<String, u64> {
        m.iter()
            .filter(|(_, v)| **v > 0)
            .map(|(k, v)| (k.clone(), *v))
            .collect()
    };
    for m in members {
        assert_eq!(
            from_read_values.get(m).cloned().unwrap_or_default(),
            nonzero(&want[m]),
            "read_values deltas of {m} per symbol"
        );
    }
    // The m columns: m0 the leader (task-clock), m1 page-faults.
    let mut m_cols: [BTreeMap<String, u64>; 2] = Default::default();
    for r in got["group_m"].as_array().expect("rows") {
        let Some(symbol) = r[0].as_str() else {
            continue;
        };
        for (i, col) in m_cols.iter_mut().enumerate() {
            let v = r[1 + i].as_u64().expect("m column");
            if v > 0 {
                col.insert(symbol.to_string(), v);
            }
        }
    }
    match common::recorded_binaries_here(group_file) {
        Ok(()) => assert!(m_cols[0].len() > 3, "{:?}", m_cols[0]),
        Err(why) => common::skip(format_args!(
            "in part: {why}; {} named functions of the group compared",
            m_cols[0].len()
        )),
    }
    assert_eq!(m_cols[0], nonzero(&want["task-clock"]), "m0 is task-clock");
    assert_eq!(
        m_cols[1],
        nonzero(&want["page-faults"]),
        "m1 is page-faults"
    );
}

/// An engine other than perfq that the views must run on unchanged.
#[derive(Clone, Copy, Debug)]
enum Engine {
    DuckDb,
    /// Spark SQL in local mode (`local[1]`), through pyspark.
    Spark,
}

impl Engine {
    fn name(self) -> &'static str {
        match self {
            Engine::DuckDb => "DuckDB",
            Engine::Spark => "Spark",
        }
    }

    /// The Python that runs the engine, or why there is none (the test
    /// then skips: `common::skip`).
    fn python(self) -> Result<PathBuf, &'static str> {
        let py = venv().ok_or(NO_PYTHON)?;
        match self {
            Engine::DuckDb => Ok(py),
            Engine::Spark if spark(&py) => Ok(py),
            Engine::Spark => Err("no Java or pyspark (bash .ci/setup.sh installs them)"),
        }
    }
}

/// Runs `queries` in `engine` over `dataset`'s tables (every capture's
/// Parquet files, hive-partitioned by `capture`) after creating `views`
/// (name, SQL) in order, each as its text says: each query's rows as
/// JSON objects, numbers as numbers (Spark's decimals too). The views in
/// `keep` are computed once and kept, as `perfq query` keeps the stack
/// tables: Spark computes a view again at each use, and does not reuse a
/// cached one whose plan holds a recursive CTE. Spark runs one session,
/// `local[1]` without its UI, with the settings docs/distributed.md
/// gives. The views go through a file: the topdown ones are too long for
/// a command line.
fn engine_rows(
    engine: Engine,
    py: &Path,
    dataset: &Path,
    views: &[(String, String)],
    queries: &[&str],
) -> Vec<Vec<Value>> {
    let script = r#"
import decimal, glob, json, os, sys
engine, d = sys.argv[1], sys.argv[2]
views, queries, keep = json.load(open(sys.argv[3])), json.loads(sys.argv[4]), json.loads(sys.argv[5])
tables = sorted(set(os.path.basename(p)[:-len(".parquet")] for p in glob.glob(d + "/capture=*/*.parquet")))
if engine == "DuckDB":
    import duckdb
    con = duckdb.connect()
    for t in tables:
        con.execute(f"CREATE VIEW {t} AS SELECT * FROM read_parquet('{d}/capture=*/{t}.parquet', "
                    "hive_partitioning=1, hive_types={'capture': VARCHAR}, union_by_name=1)")
    view = lambda name, sql: con.execute(f"CREATE VIEW {name} AS {sql}")
    kept = lambda name, sql: con.execute(f"CREATE TABLE {name} AS {sql}")
    def rows(q):
        cur = con.execute(q)
        cols = [c[0] for c in cur.description]
        return [dict(zip(cols, r)) for r in cur.fetchall()]
else:
    from pyspark.sql import SparkSession
    spark = (SparkSession.builder.master("local[1]")
        .config("spark.ui.enabled", "false")
        .config("spark.sql.sources.partitionColumnTypeInference.enabled", "false")
        .config("spark.sql.cteRecursionLevelLimit", "-1")
        .config("spark.sql.cteRecursionRowLimit", "-1")
        .config("spark.sql.shuffle.partitions", "2")
        .getOrCreate())
    spark.sparkContext.setLogLevel("ERROR")
    for t in tables:
        (spark.read.option("basePath", d).option("mergeSchema", "true")
            .parquet(f"{d}/capture=*/{t}.parquet").createOrReplaceTempView(t))
    view = lambda name, sql: spark.sql(f"CREATE TEMPORARY VIEW {name} AS {sql}")
    kept = lambda name, sql: spark.sql(sql).localCheckpoint().createOrReplaceTempView(name)
    rows = lambda q: [r.asDict() for r in spark.sql(q).collect()]
for name, sql in views:
    (kept if name in keep else view)(name, sql)
def plain(v):
    if isinstance(v, decimal.Decimal):
        return int(v) if v == v.to_integral_value() else float(v)
    return v
out = [[{k: plain(v) for k, v in r.items()} for r in rows(q)] for q in queries]
if engine == "Spark":
    spark.stop()
print(json.dumps(out))
"#;
    let views_file = dataset.join("views.json");
    std::fs::write(&views_file, serde_json::to_string(views).expect("json")).expect("views.json");
    let rows = python_json(
        py,
        script,
        &[
            engine.name(),
            dataset.to_str().expect("path"),
            views_file.to_str().expect("path"),
            &serde_json::to_string(queries).expect("json"),
            &serde_json::to_string(perfq_query::views::STACK_TABLES).expect("json"),
        ],
        engine.name(),
    );
    serde_json::from_value(rows).expect("rows per query")
}

/// `perfq query`'s rows for `q` over `dataset`, as JSON objects.
fn query_rows(dataset: &Path, q: &str) -> Vec<Value> {
    let rows = common::perfq_rows(&[
        "query",
        dataset.to_str().expect("path"),
        q,
        "--format",
        "json",
    ]);
    assert!(!rows.is_empty(), "{q}");
    rows
}

/// perfq's standard views (crates/query/sql/*.sql) run unchanged on
/// `engine` over a dataset of three captures and give the rows `perfq
/// query` gives for the same views: each frame's function (unresolved
/// ones by their address in hex), per-function self and total, the
/// number of function sets, and each stack's functions in order.
fn standard_views_run_unchanged_on(engine: Engine) {
    let py = match engine.python() {
        Ok(py) => py,
        Err(why) => {
            common::skip(format_args!("{why}; {} not checked", engine.name()));
            return;
        }
    };
    let out = std::env::temp_dir().join(format!(
        "perfq-engines-views-{}-{}",
        engine.name(),
        std::process::id()
    ));
    let _ = std::fs::remove_dir_all(&out);
    let mut args = vec!["convert", "-o", out.to_str().expect("path")];
    let files: Vec<PathBuf> = ["fp.data", "multi.data", "dwarf.data"]
        .iter()
        .map(|f| common::testdata(f))
        .collect();
    args.extend(files.iter().map(|f| f.to_str().expect("path")));
    common::perfq_ok(&args);
    let views: Vec<(String, String)> = perfq_query::views::VIEWS
        .iter()
        .map(|v| (v.name.to_string(), v.sql.to_string()))
        .collect();
    let queries = [
        "SELECT capture, CAST(frame_id AS BIGINT) AS frame_id, symbol, dso FROM frame_functions",
        "SELECT capture, event_id, symbol, dso, CAST(samples AS BIGINT) AS samples, \
         CAST(period AS BIGINT) AS period FROM function_self",
        "SELECT capture, event_id, symbol, dso, CAST(samples AS BIGINT) AS samples, \
         CAST(period AS BIGINT) AS period FROM function_total",
        "SELECT COUNT(*) AS stacks, COUNT(DISTINCT set_id) AS sets FROM stack_sets",
        "SELECT capture, CAST(stack_id AS BIGINT) AS stack_id, CAST(position AS BIGINT) AS position, \
         symbol, dso FROM stack_symbols",
    ];
    let theirs = engine_rows(engine, &py, &out, &views, &queries);
    // Rows as sorted lines, each engine's own order aside.
    let lines = |rows: &[Value]| {
        let mut v: Vec<String> = rows
            .iter()
            .map(|r| {
                let o = r.as_object().expect("row");
                let mut keys: Vec<&String> = o.keys().collect();
                keys.sort();
                keys.iter()
                    .map(|k| format!("{k}={}", o[*k]))
                    .collect::<Vec<_>>()
                    .join(" ")
            })
            .collect();
        v.sort();
        v
    };
    let mut unresolved = 0;
    for (q, their_rows) in queries.iter().zip(&theirs) {
        let (a, b) = (lines(&query_rows(&out, q)), lines(their_rows));
        let only_ours: Vec<&String> = a.iter().filter(|l| !b.contains(l)).take(5).collect();
        let only_theirs: Vec<&String> = b.iter().filter(|l| !a.contains(l)).take(5).collect();
        assert!(
            a.len() == b.len() && only_ours.is_empty() && only_theirs.is_empty(),
            "{q}: {} rows and {} rows; only perfq's: {only_ours:?}; only {}'s: {only_theirs:?}",
            a.len(),
            b.len(),
            engine.name()
        );
        unresolved += a.iter().filter(|l| l.contains("symbol=\"0x")).count();
    }
    // The hex digits are computed in SQL: some frames must need them.
    assert!(unresolved > 0, "no frame named by its address");
    println!(
        "engines: {} standard views run unchanged on {}, same rows as perfq query",
        views.len(),
        engine.name()
    );
    std::fs::remove_dir_all(&out).ok();
}

#[test]
fn standard_views_run_unchanged_on_duckdb() {
    standard_views_run_unchanged_on(Engine::DuckDb);
}

#[test]
fn standard_views_run_unchanged_on_spark() {
    standard_views_run_unchanged_on(Engine::Spark);
}

/// The topdown views (`perfq_query::topdown::view_sql`) run unchanged on
/// `engine` over a topdown capture's dataset, next to the standard views,
/// and give `perfq query`'s numbers: per-function self and total shares,
/// standard errors and flags, and thread rows.
fn topdown_views_run_unchanged_on(engine: Engine) {
    let py = match engine.python() {
        Ok(py) => py,
        Err(why) => {
            common::skip(format_args!("{why}; {} not checked", engine.name()));
            return;
        }
    };
    let out = std::env::temp_dir().join(format!(
        "perfq-engines-td-{}-{}",
        engine.name(),
        std::process::id()
    ));
    let _ = std::fs::remove_dir_all(&out);
    // From the repository root: the capture maps testdata/td-demo by that
    // relative path.
    common::perfq_cached_ok(
        &[
            "convert",
            "-o",
            out.to_str().expect("path"),
            "testdata/topdown-spr.data",
        ],
        common::process_cache(),
    );
    let session = perfq_query::Session::open(&out).expect("session");
    let opt = perfq_query::topdown::Options::default();
    let plans = perfq_query::topdown::plan(&session, None, None).expect("plan");
    let mut views: Vec<(String, String)> = perfq_query::views::VIEWS
        .iter()
        .map(|v| (v.name.to_string(), v.sql.to_string()))
        .collect();
    views.extend(perfq_query::topdown::view_sql(&plans, &opt));
    let queries = [
        "SELECT symbol, dso, n, retiring, se_retiring, backend_bound, se_backend_bound, \
         bad_speculation, frontend_bound, flag_retiring, flag_backend_bound, low_samples \
         FROM topdown_function_self",
        "SELECT symbol, dso, n, retiring, se_retiring, backend_bound, memory_bound, \
         flag_memory_bound, low_samples FROM topdown_function_total",
        "SELECT pid, tid, n, retiring, backend_bound FROM topdown_thread",
    ];
    let theirs = engine_rows(engine, &py, &out, &views, &queries);
    let key = |r: &Value| {
        ["symbol", "dso", "pid", "tid"]
            .iter()
            .map(|k| r.get(*k).map(|v| v.to_string()).unwrap_or_default())
            .collect::<Vec<_>>()
            .join(" ")
    };
    for (q, their_rows) in queries.iter().zip(&theirs) {
        let ours = query_rows(&out, q);
        assert_eq!(ours.len(), their_rows.len(), "{q}");
        for r in &ours {
            let d = their_rows
                .iter()
                .find(|d| key(d) == key(r))
                .unwrap_or_else(|| panic!("{q}: {} not in {}'s rows", key(r), engine.name()));
            for (col, v) in r.as_object().expect("row") {
                let w = &d[col];
                match (v.as_f64(), w.as_f64()) {
                    (Some(a), Some(b)) if v.is_f64() || w.is_f64() => assert!(
                        (a - b).abs() <= 1e-9 * a.abs().max(b.abs()).max(1e-12),
                        "{q}: {} {col}: {a} vs {} {b}",
                        key(r),
                        engine.name()
                    ),
                    _ => assert_eq!(v, w, "{q}: {} {col}", key(r)),
                }
            }
        }
    }
    println!(
        "engines: {} topdown views run unchanged on {}, same numbers as perfq query",
        views.len() - perfq_query::views::VIEWS.len(),
        engine.name()
    );
    std::fs::remove_dir_all(&out).ok();
}

#[test]
fn topdown_views_run_unchanged_on_duckdb() {
    topdown_views_run_unchanged_on(Engine::DuckDb);
}

#[test]
fn topdown_views_run_unchanged_on_spark() {
    topdown_views_run_unchanged_on(Engine::Spark);
}

/// docs/distributed.md creates the views in `VIEWS`' order and keeps the
/// `STACK_TABLES`, in each of its scripts: its lists are the code's.
#[test]
fn distributed_doc_lists_the_views_in_order() {
    let doc = std::fs::read_to_string(common::root().join("docs/distributed.md"))
        .expect("docs/distributed.md");
    let views: Vec<&str> = perfq_query::views::VIEWS.iter().map(|v| v.name).collect();
    let mut keep: Vec<&str> = perfq_query::views::STACK_TABLES.to_vec();
    keep.sort_unstable();
    // The words from each `start` to the first `end` after it.
    let lists = |start: &str, end: &str| -> Vec<Vec<String>> {
        doc.match_indices(start)
            .map(|(i, _)| {
                let rest = &doc[i + start.len()..];
                let body = &rest[..rest.find(end).unwrap_or(rest.len())];
                body.split(|c: char| !(c.is_ascii_alphanumeric() || c == '_'))
                    .filter(|w| !w.is_empty())
                    .map(str::to_string)
                    .collect()
            })
            .collect()
    };
    let python = lists("VIEWS = [", "]");
    // The spark-sql script's loop (the Python loops read topdown.json).
    let shell: Vec<Vec<String>> = lists("for v in ", "; do")
        .into_iter()
        .filter(|l| !l.iter().any(|w| w == "json"))
        .collect();
    assert_eq!(python.len(), 2, "the pyspark and DuckDB scripts");
    assert_eq!(shell.len(), 1, "the spark-sql script");
    for l in python.iter().chain(&shell) {
        assert_eq!(l, &views, "docs/distributed.md");
    }
    for mut l in lists("KEEP = {", "}") {
        l.sort_unstable();
        assert_eq!(l, keep, "docs/distributed.md");
    }
    // The spark-sql script's `case` pattern of the kept tables.
    let pattern = doc
        .lines()
        .map(str::trim)
        .find(|l| l.ends_with(')') && l.contains('|'))
        .expect("the spark-sql script's kept tables");
    let mut case: Vec<&str> = pattern.trim_end_matches(')').split('|').collect();
    case.sort_unstable();
    assert_eq!(case, keep, "docs/distributed.md");
}
