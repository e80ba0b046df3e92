//! Where symbols come from: the options `report` and `dump --symbols`
//! share, and `perf archive` tarballs unpacked for the run.

use std::path::{Path, PathBuf};

use perfq_source::archive::ArchiveAt;
use perfq_source::store::looks_like_url;
use perfq_source::{BuildIds, ObjectUrl, Unpacked};

use crate::scratch::Scratch;

/// Symbol sources on the command line.
#[derive(clap::Args, Clone, Debug, Default)]
pub struct SymbolSources {
    /// A root directory prefixed to binary paths (perf's --symfs).
    #[arg(long, value_name = "DIR")]
    symfs: Option<PathBuf>,
    /// Kernel symbols from this kallsyms file (by default: the copy perf's
    /// build-id cache keeps of the recorded kernel's, else /proc/kallsyms
    /// when the recorded kernel is the one running).
    #[arg(long, value_name = "FILE")]
    kallsyms: Option<PathBuf>,
    /// A perf build-id cache to search before ~/.debug (perf's
    /// --buildid-dir); may be given more than once.
    #[arg(long = "buildid-dir", value_name = "DIR")]
    buildid_dirs: Vec<PathBuf>,
    /// A `perf archive` tarball (perf.data.tar.bz2) with the capture's
    /// binaries, used as a build-id cache (a file or a URL, s3://…); may
    /// be given more than once.
    #[arg(long = "archive", value_name = "FILE")]
    archives: Vec<PathBuf>,
}

/// Sources ready to use; unpacked archives are removed when dropped.
pub struct ResolvedSources {
    sources: SymbolSources,
    unpacked: Vec<Unpacked>,
    /// The temporary folder the archives are unpacked in, dropped last.
    _scratch: Option<Scratch>,
}

impl SymbolSources {
    /// Unpacks the archives' build-id caches into a temporary folder with
    /// perfq's one archive reader (`perfq batch`'s): members confined to
    /// the folder, expansion bounded; each member refused is a warning.
    /// `inputs`: the command's inputs, when known before it runs: only the
    /// members of the build ids their captures name are unpacked (a
    /// dataset folder needs none).
    pub fn resolve(self, inputs: Option<&[&Path]>) -> anyhow::Result<ResolvedSources> {
        let mut unpacked = Vec::new();
        let scratch = match self.archives.is_empty() {
            true => None,
            false => Some(Scratch::new("archive")?),
        };
        if let Some(scratch) = &scratch {
            let wanted = inputs.and_then(|inputs| {
                let files: Vec<&Path> = inputs.iter().copied().filter(|p| !p.is_dir()).collect();
                BuildIds::of_captures(&files)
            });
            for a in &self.archives {
                let url = a.to_str().filter(|t| looks_like_url(t));
                let url = url.map(ObjectUrl::parse).transpose()?;
                let at = url.as_ref().map_or(ArchiveAt::File(a), ArchiveAt::Object);
                let u = perfq_source::unpack_symbols(at, scratch.path(), wanted.as_ref())?;
                for line in &u.refused {
                    crate::say::warning(format_args!("{}: {line}", a.display()));
                }
                unpacked.push(u);
            }
        }
        Ok(ResolvedSources {
            sources: self,
            unpacked,
            _scratch: scratch,
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
                .cloned()
                .chain(self.unpacked.iter().map(|u| u.path().to_path_buf()))
                .collect(),
            binaries: None,
            symbol_disk: crate::cache::symbol_disk(),
        }
    }
}
