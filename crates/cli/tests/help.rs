//! `--help`, the completion scripts and the manual pages, as a user gets
//! them from the binary.
//!
//! Every command's help is kept in `tests/help/<command>.txt`: a change to
//! an option or an example shows in review as a change of that file
//! (`PERFQ_BLESS=1 cargo test -p perfq --test help` writes them anew).
//! The shells themselves check the completion scripts, and man-db renders
//! the pages.

mod common;

use std::path::PathBuf;
use std::process::{Command, Stdio};

use common::{perfq, skip, succeeded};

/// Every command, as `perfq --help` lists it.
const COMMANDS: &[&str] = &[
    "info",
    "dump",
    "convert",
    "report",
    "topdown",
    "record",
    "query",
    "flamegraph",
    "diff",
    "export",
    "html",
    "batch",
    "cache",
    "completions",
    "man",
];

fn snapshot(name: &str) -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR")).join(format!("tests/help/{name}.txt"))
}

fn have(program: &str) -> bool {
    Command::new("sh")
        .args(["-c", &format!("command -v {program}")])
        .stdout(Stdio::null())
        .status()
        .is_ok_and(|s| s.success())
}

#[test]
fn every_command_is_listed_and_has_its_snapshot() {
    let top = succeeded(&perfq(&["--help"]), "perfq --help");
    for name in COMMANDS {
        assert!(
            top.lines()
                .any(|l| l.trim_start().starts_with(&format!("{name} "))),
            "perfq --help does not list {name}"
        );
    }
    let listed = top
        .lines()
        .skip_while(|l| !l.starts_with("Commands:"))
        .skip(1)
        .take_while(|l| l.starts_with("  "))
        .filter(|l| !l.trim_start().starts_with("help "))
        .count();
    assert_eq!(listed, COMMANDS.len(), "{top}");
}

#[test]
fn help_texts_are_as_kept() {
    let bless = std::env::var_os("PERFQ_BLESS").is_some_and(|v| v == "1");
    let mut differ = Vec::new();
    let names = std::iter::once("perfq").chain(COMMANDS.iter().copied());
    for name in names {
        let args: Vec<&str> = if name == "perfq" {
            vec!["--help"]
        } else {
            vec![name, "--help"]
        };
        let text = succeeded(&perfq(&args), format!("perfq {}", args.join(" ")));
        let path = snapshot(name);
        if bless {
            std::fs::write(&path, &text).expect("write snapshot");
            continue;
        }
        let kept = std::fs::read_to_string(&path).unwrap_or_default();
        if kept != text {
            differ.push(format!("{}:\n{text}", path.display()));
        }
        if name != "perfq" {
            assert!(
                text.contains("\nExamples:\n  perfq "),
                "perfq {name} --help shows no examples"
            );
        }
    }
    assert!(
        differ.is_empty(),
        "help changed (PERFQ_BLESS=1 keeps the new text):\n{}",
        differ.join("\n")
    );
}

/// Runs `check` (a shell reading the script without running it) on the
/// completion script for `shell`.
fn shell_accepts(shell: &str, check: &[&str]) {
    let script = succeeded(
        &perfq(&["completions", shell]),
        format!("completions {shell}"),
    );
    assert!(script.contains("topdown"), "{shell}: no subcommands");
    let dir = tempfile::tempdir().expect("tempdir");
    let path = dir.path().join(format!("perfq.{shell}"));
    std::fs::write(&path, &script).expect("write script");
    let out = Command::new(check[0])
        .args(&check[1..])
        .arg(&path)
        .output()
        .expect("run shell");
    assert!(
        out.status.success() && out.stderr.is_empty(),
        "{shell} rejects the completion script: {}",
        String::from_utf8_lossy(&out.stderr)
    );
}

#[test]
fn bash_reads_the_completion_script() {
    shell_accepts("bash", &["bash", "-n"]);
}

#[test]
fn bash_completes_commands_and_options() {
    let script = succeeded(&perfq(&["completions", "bash"]), "completions bash");
    let dir = tempfile::tempdir().expect("tempdir");
    let path = dir.path().join("perfq.bash");
    std::fs::write(&path, &script).expect("write script");
    // What bash would offer after `perfq top<TAB>` and `perfq topdown --le<TAB>`.
    let complete = |words: &str| {
        let cword = words.split(' ').count() - 1;
        let cmd = format!(
            ". {}; COMP_WORDS=({words}); COMP_CWORD={cword}; COMP_LINE='{words}'; \
             COMP_POINT=${{#COMP_LINE}}; _perfq perfq; printf '%s\\n' \"${{COMPREPLY[@]}}\"",
            path.display()
        );
        let out = Command::new("bash")
            .args(["-c", &cmd])
            .output()
            .expect("bash");
        String::from_utf8_lossy(&out.stdout).into_owned()
    };
    assert!(complete("perfq top").lines().any(|l| l == "topdown"));
    assert!(complete("perfq topdown --le")
        .lines()
        .any(|l| l == "--level"));
}

#[test]
fn zsh_and_fish_read_their_completion_scripts() {
    for (shell, check) in [
        ("zsh", &["zsh", "-n"][..]),
        ("fish", &["fish", "--no-execute"][..]),
    ] {
        if !have(shell) {
            skip(format!(
                "{shell} is not installed (.ci/setup.sh installs it)"
            ));
            continue;
        }
        shell_accepts(shell, check);
    }
}

#[test]
fn man_renders_every_page() {
    if !have("man") {
        return skip("man-db is not installed (.ci/setup.sh installs it)");
    }
    let dir = tempfile::tempdir().expect("tempdir");
    succeeded(
        &perfq(&["man", "--dir", &dir.path().display().to_string()]),
        "perfq man --dir",
    );
    let mut pages: Vec<String> = std::fs::read_dir(dir.path())
        .expect("list pages")
        .map(|e| e.expect("entry").file_name().to_string_lossy().into_owned())
        .collect();
    pages.sort();
    for name in COMMANDS {
        assert!(pages.contains(&format!("perfq-{name}.1")), "{pages:?}");
    }
    assert!(pages.contains(&"perfq.1".to_string()));
    for page in &pages {
        let text = render(&dir.path().join(page));
        let title = page.trim_end_matches(".1");
        assert!(text.contains("NAME"), "{page}: {text}");
        assert!(text.contains(title), "{page} does not name {title}");
    }
    // The page printed on standard output is the one written to the folder.
    let printed = succeeded(&perfq(&["man", "topdown"]), "perfq man topdown");
    let written = std::fs::read_to_string(dir.path().join("perfq-topdown.1")).expect("read");
    assert_eq!(printed, written);
    let topdown = render(&dir.path().join("perfq-topdown.1"));
    assert!(topdown.contains("--level"), "{topdown}");
    assert!(topdown.contains("perfq topdown perf.data"), "{topdown}");
}

/// The page as `man -l` shows it, with no warning from groff.
fn render(page: &std::path::Path) -> String {
    let out = Command::new("man")
        .arg("-l")
        .arg(page)
        .env("MANPAGER", "cat")
        .env("MANWIDTH", "100")
        .env("MANROFFOPT", "-ww")
        .output()
        .expect("run man");
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(
        out.status.success() && err.trim().is_empty(),
        "man -l {}: {err}",
        page.display()
    );
    String::from_utf8_lossy(&out.stdout).into_owned()
}

#[test]
fn man_names_an_unknown_command_in_one_line() {
    let out = perfq(&["man", "nosuch"]);
    assert_eq!(out.status.code(), Some(1));
    let err = String::from_utf8_lossy(&out.stderr);
    assert_eq!(err.lines().count(), 1, "{err}");
    assert!(
        err.contains("no command nosuch") && err.contains("topdown"),
        "{err}"
    );
}
