//! The Python wheel (crates/python), as a user gets it: built by maturin
//! from this checkout, installed into a new virtualenv that has no Rust
//! toolchain on its PATH, and tested there by pytest
//! (crates/python/tests), which compares every function's answer with the
//! `perfq` binary's.
//!
//! The wheel is built with the test build's profile into the test build's
//! target folder, so that it reuses the compiled dependencies. The
//! virtualenv takes pyarrow, pandas, Polars, DuckDB and pytest from the
//! oracles' virtualenv (`.ci/setup.sh`) through a `.pth` file; the wheel
//! itself is installed from its file alone (`--no-index`).

mod common;

use std::path::{Path, PathBuf};
use std::process::Command;

use common::*;

/// The modules the tests import besides perfq.
const MODULES: &str = "pyarrow, pandas, polars, duckdb, pytest, matplotlib";

/// Samples of the capture the interruption tests stop (enough for a
/// conversion and a query of several seconds in a test build) and whose
/// samples are read in bounded memory.
const LARGE_SAMPLES: u64 = 500_000;

#[test]
fn the_wheel_passes_its_tests() {
    let Some(venv) = venv().filter(|v| imports(&v.join("bin/python"), MODULES)) else {
        return skip(format!(
            "no virtualenv with {MODULES} (.ci/setup.sh makes it)"
        ));
    };
    let maturin = venv.join("bin/maturin");
    if !maturin.is_file() {
        return skip("no maturin in the oracles' virtualenv (.ci/setup.sh installs it)");
    }
    let dir = scratch("python", "wheel");
    let wheel = build_wheel(&maturin, &dir.join("wheels"));
    let env = install(&wheel, &venv, &dir.join("venv"));
    let large = td_demo_capture(
        &dir.join("large.data"),
        &preset("sapphirerapids"),
        LARGE_SAMPLES,
    );
    let out = Command::new(env.join("bin/python"))
        .args(["-m", "pytest", "-q", "-rs", "-p", "no:cacheprovider"])
        .arg(root().join("crates/python/tests"))
        // From the checkout's root, as the README's commands run: the
        // generated capture names testdata/td-demo by that relative path.
        .current_dir(root())
        .env("PYTHONDONTWRITEBYTECODE", "1")
        .env("PATH", path_without_rust())
        .env("PERFQ_BIN", env!("CARGO_BIN_EXE_perfq"))
        .env("PERFQ_ROOT", root())
        .env("PERFQ_LARGE_CAPTURE", &large)
        .env("PERFQ_LARGE_SAMPLES", LARGE_SAMPLES.to_string())
        .env_remove("PYTHONPATH")
        .output()
        .expect("run pytest");
    let text = format!(
        "{}{}",
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr)
    );
    eprintln!("{text}");
    assert!(out.status.success(), "pytest failed");
    assert!(!text.contains("skipped"), "a Python test skipped");
    std::fs::remove_dir_all(&dir).ok();
}

/// The variables the wheel's build keeps from the test's environment.
const KEPT: &[&str] = &[
    "PATH",
    "HOME",
    "USER",
    "LANG",
    "TMPDIR",
    "CARGO_HOME",
    "RUSTUP_HOME",
    "RUSTUP_TOOLCHAIN",
    "RUSTFLAGS",
    "CARGO_ENCODED_RUSTFLAGS",
    "CARGO_TERM_COLOR",
];

/// Builds the wheel with the test build's profile and target folder into
/// `out`, and returns its path.
fn build_wheel(maturin: &Path, out: &Path) -> PathBuf {
    // CARGO_TARGET_TMPDIR is <target folder>/tmp.
    let target = Path::new(env!("CARGO_TARGET_TMPDIR"))
        .parent()
        .expect("the target folder");
    // Only the environment a build reads: what cargo sets for a test (its
    // package's variables, the test's library path, ...) would make cargo
    // build the dependencies again for this one.
    let mut maturin = Command::new(maturin);
    maturin.env_clear();
    for name in KEPT {
        if let Some(value) = std::env::var_os(name) {
            maturin.env(name, value);
        }
    }
    let built = maturin
        .args(["build", "--profile", "dev", "--quiet", "--out"])
        .arg(out)
        .current_dir(root())
        .env("CARGO_TARGET_DIR", target)
        .output()
        .expect("run maturin");
    succeeded(&built, "maturin build");
    let wheels: Vec<PathBuf> = std::fs::read_dir(out)
        .expect("the wheel folder")
        .map(|e| e.expect("entry").path())
        .filter(|p| p.extension().is_some_and(|e| e == "whl"))
        .collect();
    assert_eq!(wheels.len(), 1, "{wheels:?}");
    wheels[0].clone()
}

/// A new virtualenv at `env` with the wheel installed from its file, and
/// the oracles' modules visible; returns `env`.
fn install(wheel: &Path, oracles: &Path, env: &Path) -> PathBuf {
    let made = Command::new("python3")
        .args(["-m", "venv"])
        .arg(env)
        .status()
        .expect("python3 -m venv");
    assert!(made.success(), "python3 -m venv failed");
    let site = |python: &Path| {
        let out = Command::new(python)
            .args([
                "-c",
                "import sysconfig; print(sysconfig.get_paths()['purelib'])",
            ])
            .output()
            .expect("ask for site-packages");
        PathBuf::from(String::from_utf8_lossy(&out.stdout).trim())
    };
    let theirs = site(&oracles.join("bin/python"));
    std::fs::write(
        site(&env.join("bin/python")).join("oracles.pth"),
        format!("{}\n", theirs.display()),
    )
    .expect("write oracles.pth");
    let pip = Command::new(env.join("bin/python"))
        .args(["-m", "pip", "install", "--quiet", "--no-index", "--no-deps"])
        .arg(wheel)
        .env("PATH", path_without_rust())
        .status()
        .expect("pip install");
    assert!(pip.success(), "pip install {} failed", wheel.display());
    env.to_path_buf()
}

/// PATH without the folders that hold cargo or rustc.
fn path_without_rust() -> String {
    let path = std::env::var_os("PATH").unwrap_or_default();
    let kept: Vec<PathBuf> = std::env::split_paths(&path)
        .filter(|d| !d.join("cargo").exists() && !d.join("rustc").exists())
        .collect();
    std::env::join_paths(kept)
        .expect("PATH")
        .to_string_lossy()
        .into_owned()
}
