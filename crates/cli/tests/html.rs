//! `perfq html` in a real browser: reports of `testdata/` captures (top-down
//! and plain, frame pointers and DWARF) and of a dataset of several
//! captures, opened in headless Chromium driven by Selenium
//! (`tests/browser/report.py`): no console error, nothing fetched, the
//! numbers shown equal `perfq query`'s views and `perfq topdown`'s answer
//! to the digits shown, a click on a function opens its callers and
//! callees with the shares the stacks give, and a drag over the time line
//! narrows the tables to the samples of that range and the top-down shares
//! to `perfq topdown --interval`'s. The page paints the top-down categories
//! in the Okabe–Ito colours everywhere, says in the flame graph's legend
//! what a frame's colour is (a category of total shares, a DSO, a change),
//! and gives the flame graph a tall box the user can resize.

mod common;

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::process::Command;

use serde_json::{json, Value};

/// perfq from the repository root, with this test process's cache.
fn perfq(args: &[&str]) -> String {
    common::succeeded(
        &common::perfq_cached(args, common::process_cache()),
        format_args!("perfq {args:?}"),
    )
}

fn rows(input: &Path, sql: &str) -> Vec<Value> {
    common::rows(&perfq(&[
        "query",
        &input.display().to_string(),
        "--format",
        "json",
        sql,
    ]))
}

fn quote(s: &str) -> String {
    format!("'{}'", s.replace('\'', "''"))
}

/// A percentage as the page shows it (`12.34%`), as a number.
fn shown(text: &str) -> f64 {
    text.trim_end_matches('%')
        .parse()
        .unwrap_or_else(|_| panic!("a percentage: {text}"))
}

/// A count as the page shows it (`1,234`).
fn count(text: &str) -> u64 {
    text.replace(',', "")
        .parse()
        .unwrap_or_else(|_| panic!("a count: {text}"))
}

/// `a` (a fraction) shown to two decimals of a percent is `text`.
fn close(text: &str, a: f64, what: &str) {
    let s = shown(text);
    assert!(
        (s - 100.0 * a).abs() <= 0.005 + 1e-9,
        "{what}: the page shows {text}, the answer is {:.4}%",
        100.0 * a
    );
}

/// A row's function: (symbol, dso), or (name, dso) as the page shows it.
fn key_of(r: &Value) -> (String, String) {
    let name = r
        .get("symbol")
        .or_else(|| r.get("name"))
        .and_then(Value::as_str);
    (
        name.expect("a function name").to_string(),
        r["dso"].as_str().expect("a DSO").to_string(),
    )
}

/// Per function (symbol, dso) of the event: self and total samples, from
/// the views, optionally only of samples in [from, to) ns after each
/// capture's first sample.
fn view_counts(
    input: &Path,
    event: &str,
    range: Option<(u64, u64)>,
) -> BTreeMap<(String, String), (u64, u64)> {
    let within = match range {
        Some((a, b)) => {
            format!(" AND d.time >= c.time_first + {a} AND d.time < c.time_first + {b}")
        }
        None => String::new(),
    };
    counts_where(input, event, &within, range.is_none())
}

/// Self samples per function of the event's samples that meet `within`
/// (SQL over `sample_symbols d` and `capture c`), and with `totals` the
/// views' total samples.
fn counts_where(
    input: &Path,
    event: &str,
    within: &str,
    totals: bool,
) -> BTreeMap<(String, String), (u64, u64)> {
    let mut out: BTreeMap<(String, String), (u64, u64)> = BTreeMap::new();
    let own = format!(
        "SELECT d.symbol AS symbol, d.dso AS dso, COUNT(*) AS n FROM sample_symbols d \
         JOIN events e ON e.capture = d.capture AND e.event_id = d.event_id \
         JOIN capture c ON c.capture = d.capture \
         WHERE e.name = {}{within} GROUP BY d.symbol, d.dso",
        quote(event)
    );
    for r in rows(input, &own) {
        out.entry(key_of(&r)).or_default().0 += r["n"].as_u64().unwrap();
    }
    if totals {
        let total = format!(
            "SELECT t.symbol AS symbol, t.dso AS dso, SUM(t.samples) AS n FROM function_total t \
             JOIN events e ON e.capture = t.capture AND e.event_id = t.event_id \
             WHERE e.name = {} GROUP BY t.symbol, t.dso",
            quote(event)
        );
        for r in rows(input, &total) {
            out.entry(key_of(&r)).or_default().1 += r["n"].as_u64().unwrap();
        }
    }
    out
}

/// Callers and callees of a function from the sampled stacks
/// (`stack_symbols`) and their samples of the event: per sample, at the
/// outermost frame of the function, the frame above it (`(root)` at the
/// top) and the one below (`(self)` at the leaf).
fn butterfly(
    input: &Path,
    event: &str,
    function: &str,
) -> (u64, BTreeMap<String, u64>, BTreeMap<String, u64>) {
    let per_stack = rows(
        input,
        &format!(
            "SELECT d.capture AS capture, d.stack_id AS stack_id, COUNT(*) AS n \
             FROM delivered_samples d JOIN events e ON e.capture = d.capture \
             AND e.event_id = d.event_id WHERE e.name = {} GROUP BY d.capture, d.stack_id",
            quote(event)
        ),
    );
    let frames = rows(
        input,
        "SELECT capture, stack_id, position, symbol FROM stack_symbols",
    );
    let mut stacks: BTreeMap<(String, u64), Vec<(u64, String)>> = BTreeMap::new();
    for f in frames {
        stacks
            .entry((
                f["capture"].as_str().unwrap().to_string(),
                f["stack_id"].as_u64().unwrap(),
            ))
            .or_default()
            .push((
                f["position"].as_u64().unwrap(),
                f["symbol"].as_str().unwrap().to_string(),
            ));
    }
    let (mut total, mut callers, mut callees) = (0, BTreeMap::new(), BTreeMap::new());
    for s in per_stack {
        let Some(id) = s["stack_id"].as_u64() else {
            continue;
        };
        let n = s["n"].as_u64().unwrap();
        let Some(frames) = stacks.get_mut(&(s["capture"].as_str().unwrap().to_string(), id)) else {
            continue;
        };
        frames.sort();
        // Leaf first: the outermost occurrence is the last.
        let Some(at) = frames.iter().rposition(|f| f.1 == function) else {
            continue;
        };
        total += n;
        let caller = frames.get(at + 1).map_or("(root)", |f| f.1.as_str());
        let callee = if at == 0 {
            "(self)"
        } else {
            frames[at - 1].1.as_str()
        };
        *callers.entry(caller.to_string()).or_default() += n;
        *callees.entry(callee.to_string()).or_default() += n;
    }
    (total, callers, callees)
}

/// The thread with the most delivered samples.
fn busiest_thread(input: &Path) -> i64 {
    rows(
        input,
        "SELECT tid, COUNT(*) AS n FROM delivered_samples GROUP BY tid ORDER BY n DESC, tid LIMIT 1",
    )[0]["tid"]
        .as_i64()
        .expect("a tid")
}

/// The pages, opened and driven by `report.py`: its output per page.
fn browse(dir: &Path, pages: &[Value]) -> Option<Vec<Value>> {
    let Some(python) = common::python_with("selenium") else {
        common::skip("no Python with selenium (bash .ci/setup.sh installs it); reports not opened");
        return None;
    };
    if !Path::new("/usr/bin/chromedriver").is_file() {
        common::skip("/usr/bin/chromedriver is missing (bash .ci/setup.sh installs it)");
        return None;
    }
    let script = dir.join("pages.json");
    std::fs::write(&script, serde_json::to_vec(pages).unwrap()).unwrap();
    let out = Command::new(python)
        .arg(common::root().join("crates/cli/tests/browser/report.py"))
        .arg(dir)
        .arg(&script)
        // Nothing written beside the scripts.
        .env("PYTHONDONTWRITEBYTECODE", "1")
        .output()
        .expect("run report.py");
    let stdout = String::from_utf8_lossy(&out.stdout);
    assert!(
        out.status.success(),
        "report.py: {stdout}\n{}",
        String::from_utf8_lossy(&out.stderr)
    );
    Some(common::json_lines(&stdout))
}

/// Writes `perfq html` of `input` (compared with `base`) to
/// `dir/name.html`. perfq runs where a user would, beside the captures
/// (testdata/'s from the repository root), and is given their relative
/// paths: the page's header names them so, and a screenshot kept shows no
/// folder of the machine that ran the test.
fn page(input: &Path, base: Option<&Path>, dir: &Path, name: &str) -> PathBuf {
    let out = dir.join(format!("{name}.html"));
    let root = common::root();
    let cwd = if input.starts_with(&root) {
        root
    } else {
        input.parent().expect("a folder").to_path_buf()
    };
    let rel = |p: &Path| {
        p.strip_prefix(&cwd)
            .map_or_else(|_| p.display().to_string(), |r| r.display().to_string())
    };
    let (input, out_s) = (rel(input), out.display().to_string());
    let mut args = vec!["html", input.as_str(), "-o", out_s.as_str()];
    let base = base.map(rel);
    if let Some(b) = &base {
        args.extend(["--diff", b.as_str()]);
    }
    let run = Command::new(env!("CARGO_BIN_EXE_perfq"))
        .args(&args)
        .env("PERFQ_CACHE_DIR", common::process_cache())
        .current_dir(&cwd)
        .output()
        .expect("run perfq");
    common::succeeded(&run, format!("perfq {}", args.join(" ")));
    out
}

/// The top-down categories' colours as the browser paints them: Okabe and
/// Ito's colour-blind-safe palette.
const OKABE_ITO: [(&str, &str); 4] = [
    ("retiring", "rgb(0, 158, 115)"),        // bluish green
    ("bad_speculation", "rgb(213, 94, 0)"),  // vermillion
    ("frontend_bound", "rgb(86, 180, 233)"), // sky blue
    ("backend_bound", "rgb(240, 228, 66)"),  // yellow
];

/// A place's colours per top-down node (`report.py`'s `colours`): each
/// category in its one Okabe–Ito colour.
fn okabe_ito(place: &Value, what: &str) {
    let place = place
        .as_object()
        .unwrap_or_else(|| panic!("{what}: {place}"));
    assert!(!place.is_empty(), "{what}: no categories painted");
    for (node, colours) in place {
        let want = OKABE_ITO
            .iter()
            .find(|c| c.0 == node)
            .unwrap_or_else(|| panic!("{what}: {node} is no level-1 category"));
        assert_eq!(colours, &json!([want.1]), "{what}: {node}");
    }
}

/// The flame graph's legend says what its colours are, and each frame
/// wears its legend colour: on top-down captures the categories (of the
/// total shares, as the caption says), otherwise each DSO's own colour,
/// distinct, the rest sharing the "other" entry's.
fn flame_colours(c: &Value, topdown: bool, name: &str) {
    let legend = c["legend"].as_array().expect("the flame graph's legend");
    let caption = c["caption"].as_str().unwrap();
    let colour_of = |key: &str| {
        legend
            .iter()
            .find(|e| e["key"] == key)
            .map(|e| &e["colour"])
    };
    let frames = c["frames"].as_object().expect("frames per DSO");
    assert!(!frames.is_empty(), "{name}: no frames");
    if topdown {
        assert!(caption.contains("total (inclusive)"), "{name}: {caption}");
        let mut nodes = BTreeMap::new();
        for e in legend.iter().filter(|e| e["node"].is_string()) {
            nodes.insert(
                e["node"].as_str().unwrap().to_string(),
                json!([e["colour"]]),
            );
        }
        okabe_ito(&json!(nodes), &format!("{name}: flame legend"));
        for (dso, colours) in frames {
            for colour in colours.as_array().unwrap() {
                assert!(
                    legend.iter().any(|e| &e["colour"] == colour),
                    "{name}: a frame of {dso} is {colour}, in no legend entry"
                );
            }
        }
        return;
    }
    assert!(caption.contains("DSO"), "{name}: {caption}");
    let listed: Vec<&Value> = legend.iter().filter(|e| e["key"] == "dso").collect();
    let mut distinct: Vec<&Value> = listed.iter().map(|e| &e["colour"]).collect();
    distinct.sort_by_key(|c| c.to_string());
    distinct.dedup();
    assert_eq!(distinct.len(), listed.len(), "{name}: DSO colours repeat");
    for (dso, colours) in frames {
        let want = match listed.iter().find(|e| e["dso"] == dso.as_str()) {
            Some(e) => &e["colour"],
            None => {
                let other = legend.iter().find(|e| e["key"] == "other");
                assert!(
                    other.is_some_and(|o| o["dsos"].as_array().unwrap().contains(&json!(dso))),
                    "{name}: {dso} is not in the legend: {legend:?}"
                );
                colour_of("other").unwrap()
            }
        };
        assert_eq!(colours, &json!([want]), "{name}: frames of {dso}");
    }
}

/// The flame graph has a tall box (60 % of the window), resizable, and
/// lays its frames out again when resized: in flame orientation the
/// roots stand on the new bottom edge, the frames span the box's width.
fn flame_box(s: &Value, name: &str) {
    let view = &s["colours"]["view"];
    let height = view["height"].as_f64().unwrap();
    let window = view["window"].as_f64().unwrap();
    assert!(
        height >= 0.55 * window && height >= 400.0,
        "{name}: the flame graph is {height} px tall in a {window} px window"
    );
    assert_eq!(view["resize"], "vertical", "{name}: {view}");
    assert!(
        view["overflow_y"] == "auto" || view["overflow_y"] == "scroll",
        "{name}: {view}"
    );
    let r = &s["resized"];
    let (inner, flame) = (
        r["view_height"].as_f64().unwrap(),
        r["flame_height"].as_f64().unwrap(),
    );
    assert!((696.0..=700.0).contains(&inner), "{name}: resized to {r}");
    assert!(
        flame >= inner,
        "{name}: the frames do not fill the box: {r}"
    );
    // A frame is a pixel shorter than its row.
    let bottom = r["frames_bottom"].as_f64().unwrap();
    assert!(
        (0.0..=1.0).contains(&(flame - bottom)),
        "{name}: the roots are not at the bottom: {r}"
    );
    // Across the box's width, not beyond. Not always to its very edge:
    // samples without a stack, and slivers under half a pixel, are not
    // drawn (the page's range and thread chosen leave a few).
    let right = r["frames_right"].as_f64().unwrap();
    let width = r["view_width"].as_f64().unwrap();
    assert!(
        right <= width + 1.0 && right >= 0.9 * width,
        "{name}: frames span {right} of {width} px"
    );
}

/// A page opened: its input, name, the function clicked and the
/// intervals dragged over.
type Case<'a> = (PathBuf, &'a str, &'a str, Option<(u64, u64)>);

#[test]
fn reports_show_what_the_views_and_topdown_answer() {
    let dir = common::scratch("html", "reports");
    let dataset = dir.join("dataset");
    // Converted from the repository root, as the pages are written.
    common::succeeded(
        &common::perfq_cached(
            &[
                "convert",
                "testdata/fp.data",
                "testdata/multi.data",
                "-o",
                &dataset.display().to_string(),
            ],
            common::process_cache(),
        ),
        "perfq convert",
    );
    // The function clicked: the one with the most samples of its own
    // (named only where the recorded binaries are the running system's:
    // elsewhere, libc's frames are addresses).
    let busiest = |input: &Path| -> String {
        rows(
            input,
            "SELECT symbol, COUNT(*) AS n FROM sample_symbols \
             GROUP BY symbol ORDER BY n DESC, symbol LIMIT 1",
        )[0]["symbol"]
            .as_str()
            .expect("a function")
            .to_string()
    };
    let spr = common::testdata("topdown-spr.data");
    let fp = common::testdata("fp.data");
    let dwarf = common::testdata("dwarf.data");
    let clicked = [
        busiest(&spr),
        busiest(&fp),
        busiest(&dwarf),
        busiest(&dataset),
    ];
    let cases: Vec<Case> = vec![
        (spr, "topdown-spr", &clicked[0], Some((3, 3))),
        (fp, "fp", &clicked[1], Some((10, 20))),
        (dwarf, "dwarf", &clicked[2], None),
        (dataset.clone(), "dataset", &clicked[3], Some((0, 5))),
    ];
    let pages: Vec<Value> = cases
        .iter()
        .map(|(input, name, click, select)| {
            json!({
                "page": page(input, None, &dir, name),
                "name": name,
                "click": click,
                "select": select.map(|(a, b)| vec![a, b]),
                "thread": (*name == "fp").then(|| busiest_thread(input)),
            })
        })
        .collect();
    let Some(seen) = browse(&dir, &pages) else {
        return;
    };
    assert_eq!(seen.len(), cases.len());
    for ((input, name, click, select), s) in cases.iter().zip(&seen) {
        assert_eq!(s["console"], json!([]), "{name}: console");
        assert_eq!(s["resources"], json!([]), "{name}: requests");
        let event = s["event"].as_str().unwrap();
        let views = view_counts(input, event, None);
        let all: u64 = views.values().map(|v| v.0).sum();
        assert_eq!(
            count(s["meta"][format!("{event} samples")].as_str().unwrap()),
            all,
            "{name}: samples in the header"
        );
        assert!(
            s["meta"]["symbol coverage"].as_str().is_some(),
            "{name}: {}",
            s["meta"]
        );
        // Its colours and the flame graph's box.
        let topdown = *name == "topdown-spr";
        flame_colours(&s["colours"], topdown, name);
        flame_box(s, name);
        if topdown {
            for place in ["bars", "timeline", "range", "table_legend"] {
                okabe_ito(&s["colours"][place], &format!("{name}: {place}"));
            }
        }
        // The top functions, as shown.
        let functions = s["functions"].as_array().unwrap();
        assert!(!functions.is_empty(), "{name}: no rows");
        for row in functions {
            let key = key_of(row);
            let (own, total) = views
                .get(&key)
                .copied()
                .unwrap_or_else(|| panic!("{name}: {key:?} is no function of the views"));
            assert_eq!(
                count(row["self-samples"].as_str().unwrap()),
                own,
                "{name} {key:?}"
            );
            assert_eq!(
                count(row["total-samples"].as_str().unwrap()),
                total,
                "{name} {key:?}"
            );
            close(
                row["self-pct"].as_str().unwrap(),
                own as f64 / all as f64,
                name,
            );
            close(
                row["total-pct"].as_str().unwrap(),
                total as f64 / all as f64,
                name,
            );
        }
        // Top-down shares: perfq topdown's self rows.
        if *name == "topdown-spr" {
            let td = common::rows(&perfq(&[
                "topdown",
                &input.display().to_string(),
                "--format",
                "json",
            ]));
            for row in functions {
                let t = td
                    .iter()
                    .find(|r| r["symbol"] == row["name"] && r["dso"] == row["dso"])
                    .unwrap_or_else(|| panic!("no topdown row for {row}"));
                let shares = row["shares"].as_object().expect("a top-down bar");
                assert_eq!(shares.len(), 4, "{row}");
                for (node, text) in shares {
                    close(text.as_str().unwrap(), t[node].as_f64().unwrap(), node);
                }
            }
        }
        // The butterfly of the clicked function.
        let (total, callers, callees) = butterfly(input, event, click);
        assert!(total > 0, "{name}: {click} has samples");
        for (side, want) in [("callers", &callers), ("callees", &callees)] {
            let got: BTreeMap<String, (u64, String)> = s[side]
                .as_array()
                .unwrap_or_else(|| panic!("{name}: no {side}"))
                .iter()
                .map(|r| {
                    (
                        r["name"].as_str().unwrap().to_string(),
                        (
                            count(r["samples"].as_str().unwrap()),
                            r["share"].as_str().unwrap().to_string(),
                        ),
                    )
                })
                .collect();
            let counts: BTreeMap<String, u64> = got.iter().map(|(k, v)| (k.clone(), v.0)).collect();
            assert_eq!(&counts, want, "{name}: {side} of {click}");
            for (k, (n, share)) in &got {
                close(
                    share,
                    *n as f64 / total as f64,
                    &format!("{name} {side} {k}"),
                );
            }
        }
        // One thread chosen: its samples only.
        if let Some(rows) = s["functions_thread"].as_array() {
            let tid = busiest_thread(input);
            let want = counts_where(input, event, &format!(" AND d.tid = {tid}"), false);
            assert!(!rows.is_empty());
            for row in rows {
                assert_eq!(
                    count(row["self-samples"].as_str().unwrap()),
                    want.get(&key_of(row)).map_or(0, |v| v.0),
                    "{name}: {row} of thread {tid}"
                );
            }
        }
        // The time range dragged over.
        if let Some((b0, b1)) = select {
            assert_eq!(s["selected"], json!([b0, b1]), "{name}: the range selected");
            let width_ms = s["buckets"]["width_ms"].as_u64().unwrap();
            let ns = width_ms * 1_000_000;
            let within = view_counts(input, event, Some((b0 * ns, (b1 + 1) * ns)));
            for row in s["functions_selected"].as_array().unwrap() {
                let key = key_of(row);
                assert_eq!(
                    count(row["self-samples"].as_str().unwrap()),
                    within.get(&key).map_or(0, |v| v.0),
                    "{name}: {key:?} in buckets {b0}..={b1}"
                );
            }
            let shown_total: u64 = s["functions_selected"]
                .as_array()
                .unwrap()
                .iter()
                .map(|r| count(r["self-samples"].as_str().unwrap()))
                .sum();
            let want_total: u64 = within.values().map(|v| v.0).sum();
            assert!(want_total > 0, "{name}: samples in the range");
            assert!(shown_total <= want_total);
            if *name == "topdown-spr" {
                // One interval: perfq topdown --interval's row for it.
                let iv = common::rows(&perfq(&[
                    "topdown",
                    &input.display().to_string(),
                    "--interval",
                    &width_ms.to_string(),
                    "--format",
                    "json",
                ]));
                let row = iv
                    .iter()
                    .find(|r| {
                        (r["start_s"].as_f64().unwrap() * 1000.0 / width_ms as f64).round() as u64
                            == *b0
                    })
                    .expect("the interval's row");
                let shares = s["range_topdown_selected"].as_object().unwrap();
                assert_eq!(shares.len(), 4);
                for (node, text) in shares {
                    close(text.as_str().unwrap(), row[node].as_f64().unwrap(), node);
                }
            }
        }
    }
    // docs/viewing.md's pictures: td-demo's top-down capture, whose
    // functions are named on every machine.
    for shot in ["page", "butterfly", "range", "flame"] {
        common::keep_screenshot(
            &dir.join(format!("topdown-spr-{shot}.png")),
            &format!("html-{shot}.png"),
        );
    }
}

/// A thread's time as the page's strip under the time line shows it, per
/// kind (on CPU, waiting for a CPU, waiting otherwise), worked out from
/// the `off_cpu` table without intervals of time: each interval, and the
/// run before it, clipped to the time line's span (from the capture's
/// first sample, `count` intervals of `width_ms`).
fn thread_time(input: &Path, tid: u64, count: u64, width_ms: u64) -> [u64; 3] {
    let end = count * width_ms * 1_000_000;
    let clipped = |from: &str, to: &str| {
        format!(
            "LEAST(CAST({to} AS BIGINT) - CAST(c.time_first AS BIGINT), {end}) \
             - GREATEST(CAST({from} AS BIGINT) - CAST(c.time_first AS BIGINT), 0)"
        )
    };
    let (off, run) = (
        clipped("o.start_time", "o.end_time"),
        clipped("o.start_time - o.run_ns", "o.start_time"),
    );
    let sql = format!(
        "SELECT kind, SUM(ns) AS ns FROM ( \
           SELECT CASE WHEN o.state = 'runnable' THEN 1 ELSE 2 END AS kind, {off} AS ns \
           FROM off_cpu o JOIN capture c ON c.capture = o.capture \
           WHERE o.tid = {tid} AND o.start_time IS NOT NULL \
           UNION ALL SELECT 0 AS kind, {run} AS ns \
           FROM off_cpu o JOIN capture c ON c.capture = o.capture \
           WHERE o.tid = {tid} AND o.start_time IS NOT NULL AND o.run_ns > 0) t \
         WHERE ns > 0 GROUP BY kind"
    );
    let mut time = [0; 3];
    for r in rows(input, &sql) {
        time[r["kind"].as_u64().expect("kind") as usize] = r["ns"].as_u64().expect("ns");
    }
    time
}

/// A capture with off-CPU time: its page draws the off-CPU flame graph,
/// whose outermost frames (the process names) hold all of the `off_cpu`
/// table's time, and under the time line a thread's time per interval,
/// which adds up to its intervals' and runs' time; a capture without has
/// neither.
#[test]
fn off_cpu_time_is_shown_as_the_table_holds_it() {
    let dir = common::scratch("html", "off-cpu");
    let both = common::testdata("off-cpu-both.data");
    let sleeper = rows(
        &both,
        "SELECT DISTINCT tid FROM threads WHERE comm = 'sleeper'",
    )[0]["tid"]
        .as_u64()
        .expect("the sleeper's tid");
    let pages = [
        json!({"page": page(&both, None, &dir, "off-cpu"), "name": "off-cpu", "thread": sleeper}),
        json!({"page": page(&common::testdata("fp.data"), None, &dir, "fp"), "name": "fp"}),
    ];
    let Some(seen) = browse(&dir, &pages) else {
        return;
    };
    let (s, fp) = (&seen[0], &seen[1]);
    assert_eq!(s["console"], json!([]), "console");
    assert_eq!(s["resources"], json!([]), "requests");
    let all = rows(&both, "SELECT SUM(duration_ns) AS ns FROM off_cpu")[0]["ns"].as_u64();
    let drawn = &s["off_cpu"];
    assert_eq!(drawn["shown"], true, "{drawn}");
    assert_eq!(drawn["outermost_ns"].as_u64(), all, "{drawn}");
    // The threads' names outermost (the functions under them are named
    // only where the recorded binaries are this machine's).
    let names = drawn["names"].as_array().expect("names");
    for comm in ["sleeper", "waiter", "reader"] {
        assert!(names.iter().any(|n| n == comm), "{comm}: {names:?}");
    }
    let shown = &s["thread_time"];
    assert_eq!(shown["shown"], true, "{shown}");
    let mut per_kind = [0u64; 3];
    for col in shown["cols"].as_array().expect("cols") {
        for (k, ns) in col[1].as_array().expect("ns").iter().enumerate() {
            per_kind[k] += ns.as_u64().expect("ns");
        }
    }
    let (count, width_ms) = (
        s["buckets"]["count"].as_u64(),
        s["buckets"]["width_ms"].as_u64(),
    );
    let expected = thread_time(
        &both,
        sleeper,
        count.expect("count"),
        width_ms.expect("width"),
    );
    assert_eq!(
        per_kind, expected,
        "the sleeper's time: on CPU, for a CPU, asleep"
    );
    // The sleeper mostly sleeps.
    assert!(per_kind[2] > per_kind[0] * 10, "{per_kind:?}");
    assert_eq!(fp["off_cpu"]["shown"], false, "fp.data has no off-CPU time");
}

#[test]
fn a_comparison_shows_perfq_diffs_rows() {
    let dir = common::scratch("html", "diff");
    // The same workload recorded twice.
    let recorded = (
        common::testdata("fp.data"),
        common::testdata("compressed.data"),
    );
    // td-demo, and td-demo with hash_table_probe doing three times the
    // work: a change with every function named, wherever the test runs.
    let before = common::td_demo_capture(
        &dir.join("before.data"),
        &common::preset("sapphirerapids"),
        2000,
    );
    let mut slower = perfq_testgen::CallTree::td_demo();
    let probe: Vec<usize> = (0..slower.nodes().len())
        .filter(|&i| slower.nodes()[i].function == "hash_table_probe")
        .collect();
    for i in probe {
        let n = slower.nodes()[i].clone();
        slower.set(i, n.weight * 3.0, n.mix);
    }
    let after = common::td_demo_capture_of(
        &dir.join("after.data"),
        &common::preset("sapphirerapids"),
        &slower,
        2000,
    );
    if !shows_perfq_diffs_rows(&dir, &recorded.0, &recorded.1, "diff") {
        return;
    }
    assert!(shows_perfq_diffs_rows(
        &dir,
        &before,
        &after,
        "diff-td-demo"
    ));
    common::keep_screenshot(&dir.join("diff-td-demo-diff.png"), "html-diff.png");
}

/// The page of `this` compared with `base` shows `perfq diff`'s rows;
/// false when there is no browser to look.
fn shows_perfq_diffs_rows(dir: &Path, base: &Path, this: &Path, name: &str) -> bool {
    let file = page(this, Some(base), dir, name);
    let Some(seen) = browse(
        dir,
        &[json!({"page": file, "name": name, "click": null, "select": null})],
    ) else {
        return false;
    };
    let s = &seen[0];
    assert_eq!(s["console"], json!([]));
    assert_eq!(s["resources"], json!([]));
    // Coloured by change (report.py's click): the legend says so.
    let caption = s["colours"]["caption"].as_str().unwrap();
    assert!(caption.contains("change"), "{caption}");
    let keys: Vec<&Value> = s["colours"]["legend"]
        .as_array()
        .unwrap()
        .iter()
        .map(|e| &e["key"])
        .collect();
    assert_eq!(keys, [&json!("more"), &json!("less"), &json!("same")]);
    flame_box(s, name);
    let want = common::rows(&perfq(&[
        "diff",
        &base.display().to_string(),
        &this.display().to_string(),
        "--format",
        "json",
    ]));
    let shown = s["diff"].as_array().expect("the comparison's rows");
    assert_eq!(shown.len(), want.len().min(100));
    for (got, want) in shown.iter().zip(&want) {
        assert_eq!(got["name"], want["symbol"]);
        assert_eq!(got["dso"], want["dso"]);
        assert_eq!(
            count(got["a-samples"].as_str().unwrap()),
            want["a_samples"].as_u64().unwrap()
        );
        assert_eq!(
            count(got["b-samples"].as_str().unwrap()),
            want["b_samples"].as_u64().unwrap()
        );
        for (cell, col) in [("a-pct", "a_pct"), ("b-pct", "b_pct")] {
            close(
                got[cell].as_str().unwrap(),
                want[col].as_f64().unwrap() / 100.0,
                col,
            );
        }
        let change = got["change"].as_str().unwrap().trim_end_matches(" pp");
        close(
            change,
            want["change_pp"].as_f64().unwrap() / 100.0,
            "change_pp",
        );
        let p = want["p_value"].as_f64().unwrap();
        let mark = if p < 0.001 {
            "***"
        } else if p < 0.01 {
            "**"
        } else if p < 0.05 {
            "*"
        } else {
            ""
        };
        assert_eq!(got["mark"].as_str().unwrap(), mark, "{got}");
    }
    true
}
