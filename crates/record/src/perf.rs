//! The `perf` program the machine has: found on `PATH` as a shell finds
//! it, its version from `perf --version`.

use std::ffi::OsStr;
use std::path::{Path, PathBuf};
use std::process::Command;

use crate::version::Version;

/// A perf executable.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Perf {
    /// Where it is.
    pub path: PathBuf,
    /// Its version, when `perf --version` gives one.
    pub version: Option<Version>,
    /// What `perf --version` printed (or why it printed nothing).
    pub says: String,
}

fn executable(p: &Path) -> bool {
    use std::os::unix::fs::PermissionsExt;
    std::fs::metadata(p).is_ok_and(|m| m.is_file() && m.permissions().mode() & 0o111 != 0)
}

impl Perf {
    /// The first executable `perf` in the folders of `path` (a `PATH`
    /// value), asked for its version.
    pub fn find(path: &OsStr) -> Option<Perf> {
        let found = std::env::split_paths(path)
            .map(|d| d.join("perf"))
            .find(|p| executable(p))?;
        Some(Perf::at(found))
    }

    /// The perf at `path`, asked for its version.
    pub fn at(path: PathBuf) -> Perf {
        let (version, says) = match Command::new(&path).arg("--version").output() {
            Ok(out) => {
                let text = String::from_utf8_lossy(&out.stdout).trim().to_string();
                (Version::find(&text), text)
            }
            Err(e) => (None, format!("cannot run it: {e}")),
        };
        Perf {
            path,
            version,
            says,
        }
    }
}
