//! The dataset read by engines that are not perfq: DuckDB and pyarrow from
//! PyPI, in a virtualenv this test creates. The example queries of
//! docs/schema.md, run as written, give perfq report's numbers.

mod common;

use std::collections::BTreeMap;
use std::path::Path;
use std::process::Command;

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

fn venv() -> Option<std::path::PathBuf> {
    let dir = std::env::temp_dir().join("perfq-test-venv");
    let py = dir.join("bin/python");
    if py.is_file()
        && Command::new(&py)
            .args(["-c", "import duckdb, pyarrow, polars"])
            .status()
            .is_ok_and(|s| s.success())
    {
        return Some(py);
    }
    let made = Command::new("python3")
        .args(["-m", "venv"])
        .arg(&dir)
        .status()
        .is_ok_and(|s| s.success());
    let installed = made
        && Command::new(&py)
            .args(["-m", "pip", "install", "-q", "duckdb", "pyarrow", "polars"])
            .status()
            .is_ok_and(|s| s.success());
    installed.then_some(py)
}

/// Whether `py` can run Spark: pyspark installed (into the venv, once)
/// and a Java runtime for it.
fn spark(py: &std::path::Path) -> bool {
    let have = |py: &std::path::Path| {
        Command::new(py)
            .args(["-c", "import pyspark"])
            .status()
            .is_ok_and(|s| s.success())
    };
    if Command::new("java").arg("-version").output().is_err() {
        return false;
    }
    have(py)
        || (Command::new(py)
            .args(["-m", "pip", "install", "-q", "pyspark"])
            .status()
            .is_ok_and(|s| s.success())
            && have(py))
}

/// The tables docs/schema.md lists, each a file in every capture folder:
/// the ones a query session registers.
const TABLES: &[&str] = perfq_query::TABLES;

/// pyarrow, Polars and (with Java) Spark read every table of a dataset
/// unchanged, with the same row counts.
#[test]
fn every_table_reads_in_pyarrow_polars_and_spark() {
    let Some(py) = venv() else {
        eprintln!("SKIPPED: no python3 with a venv and PyPI access; engines not checked");
        return;
    };
    let out = std::env::temp_dir().join(format!("perfq-engines-all-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&out);
    let files: Vec<std::path::PathBuf> = ["fp.data", "group.data", "multi.data"]
        .iter()
        .map(|f| common::testdata(f))
        .collect();
    let mut args = vec!["convert", "-o", out.to_str().expect("path")];
    args.extend(files.iter().map(|f| f.to_str().expect("path")));
    let o = common::perfq(&args);
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
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
    let run = Command::new(&py)
        .args([
            "-c",
            script,
            out.to_str().expect("path"),
            &serde_json::to_string(TABLES).expect("json"),
            if with_spark { "1" } else { "0" },
        ])
        .output()
        .expect("python");
    assert!(
        run.status.success(),
        "{}",
        String::from_utf8_lossy(&run.stderr)
    );
    let counts: Value = serde_json::from_slice(&run.stdout).expect("json from python");
    let samples: u64 = files
        .iter()
        .map(|f| {
            let info: Value = serde_json::from_slice(
                &common::perfq(&["info", "--json", f.to_str().expect("path")]).stdout,
            )
            .expect("info");
            info["samples"].as_u64().expect("samples")
        })
        .sum();
    assert_eq!(counts["samples"].as_u64(), Some(samples));
    if !with_spark {
        eprintln!("SKIPPED: no Java or pyspark; Spark not checked");
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
        eprintln!("SKIPPED: no python3 with a venv and PyPI access; engines not checked");
        return;
    };
    let file = common::testdata("fp.data");
    let out = std::env::temp_dir().join(format!("perfq-engines-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&out);
    let o = common::perfq(&[
        "convert",
        "-o",
        out.to_str().expect("path"),
        file.to_str().expect("path"),
    ]);
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    let queries = doc_queries();
    assert_eq!(
        queries.len(),
        5,
        "docs/schema.md: views, self, total, group from m columns, group from read_values"
    );
    let script = r#"
import duckdb, json, sys, pyarrow.parquet as pq, glob
d = sys.argv[1]
# pyarrow reads every table.
for t in ["capture", "events", "samples", "stacks", "frames", "read_values", "dsos", "branches", "raw", "data_src", "threads", "mappings", "quality", "pmus"]:
    for f in glob.glob(d + "/*/" + t + ".parquet"):
        pq.read_table(f)
con = duckdb.connect()
views, top_self, total, group_m, group = json.loads(sys.argv[2])
for stmt in views.replace("DATASET", d).strip().split(";"):
    if stmt.strip():
        con.sql(stmt)
def rows(q):
    q = q.strip().rstrip(";").replace("limit 20", "limit 100000")
    return [list(map(lambda v: v if isinstance(v, (str, type(None))) else int(v), r)) for r in con.sql(q).fetchall()]
print(json.dumps({"self": rows(top_self), "total": rows(total), "group_m": rows(group_m), "group": rows(group)}))
"#;
    let run = Command::new(&py)
        .args([
            "-c",
            script,
            out.to_str().expect("path"),
            &serde_json::to_string(&queries).expect("json"),
        ])
        .output()
        .expect("python");
    assert!(
        run.status.success(),
        "{}",
        String::from_utf8_lossy(&run.stderr)
    );
    let got: Value = serde_json::from_slice(&run.stdout).expect("json from python");

    let report = |extra: &[&str]| -> Vec<Value> {
        let mut args = vec!["report", "--format", "json"];
        args.extend_from_slice(extra);
        args.push(file.to_str().expect("path"));
        serde_json::from_slice(&common::perfq(&args).stdout).expect("report json")
    };
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
    assert!(checked > 20, "{checked} totals compared");
    assert!(got["group"].as_array().is_some(), "group query runs");
    assert!(got["group_m"].as_array().is_some(), "m-column query runs");
    std::fs::remove_dir_all(Path::new(&out)).ok();
}

/// Runs `queries` in DuckDB over `dataset`'s tables (every capture's
/// Parquet files, hive-partitioned by `capture`) after creating `views`
/// (name, SQL) in order: each query's rows as JSON objects. The views go
/// through a file: the topdown ones are too long for a command line.
fn duckdb_rows(
    py: &Path,
    dataset: &Path,
    views: &[(String, String)],
    queries: &[&str],
) -> Vec<Vec<Value>> {
    let script = r#"
import json, sys, glob, os
import duckdb
d, views, queries = sys.argv[1], json.load(open(sys.argv[2])), json.loads(sys.argv[3])
con = duckdb.connect()
tables = sorted(set(os.path.basename(p)[:-len(".parquet")] for p in glob.glob(d + "/capture=*/*.parquet")))
for t in tables:
    con.execute(f"CREATE VIEW {t} AS SELECT * FROM read_parquet('{d}/capture=*/{t}.parquet', hive_partitioning=1, union_by_name=1)")
for name, sql in views:
    con.execute(f"CREATE VIEW {name} AS {sql}")
out = []
for q in queries:
    cur = con.execute(q)
    cols = [c[0] for c in cur.description]
    out.append([dict(zip(cols, r)) for r in cur.fetchall()])
print(json.dumps(out))
"#;
    let views_file = dataset.join("views.json");
    std::fs::write(&views_file, serde_json::to_string(views).expect("json")).expect("views.json");
    let run = Command::new(py)
        .args([
            "-c",
            script,
            dataset.to_str().expect("path"),
            views_file.to_str().expect("path"),
            &serde_json::to_string(queries).expect("json"),
        ])
        .output()
        .expect("python");
    assert!(
        run.status.success(),
        "{}",
        String::from_utf8_lossy(&run.stderr)
    );
    serde_json::from_slice(&run.stdout).expect("json from python")
}

/// perfq's standard views (crates/query/sql/*.sql) run unchanged on DuckDB
/// over a dataset of three captures and give the numbers `perfq query`
/// gives for the same views: per-function self and total, and each
/// stack's functions.
#[test]
fn standard_views_run_unchanged_on_duckdb() {
    let Some(py) = venv() else {
        eprintln!("SKIPPED: no python3 with a venv and PyPI access; DuckDB not checked");
        return;
    };
    let out = std::env::temp_dir().join(format!("perfq-engines-views-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&out);
    let mut args = vec!["convert", "-o", out.to_str().expect("path")];
    let files: Vec<std::path::PathBuf> = ["fp.data", "multi.data", "dwarf.data"]
        .iter()
        .map(|f| common::testdata(f))
        .collect();
    args.extend(files.iter().map(|f| f.to_str().expect("path")));
    let o = common::perfq(&args);
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    let views: Vec<(String, String)> = perfq_query::views::VIEWS
        .iter()
        .map(|v| (v.name.to_string(), v.sql.to_string()))
        .collect();
    let queries = [
        "SELECT capture, event_id, symbol, dso, CAST(samples AS BIGINT) AS samples, \
         CAST(period AS BIGINT) AS period FROM function_self",
        "SELECT capture, event_id, symbol, dso, CAST(samples AS BIGINT) AS samples, \
         CAST(period AS BIGINT) AS period FROM function_total",
        "SELECT capture, CAST(stack_id AS BIGINT) AS stack_id, \
         array_to_string(symbols, ';') AS symbols, array_to_string(dsos, ';') AS dsos \
         FROM stack_symbols",
    ];
    let duck = duckdb_rows(&py, &out, &views, &queries);
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
    for (q, duck_rows) in queries.iter().zip(&duck) {
        let o = common::perfq(&["query", out.to_str().expect("path"), q, "--format", "json"]);
        assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
        let ours: Vec<Value> = serde_json::from_slice(&o.stdout).expect("json");
        assert!(!ours.is_empty(), "{q}");
        let (a, b) = (lines(&ours), lines(duck_rows));
        let only_ours: Vec<&String> = a.iter().filter(|l| !b.contains(l)).take(5).collect();
        let only_duck: Vec<&String> = b.iter().filter(|l| !a.contains(l)).take(5).collect();
        assert!(
            a.len() == b.len() && only_ours.is_empty() && only_duck.is_empty(),
            "{q}: {} rows and {} rows; only perfq's: {only_ours:?}; only DuckDB's: {only_duck:?}",
            a.len(),
            b.len()
        );
    }
    println!(
        "engines: {} standard views run unchanged on DuckDB, same rows as perfq query",
        views.len()
    );
    std::fs::remove_dir_all(&out).ok();
}

/// The topdown views (`perfq_query::topdown::view_sql`) run unchanged on
/// DuckDB over a topdown capture's dataset, next to the standard views,
/// and give `perfq query`'s numbers: per-function self and total shares,
/// standard errors and flags.
#[test]
fn topdown_views_run_unchanged_on_duckdb() {
    let Some(py) = venv() else {
        eprintln!("SKIPPED: no python3 with a venv and PyPI access; DuckDB not checked");
        return;
    };
    let root = common::root();
    let out = std::env::temp_dir().join(format!("perfq-engines-td-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&out);
    // From the repository root: the capture maps testdata/td-demo by that
    // relative path.
    let o = Command::new(env!("CARGO_BIN_EXE_perfq"))
        .current_dir(&root)
        .args([
            "convert",
            "-o",
            out.to_str().expect("path"),
            "testdata/topdown-spr.data",
        ])
        .output()
        .expect("perfq convert");
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
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
    let duck = duckdb_rows(&py, &out, &views, &queries);
    let key = |r: &Value| {
        ["symbol", "dso", "pid", "tid"]
            .iter()
            .map(|k| r.get(*k).map(|v| v.to_string()).unwrap_or_default())
            .collect::<Vec<_>>()
            .join(" ")
    };
    for (q, duck_rows) in queries.iter().zip(&duck) {
        let o = common::perfq(&["query", out.to_str().expect("path"), q, "--format", "json"]);
        assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
        let ours: Vec<Value> = serde_json::from_slice(&o.stdout).expect("json");
        assert!(!ours.is_empty(), "{q}");
        assert_eq!(ours.len(), duck_rows.len(), "{q}");
        for r in &ours {
            let d = duck_rows
                .iter()
                .find(|d| key(d) == key(r))
                .unwrap_or_else(|| panic!("{q}: {} not in DuckDB's rows", key(r)));
            for (col, v) in r.as_object().expect("row") {
                let w = &d[col];
                match (v.as_f64(), w.as_f64()) {
                    (Some(a), Some(b)) if v.is_f64() || w.is_f64() => assert!(
                        (a - b).abs() <= 1e-9 * a.abs().max(b.abs()).max(1e-12),
                        "{q}: {} {col}: {a} vs DuckDB {b}",
                        key(r)
                    ),
                    _ => assert_eq!(v, w, "{q}: {} {col}", key(r)),
                }
            }
        }
    }
    println!(
        "engines: {} topdown views run unchanged on DuckDB, same numbers as perfq query",
        views.len() - perfq_query::views::VIEWS.len()
    );
    std::fs::remove_dir_all(&out).ok();
}
