//! `perfq record`: the choice on the fixture machines through the CLI
//! (`PERFQ_SYSROOT`, a `perf` on `PATH` that only tells its version), the
//! refusals, and real recordings of software events with `--events` (they
//! need no hardware PMU), stopped by `--duration` and by Ctrl-C.

mod common;

use std::os::unix::fs::PermissionsExt;
use std::os::unix::process::CommandExt;
use std::path::{Path, PathBuf};
use std::process::{Command, Output, Stdio};
use std::time::{Duration, Instant};

/// A folder with a `perf` that prints `perf version VERSION`.
fn fake_perf(dir: &Path, version: &str) -> PathBuf {
    let bin = dir.join(format!("perf-{version}"));
    std::fs::create_dir_all(&bin).expect("mkdir");
    let perf = bin.join("perf");
    std::fs::write(&perf, format!("#!/bin/sh\necho 'perf version {version}'\n")).expect("write");
    std::fs::set_permissions(&perf, std::fs::Permissions::from_mode(0o755)).expect("chmod");
    bin
}

fn perfq_with(args: &[&str], path: &Path, sysroot: Option<&Path>) -> Output {
    let mut cmd = Command::new(env!("CARGO_BIN_EXE_perfq"));
    cmd.args(args)
        .env("PATH", path)
        .env("PERFQ_CACHE_DIR", common::process_cache());
    if let Some(root) = sysroot {
        cmd.env("PERFQ_SYSROOT", root);
    }
    cmd.output().expect("run perfq")
}

fn machines() -> PathBuf {
    common::root().join("crates/record/tests/machines")
}

/// The section of a golden file under `heading`, without its closing
/// blank line.
fn section(golden: &str, heading: &str) -> String {
    let start = golden.find(heading).expect("heading") + heading.len() + 1;
    let rest = &golden[start..];
    let end = rest.find("\n## ").map_or(rest.len(), |i| i + 1);
    rest[..end].trim_end_matches('\n').to_string() + "\n"
}

/// `perfq record --print` on every fixture machine says what the
/// library's golden file for it says (crates/record/tests/machines.rs).
#[test]
fn print_on_the_fixture_machines_equals_the_golden_files() {
    let dir = common::scratch("record", "print");
    let bin = fake_perf(&dir, "6.13.0");
    let mut names: Vec<PathBuf> = std::fs::read_dir(machines())
        .expect("machines")
        .flatten()
        .map(|e| e.path())
        .collect();
    names.sort();
    let mut checked = 0;
    for tree in names {
        let name = tree
            .file_stem()
            .expect("stem")
            .to_string_lossy()
            .into_owned();
        let root = dir.join(&name);
        let text = std::fs::read_to_string(&tree).expect("read");
        perfq_record::fixture::write_tree(&text, &root).expect("write the machine");
        let golden = machines()
            .parent()
            .expect("tests")
            .join(format!("golden/{name}.txt"));
        let golden = std::fs::read_to_string(&golden).expect("golden");
        let want = section(&golden, "## perf 6.13, level 1");
        let out = perfq_with(
            &[
                "record",
                "--print",
                "-g",
                "--",
                "./workload",
                "--size",
                "10",
            ],
            &bin,
            Some(&root),
        );
        let said = match out.status.success() {
            true => String::from_utf8_lossy(&out.stdout).into_owned(),
            false => String::from_utf8_lossy(&out.stderr).replacen("perfq: error: ", "error: ", 1),
        };
        assert_eq!(said, want, "{name}");
        checked += 1;
    }
    assert!(checked >= 14, "{checked} machines");
    let _ = std::fs::remove_dir_all(&dir);
}

#[test]
fn no_perf_on_path_says_what_to_install() {
    let dir = common::scratch("record", "noperf");
    std::fs::create_dir_all(&dir).expect("mkdir");
    let out = perfq_with(&["record", "--print", "--", "true"], &dir, None);
    let e = common::failed(&out, "perfq record without perf");
    assert!(e.contains("no `perf` on PATH"), "{e}");
    assert!(e.contains("apt install linux-perf"), "{e}");
    assert_eq!(e.trim().lines().count(), 1, "one line: {e}");
    let _ = std::fs::remove_dir_all(&dir);
}

fn recordable() -> bool {
    if !common::have_perf() || !common::can_record() {
        common::skip("perf cannot record software events here");
        return false;
    }
    true
}

const GROUP: &str = "{task-clock,page-faults}:S";
/// A shell loop that runs until it is stopped.
const FOREVER: [&str; 3] = ["sh", "-c", "while :; do :; done"];

/// `--duration` stops the command, and the answer is `perfq report`'s on
/// the capture kept with `-o`, which perf itself reads.
#[test]
fn a_recording_stopped_by_its_duration_is_answered() {
    if !recordable() {
        return;
    }
    let dir = common::scratch("record", "duration");
    std::fs::create_dir_all(&dir).expect("mkdir");
    let capture = dir.join("kept.data");
    let mut args = vec![
        "record",
        "--events",
        GROUP,
        "--duration",
        "1",
        "-o",
        capture.to_str().expect("path"),
        "--format",
        "json",
        "--",
    ];
    args.extend(FOREVER);
    let start = Instant::now();
    let out = common::perfq(&args);
    let rows = common::json_rows(&out, "perfq record --duration 1");
    assert!(start.elapsed() < Duration::from_secs(60), "stopped");
    assert!(!rows.is_empty(), "rows from the recording");
    // perf reads what was kept, with the events recorded.
    let perf = common::perf(&["report", "-i", capture.to_str().expect("path"), "--stdio"])
        .expect("perf report reads the kept capture");
    assert!(perf.contains("task-clock"), "{perf}");
    let _ = std::fs::remove_dir_all(&dir);
}

/// Ctrl-C at the terminal (SIGINT to the whole foreground process group:
/// perfq, perf and the command) stops the command, and perfq still
/// answers from what perf wrote.
#[test]
fn ctrl_c_stops_the_command_and_the_recording_is_answered() {
    if !recordable() {
        return;
    }
    let dir = common::scratch("record", "ctrlc");
    std::fs::create_dir_all(&dir).expect("mkdir");
    let capture = dir.join("kept.data");
    let child = Command::new(env!("CARGO_BIN_EXE_perfq"))
        .args(["record", "--events", GROUP, "-o"])
        .arg(&capture)
        .args(["--format", "json", "--"])
        .args(FOREVER)
        .env("PERFQ_CACHE_DIR", common::process_cache())
        .process_group(0)
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .expect("run perfq");
    let start = Instant::now();
    while !capture.exists() && start.elapsed() < Duration::from_secs(30) {
        std::thread::sleep(Duration::from_millis(50));
    }
    std::thread::sleep(Duration::from_millis(500));
    // SAFETY: kill(2) on the process group this test started.
    unsafe { libc::kill(-(child.id() as i32), libc::SIGINT) };
    let out = child.wait_with_output().expect("perfq ends");
    let rows = common::json_rows(&out, "perfq record, interrupted");
    assert!(!rows.is_empty(), "rows from the interrupted recording");
    let _ = std::fs::remove_dir_all(&dir);
}

/// perf failing leaves what was at `-o` before: perfq says perf wrote
/// nothing, and does not answer from the old capture.
#[test]
fn a_capture_already_at_the_output_is_not_the_answer() {
    if !recordable() {
        return;
    }
    let dir = common::scratch("record", "old");
    std::fs::create_dir_all(&dir).expect("mkdir");
    let capture = dir.join("kept.data");
    std::fs::copy(common::testdata("fp.data"), &capture).expect("copy");
    let out = common::perfq(&[
        "record",
        "--events",
        "{no-such-event}:S",
        "-o",
        capture.to_str().expect("path"),
        "--",
        "true",
    ]);
    let e = common::failed(&out, "perfq record with an event perf does not know");
    assert!(e.contains("wrote no capture"), "{e}");
    assert!(
        out.stdout.is_empty(),
        "no answer: {}",
        String::from_utf8_lossy(&out.stdout)
    );
    let _ = std::fs::remove_dir_all(&dir);
}

/// Whether this process may record every CPU (root, or
/// kernel.perf_event_paranoid ≤ 0).
fn may_record_every_cpu() -> bool {
    let root = std::fs::read_to_string("/proc/self/status")
        .ok()
        .and_then(|s| {
            s.lines()
                .find_map(|l| l.strip_prefix("Uid:"))
                .and_then(|l| l.split_whitespace().nth(1).map(|u| u == "0"))
        })
        .unwrap_or(false);
    let paranoid = std::fs::read_to_string("/proc/sys/kernel/perf_event_paranoid")
        .ok()
        .and_then(|s| s.trim().parse::<i32>().ok());
    root || paranoid.is_some_and(|p| p <= 0)
}

/// `--all-threads` with a perf that cannot inherit a sampled read group
/// (the installed 6.1): every CPU is recorded while the command runs and
/// the answer is the command's processes', as `perf report --pid` gives
/// it for the processes perf's own task events (`perf script
/// --show-task-events`) show the command started: here a shell and the
/// subshell it forks, both busy.
#[test]
fn all_threads_answers_for_every_process_the_command_started() {
    if !recordable() {
        return;
    }
    if !may_record_every_cpu() {
        common::skip("recording every CPU needs root or kernel.perf_event_paranoid ≤ 0");
        return;
    }
    let dir = common::scratch("record", "all-threads");
    std::fs::create_dir_all(&dir).expect("mkdir");
    let capture = dir.join("kept.data");
    // A shell by a name of its own: other tests' recordings run at the
    // same time, and every CPU's samples are in this capture.
    let shell = dir.join("all-threads-sh");
    std::os::unix::fs::symlink("/bin/sh", &shell).expect("symlink");
    let work = "w() { i=0; while [ $i -lt 300000 ]; do i=$((i+1)); done; }; w & w; wait";
    let args = [
        "record",
        "--all-threads",
        "--events",
        GROUP,
        "-o",
        capture.to_str().expect("path"),
        "--format",
        "json",
        "--",
        shell.to_str().expect("path"),
        "-c",
        work,
    ];
    let out = common::perfq(&args);
    let note = String::from_utf8_lossy(&out.stderr);
    assert!(out.status.success(), "{note}");
    assert!(note.contains(" -a "), "perf 6.1 records every CPU: {note}");
    let rows = common::json_rows(&out, "perfq record --all-threads");
    let mut ours = [0u64; 2];
    for r in &rows {
        let i = usize::from(r["event"] == "page-faults");
        ours[i] += r["samples"].as_u64().expect("samples");
    }
    // The command's processes, from perf's own task events: the one that
    // exec'd the shell and its descendants.
    let path = capture.to_str().expect("path");
    let tasks = common::perf(&["script", "-i", path, "--show-task-events"]).expect("perf script");
    let mut edges = Vec::new();
    let mut workload = None;
    for l in tasks.lines() {
        if let Some(rest) = l.split("PERF_RECORD_COMM exec: all-threads-sh:").nth(1) {
            workload = rest
                .split('/')
                .next()
                .and_then(|p| p.trim().parse::<u32>().ok());
        }
        if let Some(rest) = l.split("PERF_RECORD_FORK(").nth(1) {
            let nums: Vec<u32> = rest
                .split(|c: char| !c.is_ascii_digit())
                .filter_map(|n| n.parse().ok())
                .collect();
            if let [child, _, parent, _] = nums[..] {
                if child != parent {
                    edges.push((parent, child));
                }
            }
        }
    }
    let mut tree = vec![workload.expect("the shell's exec in the task events")];
    let mut i = 0;
    while i < tree.len() {
        let p = tree[i];
        for &(_, c) in edges.iter().filter(|(q, _)| *q == p) {
            if !tree.contains(&c) {
                tree.push(c);
            }
        }
        i += 1;
    }
    assert!(tree.len() >= 2, "the shell and its subshell: {tree:?}");
    let list = tree
        .iter()
        .map(u32::to_string)
        .collect::<Vec<_>>()
        .join(",");
    let report = common::perf(&[
        "report", "-i", path, "--pid", &list, "--stdio", "-n", "--sort", "pid",
    ])
    .expect("perf report --pid");
    let mut theirs = [0u64; 2];
    let mut busy = 0;
    for l in report.lines().filter(|l| !l.starts_with('#')) {
        let f: Vec<&str> = l.split_whitespace().collect();
        if let [_, _, a, b, _] = f[..] {
            let (a, b) = (a.parse::<u64>().expect("n"), b.parse::<u64>().expect("n"));
            theirs[0] += a;
            theirs[1] += b;
            busy += usize::from(a > 100);
        }
    }
    assert_eq!(
        ours, theirs,
        "samples per event: perfq, perf report --pid {list}"
    );
    assert!(busy >= 2, "both processes sampled:\n{report}");
    let _ = std::fs::remove_dir_all(&dir);
}
