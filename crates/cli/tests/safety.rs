//! Files from anyone: perfq's temporary folders and its archive reader.
//!
//! 1. Links and folders planted in the temporary folder at the names an
//!    older perfq used (`perfq-dataset-<pid>`, `perfq-archive-<pid>-<i>`,
//!    for the next few hundred process ids, and `-o FILE`'s temporary
//!    file): `--no-cache`, `--archive` and `-o` write nothing through
//!    them, and leave no perfq-named path behind, after success, after
//!    failure, and after Ctrl-C (SIGINT, exit 130).
//! 2. Hostile archives written by Python's `tarfile`, `bz2` and `zipfile`:
//!    absolute and `..` member names, a link to `/` with a member through
//!    it, a hard link out, ten gigabytes of zeros in a bzip2 member
//!    (unpacked, and passed over), a deflate bomb in a zip. Each is
//!    refused with one line naming the member, nothing is written outside
//!    the archive's folder, the peak RSS and the bytes written (the
//!    kernel's `wchar` of the process) stay bounded, and the rest of the
//!    batch is converted.

mod common;

use std::collections::BTreeSet;
use std::fs::File;
use std::path::Path;
use std::process::Command;
use std::time::{Duration, Instant};

/// What a perfq run left: its status, its standard error, its peak RSS
/// (KiB) and the bytes it wrote (`wchar`, polled until it exits).
struct Measured {
    status: i32,
    stdout: String,
    stderr: String,
    peak_rss_kib: i64,
    written: u64,
}

fn wchar(pid: i32) -> Option<u64> {
    let io = std::fs::read_to_string(format!("/proc/{pid}/io")).ok()?;
    io.lines()
        .find_map(|l| l.strip_prefix("wchar: "))
        .and_then(|v| v.trim().parse().ok())
}

/// Runs perfq with `TMPDIR` at `tmp`, sending SIGINT once `interrupt_when`
/// holds (if given).
#[expect(
    clippy::zombie_processes,
    reason = "reaped by wait4, which gives its rusage too"
)]
fn run(
    args: &[&str],
    tmp: &Path,
    cache: &Path,
    interrupt_when: Option<&dyn Fn() -> bool>,
) -> Measured {
    let err_path = tmp.with_extension("stderr");
    let out_path = tmp.with_extension("stdout");
    let child = Command::new(env!("CARGO_BIN_EXE_perfq"))
        .args(args)
        .current_dir(common::root())
        .env("TMPDIR", tmp)
        .env("PERFQ_CACHE_DIR", cache)
        .stdout(File::create(&out_path).expect("stdout file"))
        .stderr(File::create(&err_path).expect("stderr file"))
        .spawn()
        .expect("run perfq");
    let pid = child.id() as i32;
    let start = Instant::now();
    let mut written = 0;
    let mut interrupted = false;
    let (status, usage) = loop {
        written = wchar(pid).unwrap_or(written).max(written);
        if let Some(when) = interrupt_when {
            if !interrupted && when() {
                // SAFETY: kill has no memory preconditions.
                unsafe { libc::kill(pid, libc::SIGINT) };
                interrupted = true;
            }
        }
        let mut status = 0;
        // SAFETY: rusage is plain data the kernel fills.
        let mut usage: libc::rusage = unsafe { std::mem::zeroed() };
        // SAFETY: pid is our child; status and usage are valid for writes.
        let r = unsafe { libc::wait4(pid, &mut status, libc::WNOHANG, &mut usage) };
        if r == pid {
            break (status, usage);
        }
        assert!(start.elapsed() < Duration::from_secs(600), "perfq hangs");
        std::thread::sleep(Duration::from_millis(20));
    };
    let status = if libc::WIFEXITED(status) {
        libc::WEXITSTATUS(status)
    } else {
        128 + libc::WTERMSIG(status)
    };
    Measured {
        status,
        stdout: std::fs::read_to_string(&out_path).unwrap_or_default(),
        stderr: std::fs::read_to_string(&err_path).unwrap_or_default(),
        peak_rss_kib: usage.ru_maxrss,
        written,
    }
}

/// Fails naming what `tmp` holds of perfq's beyond what was `planted`.
fn only_planted(tmp: &Path, planted: &BTreeSet<String>, after: &str) {
    let now = perfq_named(tmp);
    let left: Vec<_> = now.difference(planted).collect();
    let gone: Vec<_> = planted.difference(&now).collect();
    assert!(
        left.is_empty() && gone.is_empty(),
        "{after}: left {left:?}, removed {gone:?}"
    );
}

/// The perfq-named entries of `dir`.
fn perfq_named(dir: &Path) -> BTreeSet<String> {
    std::fs::read_dir(dir)
        .expect("ls")
        .flatten()
        .map(|e| e.file_name().to_string_lossy().into_owned())
        .filter(|n| n.starts_with("perfq"))
        .collect()
}

/// Plants, for the next `n` process ids, a link to `victim` at each name
/// an older perfq used, and a folder of another run at a name of the new
/// pattern: what a run may not write through or take for its own.
fn plant(tmp: &Path, victim: &Path, n: u32) -> BTreeSet<String> {
    let first = std::process::id();
    for pid in first..first + n {
        for name in [
            format!("perfq-dataset-{pid}"),
            format!("perfq-archive-{pid}-0"),
        ] {
            std::os::unix::fs::symlink(victim, tmp.join(name)).expect("plant a link");
        }
        // The temporary file an older `-o tmp/out.csv` wrote through.
        let out = tmp.join(format!(".out.csv.tmp-{pid}"));
        std::os::unix::fs::symlink(victim.join("clobbered"), out).expect("plant a link");
    }
    perfq_named(tmp)
}

#[test]
fn temporary_folders_are_unguessable_and_removed() {
    let dir = common::scratch("safety", "temp");
    let (tmp, victim, cache) = (dir.join("tmp"), dir.join("victim"), dir.join("cache"));
    for d in [&tmp, &victim, &cache] {
        std::fs::create_dir_all(d).expect("mkdir");
    }
    let planted = plant(&tmp, &victim, 400);
    let spr = "testdata/topdown-spr.data";
    let archive = dir.join("symbols.tar.bz2");
    let made = Command::new("tar")
        .args(["-cjf", archive.to_str().expect("path"), "-C"])
        .arg(common::root().join("testdata"))
        .arg("README.md")
        .status()
        .expect("tar");
    assert!(made.success());
    let archive = archive.to_str().expect("path");
    let out = tmp.join("out.csv");
    let out = out.to_str().expect("path");
    let runs: [(&[&str], i32); 5] = [
        (&["topdown", "--no-cache", spr], 0),
        (&["query", spr, "SELECT 1 AS one", "-o", out], 0),
        (
            &["query", "--no-cache", spr, "SELECT COUNT(*) FROM samples"],
            0,
        ),
        (&["report", "--archive", archive, "testdata/fp.data"], 0),
        (
            &["query", "--no-cache", "testdata/README.md", "SELECT 1"],
            1,
        ),
    ];
    for (args, want) in runs {
        let m = run(args, &tmp, &cache, None);
        assert_eq!(m.status, want, "{args:?}: {}", m.stderr);
        only_planted(&tmp, &planted, &format!("{args:?}"));
        assert_eq!(
            std::fs::read_dir(&victim).expect("ls").count(),
            0,
            "{args:?}"
        );
    }

    // Interrupted while converting: a capture large enough to take a while.
    let big = dir.join("big.data");
    common::td_demo_capture(&big, &common::preset("sapphirerapids"), 400_000);
    let big = big.to_str().expect("path");
    let converting = || perfq_named(&tmp).len() > planted.len();
    let m = run(
        &["query", "--no-cache", big, "SELECT COUNT(*) FROM samples"],
        &tmp,
        &cache,
        Some(&converting),
    );
    assert_eq!(m.status, 130, "{}", m.stderr);
    assert!(m.stderr.contains("perfq: interrupted"), "{}", m.stderr);
    only_planted(&tmp, &planted, "Ctrl-C");
    assert_eq!(std::fs::read_dir(&victim).expect("ls").count(), 0);

    // Into a dataset: Ctrl-C leaves no half-written capture there.
    let dataset = dir.join("dataset");
    let started = || {
        std::fs::read_dir(&dataset).is_ok_and(|d| {
            d.flatten()
                .any(|e| e.file_name().to_string_lossy().starts_with(".tmp-capture-"))
        })
    };
    let m = run(
        &["convert", big, "-o", dataset.to_str().expect("path")],
        &tmp,
        &cache,
        Some(&started),
    );
    assert_eq!(m.status, 130, "{}", m.stderr);
    let left: Vec<_> = std::fs::read_dir(&dataset)
        .expect("ls")
        .flatten()
        .map(|e| e.file_name())
        .collect();
    assert!(left.is_empty(), "{left:?}");
    let _ = std::fs::remove_dir_all(&dir);
}

const HOSTILE: &str = r#"
import bz2, io, sys, tarfile, zipfile
out, victim, capture = sys.argv[1:4]
elf = "usr/lib/x/" + "ab" * 20 + "/elf"

def member(t, name, data=b"", kind=tarfile.REGTYPE, link=""):
    info = tarfile.TarInfo(name)
    info.type, info.linkname = kind, link
    info.size = len(data) if kind == tarfile.REGTYPE else 0
    t.addfile(info, io.BytesIO(data) if kind == tarfile.REGTYPE else None)

buf = io.BytesIO()
with tarfile.open(fileobj=buf, mode="w", format=tarfile.GNU_FORMAT) as t:
    member(t, victim + "/absolute", b"x")
    member(t, "../../../escaped", b"x")
    member(t, ".build-id/ab/root", kind=tarfile.SYMTYPE, link="/")
    member(t, ".build-id/ab/root" + victim + "/through-link", b"x")
    member(t, ".build-id/cd/hard", kind=tarfile.LNKTYPE, link=victim + "/target")
    member(t, "captures/fp.data", open(capture, "rb").read())
open(out + "/hostile.tar.bz2", "wb").write(bz2.compress(buf.getvalue()))

# Ten gigabytes of zeros as a build-id cache binary: a tar header, then
# one compressed 100 MB of zeros a hundred times (bzip2 streams joined).
info = tarfile.TarInfo(elf)
info.size = 100 * (100 << 20)
with open(out + "/bomb.tar.bz2", "wb") as f:
    f.write(bz2.compress(info.tobuf(format=tarfile.GNU_FORMAT)))
    chunk = bz2.compress(bytes(100 << 20))
    for _ in range(100):
        f.write(chunk)
    f.write(bz2.compress(bytes(1024)))

# The same ten gigabytes in a member perfq passes over (neither a
# capture nor a build-id cache file): reading past it decompresses it.
info = tarfile.TarInfo("notes/zeros")
info.size = 100 * (100 << 20)
with open(out + "/passed.tar.bz2", "wb") as f:
    f.write(bz2.compress(info.tobuf(format=tarfile.GNU_FORMAT)))
    for _ in range(100):
        f.write(chunk)
    f.write(bz2.compress(bytes(1024)))

# A gigabyte of zeros deflated to a megabyte.
with zipfile.ZipFile(out + "/bomb.zip", "w", zipfile.ZIP_DEFLATED) as z:
    z.writestr(elf, bytes(1 << 30))
"#;

#[test]
fn hostile_archives_are_refused_member_by_member() {
    let python = Command::new("python3")
        .arg("-c")
        .arg("import bz2, zipfile")
        .status();
    if !python.is_ok_and(|s| s.success()) {
        common::skip("no python3 with bz2 and zipfile to write the archives");
        return;
    }
    let dir = common::scratch("safety", "hostile");
    let (input, victim, tmp, cache) = (
        dir.join("in"),
        dir.join("victim"),
        dir.join("tmp"),
        dir.join("cache"),
    );
    for d in [&input, &victim, &tmp, &cache] {
        std::fs::create_dir_all(d).expect("mkdir");
    }
    std::fs::write(victim.join("target"), b"secret").expect("write");
    let made = Command::new("python3")
        .args(["-c", HOSTILE])
        .arg(&input)
        .arg(&victim)
        .arg(common::testdata("fp.data"))
        .output()
        .expect("python3");
    assert!(
        made.status.success(),
        "{}",
        String::from_utf8_lossy(&made.stderr)
    );
    std::fs::copy(common::testdata("group.data"), input.join("group.data")).expect("copy");
    // Deep, so that `../../../escaped` from a spool folder inside it
    // would land in `dir`.
    let dataset = dir.join("a/b/dataset");
    let m = run(
        &[
            "batch",
            input.to_str().expect("path"),
            "-o",
            dataset.to_str().expect("path"),
            "--format",
            "json",
        ],
        &tmp,
        &cache,
        None,
    );
    let reasons: Vec<String> = common::rows(&m.stdout)
        .iter()
        .filter_map(|r| r["reason"].as_str().map(str::to_string))
        .collect();
    let e = &reasons.join("\n");
    for member in [
        format!("member {}/absolute: refused", victim.display()),
        "member ../../../escaped: refused".to_string(),
        format!(
            "member .build-id/ab/root{}/through-link: refused",
            victim.display()
        ),
        "member .build-id/ab/root: refused".to_string(),
        "member .build-id/cd/hard: refused".to_string(),
    ] {
        assert!(e.contains(&member), "{member}: {e}");
    }
    let elf = format!("member usr/lib/x/{}/elf", "ab".repeat(20));
    assert_eq!(e.matches(&elf).count(), 2, "both bombs named: {e}");
    assert!(
        e.contains("member notes/zeros: the archive expands past"),
        "{e}"
    );
    assert_eq!(e.matches("decompression bomb").count(), 3, "{e}");
    // Nothing outside: the victim folder as it was, no escaped file.
    let names: BTreeSet<_> = std::fs::read_dir(&victim)
        .expect("ls")
        .flatten()
        .map(|e| e.file_name().to_string_lossy().into_owned())
        .collect();
    assert_eq!(names, BTreeSet::from(["target".to_string()]));
    assert!(!dir.join("escaped").exists() && !dir.join("a/escaped").exists());
    eprintln!(
        "hostile batch: {} bytes written, peak RSS {} KiB",
        m.written, m.peak_rss_kib
    );
    // Bounded: far below the 10 GB and 1 GB the bombs expand to.
    assert!(m.written < 1 << 30, "wrote {} bytes", m.written);
    assert!(m.peak_rss_kib < 1 << 20, "peak RSS {} KiB", m.peak_rss_kib);
    // The rest converted: the capture inside the hostile archive, and the
    // file beside it.
    let samples = common::perfq_rows(&[
        "query",
        dataset.to_str().expect("path"),
        "SELECT COUNT(*) AS n FROM capture",
        "--format",
        "json",
    ]);
    assert_eq!(samples[0]["n"], 2, "{samples:?}: {e}");
    // Failed inputs fail the batch, after the rest is converted.
    assert_eq!(m.status, 1, "{}", m.stderr);
    let _ = std::fs::remove_dir_all(&dir);
}
