//! `perfq query`: SQL over a capture's dataset, checked against perf's own
//! record counts and perfq's other commands; every output format; errors
//! as one line.

mod common;

use std::path::PathBuf;
use std::process::Command;

use common::{
    have_perf, perf_report_d_counts, perfq_cached as perfq, perfq_cached_rows as perfq_rows,
    testdata,
};
use serde_json::Value;

fn scratch(name: &str) -> PathBuf {
    common::scratch("query", name)
}

#[test]
fn sample_counts_equal_perfs() {
    if !have_perf() {
        common::skip("perf is not installed");
        return;
    }
    let dir = scratch("counts");
    for name in [
        "fp.data",
        "dwarf.data",
        "group.data",
        "pipe.data",
        "compressed.data",
    ] {
        let file = testdata(name);
        let want = perf_report_d_counts(&file)
            .and_then(|c| c.get("SAMPLE").copied())
            .unwrap_or_else(|| panic!("perf report -D on {name}"));
        let rows = perfq_rows(
            &[
                "query",
                file.to_str().unwrap(),
                "SELECT COUNT(*) AS n FROM samples",
                "--format",
                "json",
            ],
            &dir,
        );
        assert_eq!(rows.len(), 1);
        assert_eq!(rows[0]["n"].as_u64(), Some(want), "{name}");
    }
    let _ = std::fs::remove_dir_all(&dir);
}

#[test]
fn every_format_gives_the_same_rows() {
    let dir = scratch("formats");
    let file = testdata("group.data");
    let sql = "SELECT CAST(event_id AS BIGINT) AS event_id, COUNT(*) AS n, \
               CAST(SUM(period) AS BIGINT) AS period FROM samples \
               GROUP BY event_id ORDER BY event_id";
    let q = |format: &str, extra: &[&str]| {
        let mut args = vec!["query", file.to_str().unwrap(), sql, "--format", format];
        args.extend_from_slice(extra);
        perfq(&args, &dir)
    };
    let rows = common::json_rows(&q("json", &[]), "perfq query --format json");
    assert!(!rows.is_empty());
    let want: Vec<(u64, u64, u64)> = rows
        .iter()
        .map(|r| {
            (
                r["event_id"].as_u64().unwrap(),
                r["n"].as_u64().unwrap(),
                r["period"].as_u64().unwrap(),
            )
        })
        .collect();

    let text = common::succeeded(&q("csv", &[]), "perfq query --format csv");
    let mut lines = text.lines();
    assert_eq!(lines.next(), Some("event_id,n,period"));
    let got: Vec<(u64, u64, u64)> = lines
        .map(|l| {
            let f: Vec<u64> = l.split(',').map(|x| x.parse().unwrap()).collect();
            (f[0], f[1], f[2])
        })
        .collect();
    assert_eq!(got, want);

    let text = common::succeeded(&q("table", &[]), "perfq query --format table");
    assert!(text.contains("| event_id |"), "{text}");
    for (e, n, _) in &want {
        assert!(
            text.lines().any(|l| {
                let cells: Vec<&str> = l.split('|').map(str::trim).collect();
                cells.get(1) == Some(&e.to_string().as_str())
                    && cells.get(2) == Some(&n.to_string().as_str())
            }),
            "{e} {n} in {text}"
        );
    }

    // Parquet needs a file, and gets it whole.
    let refused = q("parquet", &[]);
    assert_eq!(refused.status.code(), Some(1));
    let out = dir.join("result.parquet");
    let written = q("parquet", &["-o", out.to_str().unwrap()]);
    assert!(common::succeeded(&written, "perfq query --format parquet -o").is_empty());
    let reader = parquet::arrow::arrow_reader::ParquetRecordBatchReaderBuilder::try_new(
        std::fs::File::open(&out).unwrap(),
    )
    .unwrap()
    .build()
    .unwrap();
    let mut got = Vec::new();
    for b in reader {
        let b = b.unwrap();
        let col = |i: usize| -> Vec<u64> {
            use arrow_array::cast::AsArray;
            let a = b.column(i).as_primitive::<arrow_array::types::Int64Type>();
            a.values().iter().map(|&v| v as u64).collect()
        };
        let (e, n, p) = (col(0), col(1), col(2));
        for i in 0..b.num_rows() {
            got.push((e[i], n[i], p[i]));
        }
    }
    assert_eq!(got, want);
    // No temporary file is left beside it.
    let names: Vec<String> = std::fs::read_dir(&dir)
        .unwrap()
        .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
        .filter(|n| n.contains("result"))
        .collect();
    assert_eq!(names, ["result.parquet"]);
    let _ = std::fs::remove_dir_all(&dir);
}

#[test]
fn an_empty_result_keeps_its_columns() {
    let dir = scratch("empty");
    let file = testdata("fp.data");
    let sql = "SELECT sample_id, time FROM samples WHERE period < 0";
    let csv = common::perfq_cached_ok(
        &["query", file.to_str().unwrap(), sql, "--format", "csv"],
        &dir,
    );
    assert_eq!(csv, "sample_id,time\n");
    let rows = common::perfq_cached_rows(
        &["query", file.to_str().unwrap(), sql, "--format", "json"],
        &dir,
    );
    assert!(rows.is_empty());
    let _ = std::fs::remove_dir_all(&dir);
}

#[test]
fn bad_sql_is_one_line() {
    let dir = scratch("bad-sql");
    let file = testdata("fp.data");
    for sql in [
        "SELECT no_such_column FROM samples",
        "SELEC 1",
        "SELECT * FROM no_such_table",
    ] {
        let out = perfq(&["query", file.to_str().unwrap(), sql], &dir);
        assert_eq!(out.status.code(), Some(1), "{sql}");
        let err = String::from_utf8_lossy(&out.stderr);
        let lines: Vec<&str> = err.lines().collect();
        assert_eq!(lines.len(), 1, "{sql}: {err}");
        assert!(lines[0].starts_with("perfq: error: "), "{err}");
        assert!(!err.contains("panicked"), "{err}");
        assert!(out.stdout.is_empty());
    }
    let _ = std::fs::remove_dir_all(&dir);
}

/// Statements that would write a file or define or change a table are
/// refused before anything runs: one line, exit status 1, no file.
#[test]
fn statements_that_write_are_refused() {
    let dir = scratch("read-only");
    let file = testdata("fp.data");
    let target = dir.join("written");
    let t = target.display();
    for sql in [
        format!("COPY (SELECT 1 AS x) TO '{t}.csv'"),
        format!("COPY samples TO '{t}.parquet' STORED AS PARQUET"),
        format!("CREATE EXTERNAL TABLE x (a INT) STORED AS CSV LOCATION '{t}.ext'"),
        "CREATE TABLE x AS SELECT 1 AS a".to_string(),
        "CREATE VIEW x AS SELECT 1 AS a".to_string(),
        "INSERT INTO samples SELECT * FROM samples".to_string(),
        "DROP TABLE samples".to_string(),
        "DROP VIEW function_self".to_string(),
    ] {
        let out = perfq(&["query", file.to_str().unwrap(), &sql], &dir);
        assert_eq!(out.status.code(), Some(1), "{sql}");
        let err = String::from_utf8_lossy(&out.stderr);
        let lines: Vec<&str> = err.lines().collect();
        assert_eq!(lines.len(), 1, "{sql}: {err}");
        assert!(lines[0].contains("queries only read"), "{sql}: {err}");
        assert!(out.stdout.is_empty(), "{sql}");
    }
    let written: Vec<_> = std::fs::read_dir(&dir)
        .expect("scratch")
        .filter_map(|e| e.ok())
        .map(|e| e.file_name())
        .filter(|n| n.to_string_lossy().starts_with("written"))
        .collect();
    assert!(written.is_empty(), "{written:?}");
    // What reads still runs, EXPLAIN included.
    common::perfq_cached_ok(
        &[
            "query",
            file.to_str().unwrap(),
            "EXPLAIN SELECT COUNT(*) FROM samples",
        ],
        &dir,
    );
    let _ = std::fs::remove_dir_all(&dir);
}

/// Statements nested or chained thousands deep are answered, or refused
/// in one line; none overflows a thread's stack, which would kill the
/// process with a signal and no word.
#[test]
fn deep_statements_answer_or_fail_in_one_line() {
    let dir = scratch("deep");
    let file = testdata("fp.data");
    let file = file.to_str().unwrap();
    let sum = format!("SELECT 1{} AS n", " + 1".repeat(1000));
    let rows = perfq_rows(&["query", file, "--format", "json", &sum], &dir);
    assert_eq!(rows, vec![serde_json::json!({"n": 1001})]);
    let any_of: Vec<String> = (0..1000).map(|t| format!("tid = {t}")).collect();
    let any_of = format!(
        "SELECT COUNT(*) AS n FROM samples WHERE {}",
        any_of.join(" OR ")
    );
    let rows = perfq_rows(&["query", file, "--format", "json", &any_of], &dir);
    assert_eq!(rows.len(), 1, "{rows:?}");
    // Past perfq_query::nesting::MAX_LEVELS (20,000; SELECT counts too):
    // refused, unparsed.
    let too_deep = format!("SELECT 1{}", "+1".repeat(20_001));
    let err = common::perfq_cached_fails(&["query", file, &too_deep], &dir);
    assert!(
        err.contains("20002 operators, keywords and brackets"),
        "{err}"
    );
    let nested = [
        format!("SELECT {}1{}", "-(".repeat(5000), ")".repeat(5000)),
        format!("SELECT {}1{}", "(".repeat(5000), ")".repeat(5000)),
        format!("SELECT {}true", "NOT ".repeat(5000)),
        format!(
            "SELECT * FROM {}SELECT 1 AS x{}",
            "(".repeat(500),
            ") AS t".repeat(500)
        ),
        format!(
            "SELECT {}1{}",
            "CASE WHEN true THEN ".repeat(2000),
            " END".repeat(2000)
        ),
    ];
    for sql in &nested {
        let out = perfq(&["query", file, sql], &dir);
        let err = String::from_utf8_lossy(&out.stderr);
        let head = &sql[..40];
        match out.status.code() {
            Some(0) => assert!(!out.stdout.is_empty(), "{head}…"),
            Some(1) => {
                assert_eq!(err.lines().count(), 1, "{head}…: {err}");
                assert!(err.starts_with("perfq: error: "), "{head}…: {err}");
            }
            other => panic!("{head}…: ended with {other:?} (a signal?): {err}"),
        }
    }
    let _ = std::fs::remove_dir_all(&dir);
}

/// The topdown views are there for a capture with topdown events, and
/// give what `perfq topdown` prints; a dataset's capture can be chosen.
#[test]
fn topdown_views_answer_as_topdown_does() {
    let dir = scratch("topdown");
    let file = testdata("topdown-spr.data");
    let from_topdown = perfq_rows(
        &[
            "topdown",
            file.to_str().unwrap(),
            "--format",
            "json",
            "--min-samples",
            "1",
            "--total",
        ],
        &dir,
    );
    let from_query = perfq_rows(
        &[
            "query",
            file.to_str().unwrap(),
            "SELECT symbol, dso, n, retiring, backend_bound FROM topdown_function_total",
            "--format",
            "json",
        ],
        &dir,
    );
    assert_eq!(from_topdown.len(), from_query.len());
    for t in &from_topdown {
        let q = from_query
            .iter()
            .find(|q| q["symbol"] == t["symbol"] && q["dso"] == t["dso"])
            .unwrap_or_else(|| panic!("{} in the view", t["symbol"]));
        assert_eq!(q["n"].as_u64(), t["samples"].as_u64());
        for node in ["retiring", "backend_bound"] {
            let (a, b) = (q[node].as_f64().unwrap(), t[node].as_f64().unwrap());
            assert!((a - b).abs() < 1e-12, "{node}: {a} {b}");
        }
    }
    let _ = std::fs::remove_dir_all(&dir);
}

/// `function_self` and `function_total` give `perfq report --children`'s
/// Self and Children (which agree with `perf report`, tests/report.rs) for
/// every resolved function of recorded frame-pointer captures: plain,
/// compressed, two independent events. (DWARF-unwound captures are not
/// compared yet: perf names their user frames by the DWARF function at
/// each inlining level, the views by the ELF symbol.)
#[test]
fn function_views_equal_report() {
    let dir = scratch("report");
    for name in ["fp.data", "compressed.data", "multi.data"] {
        let file = testdata(name);
        let report = perfq_rows(
            &[
                "report",
                file.to_str().unwrap(),
                "--children",
                "--format",
                "json",
            ],
            &dir,
        );
        let view = |v: &str| {
            perfq_rows(
                &[
                    "query",
                    file.to_str().unwrap(),
                    &format!(
                        "SELECT e.name AS event, t.symbol, t.dso, t.samples, t.period FROM {v} t \
                         JOIN events e ON e.capture = t.capture AND e.event_id = t.event_id"
                    ),
                    "--format",
                    "json",
                ],
                &dir,
            )
        };
        let (self_rows, total_rows) = (view("function_self"), view("function_total"));
        let find = |rows: &[Value], r: &Value| -> Option<(u64, u64)> {
            rows.iter()
                .find(|v| {
                    v["event"] == r["event"] && v["symbol"] == r["symbol"] && v["dso"] == r["dso"]
                })
                .map(|v| {
                    (
                        v["samples"].as_u64().unwrap(),
                        v["period"].as_u64().unwrap(),
                    )
                })
        };
        let mut checked = 0;
        for r in &report {
            let symbol = r["symbol"].as_str().unwrap();
            // Unresolved frames are named by address; perf names a return
            // address unadjusted where the dataset keeps pc - 1.
            if symbol.starts_with("0x") || r["dso"] == "[unknown]" {
                continue;
            }
            let own = (
                r["samples"].as_u64().unwrap(),
                r["period"].as_u64().unwrap(),
            );
            if own.0 > 0 {
                assert_eq!(find(&self_rows, r), Some(own), "{name} self {r}");
            }
            let total = (
                r["total_samples"].as_u64().unwrap(),
                r["total_period"].as_u64().unwrap(),
            );
            assert_eq!(find(&total_rows, r), Some(total), "{name} total {r}");
            checked += 1;
        }
        match common::recorded_binaries_here(&file) {
            Ok(()) => assert!(checked >= 5, "{name}: {checked} functions compared"),
            Err(why) => common::skip(format_args!(
                "in part: {why}; {name}: {checked} named functions compared"
            )),
        }
    }
    let _ = std::fs::remove_dir_all(&dir);
}

/// A reader that stops early (`| head`) is no error: exit 0, nothing on
/// stderr (JSON and Arrow writers wrap the broken pipe in errors of their
/// own).
#[test]
fn a_closed_pipe_is_success() {
    use std::io::Read;
    use std::os::fd::AsRawFd;
    use std::process::Stdio;
    let dir = scratch("pipe");
    let file = testdata("fp.data");
    let f = file.to_str().unwrap();
    for args in [
        vec!["query", f, "SELECT * FROM samples", "--format", "json"],
        vec!["query", f, "SELECT * FROM samples", "--format", "csv"],
        vec!["report", f, "--children", "--format", "json"],
    ] {
        // Converted first, so that the run below only writes.
        let whole = perfq(&args, &dir).stdout.len();
        let mut child = Command::new(env!("CARGO_BIN_EXE_perfq"))
            .args(&args)
            .env("PERFQ_CACHE_DIR", &dir)
            .stdout(Stdio::piped())
            .stderr(Stdio::piped())
            .spawn()
            .expect("run perfq");
        let mut stdout = child.stdout.take().expect("stdout");
        // More output than the pipe holds: perfq cannot have written it
        // all before the pipe closes, so it does meet EPIPE.
        // SAFETY: F_GETPIPE_SZ reads the size of a pipe this process owns.
        let capacity = unsafe { libc::fcntl(stdout.as_raw_fd(), libc::F_GETPIPE_SZ) };
        assert!(capacity > 0, "F_GETPIPE_SZ");
        assert!(
            whole > capacity as usize + 64,
            "{args:?}: {whole} bytes fit the pipe's {capacity}"
        );
        let mut first = [0u8; 64];
        stdout.read_exact(&mut first).expect("some output");
        drop(stdout);
        // The pipe is closed here (the reader was dropped).
        let out = child.wait_with_output().expect("wait");
        assert_eq!(out.status.code(), Some(0), "{args:?}");
        assert!(
            out.stderr.is_empty(),
            "{args:?}: {}",
            String::from_utf8_lossy(&out.stderr)
        );
    }
    let _ = std::fs::remove_dir_all(&dir);
}

/// A dataset of several captures: `--capture` limits every table to one,
/// and gives that capture's rows of the whole dataset's answer; a file
/// given `--capture` is refused.
#[test]
fn capture_chooses_one_of_a_dataset() {
    let dir = scratch("capture");
    let ds = dir.join("ds");
    let (fp, multi) = (testdata("fp.data"), testdata("multi.data"));
    common::perfq_cached_ok(
        &[
            "convert",
            "-o",
            ds.to_str().unwrap(),
            fp.to_str().unwrap(),
            multi.to_str().unwrap(),
        ],
        &dir,
    );
    let all = perfq_rows(
        &[
            "query",
            ds.to_str().unwrap(),
            "SELECT capture, COUNT(*) AS n FROM samples GROUP BY capture",
            "--format",
            "json",
        ],
        &dir,
    );
    assert_eq!(all.len(), 2);
    for row in &all {
        let id = row["capture"].as_str().unwrap();
        let one = perfq_rows(
            &[
                "query",
                ds.to_str().unwrap(),
                "SELECT COUNT(DISTINCT capture) AS captures, COUNT(*) AS n FROM samples",
                "--format",
                "json",
                "--capture",
                id,
            ],
            &dir,
        );
        assert_eq!(one[0]["captures"].as_u64(), Some(1));
        assert_eq!(one[0]["n"], row["n"], "{id}");
    }
    // Only the chosen capture's files are opened: with every file of the
    // other one unreadable, its answers are the same.
    let (keep, other) = (
        all[0]["capture"].as_str().unwrap(),
        all[1]["capture"].as_str().unwrap(),
    );
    for f in std::fs::read_dir(ds.join(format!("capture={other}"))).unwrap() {
        std::fs::write(f.unwrap().path(), b"not parquet").unwrap();
    }
    let one = perfq_rows(
        &[
            "query",
            ds.to_str().unwrap(),
            "SELECT COUNT(*) AS n, (SELECT COUNT(*) FROM function_total) AS functions \
             FROM samples",
            "--format",
            "json",
            "--capture",
            keep,
        ],
        &dir,
    );
    assert_eq!(one[0]["n"], all[0]["n"]);
    assert!(one[0]["functions"].as_u64() > Some(0));
    let refused = perfq(
        &["query", fp.to_str().unwrap(), "SELECT 1", "--capture", "x"],
        &dir,
    );
    assert_eq!(refused.status.code(), Some(1));
    let _ = std::fs::remove_dir_all(&dir);
}
