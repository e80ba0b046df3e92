//! Off-CPU intervals (`off_cpu` and its views) against perf, on the
//! captures of `testdata/waits` (testdata/README.md):
//! - per switch-out, the wait, scheduling delay and run time `perf sched
//!   timehist` prints, and their sums per thread, on the system-wide
//!   capture;
//! - the threads of the program wait where they do: the sleeper in
//!   `clock_nanosleep`, the waiter on the lock (`__lll_lock_wait`), the
//!   reader in `read`, the busy threads preempted;
//! - each way of recording gives what it can: exact ends where switch-ins
//!   are recorded, ends at the next event where they are not, stacks from
//!   the last sample with switch records alone.

mod common;

use std::collections::BTreeMap;

use common::{json, perfq, succeeded};
use common::{perf612, skip, testdata};
use serde_json::Value;

const ALL: &str = "off-cpu-all.data";
const TASK: &str = "off-cpu-task.data";
const SWITCHES: &str = "off-cpu-switches.data";
const BOTH: &str = "off-cpu-both.data";

/// The rows of `sql` over capture `name` of testdata, as JSON objects.
fn rows(name: &str, sql: &str) -> Vec<Value> {
    rows_of(&testdata(name), sql)
}

/// The rows of `sql` over the capture `file`.
fn rows_of(file: &std::path::Path, sql: &str) -> Vec<Value> {
    let out = perfq(&["query", &file.to_string_lossy(), sql, "--format", "json"]);
    json_rows(&out, &format!("perfq query {} {sql}", file.display()))
}

/// The JSON rows a run printed; a panic naming the run (`what`) if it
/// failed or printed something else.
fn json_rows(out: &std::process::Output, what: &str) -> Vec<Value> {
    match json(&succeeded(out, what)) {
        Value::Array(rows) => rows,
        other => panic!("{what}: not rows: {other}"),
    }
}

/// The largest `column` of the rows whose symbol holds `part`.
fn largest(rows: &[Value], part: &str, column: &str) -> u64 {
    rows.iter()
        .filter(|r| r["symbol"].as_str().is_some_and(|s| s.contains(part)))
        .map(|r| u(r, column))
        .max()
        .unwrap_or(0)
}

fn u(v: &Value, key: &str) -> u64 {
    v[key].as_u64().unwrap_or(0)
}

/// One switch-out as `perf sched timehist` prints it: wait, scheduling
/// delay and run time, in µs (it prints ms with three decimals,
/// truncated).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
struct Times {
    wait: u64,
    delay: u64,
    run: u64,
}

/// A switch-out: the thread and its time in µs.
type Key = (u64, u64);

/// How the return before a switch-out was found.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Return {
    /// Recorded (or there was none: the thread's first switch-out).
    Recorded,
    /// Estimated (`end_from` = `estimated`).
    Estimated,
    /// The switch-out is the thread's last, as it exits: timehist 6.12
    /// has forgotten the thread at its EXIT record and counts no wait.
    Exiting,
}

/// `perf sched timehist`'s line of each switch-out of a thread of `name`
/// (the idle task's aside), by perf 6.12: perf 6.1's counts no scheduling
/// delay for a preempted thread, where later ones count its whole wait
/// for a CPU, as perfq does.
fn timehist(name: &str) -> Option<BTreeMap<Key, Times>> {
    let file = testdata(name);
    let out = perf612()?
        .args(["sched", "timehist", "-i"])
        .arg(&file)
        .output()
        .ok()?;
    let text = String::from_utf8_lossy(&out.stdout);
    let mut lines = BTreeMap::new();
    for line in text.lines() {
        // "  79236.762449 [0000]  rcu_preempt[15]  0.000  0.000  0.013  <stack>"
        let words: Vec<&str> = line.split_whitespace().collect();
        let us = |w: Option<&&str>, scale: u64| -> Option<u64> {
            let (whole, frac) = w?.split_once('.')?;
            Some(whole.parse::<u64>().ok()? * scale + frac.parse::<u64>().ok()?)
        };
        let tid = words
            .get(2)
            .and_then(|task| task.rsplit_once('['))
            .and_then(|(_, t)| t.trim_end_matches(']').split('/').next())
            .and_then(|t| t.parse::<u64>().ok());
        let (Some(time), Some(tid)) = (us(words.first(), 1_000_000), tid) else {
            continue;
        };
        let times = (
            us(words.get(3), 1000),
            us(words.get(4), 1000),
            us(words.get(5), 1000),
        );
        if let (Some(wait), Some(delay), Some(run)) = times {
            lines.insert((tid, time), Times { wait, delay, run });
        }
    }
    Some(lines)
}

/// perfq's switch-outs of `name` as `perf sched timehist` counts them:
/// each carries the run before it, and the wait and delay of the thread's
/// previous interval when that ended with its return; with whether that
/// return was recorded (`switch_in`) or estimated.
fn perfq_as_timehist(name: &str) -> BTreeMap<Key, (Times, Return)> {
    let sql = "SELECT o.tid AS tid, o.start_time AS start_time, o.duration_ns AS duration_ns, \
               o.state AS state, o.end_from AS end_from, o.delay_ns AS delay_ns, \
               o.run_ns AS run_ns, \
               s.tid AS sample_tid \
               FROM off_cpu_stacks o LEFT JOIN samples s \
               ON s.capture = o.capture AND s.sample_id = o.sample_id \
               ORDER BY o.tid, o.start_time";
    let mut switches = BTreeMap::new();
    let mut previous: Option<Value> = None;
    for row in rows(name, sql) {
        let tid = u(&row, "tid");
        let before = previous.take().filter(|p| {
            u(p, "tid") == tid && (p["end_from"] == "switch_in" || p["end_from"] == "estimated")
        });
        // Off CPU since before the capture: timehist saw no switch-out to
        // measure a wait from.
        let waited = before.as_ref().filter(|p| p["state"] != "unknown");
        let times = Times {
            wait: waited.map_or(0, |p| u(p, "duration_ns") / 1000),
            delay: before.as_ref().map_or(0, |p| u(p, "delay_ns") / 1000),
            run: u(&row, "run_ns") / 1000,
        };
        let exact = before.as_ref().is_none_or(|p| p["end_from"] == "switch_in");
        let how = match (row["state"] == "dead", exact) {
            (true, _) => Return::Exiting,
            (false, true) => Return::Recorded,
            (false, false) => Return::Estimated,
        };
        // Not switch-outs: an interval since before the capture (no
        // sample), and a thread's switch-out as it exits when the kernel
        // gave its sample the tid -1, which timehist leaves out.
        if !row["sample_tid"].is_null() && row["sample_tid"].as_i64() != Some(-1) {
            switches.insert((tid, u(&row, "start_time") / 1000), (times, how));
        }
        previous = Some(row);
    }
    switches
}

#[test]
fn timehist_agrees_per_switch_out_and_thread() {
    let Some(theirs) = timehist(ALL) else {
        return skip(
            "perf 6.12 is not unpacked (.ci/perf612.sh): no perf sched timehist to compare with",
        );
    };
    let mine = perfq_as_timehist(ALL);
    let only_mine: Vec<_> = mine.keys().filter(|k| !theirs.contains_key(k)).collect();
    let only_theirs: Vec<_> = theirs.keys().filter(|k| !mine.contains_key(k)).collect();
    assert!(
        only_mine.is_empty() && only_theirs.is_empty(),
        "switch-outs of perfq's only: {only_mine:?}; of timehist's only: {only_theirs:?}"
    );
    // Where the return was recorded, the same wait, delay and run, per
    // thread. Where perfq estimated it, the same delay; timehist takes
    // the CPU's last switch as the return, perfq the later of that, the
    // wakeup and the thread's own switch-out: a wait as long or longer,
    // and a wait and run together as long or shorter (timehist's is
    // longer only where the CPU's last switch came before the thread
    // left, a time it counts as run).
    let mut sums: BTreeMap<u64, ([u64; 3], [u64; 3], u64)> = BTreeMap::new();
    for (key, (m, how)) in &mine {
        let t = theirs[key];
        assert_eq!(m.delay, t.delay, "{key:?}: delay");
        if *how == Return::Exiting {
            assert_eq!((m.run, t.wait), (t.run, 0), "{key:?}: exiting");
        } else if *how == Return::Recorded {
            let (mine, theirs, n) = sums.entry(key.0).or_default();
            for (i, (a, b)) in [(m.wait, t.wait), (m.delay, t.delay), (m.run, t.run)]
                .into_iter()
                .enumerate()
            {
                mine[i] += a;
                theirs[i] += b;
            }
            *n += 1;
        } else {
            let (mw, tw) = (m.wait + m.run, t.wait + t.run);
            assert!(
                m.wait >= t.wait && mw <= tw + 1,
                "{key:?}: perfq {m:?}, timehist {t:?}"
            );
        }
    }
    assert!(sums.len() > 10, "{} threads", sums.len());
    for (tid, (mine, theirs, n)) in sums {
        assert_eq!(
            mine, theirs,
            "thread {tid}: wait, delay and run of {n} switch-outs"
        );
    }
}

/// The tid of the program's thread named `comm` in capture `name`.
fn tid_of(name: &str, comm: &str) -> u64 {
    let sql = format!("SELECT DISTINCT tid FROM threads WHERE comm = '{comm}'");
    let found = rows(name, &sql);
    assert_eq!(found.len(), 1, "{name}: threads named {comm}: {found:?}");
    u(&found[0], "tid")
}

/// Per state, the off-CPU time of thread `comm` and the functions on its
/// intervals' stacks.
fn waits_of(name: &str, comm: &str) -> BTreeMap<String, (u64, Vec<String>)> {
    let tid = tid_of(name, comm);
    let sql = format!(
        "SELECT o.state AS state, SUM(o.duration_ns) AS ns, \
           array_to_string(array_agg(DISTINCT ss.symbol), ',') AS symbols \
         FROM off_cpu_stacks o \
         LEFT JOIN stack_symbols ss ON ss.capture = o.capture AND ss.stack_id = o.stack_id \
         WHERE o.tid = {tid} GROUP BY o.state"
    );
    rows(name, &sql)
        .into_iter()
        .map(|r| {
            let symbols = r["symbols"].as_str().unwrap_or_default();
            let symbols = symbols.split(',').map(str::to_owned).collect();
            (
                r["state"].as_str().unwrap_or_default().to_owned(),
                (u(&r, "ns"), symbols),
            )
        })
        .collect()
}

fn has(symbols: &[String], part: &str) -> bool {
    symbols.iter().any(|s| s.contains(part))
}

#[test]
fn threads_wait_where_the_program_waits() {
    for name in [ALL, TASK, BOTH] {
        let sleeper = waits_of(name, "sleeper");
        let (ns, symbols) = &sleeper["sleeping"];
        // 100 sleeps of 2 ms.
        assert!(*ns >= 200_000_000, "{name}: the sleeper slept {ns} ns");
        assert!(has(symbols, "nanosleep"), "{name}: sleeper {symbols:?}");
        let waiter = waits_of(name, "waiter");
        let locked = waiter.values().any(|(_, s)| has(s, "lll_lock_wait"));
        assert!(locked, "{name}: waiter {waiter:?}");
        let reader = waits_of(name, "reader");
        let (_, symbols) = &reader["sleeping"];
        assert!(has(symbols, "read"), "{name}: reader {symbols:?}");
        for busy in ["busy-a", "busy-b"] {
            let waits = waits_of(name, busy);
            assert!(waits.contains_key("runnable"), "{name}: {busy} {waits:?}");
        }
    }
}

/// How many intervals of each end kind `name` has.
fn ends(name: &str) -> BTreeMap<String, u64> {
    let sql = "SELECT end_from, COUNT(*) AS n FROM off_cpu GROUP BY end_from";
    rows(name, sql)
        .into_iter()
        .map(|r| {
            (
                r["end_from"].as_str().unwrap_or_default().to_owned(),
                u(&r, "n"),
            )
        })
        .collect()
}

#[test]
fn each_recording_ends_intervals_as_it_can() {
    // System-wide: every return is seen, but for those still waiting at
    // the end.
    let all = ends(ALL);
    let unknown = all.get("next_event").copied().unwrap_or(0);
    assert!(all["switch_in"] > 50 * unknown, "{ALL}: {all:?}");
    assert!(all["estimated"] > 0, "{ALL}: {all:?}");
    // One command: returns after another process's thread are not.
    let task = ends(TASK);
    assert!(task["next_event"] > 0, "{TASK}: {task:?}");
    // Switch records see their own thread's returns.
    let both = ends(BOTH);
    assert!(
        both["switch_in"] > both.get("next_event").copied().unwrap_or(0) * 10,
        "{BOTH}: {both:?}"
    );
    let switches = ends(SWITCHES);
    assert!(switches["switch_in"] > 0, "{SWITCHES}: {switches:?}");
    // Switch records alone: stacks from the last sample, states from the
    // preempt flag.
    let sql = "SELECT DISTINCT stack_from, state FROM off_cpu WHERE stack_from IS NOT NULL";
    let kinds: Vec<(String, String)> = rows(SWITCHES, sql)
        .into_iter()
        .map(|r| (r["stack_from"].to_string(), r["state"].to_string()))
        .collect();
    assert!(
        kinds.iter().all(|(from, _)| from == "\"last_sample\""),
        "{kinds:?}"
    );
    assert!(kinds.iter().any(|(_, s)| s == "\"runnable\""), "{kinds:?}");
    assert!(kinds.iter().any(|(_, s)| s == "\"waiting\""), "{kinds:?}");
}

#[test]
fn captures_without_switches_have_no_intervals() {
    for name in ["fp.data", "group.data", "pipe.data"] {
        let n = rows(name, "SELECT COUNT(*) AS n FROM off_cpu");
        assert_eq!(u(&n[0], "n"), 0, "{name}");
    }
}

/// The off-CPU intervals `perf script` shows of `file`, worked out here:
/// a thread's `sched_switch` out opens one with its callchain, a
/// `sched_switch` naming it as `next_pid` closes it. Per (pid, callchain
/// addresses): how many, and their length in ns.
fn perf_script_waits(file: &std::path::Path) -> Option<Vec<(u64, u64)>> {
    let text = common::perf(&[
        "script",
        "--ns",
        "-F",
        "pid,tid,time,event,trace,ip",
        "-i",
        &file.to_string_lossy(),
    ])?;
    let field = |line: &str, key: &str| -> Option<u64> {
        let at = line.find(key)? + key.len();
        line[at..].split_whitespace().next()?.parse().ok()
    };
    let mut open: BTreeMap<u64, (u64, u64, String)> = BTreeMap::new();
    let mut sums: BTreeMap<(u64, String), (u64, u64)> = BTreeMap::new();
    let mut lines = text.lines().peekable();
    while let Some(line) = lines.next() {
        let mut chain = String::new();
        // Frames are indented by a tab; a sample's line may start with spaces.
        while let Some(frame) = lines.next_if(|l| l.starts_with('\t')) {
            chain.push_str(frame.trim());
            chain.push(';');
        }
        if !line.contains(" sched:sched_switch: ") {
            continue;
        }
        // "11692/11692 79236.757768926: sched:sched_switch: prev_comm=... prev_pid=..."
        let mut words = line.split_whitespace();
        let pid = words
            .next()
            .and_then(|w| w.split('/').next()?.parse::<u64>().ok());
        let time = words.next().and_then(|w| {
            let (s, ns) = w.trim_end_matches(':').split_once('.')?;
            Some(s.parse::<u64>().ok()? * 1_000_000_000 + ns.parse::<u64>().ok()?)
        });
        let (Some(pid), Some(time)) = (pid, time) else {
            continue;
        };
        let (prev, next) = (field(line, "prev_pid="), field(line, "next_pid="));
        if let Some(next) = next.filter(|&n| n != 0) {
            if let Some((pid, start, chain)) = open.remove(&next) {
                let e = sums.entry((pid, chain)).or_default();
                e.0 += 1;
                e.1 += time - start;
            }
        }
        if let Some(prev) = prev.filter(|&p| p != 0) {
            open.insert(prev, (pid, time, chain));
        }
    }
    let mut waits: Vec<(u64, u64)> = sums.into_values().collect();
    waits.sort_unstable();
    Some(waits)
}

/// perfq's intervals of `file` that a switch-out opened and a switch-in
/// closed, per (pid, stack): how many, and their length.
fn perfq_waits(file: &std::path::Path) -> Vec<(u64, u64)> {
    let sql = "SELECT COUNT(*) AS n, SUM(duration_ns) AS ns FROM off_cpu_stacks \
               WHERE end_from = 'switch_in' AND stack_from = 'switch' \
               GROUP BY pid, stack_id";
    let mut waits: Vec<(u64, u64)> = rows_of(file, sql)
        .iter()
        .map(|r| (u(r, "n"), u(r, "ns")))
        .collect();
    waits.sort_unstable();
    waits
}

#[test]
fn off_cpu_time_per_stack_is_perf_scripts() {
    for name in [ALL, TASK] {
        let Some(theirs) = perf_script_waits(&testdata(name)) else {
            return skip("perf script did not run");
        };
        let mine = perfq_waits(&testdata(name));
        assert!(mine.len() > 20, "{name}: {} stacks", mine.len());
        let only_mine: Vec<_> = mine.iter().filter(|w| !theirs.contains(w)).collect();
        let only_theirs: Vec<_> = theirs.iter().filter(|w| !mine.contains(w)).collect();
        assert!(
            only_mine.is_empty() && only_theirs.is_empty(),
            "{name}: per stack, (intervals, ns) of perfq only: {only_mine:?}; of perf script only: {only_theirs:?}"
        );
    }
}

/// `perfq report ALL --off-cpu` with `args`, as JSON rows.
fn report(args: &[&str]) -> Vec<Value> {
    let file = testdata(ALL).to_string_lossy().into_owned();
    let mut all = vec!["report", &file, "--off-cpu", "--format", "json"];
    all.extend(args);
    json_rows(&perfq(&all), &format!("perfq {all:?}"))
}

#[test]
fn report_off_cpu_adds_up_the_intervals() {
    let all = u(
        &rows(ALL, "SELECT SUM(duration_ns) AS ns FROM off_cpu")[0],
        "ns",
    );
    let states = |r: &Value| u(r, "runnable_ns") + u(r, "sleeping_ns") + u(r, "blocked_ns");
    // Each interval has one leaf: the self times add up to all of it.
    let self_rows = report(&[]);
    assert_eq!(self_rows.iter().map(|r| u(r, "self_ns")).sum::<u64>(), all);
    for r in &self_rows {
        assert_eq!(states(r), u(r, "self_ns"), "{r}");
        assert!(r.get("total_ns").is_none(), "{r}");
    }
    let total_rows = report(&["--children"]);
    for r in &total_rows {
        assert_eq!(states(r), u(r, "total_ns"), "{r}");
        assert!(
            u(r, "total_ns") >= u(r, "self_ns") && u(r, "total_ns") <= all,
            "{r}"
        );
    }
    // The sleeper's 100 sleeps of 2 ms are under nanosleep.
    let sleeps = largest(&total_rows, "clock_nanosleep", "sleeping_ns");
    assert!(sleeps >= 200_000_000, "clock_nanosleep: {sleeps} ns");
    // A table, and a capture without switches: one line saying what to record.
    let file = testdata(ALL).to_string_lossy().into_owned();
    let table = succeeded(&perfq(&["report", &file, "--off-cpu"]), "report --off-cpu");
    assert!(table.starts_with("# Off-CPU time: "), "{table}");
    let fp = testdata("fp.data").to_string_lossy().into_owned();
    let err = common::failed(
        &perfq(&["report", &fp, "--off-cpu"]),
        "report --off-cpu fp.data",
    );
    assert!(
        err.contains("no off-CPU time") && err.contains("sched:sched_switch"),
        "{err}"
    );
    // Notes about the capture (a kernel other than the one recorded, say)
    // may come before it; the error is one line.
    let said = err.lines().filter(|l| !l.starts_with("perfq: note:"));
    assert_eq!(said.count(), 1, "{err}");
}

/// Off-CPU time per (symbol, DSO): self, total, and the sorted time
/// (total) split runnable, sleeping, blocked.
type FunctionTimes = BTreeMap<(String, String), [u64; 5]>;

/// An unresolved frame's name as a number (perf's `0x` and 16 digits,
/// the views' as few as it takes), else the name.
fn named(symbol: &str) -> String {
    match symbol
        .strip_prefix("0x")
        .map(|d| u64::from_str_radix(d, 16))
    {
        Some(Ok(a)) => format!("{a:#x}"),
        _ => symbol.to_string(),
    }
}

/// `perfq report --off-cpu --children` of `file`, per function.
fn reported(file: &str) -> FunctionTimes {
    let args = [
        "report",
        file,
        "--off-cpu",
        "--children",
        "--format",
        "json",
    ];
    let rows = json_rows(&perfq(&args), &format!("perfq {args:?}"));
    let columns = [
        "self_ns",
        "total_ns",
        "runnable_ns",
        "sleeping_ns",
        "blocked_ns",
    ];
    rows.iter()
        .map(|r| {
            let s = |k: &str| r[k].as_str().unwrap_or("").to_string();
            ((named(&s("symbol")), s("dso")), columns.map(|c| u(r, c)))
        })
        .collect()
}

/// The same from the `off_cpu_function` view over `file`'s dataset.
fn viewed(file: &str) -> FunctionTimes {
    let sql = "SELECT symbol, dso, state, SUM(self_ns) AS self_ns, SUM(total_ns) AS total_ns \
               FROM off_cpu_function GROUP BY symbol, dso, state";
    let mut times = FunctionTimes::new();
    for r in rows_of(std::path::Path::new(file), sql) {
        let s = |k: &str| r[k].as_str().unwrap_or("").to_string();
        let t = times.entry((named(&s("symbol")), s("dso"))).or_default();
        let total = u(&r, "total_ns");
        t[0] += u(&r, "self_ns");
        t[1] += total;
        t[match s("state").as_str() {
            "runnable" => 2,
            "blocked" => 4,
            _ => 3,
        }] += total;
    }
    times.retain(|_, t| t[0] > 0 || t[1] > 0);
    times
}

/// `report --off-cpu` sums the intervals itself (`perfq_report`, from the
/// capture); the views sum them over the dataset: two definitions of the
/// same sums, held equal per function on every way of recording and on
/// perf's `--off-cpu` layout. One row differs by design: the
/// time of intervals without a stack is `[unknown]`'s self in both, and
/// its total in the report only (the views' totals are over stacks).
#[test]
fn report_off_cpu_equals_the_views() {
    let dir = common::scratch("off-cpu", "report-views");
    let generated =
        common::td_demo_off_cpu_capture(&dir.join("offcpu.data"), &perf_off_cpu_waits());
    let mut files: Vec<String> = [ALL, TASK, SWITCHES, BOTH]
        .iter()
        .map(|n| testdata(n).to_string_lossy().into_owned())
        .collect();
    files.push(generated.to_string_lossy().into_owned());
    let unknown = ("[unknown]".to_string(), "[unknown]".to_string());
    // An unresolved frame of a stack is named by its address in the
    // report, by its DSO offset in the views (`report_views.rs`): one
    // frame, two names, so the total of an unresolved row has no
    // counterpart. Its self time (a sample's own address, named alike on
    // both sides) is compared, where it has any.
    let self_only = |times: &mut FunctionTimes| {
        times.retain(|(symbol, _), t| {
            if symbol.starts_with("0x") {
                *t = [t[0], 0, 0, 0, 0];
            }
            t[0] > 0 || t[1] > 0
        })
    };
    for file in &files {
        let mut report = reported(file);
        let mut views = viewed(file);
        self_only(&mut report);
        self_only(&mut views);
        if let (Some(r), Some(v)) = (report.remove(&unknown), views.remove(&unknown)) {
            assert_eq!(
                (r[0], r[1]),
                (v[0], r[0]),
                "{file}: [unknown]: report {r:?}, views {v:?}"
            );
        }
        assert!(report.len() > 3, "{file}: {report:?}");
        let differ: Vec<_> = report
            .iter()
            .filter(|(k, t)| views.get(*k) != Some(t))
            .map(|(k, t)| (k, t, views.get(k)))
            .collect();
        assert!(
            differ.is_empty(),
            "{file}: (function, report, views): {differ:?}"
        );
        let missing: Vec<_> = views.keys().filter(|k| !report.contains_key(*k)).collect();
        assert!(missing.is_empty(), "{file}: in the views only: {missing:?}");
    }
}

#[test]
fn flamegraph_off_cpu_folds_the_intervals() {
    let file = testdata(ALL).to_string_lossy().into_owned();
    let folded = |extra: &[&str]| -> Vec<(String, u64)> {
        let mut args = vec!["flamegraph", &file, "--off-cpu", "--folded"];
        args.extend(extra);
        succeeded(&perfq(&args), "flamegraph --off-cpu --folded")
            .lines()
            .filter_map(|l| {
                let (stack, n) = l.rsplit_once(' ')?;
                Some((stack.to_string(), n.parse().ok()?))
            })
            .collect()
    };
    let sql = "SELECT COUNT(*) AS n, SUM(duration_ns) AS ns FROM off_cpu WHERE duration_ns > 0";
    let want = &rows(ALL, sql)[0];
    let time = folded(&[]);
    assert_eq!(time.iter().map(|(_, n)| n).sum::<u64>(), u(want, "ns"));
    let waits = folded(&["--samples"]);
    assert_eq!(waits.iter().map(|(_, n)| n).sum::<u64>(), u(want, "n"));
    assert!(
        time.iter()
            .any(|(s, _)| s.starts_with("sleeper;") || s.contains("nanosleep")),
        "no sleep in {time:?}"
    );
    let svg = succeeded(
        &perfq(&["flamegraph", &file, "--off-cpu"]),
        "flamegraph --off-cpu",
    );
    assert!(
        svg.contains("<svg") && svg.contains("off-CPU"),
        "an SVG of off-CPU time"
    );
}

#[test]
fn a_capture_cut_among_switches_keeps_flagged_intervals() {
    // The system-wide capture with an impossible size (4) in the header of
    // its middle record: what follows is lost.
    let mut data = std::fs::read(testdata(ALL)).expect("capture");
    let at = |b: &[u8], i: usize| u64::from_le_bytes(b[i..i + 8].try_into().expect("8 bytes"));
    let (start, size) = (at(&data, 40) as usize, at(&data, 48) as usize);
    let mut offsets = Vec::new();
    let mut pos = start;
    while pos < start + size {
        offsets.push(pos);
        pos += u16::from_le_bytes([data[pos + 6], data[pos + 7]]) as usize;
    }
    let middle = offsets[offsets.len() / 2];
    data[middle + 6..middle + 8].copy_from_slice(&4u16.to_le_bytes());
    let dir = common::scratch("off-cpu", "cut");
    let cut = dir.join("cut.data");
    std::fs::write(&cut, data).expect("write");
    let cut = cut.to_string_lossy().into_owned();
    let sql = "SELECT end_from, uncertain, COUNT(*) AS n FROM off_cpu GROUP BY end_from, uncertain";
    let out = perfq(&["query", &cut, sql, "--format", "json"]);
    let stderr = String::from_utf8_lossy(&out.stderr).into_owned();
    let kept = json_rows(&out, "query of the cut capture");
    // What was open at the cut runs to the end, uncertain; what ended
    // before it is kept as it was.
    let count = |end: &str, uncertain: bool| -> u64 {
        kept.iter()
            .filter(|r| r["end_from"] == end && r["uncertain"] == uncertain)
            .map(|r| u(r, "n"))
            .sum()
    };
    assert!(count("switch_in", false) > 100, "{kept:?}");
    assert!(count("capture_end", true) > 0, "{kept:?}");
    assert_eq!(count("capture_end", false), 0, "{kept:?}");
    // The damage is said as every command says it, and --strict fails.
    assert!(stderr.contains("bad record size 4"), "{stderr}");
    let strict = common::failed(&perfq(&["--strict", "query", &cut, sql]), "--strict");
    assert!(strict.contains("bad record size 4"), "{strict}");
}

/// A capture whose tracing data (the tracepoints' formats) cannot be read
/// gives no intervals from its `sched_switch` samples, and every command
/// says why, with the offset.
#[test]
fn unreadable_tracing_data_is_said() {
    let mut data = std::fs::read(testdata(ALL)).expect("capture");
    let at = |b: &[u8], i: usize| u64::from_le_bytes(b[i..i + 8].try_into().expect("8 bytes"));
    // The first feature section is the tracing data's (feature bit 1; bit
    // 0 is never set): its magic goes.
    assert_eq!(at(&data, 72) & 0b11, 0b10, "the capture has tracing data");
    let sections = (at(&data, 40) + at(&data, 48)) as usize;
    let tracing = at(&data, sections) as usize;
    assert_eq!(&data[tracing + 3..tracing + 10], b"tracing");
    data[tracing..tracing + 10].fill(0);
    let dir = common::scratch("off-cpu", "tracing-data");
    let file = dir.join("no-formats.data");
    std::fs::write(&file, data).expect("write");
    let file = file.to_string_lossy().into_owned();
    let said = "sched:sched_switch gives no off-CPU intervals: bad tracing data";
    let out = perfq(&[
        "query",
        &file,
        "SELECT COUNT(*) AS n FROM off_cpu",
        "--format",
        "json",
    ]);
    let stderr = String::from_utf8_lossy(&out.stderr).into_owned();
    assert_eq!(u(&json_rows(&out, "query")[0], "n"), 0);
    assert!(stderr.contains(said), "{stderr}");
    assert!(
        stderr.contains(&format!("at file offset {tracing:#x}")),
        "{stderr}"
    );
    let err = common::failed(&perfq(&["report", &file, "--off-cpu"]), "report --off-cpu");
    assert!(
        err.contains(said) && err.contains("no off-CPU time"),
        "{err}"
    );
}

/// Waits of td-demo's threads, summed as perf's `--off-cpu` sums them.
fn perf_off_cpu_waits() -> Vec<perfq_testgen::off_cpu::OffCpuWait> {
    let wait = |thread: usize, stack: &[&str], ns: u64| perfq_testgen::off_cpu::OffCpuWait {
        thread,
        stack: stack.iter().map(|s| s.to_string()).collect(),
        ns,
    };
    vec![
        wait(0, &["hash_table_probe", "run", "main"], 250_000_000),
        wait(0, &["sort_records", "run", "main"], 1_500_000),
        wait(1, &["hash_table_probe", "run", "main"], 40_000_000),
        wait(1, &["checksum", "run", "main"], 7),
        wait(2, &["parse_input", "run", "main"], 3_000_000_000),
    ]
}

#[test]
fn perf_off_cpu_samples_are_read_as_time() {
    let dir = common::scratch("off-cpu", "perf-off-cpu");
    let file = common::td_demo_off_cpu_capture(&dir.join("offcpu.data"), &perf_off_cpu_waits());
    let file = file.to_string_lossy().into_owned();
    // perf reads the capture: each sample's period, per thread and stack.
    let Some(script) = common::perf(&["script", "-F", "tid,period,event,ip", "-i", &file]) else {
        return skip("perf script does not read the capture");
    };
    let mut theirs: Vec<(u64, u64)> = Vec::new();
    for line in script.lines().filter(|l| l.contains("offcpu-time")) {
        let words: Vec<&str> = line.split_whitespace().collect();
        let tid = words.first().and_then(|w| w.parse().ok()).unwrap_or(0);
        let period = words.get(1).and_then(|w| w.parse().ok()).unwrap_or(0);
        theirs.push((tid, period));
    }
    theirs.sort_unstable();
    assert_eq!(theirs.len(), perf_off_cpu_waits().len(), "{script}");
    // perfq: one off_cpu row per sample, its period as time.
    let sql =
        "SELECT tid, duration_ns, start_time, end_from FROM off_cpu ORDER BY tid, duration_ns";
    let out = common::perfq_cached(
        &["query", &file, sql, "--format", "json"],
        &dir.join("cache"),
    );
    let rows = json_rows(&out, "query");
    let mine: Vec<(u64, u64)> = rows
        .iter()
        .map(|r| (u(r, "tid"), u(r, "duration_ns")))
        .collect();
    assert_eq!(mine, theirs);
    assert!(
        rows.iter()
            .all(|r| r["end_from"] == "offcpu_time" && r["start_time"].is_null()),
        "{rows:?}"
    );
    // And by function: hash_table_probe waited 290 ms in all, 250 of them
    // on the first thread.
    let out = common::perfq_cached(
        &[
            "report",
            &file,
            "--off-cpu",
            "--children",
            "--format",
            "json",
        ],
        &dir.join("cache"),
    );
    let report = json_rows(&out, "report --off-cpu");
    let total = |symbol: &str| {
        report
            .iter()
            .find(|r| r["symbol"] == symbol)
            .map_or(0, |r| u(r, "total_ns"))
    };
    assert_eq!(total("hash_table_probe"), 290_000_000, "{report:?}");
    assert_eq!(total("main"), 3_291_500_007, "{report:?}");
}

#[test]
fn record_off_cpu_records_and_answers_where_threads_wait() {
    if !common::have_perf() || !common::can_record() {
        return skip("perf cannot record here: perfq record --off-cpu not checked");
    }
    let dir = common::scratch("off-cpu", "record");
    let capture = dir.join("waits.data").to_string_lossy().into_owned();
    let waits = testdata("waits").to_string_lossy().into_owned();
    let args = [
        "record",
        "--off-cpu",
        "-g",
        "--events",
        "{task-clock,page-faults}:S",
        "-o",
        &capture,
        "--format",
        "json",
        "--",
        &waits,
    ];
    let out = perfq(&args);
    let rows = json_rows(&out, "perfq record --off-cpu");
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(
        stderr.contains("--off-cpu") || stderr.contains("off-CPU"),
        "{stderr}"
    );
    let sleeps = largest(&rows, "nanosleep", "total_ns");
    // The sleeper's 100 sleeps of 2 ms, and the holder's.
    assert!(sleeps >= 200_000_000, "nanosleep: {sleeps} ns in {rows:?}");
}

#[test]
fn wall_clock_adds_the_clock_samples_and_the_waits() {
    for name in [SWITCHES, BOTH] {
        let one = |sql: &str| u(&rows(name, sql)[0], "ns");
        let on = one("SELECT SUM(s.period) AS ns FROM samples s JOIN events e \
             ON e.capture = s.capture AND e.event_id = s.event_id WHERE e.name = 'cpu-clock'");
        let off = one("SELECT SUM(duration_ns) AS ns FROM off_cpu");
        assert!(on > 0 && off > 0, "{name}: on {on}, off {off}");
        // Each sample and each wait has one leaf: the self times add up to
        // all the time, on CPU and off.
        let sums = &rows(
            name,
            "SELECT SUM(on_cpu_self_ns) AS on_ns, SUM(off_cpu_self_ns) AS off_ns, \
             SUM(self_ns) AS ns FROM wall_clock_function",
        )[0];
        assert_eq!(
            (u(sums, "on_ns"), u(sums, "off_ns"), u(sums, "ns")),
            (on, off, on + off),
            "{name}"
        );
        // The sleeper's function: time off CPU, and next to none on it.
        // (Where the switch-out's own stack is recorded: with switch
        // records alone a wait takes the stack of the thread's last
        // sample, which for a thread that runs a few µs between its
        // sleeps is mostly one taken before, wherever it fell.)
        if name == SWITCHES {
            continue;
        }
        let sleep = &rows(
            name,
            "SELECT SUM(off_cpu_total_ns) AS off_ns, SUM(on_cpu_total_ns) AS on_ns \
             FROM wall_clock_function WHERE symbol LIKE '%clock_nanosleep%'",
        )[0];
        assert!(u(sleep, "off_ns") >= 200_000_000, "{name}: {sleep}");
        assert!(
            u(sleep, "on_ns") * 10 < u(sleep, "off_ns"),
            "{name}: {sleep}"
        );
    }
}

#[test]
fn a_pipe_capture_gives_perf_scripts_waits() {
    // A pipe carries the tracing data as a record, and the threads and
    // mappings already there at time 0.
    if !common::have_perf() || !common::can_record() {
        return skip("perf cannot record here: the pipe capture is not checked");
    }
    let dir = common::scratch("off-cpu", "pipe");
    let pipe = dir.join("pipe.data");
    let recorded = std::process::Command::new("perf")
        .args([
            "record",
            "-q",
            "-o",
            "-",
            "-g",
            "-e",
            "sched:sched_switch",
            "--",
        ])
        .arg(testdata("waits"))
        .output()
        .expect("perf record");
    assert!(
        recorded.status.success(),
        "{}",
        String::from_utf8_lossy(&recorded.stderr)
    );
    std::fs::write(&pipe, recorded.stdout).expect("pipe capture");
    let Some(theirs) = perf_script_waits(&pipe) else {
        return skip("perf script did not read the pipe capture");
    };
    assert_eq!(perfq_waits(&pipe), theirs);
    // Intervals since before the capture start at its first record, not
    // at perf's time 0: within a second of the first sample.
    let min = |sql: &str| u(&rows_of(&pipe, sql)[0], "t");
    let first = min("SELECT MIN(time) AS t FROM samples");
    let earliest = min("SELECT MIN(start_time) AS t FROM off_cpu");
    assert!(
        earliest + 1_000_000_000 > first,
        "{earliest} long before {first}"
    );
}
