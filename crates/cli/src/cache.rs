//! perfq's cache: the captures that commands given a perf.data file
//! convert once and answer from afterwards (a dataset, `datasets-v6`),
//! and symbol tables (`symbols-v2`), in `$PERFQ_CACHE_DIR`, else
//! `$XDG_CACHE_HOME/perfq`, else `~/.cache/perfq`.
//!
//! Both are bounded. Converted captures: at most `PERFQ_CACHE_MAX` bytes
//! (a size such as `20G`; by default a tenth of the cache's file system),
//! the least recently used removed first after each conversion into the
//! cache (a capture's last use is its folder's modification time, set on
//! each use). Symbol tables: 512 MiB, pruned the same way by the
//! symbolizer. A cached capture is checked before it is answered from:
//! one that is not whole (a table missing, or a file whose Parquet footer
//! does not read: cut short, overwritten) is removed and converted again.

use std::io::Write;
use std::path::{Path, PathBuf};
use std::time::SystemTime;

use anyhow::Context;

use crate::output::{self, QueryFormat};
use crate::Outcome;

/// perfq's cache folder.
pub fn root() -> Option<PathBuf> {
    std::env::var_os("PERFQ_CACHE_DIR")
        .map(PathBuf::from)
        .or_else(|| std::env::var_os("XDG_CACHE_HOME").map(|d| PathBuf::from(d).join("perfq")))
        .or_else(|| std::env::var_os("HOME").map(|h| PathBuf::from(h).join(".cache/perfq")))
}

/// The dataset of converted captures. The version in the path changes
/// when the dataset's schema or what a conversion writes does, so that an
/// older perfq's conversions are not read as if they had the new columns
/// (v3: groups of captures without GROUP_DESC are read off their samples;
/// v4: PLT stubs named as perf >= 6.3 names them; v5: `read_error` says
/// all that could not be read, `quality` counts it; v6: the `off_cpu`
/// table).
pub fn datasets() -> Option<PathBuf> {
    Some(root()?.join("datasets-v6"))
}

/// Symbol tables kept between runs (`perfq_symbolize::SymbolDisk`), at
/// most 512 MiB (a folder per layout, so that perfq versions of two
/// layouts do not rewrite each other's tables).
pub fn symbol_disk() -> Option<perfq_symbolize::SymbolDisk> {
    let dir = root()?.join("symbols-v2");
    Some(perfq_symbolize::SymbolDisk::new(dir, 512 << 20))
}

/// The most converted captures may take: `PERFQ_CACHE_MAX`, else a tenth
/// of the file system `dir` is on (1 GiB where that cannot be told).
pub fn limit(dir: &Path) -> anyhow::Result<u64> {
    if let Some(max) = std::env::var_os("PERFQ_CACHE_MAX") {
        let max = max.to_string_lossy();
        return crate::size::parse(&max).map_err(|e| anyhow::anyhow!("PERFQ_CACHE_MAX: {e}"));
    }
    Ok(file_system_size(dir).map_or(1 << 30, |size| size / 10))
}

/// The size of the file system `dir` (or its nearest existing parent) is
/// on.
fn file_system_size(dir: &Path) -> Option<u64> {
    use std::os::unix::ffi::OsStrExt;
    let existing = dir.ancestors().find(|d| d.exists())?;
    let path = std::ffi::CString::new(existing.as_os_str().as_bytes()).ok()?;
    // SAFETY: statvfs is plain data the call fills.
    let mut st: libc::statvfs = unsafe { std::mem::zeroed() };
    // SAFETY: path is NUL-terminated, st valid for writes.
    if unsafe { libc::statvfs(path.as_ptr(), &mut st) } != 0 {
        return None;
    }
    Some(st.f_blocks as u64 * st.f_frsize as u64)
}

/// One converted capture in the cache.
pub struct Entry {
    pub id: String,
    pub dir: PathBuf,
    pub bytes: u64,
    pub last_used: SystemTime,
}

/// The cached captures, least recently used first.
pub fn entries(datasets: &Path) -> Vec<Entry> {
    let mut out = Vec::new();
    for e in std::fs::read_dir(datasets).into_iter().flatten().flatten() {
        let name = e.file_name().to_string_lossy().into_owned();
        let Some(id) = name.strip_prefix("capture=") else {
            continue;
        };
        let dir = e.path();
        let files = std::fs::read_dir(&dir).into_iter().flatten().flatten();
        let bytes = files
            .filter_map(|f| f.metadata().ok())
            .map(|m| m.len())
            .sum();
        let last_used = e
            .metadata()
            .and_then(|m| m.modified())
            .unwrap_or(SystemTime::UNIX_EPOCH);
        out.push(Entry {
            id: id.to_string(),
            dir,
            bytes,
            last_used,
        });
    }
    out.sort_by_key(|e| e.last_used);
    out
}

/// Marks the capture in `dir` used now.
pub fn used(dir: &Path) {
    if let Ok(d) = std::fs::File::open(dir) {
        let _ = d.set_modified(SystemTime::now());
    }
}

/// Whether the capture in `dir` is whole: every table there, and each
/// file's Parquet footer readable. What is wrong, if anything.
pub fn whole(dir: &Path) -> Result<(), String> {
    use parquet::file::metadata::ParquetMetaDataReader;
    for table in perfq_query::TABLES {
        let path = dir.join(format!("{table}.parquet"));
        let file = std::fs::File::open(&path).map_err(|e| format!("{}: {e}", path.display()))?;
        ParquetMetaDataReader::new()
            .parse_and_finish(&file)
            .map_err(|e| format!("{}: {e}", path.display()))?;
    }
    Ok(())
}

/// Removes the least recently used captures until those left take at
/// most `max` bytes, never `keep`. Returns the captures removed.
pub fn prune(datasets: &Path, max: u64, keep: Option<&str>) -> anyhow::Result<Vec<Entry>> {
    let mut entries = entries(datasets);
    let mut total: u64 = entries.iter().map(|e| e.bytes).sum();
    let mut removed = Vec::new();
    for e in entries.drain(..) {
        if total <= max {
            break;
        }
        if Some(e.id.as_str()) == keep {
            continue;
        }
        perfq_writer::remove_capture(datasets, &e.id)
            .with_context(|| format!("pruning the cache: capture {}", e.id))?;
        total -= e.bytes;
        removed.push(e);
    }
    Ok(removed)
}

/// `perfq cache`'s actions.
#[derive(clap::Subcommand)]
pub enum CacheAction {
    /// The cached captures: id, the file converted, size, last use (least
    /// recently used first), and the cache's limit.
    List {
        /// Output format.
        #[arg(long, value_enum, default_value_t = QueryFormat::Table)]
        format: QueryFormat,
    },
    /// Remove every cached capture and symbol table.
    Clear,
    /// Remove the least recently used captures until the rest fit the
    /// limit (PERFQ_CACHE_MAX, or --max).
    Prune {
        /// The limit, e.g. 512M or 20G.
        #[arg(long, value_parser = crate::size::parse)]
        max: Option<u64>,
    },
}

/// Runs a `perfq cache` action.
pub fn run(action: &CacheAction, out: &mut dyn Write) -> anyhow::Result<Outcome> {
    let root = root().context("no cache folder: set PERFQ_CACHE_DIR or HOME")?;
    let datasets = datasets().context("no cache folder")?;
    match action {
        CacheAction::List { format } => list(&datasets, *format, out)?,
        CacheAction::Clear => {
            if root.exists() {
                for e in std::fs::read_dir(&root).with_context(|| root.display().to_string())? {
                    let path = e?.path();
                    let name = path.file_name().map(|n| n.to_string_lossy().into_owned());
                    // Only what perfq puts there (datasets-vN, symbols-vN).
                    let ours = name
                        .is_some_and(|n| n.starts_with("datasets-v") || n.starts_with("symbols-v"));
                    if ours {
                        std::fs::remove_dir_all(&path)
                            .with_context(|| format!("removing {}", path.display()))?;
                    }
                }
            }
            writeln!(out, "cleared {}", root.display())?;
        }
        CacheAction::Prune { max } => {
            let max = match max {
                Some(m) => *m,
                None => limit(&datasets)?,
            };
            let removed = prune(&datasets, max, None)?;
            let bytes: u64 = removed.iter().map(|e| e.bytes).sum();
            writeln!(
                out,
                "removed {} captures ({bytes} bytes); the rest fit {max} bytes",
                removed.len()
            )?;
        }
    }
    Ok(Outcome::Ok)
}

fn list(datasets: &Path, format: QueryFormat, out: &mut dyn Write) -> anyhow::Result<()> {
    use perfq_query::arrow::array::{ArrayRef, RecordBatch, StringArray, UInt64Array};
    use perfq_query::arrow::datatypes::{DataType, Field, Schema};
    use std::sync::Arc;

    let entries = entries(datasets);
    let seconds = |t: SystemTime| {
        t.duration_since(SystemTime::UNIX_EPOCH)
            .map_or(0, |d| d.as_secs())
    };
    let sources: Vec<Option<String>> = entries
        .iter()
        .map(|e| perfq_writer::source_path(&e.dir).ok().flatten())
        .collect();
    let schema = Arc::new(Schema::new(vec![
        Field::new("capture", DataType::Utf8, false),
        Field::new("source_path", DataType::Utf8, true),
        Field::new("bytes", DataType::UInt64, false),
        Field::new("last_used_unix", DataType::UInt64, false),
    ]));
    let columns: Vec<ArrayRef> = vec![
        Arc::new(StringArray::from_iter_values(
            entries.iter().map(|e| e.id.as_str()),
        )),
        Arc::new(StringArray::from(sources)),
        Arc::new(UInt64Array::from_iter_values(
            entries.iter().map(|e| e.bytes),
        )),
        Arc::new(UInt64Array::from_iter_values(
            entries.iter().map(|e| seconds(e.last_used)),
        )),
    ];
    let rows = RecordBatch::try_new(schema.clone(), columns)?;
    output::emit(format, None, &schema, &[rows], out)?;
    let total: u64 = entries.iter().map(|e| e.bytes).sum();
    eprintln!(
        "perfq: {} captures, {total} bytes in {} (limit {} bytes)",
        entries.len(),
        datasets.display(),
        limit(datasets)?
    );
    Ok(())
}
