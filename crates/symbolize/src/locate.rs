//! Finding the file for a DSO: the mapped path (under `--symfs`), perf's
//! build-id cache, the system debug directory; a build id that does not
//! match is reported, never used.

use std::path::{Path, PathBuf};
use std::sync::Arc;

use crate::binary::{file_build_id, Binary};
use crate::binary_cache::BinaryCache;
use crate::dso::{Dso, DsoKind};
use crate::symbol_disk::SymbolDisk;

/// Where binaries are looked for.
#[derive(Clone, Debug, Default)]
pub struct Locator {
    /// A root prefixed to every path (perf's `--symfs`).
    pub symfs: Option<PathBuf>,
    /// perf build-id caches: directories given first (e.g. an extracted
    /// `perf archive`), then `~/.debug`.
    pub buildid_caches: Vec<PathBuf>,
    /// Directories of `.build-id/xx/rest.debug` files.
    pub debug_dirs: Vec<PathBuf>,
    /// Binaries opened by other symbolizers, to share (a batch).
    pub cache: Option<Arc<BinaryCache>>,
    /// Symbol tables kept between runs.
    pub disk: Option<SymbolDisk>,
}

/// Why no usable file was found.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum LocateError {
    /// No candidate file exists or opens.
    NotFound,
    /// A file exists but its build id differs from the capture's.
    BuildIdMismatch {
        /// The file that did not match.
        path: PathBuf,
    },
}

fn hex(b: &[u8]) -> String {
    b.iter().map(|x| format!("{x:02x}")).collect()
}

impl Locator {
    /// The usual places: `buildid_dirs`, then `$HOME/.debug`, and
    /// `/usr/lib/debug`.
    pub fn with_defaults(symfs: Option<PathBuf>, buildid_dirs: &[PathBuf]) -> Locator {
        Locator {
            symfs,
            buildid_caches: buildid_dirs
                .iter()
                .cloned()
                .chain(std::env::var_os("HOME").map(|h| PathBuf::from(h).join(".debug")))
                .collect(),
            debug_dirs: vec![PathBuf::from("/usr/lib/debug")],
            cache: None,
            disk: None,
        }
    }

    /// Candidate runtime files for `dso`, most specific first.
    pub fn candidates(&self, dso: &Dso) -> Vec<PathBuf> {
        let mut c = Vec::new();
        let path = Path::new(&dso.path);
        if path.is_absolute() {
            match &self.symfs {
                Some(root) => c.push(root.join(path.strip_prefix("/").unwrap_or(path))),
                None => c.push(path.to_path_buf()),
            }
        } else if !dso.path.is_empty() && !dso.path.starts_with('[') && !dso.path.starts_with("//")
        {
            // A relative mapping path (written by tools, not the kernel):
            // perf prefixes the symfs and opens it from the working folder.
            match &self.symfs {
                Some(root) => c.push(root.join(path)),
                None => c.push(path.to_path_buf()),
            }
        }
        if let Some(h) = build_id_hex(dso.build_id.as_deref()) {
            // perf's cache names a vdso image `vdso`, any other binary
            // `elf` (build-id.c, `build_id_cache__basename`).
            let file = match dso.kind {
                DsoKind::Vdso => "vdso",
                _ => "elf",
            };
            for cache in &self.buildid_caches {
                c.push(
                    cache
                        .join(".build-id")
                        .join(&h[..2])
                        .join(&h[2..])
                        .join(file),
                );
            }
        }
        c
    }

    /// Candidate debug files for a runtime file with `build_id` and
    /// `.gnu_debuglink` name `debuglink`, in perf's order.
    pub fn debug_candidates(
        &self,
        runtime: &Path,
        build_id: Option<&[u8]>,
        debuglink: Option<&str>,
    ) -> Vec<PathBuf> {
        let mut c = Vec::new();
        if let Some(name) = debuglink {
            let dir = runtime.parent().unwrap_or(Path::new("/"));
            for d in &self.debug_dirs {
                c.push(d.join(dir.strip_prefix("/").unwrap_or(dir)).join(name));
            }
            c.push(dir.join(".debug").join(name));
            let same = dir.join(name);
            if same != runtime {
                c.push(same);
            }
        }
        if let Some(h) = build_id_hex(build_id) {
            for cache in &self.buildid_caches {
                c.push(
                    cache
                        .join(".build-id")
                        .join(&h[..2])
                        .join(&h[2..])
                        .join("debug"),
                );
            }
            for d in &self.debug_dirs {
                c.push(
                    d.join(".build-id")
                        .join(&h[..2])
                        .join(format!("{}.debug", &h[2..])),
                );
            }
        }
        c
    }

    /// Opens the first runtime candidate whose build id matches (any
    /// readable one when the capture has no build id for it), with the first
    /// debug file whose build id matches it.
    pub fn open(&self, dso: &Dso) -> Result<Arc<Binary>, LocateError> {
        let mut mismatch = None;
        for p in self.candidates(dso) {
            if !p.is_file() {
                continue;
            }
            let Ok(id) = file_build_id(&p) else { continue };
            if let (Some(want), Some(have)) = (dso.build_id.as_deref(), id.as_deref()) {
                if !same_build_id(want, have) {
                    mismatch.get_or_insert(p);
                    continue;
                }
            }
            let link = debuglink(&p);
            let debug = self
                .debug_candidates(&p, id.as_deref(), link.as_deref())
                .into_iter()
                .filter(|d| d.is_file() && d != &p)
                .find(|d| match (id.as_deref(), file_build_id(d).ok().flatten()) {
                    (Some(want), Some(have)) => same_build_id(want, &have),
                    (None, _) => true,
                    (Some(_), None) => false,
                });
            let disk = self.disk.as_ref();
            let open = |debug: Option<&Path>| match &self.cache {
                Some(cache) => cache.get_or_open(&p, debug, || Binary::open_kept(&p, debug, disk)),
                None => Binary::open_kept(&p, debug, disk).map(Arc::new),
            };
            let opened = open(debug.as_deref()).or_else(|_| open(None));
            match opened {
                Ok(b) => return Ok(b),
                Err(_) => continue,
            }
        }
        Err(match mismatch {
            Some(path) => LocateError::BuildIdMismatch { path },
            None => LocateError::NotFound,
        })
    }
}

/// A build id as perf's build-id cache names it.
pub(crate) fn build_id_hex(id: Option<&[u8]>) -> Option<String> {
    let id = id.filter(|b| b.len() > 1)?;
    // perf pads 16-byte ids to 20 with zeros but names files by the real id.
    let n = id.len() - id.iter().rev().take_while(|c| **c == 0).count();
    let id = if n >= 16 { &id[..n.max(16)] } else { id };
    Some(hex(id))
}

/// The `.gnu_debuglink` file name of the ELF file at `path`.
fn debuglink(path: &Path) -> Option<String> {
    // Mapped, not read: binaries run to hundreds of MB and only the section
    // headers and one small section are looked at.
    let file = std::fs::File::open(path).ok()?;
    // SAFETY: read-only map of a binary perfq does not write; see
    // `Binary::open` for the trade-off on files changed underneath.
    let data = unsafe { memmap2::Mmap::map(&file) }.ok()?;
    use object::Object;
    let obj = object::File::parse(&data[..]).ok()?;
    let (name, _crc) = obj.gnu_debuglink().ok()??;
    Some(String::from_utf8_lossy(name).into_owned())
}

/// Build ids compare on the shorter length: perf pads 16-byte (md5) ids to
/// 20 bytes with zeros.
pub fn same_build_id(a: &[u8], b: &[u8]) -> bool {
    let trim = |x: &[u8]| -> usize { x.len() - x.iter().rev().take_while(|c| **c == 0).count() };
    let (a, b) = (&a[..trim(a)], &b[..trim(b)]);
    a == b
}

#[cfg(test)]
mod tests {
    use super::*;

    /// perf's build-id cache keeps a vdso image as `vdso` and any other
    /// binary as `elf` (`perf record` writes `~/.debug/.build-id/xx/rest`
    /// → `[vdso]/<id>/vdso`).
    #[test]
    fn build_id_cache_file_names_follow_perf() {
        let locator = Locator::with_defaults(None, &[PathBuf::from("/cache")]);
        let dso = |path: &str, kind| Dso {
            path: path.into(),
            build_id: Some(vec![0xa5, 0x99, 0x80]),
            kind,
        };
        let vdso = locator.candidates(&dso("[vdso]", DsoKind::Vdso));
        assert_eq!(vdso[0], Path::new("/cache/.build-id/a5/9980/vdso"));
        let lib = locator.candidates(&dso("/lib/libc.so.6", DsoKind::User));
        assert_eq!(lib[0], Path::new("/lib/libc.so.6"));
        assert_eq!(lib[1], Path::new("/cache/.build-id/a5/9980/elf"));
    }
}
