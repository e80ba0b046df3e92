//! A capture's folder in a dataset, written under a temporary name and
//! renamed into place when complete.

use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicU64, Ordering};

use perfq_stream::Notes;

use crate::table::{Column, Table};
use crate::Error;

/// Prefix of the folder a capture is written into before it is renamed
/// into place: `.tmp-capture-<id>-<pid>-<n>`. Without an `=` in its name
/// it is no partition folder, so queries never list it: DataFusion skips
/// subfolders that are not `key=value` (and reads every footer of those it
/// lists when it infers a table's schema: a half-written file there broke
/// the query), DuckDB and Spark read `capture=*` only.
const TMP_PREFIX: &str = ".tmp-capture-";
/// What earlier versions named them, `.tmp-capture=<id>-<pid>` (a
/// partition folder to DataFusion: such a leftover breaks queries).
const OLD_TMP_PREFIX: &str = ".tmp-capture=";

/// Prefix of the file a capture's writer holds locked,
/// `.lock-capture-<id>`: hidden, and not a table file, so no engine reads
/// it.
const LOCK_PREFIX: &str = ".lock-capture-";

/// The lock files this process holds: an interrupted process removes them
/// (`remove_own_temporaries`).
static HELD: std::sync::Mutex<Vec<PathBuf>> = std::sync::Mutex::new(Vec::new());

fn held() -> std::sync::MutexGuard<'static, Vec<PathBuf>> {
    HELD.lock().unwrap_or_else(|e| e.into_inner())
}

/// The right to write (or remove) one capture of a dataset: an empty file
/// locked with `flock`, removed and unlocked when dropped. A writer that
/// waited on it finds the capture written when it gets it. (One that
/// opens the file just as it is removed makes a new one and may convert
/// the capture a second time; the rename into place then tells it the
/// capture is there.)
struct CaptureLock {
    path: PathBuf,
    _file: std::fs::File,
}

impl CaptureLock {
    fn take(dataset: &Path, capture_id: &str) -> Result<CaptureLock, Error> {
        let path = dataset.join(format!("{LOCK_PREFIX}{capture_id}"));
        let file = std::fs::File::options()
            .create(true)
            .truncate(false)
            .write(true)
            .open(&path)
            .map_err(|e| Error::io(&path, e))?;
        file.lock().map_err(|e| Error::io(&path, e))?;
        held().push(path.clone());
        Ok(CaptureLock { path, _file: file })
    }
}

impl Drop for CaptureLock {
    fn drop(&mut self) {
        // Removed before the file closes and the lock goes with it.
        let _ = std::fs::remove_file(&self.path);
        held().retain(|p| p != &self.path);
    }
}

/// Tells apart two folders one process writes at once for the same
/// capture (a batch given the same file twice).
static NEXT_TMP: AtomicU64 = AtomicU64::new(0);

/// Writes the tables of one capture.
pub struct CaptureWriter {
    tmp: PathBuf,
    dest: PathBuf,
    force: bool,
    done: bool,
    /// Held while the capture is written.
    _lock: CaptureLock,
}

impl CaptureWriter {
    /// Prepares `dataset/capture=<id>/`: tables are written into a hidden
    /// temporary folder beside it. Fails if the capture exists and `force`
    /// is false.
    ///
    /// One writer of a capture at a time: a process (or thread) that
    /// finds another writing the same capture into the same dataset waits
    /// for it, then finds the capture there. Two commands asking about one
    /// capture on a cold cache convert it once.
    pub fn create(dataset: &Path, capture_id: &str, force: bool) -> Result<CaptureWriter, Error> {
        std::fs::create_dir_all(dataset).map_err(|e| Error::io(dataset, e))?;
        let lock = CaptureLock::take(dataset, capture_id)?;
        let dest = dataset.join(format!("capture={capture_id}"));
        if dest.exists() && !force {
            return Err(Error::Exists(dest));
        }
        let tmp = dataset.join(format!(
            "{TMP_PREFIX}{capture_id}-{}-{}",
            std::process::id(),
            NEXT_TMP.fetch_add(1, Ordering::Relaxed)
        ));
        if tmp.exists() {
            std::fs::remove_dir_all(&tmp).map_err(|e| Error::io(&tmp, e))?;
        }
        std::fs::create_dir_all(&tmp).map_err(|e| Error::io(&tmp, e))?;
        Ok(CaptureWriter {
            tmp,
            dest,
            force,
            done: false,
            _lock: lock,
        })
    }

    /// Starts table `name` (`name.parquet`) with the given columns.
    pub fn table(&self, name: &str, columns: &[Column<'_>]) -> Result<Table, Error> {
        Table::create(&self.tmp.join(format!("{name}.parquet")), columns)
    }

    /// Moves the finished capture into place (replacing an old one when
    /// forced) and returns its folder.
    pub fn finish(mut self) -> Result<PathBuf, Error> {
        if self.dest.exists() {
            if !self.force {
                return Err(Error::Exists(self.dest.clone()));
            }
            std::fs::remove_dir_all(&self.dest).map_err(|e| Error::io(&self.dest, e))?;
        }
        if let Err(e) = std::fs::rename(&self.tmp, &self.dest) {
            // Another process (or thread) converting the same capture got
            // there first: its folder is as good as this one.
            if !self.force && self.dest.is_dir() {
                return Err(Error::Exists(self.dest.clone()));
            }
            return Err(Error::io(&self.dest, e));
        }
        self.done = true;
        Ok(self.dest.clone())
    }
}

impl Drop for CaptureWriter {
    /// An unfinished capture leaves nothing behind.
    fn drop(&mut self) {
        if !self.done {
            let _ = std::fs::remove_dir_all(&self.tmp);
        }
    }
}

/// Removes capture `id` from `dataset`, waiting for a writer of it to
/// finish first. A query reading it at the
/// time may fail: the folder goes whole, not table by table.
pub fn remove_capture(dataset: &Path, id: &str) -> Result<(), Error> {
    let dir = dataset.join(format!("capture={id}"));
    let _lock = CaptureLock::take(dataset, id)?;
    match std::fs::remove_dir_all(&dir) {
        Ok(()) => Ok(()),
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => Ok(()),
        Err(e) => Err(Error::io(&dir, e)),
    }
}

/// Removes what writers killed before they finished left in `dataset`:
/// folders named for a process that no longer runs (`.tmp-capture-…-<pid>-<n>`,
/// and `prefix<pid>` for each of `prefixes`). Returns what was removed.
/// Nothing is removed where `/proc` cannot tell which processes run.
pub fn remove_stale(dataset: &Path, prefixes: &[&str]) -> Vec<PathBuf> {
    if !Path::new("/proc/self").exists() {
        return Vec::new();
    }
    remove_temporaries(dataset, prefixes, |pid| {
        pid != std::process::id() && !Path::new("/proc").join(pid.to_string()).exists()
    })
}

/// Removes what this process is writing into `dataset` (its half-written
/// captures and a batch's spooled members): for a process that is being
/// interrupted. Returns what was removed.
pub fn remove_own_temporaries(dataset: &Path) -> Vec<PathBuf> {
    let mut removed = remove_temporaries(dataset, &[crate::batch::SPOOL_PREFIX], |pid| {
        pid == std::process::id()
    });
    for lock in held().iter().filter(|l| l.parent() == Some(dataset)) {
        if std::fs::remove_file(lock).is_ok() {
            removed.push(lock.clone());
        }
    }
    removed
}

/// Removes `dataset`'s temporary folders (a capture's, and `prefix<pid>`
/// for each of `prefixes`) of the processes `whose` picks.
fn remove_temporaries(
    dataset: &Path,
    prefixes: &[&str],
    whose: impl Fn(u32) -> bool,
) -> Vec<PathBuf> {
    let mut removed = Vec::new();
    let Ok(entries) = std::fs::read_dir(dataset) else {
        return removed;
    };
    for entry in entries.flatten() {
        let name = entry.file_name();
        let name = name.to_string_lossy();
        let pid = if let Some(rest) = name.strip_prefix(TMP_PREFIX) {
            // <id>-<pid>-<n>: the pid is the second field from the right.
            rest.rsplit('-').nth(1)
        } else if let Some(rest) = name.strip_prefix(OLD_TMP_PREFIX) {
            rest.rsplit('-').next()
        } else {
            prefixes.iter().find_map(|p| name.strip_prefix(p))
        };
        let Some(pid) = pid.and_then(|p| p.parse::<u32>().ok()) else {
            continue;
        };
        if !whose(pid) {
            continue;
        }
        let path = entry.path();
        if std::fs::remove_dir_all(&path).is_ok() {
            removed.push(path);
        }
    }
    removed
}

/// The notes of the capture whose folder is `dir`: what its conversion
/// said, for a command that finds the capture converted already to say
/// again.
pub fn notes(dir: &Path) -> Result<Notes, Error> {
    let [warnings, read_error] = capture_strings(dir, ["warnings", "read_error"])?;
    Ok(Notes {
        warnings: warnings
            .iter()
            .flat_map(|w| w.lines())
            .filter(|l| !l.is_empty())
            .map(String::from)
            .collect(),
        damage: read_error,
    })
}

/// The path the capture whose folder is `dir` was converted from.
pub fn source_path(dir: &Path) -> Result<Option<String>, Error> {
    let [path] = capture_strings(dir, ["source_path"])?;
    Ok(path)
}

/// The text columns `names` of the capture table in `dir` (one row).
fn capture_strings<const N: usize>(
    dir: &Path,
    names: [&str; N],
) -> Result<[Option<String>; N], Error> {
    use arrow_array::{Array, StringArray};
    use parquet::arrow::arrow_reader::ParquetRecordBatchReaderBuilder;
    use parquet::arrow::ProjectionMask;

    let path = dir.join("capture.parquet");
    let file = std::fs::File::open(&path).map_err(|e| Error::io(&path, e))?;
    let builder =
        ParquetRecordBatchReaderBuilder::try_new(file).map_err(|e| Error::parquet(&path, e))?;
    let columns = builder.parquet_schema().columns();
    let indices = columns
        .iter()
        .enumerate()
        .filter(|(_, c)| names.contains(&c.name()))
        .map(|(i, _)| i);
    let mask = ProjectionMask::leaves(builder.parquet_schema(), indices);
    let reader = builder
        .with_projection(mask)
        .build()
        .map_err(|e| Error::parquet(&path, e))?;
    let mut out = names.map(|_| None);
    for batch in reader {
        let batch = batch.map_err(|e| Error::parquet(&path, e))?;
        for (value, name) in out.iter_mut().zip(names) {
            *value = batch
                .column_by_name(name)
                .and_then(|c| c.as_any().downcast_ref::<StringArray>())
                .filter(|c| !c.is_empty() && c.is_valid(0))
                .map(|c| c.value(0).to_string());
        }
    }
    Ok(out)
}
