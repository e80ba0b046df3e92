//! Shared by the generator's tests: paths, a record of what was written,
//! perf runners and a reader of the feature sections perfq-reader keeps
//! as raw bytes.

#![allow(dead_code)]

use std::path::PathBuf;
use std::process::Command;

use perfq_testgen::{Emitted, Preset};

/// The repository root: relative mappings (`testdata/td-demo`) resolve
/// from here.
pub fn root() -> PathBuf {
    // Cargo sets the variable when it runs a test too; that one names
    // this checkout even when the binary was built in another one
    // sharing the target folder (CI's clean clones do).
    let manifest = std::env::var_os("CARGO_MANIFEST_DIR")
        .map(PathBuf::from)
        .unwrap_or_else(|| PathBuf::from(env!("CARGO_MANIFEST_DIR")));
    manifest
        .join("../..")
        .canonicalize()
        .expect("repository root")
}

/// A fresh folder for one test's files.
pub fn temp_dir(name: &str) -> PathBuf {
    let d = std::env::temp_dir().join(format!("perfq-testgen-{}-{name}", std::process::id()));
    let _ = std::fs::remove_dir_all(&d);
    std::fs::create_dir_all(&d).expect("temp dir");
    d
}

/// One sample as the generator wrote it.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Written {
    pub event: usize,
    pub sampler: usize,
    pub ip: u64,
    pub pid: u32,
    pub tid: u32,
    pub time: u64,
    pub cpu: u32,
    pub period: u64,
    pub user_chain: Vec<u64>,
    pub reads: Vec<(usize, u64)>,
    pub deltas: Vec<u64>,
    pub leaf: String,
}

impl Written {
    pub fn from(e: &Emitted<'_>) -> Written {
        let s = e.sample;
        Written {
            event: s.event,
            sampler: e.sampler,
            ip: s.ip,
            pid: s.pid,
            tid: s.tid,
            time: s.time,
            cpu: s.cpu,
            period: s.period,
            user_chain: s.callchain.user.to_vec(),
            reads: s.reads.to_vec(),
            deltas: e.deltas.to_vec(),
            leaf: e.leaf.to_string(),
        }
    }

    /// (event, delta) per member perf splits this sample into.
    pub fn members(&self, preset: &Preset) -> Vec<(usize, u64)> {
        let sampler = &preset.samplers[self.sampler];
        if sampler.reads.is_empty() {
            vec![(self.event, self.period)]
        } else {
            sampler
                .reads
                .iter()
                .copied()
                .zip(self.deltas.iter().copied())
                .collect()
        }
    }
}

/// Whether `perf` can be run; prints why a test skips when not.
pub fn have_perf(test: &str) -> bool {
    let ok = Command::new("perf")
        .arg("--version")
        .output()
        .is_ok_and(|o| o.status.success());
    if !ok {
        eprintln!("{test}: skipped, perf is not installed");
    }
    ok
}

/// Runs perf with `args` from the repository root; returns stdout and
/// stderr, failing the test on a non-zero exit.
pub fn perf(args: &[&str]) -> (String, String) {
    let out = Command::new("perf")
        .args(args)
        .current_dir(root())
        .env("PAGER", "cat")
        .output()
        .expect("run perf");
    let stdout = String::from_utf8_lossy(&out.stdout).into_owned();
    let stderr = String::from_utf8_lossy(&out.stderr).into_owned();
    assert!(
        out.status.success(),
        "perf {args:?} exited with {}: {stderr}",
        out.status
    );
    (stdout, stderr)
}

/// stderr lines of perf that signal a problem with the file. perf 6.1
/// built without libunwind for arm64 reports every arm64 capture's
/// threads as an unsupported unwind target when it prepares their maps,
/// whatever the file says (upstream later made it a one-time warning):
/// not a problem of the capture.
pub fn problems(stderr: &str, arch: &str) -> Vec<String> {
    stderr
        .lines()
        .filter(|l| !l.trim().is_empty())
        .filter(|l| {
            !(arch == "aarch64" && l.trim() == "unwind: target platform=arm64 is not supported")
        })
        .map(str::to_string)
        .collect()
}

/// A little-endian cursor over a feature section.
pub struct Cursor<'a>(pub &'a [u8]);

impl Cursor<'_> {
    pub fn u32(&mut self) -> u32 {
        let (a, b) = self.0.split_at(4);
        self.0 = b;
        u32::from_le_bytes(a.try_into().expect("4 bytes"))
    }

    /// A `perf_header_string`: u32 length, NUL-padded bytes.
    pub fn string(&mut self) -> String {
        let n = self.u32() as usize;
        assert_eq!(n % 64, 0, "perf pads header strings to 64");
        let (a, b) = self.0.split_at(n);
        self.0 = b;
        let end = a.iter().position(|&c| c == 0).expect("NUL-terminated");
        String::from_utf8(a[..end].to_vec()).expect("utf-8")
    }

    pub fn caps(&mut self) -> Vec<(String, String)> {
        let n = self.u32();
        (0..n).map(|_| (self.string(), self.string())).collect()
    }

    pub fn done(&self) -> bool {
        self.0.is_empty()
    }
}
