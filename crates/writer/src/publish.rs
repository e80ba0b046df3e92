//! A capture written on this machine made part of a dataset in object
//! storage, whole or not at all.
//!
//! A bucket has no rename, so a capture's tables cannot appear at once.
//! They go up (`store::upload`: parts of 8 MiB for a large table, bounded
//! memory) under a prefix no reader lists (`_perfq/staging/`), then
//! one conditional write claims the capture (`_perfq/claims/<id>`,
//! `If-None-Match: *`: of two writers, one wins), and the claimant copies
//! the tables into `capture=<id>/` inside the bucket, its capture table
//! last. A capture is committed once its capture table is there: perfq
//! lists only such captures, and other engines join their tables to the
//! capture table to do the same (docs/distributed.md).
//!
//! A writer that stops after its claim leaves its staged copy and the
//! claim, which lists the tables: the next writer of the capture finishes
//! the copy from there. A writer removes its own staged copy when done;
//! one that was killed leaves it under `_perfq/staging/`, hidden from
//! readers (a bucket's lifecycle rule, or a removal while no writer runs,
//! takes it away).

use std::path::Path;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::Arc;

use object_store::{ObjectStore, ObjectStoreExt, PutMode, PutPayload};
use perfq_source::store::{self, block_on, one_line, ObjectPath};
use perfq_source::ObjectUrl;

use crate::Error;

/// Where staged copies and claims live, beside the capture folders: a
/// name no engine takes for a partition (`_` hides it from Spark and
/// pyarrow; DuckDB and perfq read `capture=*` only).
const META: &str = "_perfq";
/// The capture table, copied last: its presence commits the capture.
const COMMIT_TABLE: &str = "capture.parquet";

/// A dataset in object storage that captures converted here are
/// published to.
pub struct Bucket {
    dataset: ObjectUrl,
    store: Arc<dyn ObjectStore>,
    /// This writer's name in its claims and staged copies.
    writer: String,
}

impl std::fmt::Debug for Bucket {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "Bucket({})", self.dataset)
    }
}

/// What publishing a capture came to.
#[derive(Debug, PartialEq, Eq)]
pub enum Published {
    /// It is committed now.
    Committed,
    /// Another writer had committed it.
    Present,
}

impl Bucket {
    /// The dataset at `dataset`. Refuses a store that ignores conditional
    /// writes: two writers of one capture could not be kept apart there.
    pub fn open(dataset: &ObjectUrl) -> Result<Bucket, Error> {
        let store = dataset.store()?;
        let b = Bucket {
            dataset: dataset.clone(),
            store,
            writer: writer_name(),
        };
        b.check_conditional_writes()?;
        Ok(b)
    }

    /// Whether capture `id` is committed.
    pub fn holds(&self, id: &str) -> Result<bool, Error> {
        let path = self.key(&format!("capture={id}/{COMMIT_TABLE}"));
        match block_on(self.store.head(&path)) {
            Ok(_) => Ok(true),
            Err(object_store::Error::NotFound { .. }) => Ok(false),
            Err(e) => Err(self.failed(&path, &e)),
        }
    }

    /// What capture `id`'s conversion said of it (its capture table's
    /// warnings and damage), read from a copy of the table in `scratch`.
    pub fn notes(&self, id: &str, scratch: &Path) -> Result<crate::Notes, Error> {
        let url = self.dataset.join(&format!("capture={id}/{COMMIT_TABLE}"));
        let dir = scratch.join(format!("notes-{id}"));
        std::fs::create_dir_all(&dir).map_err(|e| Error::io(&dir, e))?;
        let copied = store::download(&url, &dir.join(COMMIT_TABLE)).map_err(Error::from);
        let notes = copied.and_then(|_| crate::notes(&dir));
        let _ = std::fs::remove_dir_all(&dir);
        notes
    }

    /// Removes capture `id` (`--force`): its capture table first, so
    /// that it is no longer committed, then its other tables and claim.
    pub fn remove(&self, id: &str) -> Result<(), Error> {
        let table = self.key(&format!("capture={id}/{COMMIT_TABLE}"));
        match block_on(self.store.delete(&table)) {
            Ok(()) | Err(object_store::Error::NotFound { .. }) => {}
            Err(e) => return Err(self.failed(&table, &e)),
        }
        self.remove_prefix(&self.key(&format!("capture={id}")));
        let claim = self.key(&format!("{META}/claims/{id}"));
        match block_on(self.store.delete(&claim)) {
            Ok(()) | Err(object_store::Error::NotFound { .. }) => Ok(()),
            Err(e) => Err(self.failed(&claim, &e)),
        }
    }

    /// Publishes the complete capture folder `dir` (`capture=<id>`, its
    /// tables) as capture `id`.
    pub fn publish(&self, id: &str, dir: &Path) -> Result<Published, Error> {
        let tables = tables_in(dir)?;
        let staging = self.key(&format!("{META}/staging/{id}.{}", self.writer));
        let staged = self.stage(dir, &tables, &staging);
        let claimed = staged.and_then(|()| self.claim(id, &tables));
        let outcome = match claimed {
            Ok(Claim::Ours) => match self.copy_in(id, &staging, &tables) {
                Ok(()) => Ok(Published::Committed),
                Err(e) if !self.holds(id).unwrap_or(false) => {
                    // The staged copy stays: the claim names it, and the
                    // next writer of the capture finishes from it.
                    return Err(e);
                }
                Err(e) => Err(e),
            },
            Ok(Claim::Committed) => Ok(Published::Present),
            // The claimant's copy, not this writer's: the capture is what
            // its claim lists. Its staged copy stays (it may be copying
            // still).
            Ok(Claim::Left { writer, tables }) => {
                let theirs = self.key(&format!("{META}/staging/{id}.{writer}"));
                self.copy_in(id, &theirs, &tables)
                    .map(|()| Published::Committed)
            }
            Err(e) => Err(e),
        };
        self.remove_prefix(&staging);
        match outcome {
            // Another writer committed it meanwhile (a copy of theirs
            // finished first).
            Err(_) if self.holds(id).unwrap_or(false) => Ok(Published::Present),
            outcome => outcome,
        }
    }

    /// Uploads `tables` of `dir` under `staging`.
    fn stage(&self, dir: &Path, tables: &[String], staging: &ObjectPath) -> Result<(), Error> {
        for t in tables {
            let to = self.dataset.with_key(staging.clone().join(t.as_str()));
            store::upload(&dir.join(t), &to)?;
        }
        Ok(())
    }

    /// Claims capture `id` for this writer, or finds who has it.
    fn claim(&self, id: &str, tables: &[String]) -> Result<Claim, Error> {
        let path = self.key(&format!("{META}/claims/{id}"));
        let text = format!("{}\n{}\n", self.writer, tables.join("\n"));
        let put = self
            .store
            .put_opts(&path, PutPayload::from(text), PutMode::Create.into());
        match block_on(put) {
            Ok(_) => Ok(Claim::Ours),
            Err(object_store::Error::AlreadyExists { .. }) => self.claimed_by_then(id, &path),
            Err(e) => Err(self.failed(&path, &e)),
        }
    }

    /// Capture `id`'s claim `path` was there: committed, this writer's
    /// own (a retried request that had gone through), or another's that
    /// did not finish.
    fn claimed_by_then(&self, id: &str, path: &ObjectPath) -> Result<Claim, Error> {
        if self.holds(id)? {
            return Ok(Claim::Committed);
        }
        let got = block_on(async { self.store.get(path).await?.bytes().await });
        let text = got.map_err(|e| self.failed(path, &e))?;
        let text = String::from_utf8_lossy(&text);
        let mut lines = text.lines();
        let writer = lines.next().unwrap_or_default().to_string();
        if writer == self.writer {
            return Ok(Claim::Ours);
        }
        Ok(Claim::Left {
            writer,
            tables: lines.map(str::to_string).collect(),
        })
    }

    /// Copies the staged `tables` into `capture=<id>/`, the capture table
    /// last: the copy that commits.
    fn copy_in(&self, id: &str, staging: &ObjectPath, tables: &[String]) -> Result<(), Error> {
        let mut order: Vec<&String> = tables.iter().filter(|t| *t != COMMIT_TABLE).collect();
        order.extend(tables.iter().filter(|t| *t == COMMIT_TABLE));
        for t in order {
            let from = staging.clone().join(t.as_str());
            let to = self.key(&format!("capture={id}/{t}"));
            block_on(self.store.copy(&from, &to)).map_err(|e| self.failed(&from, &e))?;
        }
        Ok(())
    }

    /// Removes the objects under `prefix`, as far as the store lets it:
    /// what is left is hidden from readers, and removed by a later writer
    /// of the same capture.
    fn remove_prefix(&self, prefix: &ObjectPath) {
        use futures::{StreamExt, TryStreamExt};
        let _ = block_on(async {
            let listed = self.store.list(Some(prefix)).map_ok(|o| o.location).boxed();
            self.store
                .delete_stream(listed)
                .try_collect::<Vec<_>>()
                .await
        });
    }

    /// Writes one object twice with `If-None-Match: *`: the second must
    /// be refused. Some S3 clones ignore the header; on them a claim
    /// would not keep two writers apart.
    fn check_conditional_writes(&self) -> Result<(), Error> {
        let path = self.key(&format!("{META}/probe.{}", self.writer));
        let put = || {
            self.store.put_opts(
                &path,
                PutPayload::from_static(b"probe"),
                PutMode::Create.into(),
            )
        };
        let first = block_on(put());
        let second = first.is_ok().then(|| block_on(put()));
        let _ = block_on(self.store.delete(&path));
        match (first, second) {
            (Err(e), _) => Err(self.failed(&path, &e)),
            (Ok(_), Some(Err(object_store::Error::AlreadyExists { .. }))) => Ok(()),
            _ => Err(Error::Store {
                url: self.dataset.to_string(),
                why: "the store ignores conditional writes (If-None-Match), which keep two \
                      writers of a capture apart: perfq does not write datasets there"
                    .into(),
            }),
        }
    }

    /// The key of `part` in the dataset.
    fn key(&self, part: &str) -> ObjectPath {
        self.dataset.join(part).key().clone()
    }

    fn failed(&self, path: &ObjectPath, e: &object_store::Error) -> Error {
        Error::Store {
            url: self.dataset.with_key(path.clone()).to_string(),
            why: one_line(e),
        }
    }
}

/// Who holds a capture's claim.
enum Claim {
    /// This writer.
    Ours,
    /// A writer that committed it.
    Committed,
    /// A writer that claimed it and stopped before its capture table was
    /// copied: its staged `tables` are still under its name.
    Left { writer: String, tables: Vec<String> },
}

/// The table files of a capture folder, by name.
fn tables_in(dir: &Path) -> Result<Vec<String>, Error> {
    let mut tables = Vec::new();
    for entry in std::fs::read_dir(dir).map_err(|e| Error::io(dir, e))? {
        let entry = entry.map_err(|e| Error::io(dir, e))?;
        let name = entry.file_name().to_string_lossy().into_owned();
        if name.ends_with(".parquet") {
            tables.push(name);
        }
    }
    tables.sort();
    Ok(tables)
}

/// A name for this writer, unique across the machines writing a bucket:
/// the host, the process and the moment it started.
fn writer_name() -> String {
    static NEXT: AtomicU64 = AtomicU64::new(0);
    let host = std::fs::read_to_string("/proc/sys/kernel/hostname").unwrap_or_default();
    let host: String = host
        .trim()
        .chars()
        .filter(|c| c.is_ascii_alphanumeric() || *c == '-')
        .collect();
    let nanos = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map_or(0, |d| d.as_nanos());
    format!(
        "{host}-{}-{nanos:x}-{}",
        std::process::id(),
        NEXT.fetch_add(1, Ordering::Relaxed)
    )
}
