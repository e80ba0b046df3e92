//! perfq's temporary folders, and what Ctrl-C removes.
//!
//! A folder in the shared temporary folder is made by `tempfile`: a name
//! no other user can guess or plant in advance (a link or folder already
//! there is never used: the name is made anew), owner-only permissions.
//! Its name, `perfq-<what>-<pid>-<random>`, names the process, so that a
//! run killed before it could clean up (SIGKILL, a crash) has its folders
//! removed by the next run that makes one of the same kind. Every folder
//! is removed when its [`Scratch`] is dropped, on success and on error,
//! and by the Ctrl-C handler ([`remove_on_interrupt`]), which also
//! removes what this process was writing into a dataset
//! ([`writing_into`]).

use std::os::unix::fs::{MetadataExt, PermissionsExt};
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicBool, AtomicU32, Ordering};
use std::sync::{Mutex, MutexGuard};

use anyhow::Context;

/// The folders and files of this process to remove on Ctrl-C.
static LIVE: Mutex<Vec<PathBuf>> = Mutex::new(Vec::new());
/// The datasets this process writes captures into: their temporary
/// folders of this process go on Ctrl-C.
static DATASETS: Mutex<Vec<PathBuf>> = Mutex::new(Vec::new());

/// A list that a panic elsewhere left locked is still the list.
fn lock(list: &Mutex<Vec<PathBuf>>) -> MutexGuard<'_, Vec<PathBuf>> {
    list.lock().unwrap_or_else(|e| e.into_inner())
}

/// A temporary folder of this process, removed when dropped.
pub struct Scratch(tempfile::TempDir);

impl Scratch {
    /// A new folder `perfq-<what>-<pid>-<random>` in the temporary folder
    /// (`TMPDIR`), after removing those of its kind that killed runs left.
    pub fn new(what: &str) -> anyhow::Result<Scratch> {
        let parent = std::env::temp_dir();
        let prefix = format!("perfq-{what}-");
        remove_stale(&parent, &prefix);
        let dir = tempfile::Builder::new()
            .prefix(&format!("{prefix}{}-", std::process::id()))
            .permissions(std::fs::Permissions::from_mode(0o700))
            .tempdir_in(&parent)
            .with_context(|| format!("making a temporary folder in {}", parent.display()))?;
        lock(&LIVE).push(dir.path().to_path_buf());
        Ok(Scratch(dir))
    }

    pub fn path(&self) -> &Path {
        self.0.path()
    }
}

impl Drop for Scratch {
    fn drop(&mut self) {
        lock(&LIVE).retain(|p| p != self.0.path());
        // The TempDir removes the folder.
    }
}

/// A file or folder of this process that Ctrl-C removes, until dropped.
pub struct Tracked(PathBuf);

/// Removes `path` on Ctrl-C while the returned guard lives (its owner
/// removes it otherwise).
pub fn track(path: &Path) -> Tracked {
    lock(&LIVE).push(path.to_path_buf());
    Tracked(path.to_path_buf())
}

impl Drop for Tracked {
    fn drop(&mut self) {
        lock(&LIVE).retain(|p| p != &self.0);
    }
}

/// Says that this process writes captures into `dataset`, so that Ctrl-C
/// removes its half-written ones there (a killed run's are removed by the
/// next conversion into it).
pub fn writing_into(dataset: &Path) {
    let mut list = lock(&DATASETS);
    if !list.iter().any(|d| d == dataset) {
        list.push(dataset.to_path_buf());
    }
}

/// Set once Ctrl-C has come: the handler ends the process.
static INTERRUPTED: AtomicBool = AtomicBool::new(false);

/// The child (perf) that a Ctrl-C stops instead of perfq, while it runs.
static CHILD: AtomicU32 = AtomicU32::new(0);

/// Runs `f` while the process `child` runs in the foreground: a Ctrl-C
/// (SIGINT, SIGTERM, SIGHUP) then stops the child, not perfq.
pub fn while_child_runs<T>(child: u32, f: impl FnOnce() -> T) -> T {
    CHILD.store(child, Ordering::SeqCst);
    let result = f();
    CHILD.store(0, Ordering::SeqCst);
    result
}

/// Installs the Ctrl-C handler (SIGINT, SIGTERM and SIGHUP): it removes this
/// process's temporary folders and half-written captures, then exits with
/// status 130 as a shell's interrupted command does.
///
/// The other threads run on meanwhile and may make a folder again (a
/// conversion starting makes its dataset's folder), so the handler removes
/// everything twice, a moment apart; and the main thread, should it end
/// first, waits for the handler instead of exiting with its own status
/// ([`wait_if_interrupted`]).
pub fn remove_on_interrupt() {
    // Without a handler (another one installed first) an interrupt leaves
    // what the next run removes as a killed run's.
    let _ = ctrlc::set_handler(|| {
        let child = CHILD.load(Ordering::SeqCst);
        if child != 0 {
            // Ctrl-C is the user stopping the recording: perf has it too
            // (the terminal signals the whole process group; a SIGTERM or
            // SIGHUP is passed on), writes what it recorded and exits, and
            // perfq goes on to answer from it.
            // SAFETY: kill(2) on the child this process is waiting for.
            unsafe {
                libc::kill(child as libc::pid_t, libc::SIGINT);
            }
            return;
        }
        INTERRUPTED.store(true, Ordering::SeqCst);
        remove_everything();
        std::thread::sleep(std::time::Duration::from_millis(100));
        remove_everything();
        eprintln!("perfq: interrupted");
        std::process::exit(130);
    });
}

fn remove_everything() {
    for path in lock(&LIVE).iter() {
        if std::fs::remove_dir_all(path).is_err() {
            let _ = std::fs::remove_file(path);
        }
    }
    for dataset in lock(&DATASETS).iter() {
        perfq_writer::remove_own_temporaries(dataset);
    }
}

/// Once Ctrl-C has come, never returns: the handler removes what it must
/// and exits with status 130.
pub fn wait_if_interrupted() {
    while INTERRUPTED.load(Ordering::SeqCst) {
        std::thread::sleep(std::time::Duration::from_millis(50));
    }
}

/// Removes `parent`'s folders `<prefix><pid>-<random>` of this user whose
/// process no longer runs. Links and other users' folders are left alone;
/// nothing is removed where `/proc` cannot tell which processes run.
fn remove_stale(parent: &Path, prefix: &str) {
    if !Path::new("/proc/self").exists() {
        return;
    }
    let Ok(entries) = std::fs::read_dir(parent) else {
        return;
    };
    // SAFETY: geteuid has no preconditions and cannot fail.
    let uid = unsafe { libc::geteuid() };
    for entry in entries.flatten() {
        let name = entry.file_name();
        let Some(pid) = name
            .to_str()
            .and_then(|n| n.strip_prefix(prefix))
            .and_then(|rest| rest.split('-').next())
            .and_then(|pid| pid.parse::<u32>().ok())
        else {
            continue;
        };
        let path = entry.path();
        let ours = std::fs::symlink_metadata(&path).is_ok_and(|m| m.is_dir() && m.uid() == uid);
        if ours && pid != std::process::id() && !Path::new("/proc").join(pid.to_string()).exists() {
            let _ = std::fs::remove_dir_all(&path);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_scratch_folder_is_private_and_removed() {
        let s = Scratch::new("unit").expect("scratch");
        let path = s.path().to_path_buf();
        let mode = std::fs::metadata(&path).expect("stat").permissions().mode();
        assert_eq!(mode & 0o777, 0o700, "{path:?}");
        assert!(lock(&LIVE).contains(&path));
        drop(s);
        assert!(!path.exists());
        assert!(!lock(&LIVE).contains(&path));
    }

    #[test]
    fn a_dead_process_folder_goes_a_link_stays() {
        let parent = tempfile::tempdir().expect("tempdir");
        // No process has pid 2^31 - 1 (pid_max is at most 2^22).
        let dead = parent.path().join("perfq-unit-2147483647-abc");
        std::fs::create_dir(&dead).expect("mkdir");
        let target = parent.path().join("kept");
        std::fs::create_dir(&target).expect("mkdir");
        let link = parent.path().join("perfq-unit-2147483646-abc");
        std::os::unix::fs::symlink(&target, &link).expect("symlink");
        let running = parent
            .path()
            .join(format!("perfq-unit-{}-abc", std::process::id()));
        std::fs::create_dir(&running).expect("mkdir");
        remove_stale(parent.path(), "perfq-unit-");
        assert!(!dead.exists());
        assert!(link.symlink_metadata().is_ok() && target.is_dir());
        assert!(running.is_dir());
    }
}
