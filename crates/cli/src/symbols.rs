//! Where symbols come from: the options `report` and `dump --symbols`
//! share, and `perf archive` tarballs unpacked for the run.

use std::path::PathBuf;
use std::process::Command;

use anyhow::Context;

/// Symbol sources on the command line.
#[derive(clap::Args, Clone, Debug, Default)]
pub struct SymbolSources {
    /// A root directory prefixed to binary paths (perf's --symfs).
    #[arg(long)]
    symfs: Option<PathBuf>,
    /// Kernel symbols from this kallsyms file (by default: the copy perf's
    /// build-id cache keeps of the recorded kernel's, else /proc/kallsyms
    /// when the recorded kernel is the one running).
    #[arg(long)]
    kallsyms: Option<PathBuf>,
    /// A perf build-id cache to search before ~/.debug (perf's
    /// --buildid-dir); may be given more than once.
    #[arg(long = "buildid-dir")]
    buildid_dirs: Vec<PathBuf>,
    /// A `perf archive` tarball (perf.data.tar.bz2) with the capture's
    /// binaries, used as a build-id cache; may be given more than once.
    #[arg(long = "archive")]
    archives: Vec<PathBuf>,
}

/// Sources ready to use; unpacked archives are removed when dropped.
pub struct ResolvedSources {
    sources: SymbolSources,
    unpacked: Vec<PathBuf>,
}

impl SymbolSources {
    /// Unpacks the archives (with the system's tar, which reads bzip2,
    /// gzip, xz and zstd) into temporary build-id caches.
    pub fn resolve(self) -> anyhow::Result<ResolvedSources> {
        let mut unpacked = Vec::new();
        for (i, a) in self.archives.iter().enumerate() {
            let dir =
                std::env::temp_dir().join(format!("perfq-archive-{}-{i}", std::process::id()));
            std::fs::create_dir_all(&dir).with_context(|| format!("creating {}", dir.display()))?;
            let out = Command::new("tar")
                .arg("-xf")
                .arg(a)
                .arg("-C")
                .arg(&dir)
                .output()
                .with_context(|| format!("running tar on {}", a.display()))?;
            if !out.status.success() {
                let _ = std::fs::remove_dir_all(&dir);
                anyhow::bail!(
                    "{}: cannot unpack: {}",
                    a.display(),
                    String::from_utf8_lossy(&out.stderr).trim()
                );
            }
            unpacked.push(dir);
        }
        Ok(ResolvedSources {
            sources: self,
            unpacked,
        })
    }
}

impl ResolvedSources {
    /// The symbolizer configuration.
    pub fn config(&self, inline: bool) -> perfq_symbolize::Config {
        perfq_symbolize::Config {
            symfs: self.sources.symfs.clone(),
            kallsyms: self.sources.kallsyms.clone(),
            inline,
            buildid_dirs: self
                .sources
                .buildid_dirs
                .iter()
                .chain(&self.unpacked)
                .cloned()
                .collect(),
            binaries: None,
            symbol_disk: crate::input::symbol_disk(),
        }
    }
}

impl Drop for ResolvedSources {
    fn drop(&mut self) {
        for d in &self.unpacked {
            let _ = std::fs::remove_dir_all(d);
        }
    }
}
