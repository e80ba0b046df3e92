//! Helpers shared by the integration tests: where things are, running
//! perfq (`run`) and perf, captures they write (`generated`).

#![allow(dead_code)]

mod generated;
pub mod proxy;
mod run;
pub mod s3;

use std::path::{Path, PathBuf};
use std::process::Command;

// Each test file uses a part of these.
#[allow(unused_imports)]
pub use generated::*;
pub use perfq_testgen::oracle::skip;
#[allow(unused_imports)]
pub use run::*;

/// The workspace root. `cargo test` gives the package's folder at run
/// time too; that one is preferred, because a test binary built in a
/// target folder shared with another checkout of the workspace (cargo
/// reuses it: paths in its fingerprints are relative) carries the other
/// checkout's path.
pub fn root() -> PathBuf {
    std::env::var_os("CARGO_MANIFEST_DIR")
        .map_or_else(|| PathBuf::from(env!("CARGO_MANIFEST_DIR")), PathBuf::from)
        .join("../..")
}

/// The corpus of real captures, which is not in the repository:
/// `PERFQ_CORPUS`, else `../shared/corpus` beside the checkout, if it holds
/// a `catalog.json` (docs/testing.md). Tests that need it skip without it.
pub fn corpus() -> Option<PathBuf> {
    let dir = std::env::var_os("PERFQ_CORPUS")
        .map(PathBuf::from)
        .unwrap_or_else(|| root().join("../shared/corpus"));
    dir.join("catalog.json").is_file().then_some(dir)
}

/// The corpus catalog's entries.
pub fn catalog(corpus: &Path) -> Vec<serde_json::Value> {
    let text = std::fs::read_to_string(corpus.join("catalog.json")).expect("read catalog");
    serde_json::from_str(&text).expect("parse catalog")
}

/// Whether `py` imports every module of `modules` (comma-separated).
pub fn imports(py: &Path, modules: &str) -> bool {
    Command::new(py)
        .args(["-c", &format!("import {modules}")])
        .output()
        .is_ok_and(|o| o.status.success())
}

/// The Python that imports `modules` (comma-separated): `PERFQ_PYTHON`,
/// else the virtualenv `.ci/setup.sh` makes (`PERFQ_VENV`, by default
/// `~/.cache/perfq-venv`), else `python3`, the first that does. The tests
/// install nothing themselves.
pub fn python_with(modules: &str) -> Option<PathBuf> {
    std::env::var_os("PERFQ_PYTHON")
        .map(PathBuf::from)
        .into_iter()
        .chain(venv().map(|v| v.join("bin/python")))
        .chain([PathBuf::from("python3")])
        .find(|py| imports(py, modules))
}

/// The virtualenv `.ci/setup.sh` installs the oracles from PyPI into:
/// `PERFQ_VENV`, by default `~/.cache/perfq-venv`.
pub fn venv() -> Option<PathBuf> {
    std::env::var_os("PERFQ_VENV")
        .map(PathBuf::from)
        .or_else(|| std::env::var_os("HOME").map(|h| PathBuf::from(h).join(".cache/perfq-venv")))
}

/// Copies a screenshot a test took into `PERFQ_SCREENSHOTS` (a folder),
/// when it is set, as `name`: docs/viewing.md shows them
/// (`PERFQ_SCREENSHOTS=docs/images cargo test ...`).
pub fn keep_screenshot(png: &Path, name: &str) {
    if let Some(dir) = std::env::var_os("PERFQ_SCREENSHOTS") {
        let dir = PathBuf::from(dir);
        let dir = if dir.is_relative() {
            root().join(dir)
        } else {
            dir
        };
        std::fs::create_dir_all(&dir).expect("screenshot folder");
        std::fs::copy(png, dir.join(name)).expect("copy the screenshot");
    }
}

/// The captures of `testdata/` recorded by perf (`testdata/record.sh`; the
/// generated `topdown-spr.data` aside).
pub const RECORDED: &[&str] = &[
    "fp.data",
    "dwarf.data",
    "group.data",
    "multi.data",
    "compressed.data",
    "pipe.data",
    "group-pipe.data",
];

/// A capture in `testdata/`.
pub fn testdata(name: &str) -> PathBuf {
    root().join("testdata").join(name)
}

/// A fresh folder of its own for one test: `perfq-<tag>-<name>-<pid>`
/// under the temporary folder, emptied if a previous test run left it.
pub fn scratch(tag: &str, name: &str) -> PathBuf {
    let d = std::env::temp_dir().join(format!("perfq-{tag}-{name}-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&d);
    std::fs::create_dir_all(&d).expect("scratch folder");
    d
}

/// Runs gcc with `args` in `dir`: whether it built.
pub fn gcc(dir: &Path, args: &[&str]) -> bool {
    Command::new("gcc")
        .args(args)
        .current_dir(dir)
        .status()
        .is_ok_and(|s| s.success())
}

/// Builds the C test program of `tests/programs` into `dir`: `prog` (its
/// own functions, an always-inlined helper) and `libhot.so`, which it
/// calls, with frame pointers and DWARF.
pub fn build_c_program(dir: &Path) -> bool {
    let src = root().join("crates/cli/tests/programs");
    let (Some(lib), Some(prog)) = (
        src.join("libhot.c").to_str().map(str::to_owned),
        src.join("prog.c").to_str().map(str::to_owned),
    ) else {
        return false;
    };
    let flags = ["-O2", "-g", "-fno-omit-frame-pointer"];
    let lib_args = [&lib, "-shared", "-fPIC", "-o", "libhot.so"];
    let prog_args = [&prog, "-L.", "-lhot", "-Wl,-rpath,$ORIGIN", "-o", "prog"];
    gcc(dir, &[&flags[..], &lib_args[..]].concat())
        && gcc(dir, &[&flags[..], &prog_args[..]].concat())
}

/// The C test program built into a scratch folder of its own (`tag`,
/// `name`), or `None` after saying why `what` is not checked (perf cannot
/// record here, or no gcc).
pub fn c_program_or_skip(tag: &str, name: &str, what: &str) -> Option<PathBuf> {
    if !have_perf() || !can_record() {
        skip(format_args!("perf cannot record here; {what} not checked"));
        return None;
    }
    let dir = scratch(tag, name);
    if !build_c_program(&dir) {
        skip(format_args!("gcc is not available; {what} not checked"));
        return None;
    }
    Some(dir)
}

/// Records `command`, run in `dir`, into `dir/out`: `perf [perf_opts]
/// record -q -F 4000 -e cpu-clock -o dir/out [record_opts] -- command`
/// (a later `-F` in `record_opts` wins). Panics with perf's message if it
/// fails: callers have checked [`can_record`].
pub fn record(
    dir: &Path,
    out: &str,
    perf_opts: &[&str],
    record_opts: &[&str],
    command: &[&str],
) -> PathBuf {
    let data = dir.join(out);
    let st = Command::new("perf")
        .args(perf_opts)
        .args(["record", "-q", "-F", "4000", "-e", "cpu-clock", "-o"])
        .arg(&data)
        .args(record_opts)
        .arg("--")
        .args(command)
        .current_dir(dir)
        .output()
        .expect("perf record");
    assert!(
        st.status.success(),
        "perf record: {}",
        String::from_utf8_lossy(&st.stderr)
    );
    data
}

/// Whether `perf` runs here.
pub fn have_perf() -> bool {
    Command::new("perf")
        .arg("--version")
        .output()
        .is_ok_and(|o| o.status.success())
}

/// Whether `perf record` of a software event works here (permissions).
pub fn can_record() -> bool {
    Command::new("perf")
        .args([
            "record",
            "-q",
            "-o",
            "/dev/null",
            "-e",
            "cpu-clock",
            "--",
            "true",
        ])
        .output()
        .is_ok_and(|o| o.status.success())
}

/// `Ok` if the user-space binaries `capture` recorded are at their
/// recorded paths with the build ids it recorded (the machine that
/// recorded `testdata/` has them), else which one is not. On another
/// machine perf and perfq both leave those binaries' frames unnamed and
/// agree, but a test that needs them named has nothing to check: it skips
/// with this reason (and fails where oracles are required).
pub fn recorded_binaries_here(capture: &Path) -> Result<(), String> {
    let list = perf(&["buildid-list", "-i", &capture.to_string_lossy()])
        .ok_or_else(|| format!("perf buildid-list -i {} failed", capture.display()))?;
    for line in list.lines() {
        // "<build id> <path>", or the path alone where perf recorded no
        // build id (the file at the path is then used as it is).
        let line = line.trim();
        let (id, path) = match line.split_once(' ') {
            Some((id, path)) if !id.starts_with(['/', '[']) => (id, path.trim()),
            _ => ("", line),
        };
        if !path.starts_with('/') {
            continue;
        }
        if id.is_empty() {
            if !Path::new(path).is_file() {
                return Err(format!(
                    "{} recorded {path}, absent here",
                    capture.display()
                ));
            }
            continue;
        }
        let here = elf_build_id(path);
        if here.as_deref() != Some(id) {
            return Err(format!(
                "{} recorded {path} with build id {id}, and this machine's {path} is {}",
                capture.display(),
                here.unwrap_or_else(|| "absent or without one".to_string())
            ));
        }
    }
    Ok(())
}

/// The build id of the ELF file at `path`, in hex, as perf reads it.
fn elf_build_id(path: &str) -> Option<String> {
    let id = perf(&["buildid-list", "-i", path])?;
    let id = id.trim();
    (!id.is_empty() && id.bytes().all(|b| b.is_ascii_hexdigit())).then(|| id.to_string())
}

/// `Ok` if the running system's libc has its debug file (`libc6-dbg`, which
/// `.ci/setup.sh` installs) under `/usr/lib/debug/.build-id`, else why
/// not. Without it libc has only its dynamic symbols, and perf, expanding
/// inlined frames through addr2line, names some of its frames otherwise.
pub fn libc_debug_info_here() -> Result<(), String> {
    let libc = [
        "/usr/lib/x86_64-linux-gnu/libc.so.6",
        "/lib/x86_64-linux-gnu/libc.so.6",
    ]
    .into_iter()
    .find(|p| Path::new(p).is_file())
    .ok_or("no libc.so.6 found")?;
    let id = elf_build_id(libc).ok_or_else(|| format!("{libc} has no build id"))?;
    let debug = format!("/usr/lib/debug/.build-id/{}/{}.debug", &id[..2], &id[2..]);
    if Path::new(&debug).is_file() {
        Ok(())
    } else {
        Err(format!(
            "{libc} has no debug file ({debug}; libc6-dbg installs it)"
        ))
    }
}

/// Runs perf with `args`, returning stdout, or `None` if it failed.
pub fn perf(args: &[&str]) -> Option<String> {
    let o = Command::new("perf").args(args).output().ok()?;
    o.status
        .success()
        .then(|| String::from_utf8_lossy(&o.stdout).into_owned())
}

/// The "Aggregated stats" of `perf report -D`: record type → count.
pub fn perf_report_d_counts(file: &Path) -> Option<std::collections::BTreeMap<String, u64>> {
    let out = perf(&["report", "-D", "-i", file.to_str()?])?;
    let mut counts = std::collections::BTreeMap::new();
    let mut in_stats = false;
    for line in out.lines() {
        if line.starts_with("Aggregated stats") {
            in_stats = true;
            continue;
        }
        if !in_stats {
            continue;
        }
        // "          SAMPLE events:         27  (61.4%)"; per-event sections
        // follow as "<name> stats:" and end the aggregate.
        if line.ends_with(" stats:") {
            break;
        }
        let Some((name, rest)) = line.trim().split_once(" events:") else {
            continue;
        };
        let n: u64 = rest.split_whitespace().next()?.parse().ok()?;
        // perf's table says ATTR, FEATURE, ... for the HEADER_* records.
        let name = match name {
            "ATTR" | "EVENT_TYPE" | "TRACING_DATA" | "BUILD_ID" | "FEATURE" => {
                format!("HEADER_{name}")
            }
            n => n.to_string(),
        };
        if name != "TOTAL" && n > 0 {
            counts.insert(name, n);
        }
    }
    Some(counts)
}

/// One sample as `perf report -D` prints it.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct PerfDumpSample {
    pub cpu: Option<u32>,
    pub time: Option<u64>,
    pub pid: i64,
    pub tid: i64,
    pub ip: u64,
    pub period: u64,
    /// Callchain entries, markers included.
    pub chain: Vec<u64>,
    /// (id, value, lost) per read value.
    pub read: Vec<(u64, u64, Option<u64>)>,
    pub regs_abi: Option<String>,
    pub regs: Vec<u64>,
    pub ustack_size: Option<u64>,
}

fn hex_u64(s: &str) -> Option<u64> {
    u64::from_str_radix(s.trim().trim_start_matches("0x"), 16).ok()
}

/// (file offset, size, type) of a top-level record, as `perf report -D`
/// lists them.
pub type RecordPos = (u64, u64, u32);

/// Every sample of `perf report -D`, in the order perf delivers them (time
/// order), and the position of every record in file order.
pub fn perf_report_d(file: &Path) -> Option<(Vec<PerfDumpSample>, Vec<RecordPos>)> {
    let out = perf(&["report", "-D", "-i", file.to_str()?])?;
    let mut samples = Vec::new();
    let mut records = Vec::new();
    let mut cur: Option<PerfDumpSample> = None;
    let mut section = "";
    for line in out.lines() {
        // "0x3aa8@fp.data [0x98]: event: 9"
        if let Some((off, rest)) = line.split_once('@') {
            if let (Some(off), Some((_, r))) = (hex_u64(off), rest.split_once(" [0x")) {
                if let Some((size, ty)) = r.split_once("]: event: ") {
                    if let (Some(size), Ok(ty)) = (hex_u64(size), ty.trim().parse()) {
                        records.push((off, size, ty));
                    }
                }
            }
        }
        if let Some(pos) = line.find(": PERF_RECORD_SAMPLE(") {
            if let Some(s) = cur.take() {
                samples.push(s);
            }
            let head: Vec<&str> = line[..pos].split_whitespace().collect();
            // [cpu] [time] offset [size]
            let nums: Vec<u64> = head
                .iter()
                .take_while(|t| !t.starts_with("0x"))
                .filter_map(|t| t.parse().ok())
                .collect();
            let mut s = PerfDumpSample::default();
            match nums.as_slice() {
                [cpu, time] => {
                    s.cpu = Some(*cpu as u32);
                    s.time = Some(*time);
                }
                [time] => s.time = Some(*time),
                _ => {}
            }
            let rest = &line[pos..];
            let after = rest.split_once("): ")?.1;
            let mut it = after.split_whitespace();
            let (pid, tid) = it.next()?.trim_end_matches(':').split_once('/')?;
            s.pid = pid.parse().ok()?;
            s.tid = tid.parse().ok()?;
            s.ip = hex_u64(it.next()?)?;
            let _ = it.next(); // "period:"
            s.period = it.next()?.parse().ok()?;
            cur = Some(s);
            section = "";
            continue;
        }
        let Some(s) = cur.as_mut() else { continue };
        let t = line.trim_start();
        if t.is_empty() {
            samples.push(cur.take()?);
            continue;
        }
        if t.starts_with("... FP chain") || t.starts_with("... chain") {
            section = "chain";
        } else if t.starts_with("... sample_read") {
            section = "read";
        } else if let Some(r) = t.strip_prefix("... user regs: mask ") {
            section = "regs";
            s.regs_abi = r.split_once("ABI ").map(|x| x.1.to_string());
        } else if let Some(r) = t.strip_prefix("... ustack: size ") {
            section = "";
            s.ustack_size = r.split(',').next().and_then(|v| v.trim().parse().ok());
        } else if t.starts_with("... ") || t.starts_with(" . ") || t.starts_with(". ") {
            section = "";
        } else if section == "chain" && t.starts_with(".....") {
            if let Some((_, v)) = t.trim_start_matches('.').split_once(':') {
                s.chain.push(hex_u64(v)?);
            }
        } else if section == "read" && t.starts_with("..... id ") {
            // "..... id 000000000000003a, value 0000000000041b2b, lost 0"
            let parts: Vec<&str> = t
                .trim_start_matches('.')
                .split(',')
                .map(str::trim)
                .collect();
            let id = hex_u64(parts.first()?.strip_prefix("id ")?)?;
            let value = hex_u64(parts.get(1)?.strip_prefix("value ")?)?;
            let lost = parts
                .get(2)
                .and_then(|l| l.strip_prefix("lost "))
                .and_then(|l| l.parse().ok());
            s.read.push((id, value, lost));
        } else if section == "regs" && t.starts_with(".... ") {
            if let Some(v) = t.split_whitespace().last() {
                s.regs.push(hex_u64(v)?);
            }
        }
    }
    if let Some(s) = cur {
        samples.push(s);
    }
    Some((samples, records))
}

/// Reads a hex string field of a dump object.
pub fn hex_field(v: &serde_json::Value) -> Option<u64> {
    v.as_str().and_then(hex_u64)
}

/// perf 6.12 unpacked by `.ci/perf612.sh`, if present: it reads captures of
/// perf >= 6.3 that the installed perf refuses.
pub fn perf612() -> Option<Command> {
    let dir = std::env::var_os("PERFQ_PERF612_DIR")
        .map(PathBuf::from)
        .or_else(|| {
            std::env::var_os("HOME").map(|h| PathBuf::from(h).join(".cache/perfq-perf612"))
        })?;
    let bin = dir.join("root/usr/bin/perf");
    if !bin.is_file() {
        return None;
    }
    let mut c = Command::new(bin);
    c.env("LD_LIBRARY_PATH", dir.join("root/usr/lib/x86_64-linux-gnu"));
    Some(c)
}

/// `perf script -F brstack` of `file`, a line per sample, each entry cut to
/// from/to/M-or-P/X/A/cycles (what both perf 6.1 and perfq give).
#[allow(dead_code)]
pub fn perf_brstack(file: &Path) -> Option<Vec<String>> {
    let script = perf(&["script", "-i", file.to_str()?, "-F", "brstack"])?;
    Some(
        script
            .lines()
            .map(|l| {
                l.split_whitespace()
                    .map(|t| t.split('/').take(6).collect::<Vec<_>>().join("/"))
                    .collect::<Vec<_>>()
                    .join(" ")
            })
            .collect(),
    )
}
