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

/// Tells apart two folders one process writes at once for the same
/// capture (a batch given the same file twice).
static NEXT_TMP: AtomicU64 = AtomicU64::new(0);

/// Writes the tables of one capture.
pub struct CaptureWriter {
    tmp: PathBuf,
    dest: PathBuf,
    force: bool,
    done: bool,
}

impl CaptureWriter {
    /// Prepares `dataset/capture=<id>/`: tables are written into a hidden
    /// temporary folder beside it. Fails if the capture exists and `force`
    /// is false.
    pub fn create(dataset: &Path, capture_id: &str, force: bool) -> Result<CaptureWriter, Error> {
        let dest = dataset.join(format!("capture={capture_id}"));
        if dest.exists() && !force {
            return Err(Error::Exists(dest));
        }
        std::fs::create_dir_all(dataset).map_err(|e| Error::io(dataset, e))?;
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

/// Removes what writers killed before they finished left in `dataset`:
/// folders named for a process that no longer runs (`.tmp-capture-…-<pid>-<n>`,
/// and `prefix<pid>` for each of `prefixes`). Returns what was removed.
/// Nothing is removed where `/proc` cannot tell which processes run.
pub fn remove_stale(dataset: &Path, prefixes: &[&str]) -> Vec<PathBuf> {
    let mut removed = Vec::new();
    if !Path::new("/proc/self").exists() {
        return removed;
    }
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
        if pid == std::process::id() || Path::new("/proc").join(pid.to_string()).exists() {
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
    use arrow_array::{Array, StringArray};
    use parquet::arrow::arrow_reader::ParquetRecordBatchReaderBuilder;
    use parquet::arrow::ProjectionMask;

    let path = dir.join("capture.parquet");
    let file = std::fs::File::open(&path).map_err(|e| Error::io(&path, e))?;
    let builder =
        ParquetRecordBatchReaderBuilder::try_new(file).map_err(|e| Error::parquet(&path, e))?;
    let wanted = ["warnings", "read_error"];
    let columns = builder.parquet_schema().columns();
    let indices = columns
        .iter()
        .enumerate()
        .filter(|(_, c)| wanted.contains(&c.name()))
        .map(|(i, _)| i);
    let mask = ProjectionMask::leaves(builder.parquet_schema(), indices);
    let reader = builder
        .with_projection(mask)
        .build()
        .map_err(|e| Error::parquet(&path, e))?;
    let mut notes = Notes::default();
    for batch in reader {
        let batch = batch.map_err(|e| Error::parquet(&path, e))?;
        let text = |name: &str| {
            batch
                .column_by_name(name)
                .and_then(|c| c.as_any().downcast_ref::<StringArray>())
                .filter(|c| !c.is_empty() && c.is_valid(0))
                .map(|c| c.value(0).to_string())
        };
        if let Some(w) = text("warnings") {
            notes
                .warnings
                .extend(w.lines().filter(|l| !l.is_empty()).map(String::from));
        }
        notes.damage = text("read_error");
    }
    Ok(notes)
}
