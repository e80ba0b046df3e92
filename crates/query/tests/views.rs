//! The topdown views of a session over a generated capture's dataset:
//! they exist under their documented names and agree with `topdown::run`.
//! The stack frames perfq unnests are those the portable view walks, and
//! the stack tables perfq computes itself are the rows of their SQL.

use std::path::{Path, PathBuf};

use perfq_query::arrow::array::{Array, AsArray};
use perfq_query::arrow::datatypes::{DataType, Float64Type, Int64Type};
use perfq_query::topdown::{self, plan, register_views, Options};
use perfq_query::Session;
use perfq_testgen::{presets, Binary, CallTree, Workload};

/// The workspace root. The manifest folder is read when the test runs
/// (cargo sets it): the one compiled in goes stale when a warm target
/// folder serves a checkout at another path.
fn root() -> PathBuf {
    std::env::var_os("CARGO_MANIFEST_DIR")
        .map_or_else(|| PathBuf::from(env!("CARGO_MANIFEST_DIR")), PathBuf::from)
        .join("../..")
}

#[test]
fn views_answer_as_run_does() {
    let dir = std::env::temp_dir().join(format!("perfq-views-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir).unwrap();
    let demo = root().join("testdata/td-demo");
    let binary = Binary::open(&demo).unwrap();
    let workload = Workload::new(&binary, &demo.to_string_lossy());
    let file = dir.join("spr.data");
    let preset = presets::get("sapphirerapids").unwrap();
    workload
        .write(&file, &preset, &CallTree::td_demo(), 2000)
        .unwrap();
    let dataset = dir.join("dataset");
    convert(&[file], &dataset);

    let session = Session::open(&dataset).unwrap();
    let opt = Options {
        level: 2,
        min_samples: 1,
        ..Options::default()
    };
    let plans = plan(&session, None, None).unwrap();
    register_views(&session, &plans, &opt).unwrap();
    for v in [
        "topdown_samples",
        "topdown_function_self",
        "topdown_function_total",
        "topdown_thread",
        "topdown_process",
        "topdown_dso",
        "topdown_samples_intel_glc",
    ] {
        let b = session.sql(&format!("SELECT COUNT(*) FROM {v}")).unwrap();
        assert!(b[0].num_rows() == 1, "{v}");
    }
    let n: i64 = session
        .sql("SELECT COUNT(*) AS n FROM topdown_samples")
        .unwrap()
        .iter()
        .map(|b| b.column(0).as_primitive::<Int64Type>().value(0))
        .sum();
    assert_eq!(n, 2000);
    let intervals = topdown::run(
        &session,
        &Options {
            by: topdown::By::Interval,
            interval_ms: 1,
            ..opt.clone()
        },
    )
    .unwrap();
    assert!(!intervals.rows.is_empty());
    let samples: u64 = intervals.rows.iter().map(|r| r.samples).sum();
    assert_eq!(samples, 2000, "the intervals partition the samples");
    self_as_run(&session, &opt);
    // Total: `run` computes the stack tables once and keeps them; the
    // views define them as views. Same numbers, every function.
    total_as_run(&session, &Session::open(&dataset).unwrap(), &opt);
    let _ = std::fs::remove_dir_all(&dir);
}

/// `topdown_function_self` of `session` (its views registered) and
/// `topdown::run` agree on a function's share.
fn self_as_run(session: &Session, opt: &Options) {
    let report = topdown::run(session, opt).unwrap();
    let checksum = report
        .rows
        .iter()
        .find(|r| r.keys.iter().any(|k| k.1 == "checksum"))
        .unwrap();
    let b = session
        .sql("SELECT memory_bound FROM topdown_function_self WHERE symbol = 'checksum'")
        .unwrap();
    let from_view = b[0].column(0).as_primitive::<Float64Type>().value(0);
    let from_run = checksum
        .nodes
        .iter()
        .find(|n| n.name == "memory_bound")
        .and_then(|n| n.value)
        .unwrap();
    assert_eq!(from_view, from_run);
}

/// `topdown_function_total` of `session` (its views registered) and
/// `topdown::run` over `fresh` (the stack tables kept) agree on every
/// function's samples, share and standard error.
fn total_as_run(session: &Session, fresh: &Session, opt: &Options) {
    let total = topdown::run(
        fresh,
        &Options {
            mode: topdown::Mode::Total,
            ..opt.clone()
        },
    )
    .unwrap();
    assert!(total.rows.len() >= 5);
    for row in &total.rows {
        let symbol = &row.keys.iter().find(|k| k.0 == "symbol").unwrap().1;
        let b = session
            .sql(&format!(
                "SELECT n, memory_bound, se_memory_bound FROM topdown_function_total \
                 WHERE symbol = '{symbol}'"
            ))
            .unwrap();
        let b = &b[0];
        let n = b.column(0).as_primitive::<Int64Type>().value(0);
        assert_eq!(n as u64, row.samples, "{symbol}");
        let node = row.nodes.iter().find(|n| n.name == "memory_bound").unwrap();
        assert_eq!(
            Some(b.column(1).as_primitive::<Float64Type>().value(0)),
            node.value,
            "{symbol}"
        );
        let se = b.column(2).as_primitive::<Float64Type>().value(0);
        let want = node.se.unwrap();
        // The variance subtracts two large sums of products (Σxy − SxSy/n),
        // and the parallel aggregation adds them in no fixed order: the
        // standard error's last digits vary from run to run (2e-12
        // relative was seen), on either path.
        assert!(
            (se - want).abs() <= 1e-9 * want.max(1e-300),
            "{symbol}: {se} {want}"
        );
    }
}

/// Converts `files` into `dataset`, symbolized.
fn convert(files: &[PathBuf], dataset: &Path) {
    let copt = perfq_writer::convert::Options {
        force: false,
        symbols: Some(perfq_symbolize::Config::default()),
        stack_memory: None,
        source: None,
        read_values: perfq_writer::convert::ReadValues::Rows,
    };
    for f in files {
        perfq_writer::convert::convert(f, dataset, &copt, &mut |_, _| {}).unwrap();
    }
}

/// `stack_frames` as `views::keep_stack_tables` defines it for DataFusion
/// (`stacks.frame_ids` unnested) and as the view other engines run (a
/// walk up the stack tree) are the same rows, over every testdata capture
/// and a generated one with stacks 30 to 60 deep; and so are the stack
/// tables and `function_total` perfq computes itself (the implementation
/// perfq runs) and their SQL (the definition other engines run).
#[test]
fn stack_frames_unnested_as_walked() {
    let dir = std::env::temp_dir().join(format!("perfq-stack-frames-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir).unwrap();
    let demo = root().join("testdata/td-demo");
    let binary = Binary::open(&demo).unwrap();
    let workload = Workload::new(&binary, &demo.to_string_lossy());
    let names: Vec<String> = binary.functions().iter().map(|f| f.name.clone()).collect();
    let deep = dir.join("deep.data");
    workload
        .write(
            &deep,
            &presets::get("sapphirerapids").unwrap(),
            &CallTree::random(&names, (30, 60), 40, 7),
            3000,
        )
        .unwrap();
    let dataset = dir.join("dataset");
    // Every testdata capture, and the deep one.
    let mut files: Vec<PathBuf> = std::fs::read_dir(root().join("testdata"))
        .unwrap()
        .map(|e| e.unwrap().path())
        .filter(|p| p.extension().is_some_and(|x| x == "data"))
        .collect();
    files.sort();
    files.push(deep);
    convert(&files, &dataset);
    let kept = Session::open(&dataset).unwrap();
    perfq_query::views::keep_stack_tables(&kept).unwrap();
    let walked = Session::open(&dataset).unwrap();
    perfq_query::views::register(&walked).unwrap();
    let (a, b) = (frame_rows(&kept), frame_rows(&walked));
    assert!(a.len() > 20_000, "{} frames", a.len());
    assert!(a.iter().any(|r| r.2 >= 30), "no deep stack");
    assert!(a == b, "{} rows unnested, {} walked", a.len(), b.len());
    stack_tables_as_their_sql(&dataset, &kept, &walked);
    function_total_as_its_sql(&dataset, &kept, &walked);
    function_sums_as_their_sql(&dataset, &walked);
    stack_counts_as_the_profile(&dataset);
    let _ = std::fs::remove_dir_all(&dir);
}

/// Every row of `stack_frames`: capture, stack, position and frame.
fn frame_rows(session: &Session) -> Vec<(String, i64, i64, i64)> {
    let b = session
        .sql(
            "SELECT capture, CAST(stack_id AS BIGINT) AS s, CAST(position AS BIGINT) AS p, \
             CAST(frame_id AS BIGINT) AS f FROM stack_frames ORDER BY capture, s, p",
        )
        .unwrap();
    let mut out = Vec::new();
    for b in &b {
        let c = perfq_query::arrow::compute::cast(b.column(0), &DataType::Utf8).unwrap();
        let c = c.as_string::<i32>();
        let n = |i: usize| b.column(i).as_primitive::<Int64Type>().clone();
        let (s, p, f) = (n(1), n(2), n(3));
        for r in 0..b.num_rows() {
            out.push((c.value(r).to_string(), s.value(r), p.value(r), f.value(r)));
        }
    }
    out
}

/// The stack tables perfq computes itself (crate::stack_tables) are the
/// rows of their SQL definitions, ids included: those of `kept` and
/// `walked` (the views as SQL), and those computed over a caller's
/// `frame_functions` and `functions` (here their own SQL as views).
fn stack_tables_as_their_sql(dataset: &Path, kept: &Session, walked: &Session) {
    for table in perfq_query::views::STACK_TABLES {
        let (a, b) = (all_rows(kept, table), all_rows(walked, table));
        assert!(!a.is_empty(), "{table} is empty");
        assert!(
            a == b,
            "{table}: {} rows kept, {} by its SQL",
            a.len(),
            b.len()
        );
    }
    let defined = Session::open(dataset).unwrap();
    for name in ["frame_functions", "functions"] {
        let view = perfq_query::views::VIEWS.iter().find(|v| v.name == name);
        defined.create_view(name, view.unwrap().sql).unwrap();
    }
    perfq_query::views::keep_stack_tables(&defined).unwrap();
    for table in perfq_query::views::STACK_TABLES {
        let (a, b) = (all_rows(&defined, table), all_rows(walked, table));
        assert!(
            a == b,
            "{table} over the caller's functions: {} rows, {} by its SQL",
            a.len(),
            b.len()
        );
    }
}

/// `function_total` over the kept stack tables, and perfq's own sum of
/// it for a statement that names it, are the rows of its SQL, typed as
/// its SQL types them.
fn function_total_as_its_sql(dataset: &Path, kept: &Session, walked: &Session) {
    perfq_query::views::register(kept).unwrap();
    let total = |s: &Session| all_rows(s, "function_total");
    assert_eq!(total(kept), total(walked));
    let summed = Session::open(dataset).unwrap();
    let statement = "SELECT * FROM function_total";
    perfq_query::views::keep_stack_tables_for(&summed, statement).unwrap();
    let explained = summed.sql(&format!("EXPLAIN {statement}")).unwrap();
    let explained = perfq_query::arrow::util::pretty::pretty_format_batches(&explained)
        .unwrap()
        .to_string();
    assert!(
        explained.contains("StreamingTableExec") && !explained.contains("HashJoinExec"),
        "function_total is not perfq's sum: {explained}"
    );
    let types = |s: &Session| {
        let (schema, _) = s.query(statement).unwrap();
        let f = schema.fields().iter();
        f.map(|f| (f.name().clone(), f.data_type().clone()))
            .collect::<Vec<_>>()
    };
    assert_eq!(types(&summed), types(walked));
    let (a, b) = (total(&summed), total(walked));
    assert!(a.len() > 1_000, "{} function_total rows", a.len());
    assert!(
        a == b,
        "function_total: {} rows summed, {} by its SQL",
        a.len(),
        b.len()
    );
}

/// The per-function sums per interval perfq computes from the stack
/// tables it keeps (`function_sums::by_interval`, what the HTML page
/// reads) are those of their SQL over the views, for every event, with
/// intervals short, long and one for the whole time, and thresholds that
/// leave out none, some and most functions.
fn function_sums_as_their_sql(dataset: &Path, walked: &Session) {
    use perfq_query::function_sums::{by_interval, by_sql, Options};
    let kept = Session::open(dataset).unwrap();
    let events = perfq_query::events::sampled_events(&kept).unwrap();
    assert!(events.len() > 2, "{events:?}");
    let mut shown = 0;
    for event in &events {
        for (interval_ns, min_total) in [(1_000_000, 1), (7_000_000, 10), (u64::MAX / 2, 1000)] {
            let opt = Options {
                event,
                interval_ns,
                min_total,
            };
            let a = by_interval(&kept, &opt).unwrap();
            let b = by_sql(walked, &opt).unwrap();
            shown += a.rows.len();
            assert!(
                a == b,
                "{event}, {interval_ns} ns, {min_total}: {} rows and {} below natively, {} and {} by the SQL",
                a.rows.len(),
                a.below,
                b.rows.len(),
                b.below
            );
        }
    }
    assert!(perfq_query::views::sampled_stacks(&kept, false)
        .unwrap()
        .is_some());
    assert!(shown > 1_000, "{shown} rows");
}

/// The page's samples per (interval, thread, stack) count what the
/// exported profile's runs count: the same threads in the same order,
/// and per interval and thread the same samples, periods and stack
/// leaves with a symbol, for every event.
fn stack_counts_as_the_profile(dataset: &Path) {
    use perfq_query::{profile, stack_counts};
    use std::collections::BTreeMap;
    let session = Session::open(dataset).unwrap();
    let interval_ns = 3_000_000;
    for event in perfq_query::events::sampled_events(&session).unwrap() {
        let counts = stack_counts::by_interval(&session, &event, interval_ns).unwrap();
        let opt = profile::Options {
            event: Some(event.clone()),
            interval_ns,
            ..profile::Options::default()
        };
        let p = profile::profile(&session, &opt).unwrap();
        let threads = |t: &[profile::Thread]| {
            t.iter()
                .map(|t| (t.pid, t.tid, t.comm.clone()))
                .collect::<Vec<_>>()
        };
        assert_eq!(threads(&counts.threads), threads(&p.threads), "{event}");
        let mut a: BTreeMap<(u64, usize), (u64, u64)> = BTreeMap::new();
        for ((bucket, thread, _), period) in counts.samples() {
            let e = a.entry((bucket, thread)).or_default();
            (e.0, e.1) = (e.0 + 1, e.1.wrapping_add(period));
        }
        let mut b: BTreeMap<(u64, usize), (u64, u64)> = BTreeMap::new();
        let mut resolved = 0;
        for r in &p.runs {
            let e = b.entry((p.interval(r, interval_ns), r.thread)).or_default();
            (e.0, e.1) = (e.0 + r.samples, e.1.wrapping_add(r.period));
            let leaf = r.stack.and_then(|s| p.stacks[s].first());
            if leaf.is_some_and(|&l| p.locations[l].resolved) {
                resolved += r.samples;
            }
        }
        assert_eq!(a, b, "{event}");
        assert_eq!(counts.all, p.runs.iter().map(|r| r.samples).sum::<u64>());
        assert_eq!(counts.resolved, resolved, "{event}");
    }
}

/// Every row of `table`, each column as text, sorted.
fn all_rows(session: &Session, table: &str) -> Vec<Vec<String>> {
    let batches = session.sql(&format!("SELECT * FROM {table}")).unwrap();
    let mut rows = Vec::new();
    for b in &batches {
        let columns: Vec<_> = b
            .columns()
            .iter()
            .map(|c| perfq_query::arrow::compute::cast(c, &DataType::Utf8).unwrap())
            .collect();
        for r in 0..b.num_rows() {
            rows.push(
                columns
                    .iter()
                    .map(|c| {
                        let c = c.as_string::<i32>();
                        if c.is_null(r) {
                            "NULL".to_string()
                        } else {
                            c.value(r).to_string()
                        }
                    })
                    .collect(),
            );
        }
    }
    rows.sort();
    rows
}
