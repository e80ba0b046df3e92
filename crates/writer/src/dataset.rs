//! A capture's folder in a dataset, written under a temporary name and
//! renamed into place when complete.

use std::path::{Path, PathBuf};

use crate::table::{Column, Table};
use crate::Error;

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
        let tmp = dataset.join(format!(".tmp-capture={capture_id}-{}", std::process::id()));
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
        std::fs::rename(&self.tmp, &self.dest).map_err(|e| Error::io(&self.dest, e))?;
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
