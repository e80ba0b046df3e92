//! Long-running commands show a progress bar on a terminal and are quiet
//! otherwise: each is run once under a pseudo-terminal (util-linux
//! `script`), where its bar must be drawn, and once with pipes, where its
//! standard error may hold its messages and nothing else.

mod common;

use std::path::Path;
use std::process::Command;

use common::scratch;

/// More records than the commands' progress interval (65,536), so that
/// their bars are drawn while they read, not only at the end.
const SAMPLES: u64 = 70_000;

/// A generated capture of the test program large enough for a bar.
fn capture(dir: &Path) -> std::path::PathBuf {
    common::td_demo_capture(
        &dir.join("long.data"),
        &common::preset("sapphirerapids"),
        SAMPLES,
    )
}

/// Quotes `s` for sh.
fn sh_quote(s: &str) -> String {
    format!("'{}'", s.replace('\'', r"'\''"))
}

/// What a terminal shows while `perfq args...` runs with its standard
/// output sent to `stdout_to` (the terminal itself when `None`), or `None`
/// without `script`.
fn on_terminal(args: &[&str], stdout_to: Option<&Path>, cache: &Path) -> Option<String> {
    let mut line = std::iter::once(env!("CARGO_BIN_EXE_perfq"))
        .chain(args.iter().copied())
        .map(sh_quote)
        .collect::<Vec<_>>()
        .join(" ");
    if let Some(f) = stdout_to {
        line.push_str(&format!(" > {}", sh_quote(&f.to_string_lossy())));
    }
    let out = Command::new("script")
        .args(["-qec", &line, "/dev/null"])
        .env("TERM", "xterm")
        .env("PERFQ_CACHE_DIR", cache)
        .output()
        .ok()?;
    assert!(out.status.success(), "{line}: {out:?}");
    Some(String::from_utf8_lossy(&out.stdout).into_owned())
}

/// `perfq args...` with pipes: its standard error, once it succeeded.
fn piped_stderr(args: &[&str], cache: &Path) -> String {
    let out = common::perfq_cached(args, cache);
    common::succeeded(&out, format_args!("perfq {args:?}"));
    String::from_utf8_lossy(&out.stderr).into_owned()
}

#[test]
fn long_commands_draw_a_bar_on_a_terminal_only() {
    if Command::new("script").arg("--version").output().is_err() {
        common::skip("util-linux script is not installed (no pseudo-terminal to test on)");
        return;
    }
    let dir = scratch("progress", "bars");
    let file = capture(&dir);
    let f = file.to_str().expect("path");
    const NAME: &str = "long.data";
    let ds = |n: &str| dir.join(n).to_string_lossy().into_owned();
    let (ds1, ds2, ds3, ds4) = (ds("ds1"), ds("ds2"), ds("ds3"), ds("ds4"));
    let sink = dir.join("dump.jsonl");
    let svg = dir.join("fg.svg");
    let svg = svg.to_str().expect("path");
    // (arguments, standard output to a file, what the terminal shows)
    let cases: Vec<(Vec<&str>, bool, &[&str])> = vec![
        (vec!["report", f], false, &[NAME]),
        (
            vec!["report", "--children", f],
            false,
            &[NAME, "symbolizing"],
        ),
        (vec!["dump", f], true, &[NAME]),
        (vec!["convert", f, "-o", &ds1], false, &["captures"]),
        (vec!["batch", f, "-o", &ds2], false, &["captures"]),
        // The conversion's bar, then a spinner while the answer is computed.
        (
            vec!["topdown", f],
            false,
            &["captures", "computing top-down"],
        ),
        (
            vec!["query", f, "SELECT COUNT(*) FROM function_total"],
            false,
            &["captures", "querying"],
        ),
        (
            vec!["flamegraph", f, "-o", svg],
            false,
            &["captures", "folding stacks"],
        ),
    ];
    for (i, (args, to_file, shows)) in cases.iter().enumerate() {
        let cache = dir.join(format!("cache-t{i}"));
        let screen =
            on_terminal(args, to_file.then_some(sink.as_path()), &cache).expect("script runs");
        for s in *shows {
            assert!(
                screen.contains(s),
                "perfq {args:?} on a terminal drew no {s:?}:\n{screen}"
            );
        }
        // The same with pipes (a dataset of its own, so it converts again).
        let args: Vec<&str> = args
            .iter()
            .map(|a| match *a {
                a if a == ds1 => ds3.as_str(),
                a if a == ds2 => ds4.as_str(),
                a => a,
            })
            .collect();
        let cache = dir.join(format!("cache-p{i}"));
        // Notes and warnings may be there (the generated capture's kernel
        // is not this one), nothing else.
        let err = piped_stderr(&args, &cache);
        assert!(
            err.lines().all(|l| l.starts_with("perfq: ")) && !err.contains(['\r', '\x1b']),
            "perfq {args:?} drew on a pipe's stderr: {err:?}"
        );
    }
    let _ = std::fs::remove_dir_all(&dir);
}
