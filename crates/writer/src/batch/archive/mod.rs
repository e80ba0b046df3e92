//! Captures streamed out of archives one member at a time: each capture
//! member is copied into a spool file beside the dataset (a capture is
//! read through a memory map, so it must be a file) and handed on while
//! the archive is read further; nothing else of the archive reaches the
//! disk but the build-id cache it may hold.

use std::fs::File;
use std::io::{BufReader, Read, Write};
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::Arc;

/// The archive formats a batch reads, told by the file name.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum ArchiveKind {
    Tar,
    TarGz,
    TarBz2,
    TarZst,
    Zip,
}

impl ArchiveKind {
    /// The kind `path`'s name says, if it names an archive.
    pub(crate) fn of(path: &Path) -> Option<ArchiveKind> {
        let name = path.file_name()?.to_string_lossy().to_ascii_lowercase();
        let kinds = [
            (".tar", ArchiveKind::Tar),
            (".tar.gz", ArchiveKind::TarGz),
            (".tgz", ArchiveKind::TarGz),
            (".tar.bz2", ArchiveKind::TarBz2),
            (".tbz2", ArchiveKind::TarBz2),
            (".tar.zst", ArchiveKind::TarZst),
            (".tzst", ArchiveKind::TarZst),
            (".zip", ArchiveKind::Zip),
        ];
        kinds
            .iter()
            .find(|(ext, _)| name.ends_with(ext))
            .map(|(_, k)| *k)
    }
}

/// A file in the spool folder, removed when dropped.
#[derive(Debug)]
pub(crate) struct SpoolFile(pub(crate) PathBuf);

impl Drop for SpoolFile {
    fn drop(&mut self) {
        let _ = std::fs::remove_file(&self.0);
    }
}

/// A folder in the spool folder, removed when the last capture that
/// uses it is done.
#[derive(Debug)]
pub(crate) struct SpoolDir(pub(crate) PathBuf);

impl Drop for SpoolDir {
    fn drop(&mut self) {
        let _ = std::fs::remove_dir_all(&self.0);
    }
}

/// A capture found in an archive.
pub(crate) struct Member {
    /// Its path inside the archive.
    pub(crate) name: String,
    /// Its bytes, copied out.
    pub(crate) file: SpoolFile,
    /// The build-id cache the archive held before this member, if any.
    pub(crate) symbols: Option<Arc<SpoolDir>>,
}

/// Names of spool files and folders, unique within the process.
static NEXT: AtomicU64 = AtomicU64::new(0);

fn spool_name(spool: &Path, what: &str) -> PathBuf {
    spool.join(format!("{what}-{}", NEXT.fetch_add(1, Ordering::Relaxed)))
}

/// Whether an archive member belongs to a build-id cache, as `perf
/// archive` lays one out: `.build-id/xx/<rest of the id>` links, and the
/// binaries under `<path>/<build id>/` (`elf`, `debug`, `probes`).
fn is_symbol_member(name: &str) -> bool {
    let parts: Vec<&str> = name.trim_end_matches('/').split('/').collect();
    let hex = |c: &str| (32..=64).contains(&c.len()) && c.bytes().all(|b| b.is_ascii_hexdigit());
    parts.contains(&".build-id")
        || match parts.as_slice() {
            [.., id, file] if hex(id) => {
                matches!(*file, "elf" | "debug" | "probes" | "kallsyms" | "vdso")
            }
            [.., id] => hex(id),
            [] => false,
        }
}

/// Reads `archive`, calling `found` with each capture member as soon as
/// it is copied out (other members are passed over, except a build-id
/// cache, extracted for the captures that come after it). Gives how many
/// captures there were, or what stopped the reading (the captures handed
/// on before it stand).
pub(crate) fn stream(
    archive: &Path,
    kind: ArchiveKind,
    spool: &Path,
    found: &mut dyn FnMut(Member),
) -> Result<usize, String> {
    let file = File::open(archive).map_err(|e| format!("cannot open it: {e}"))?;
    match kind {
        ArchiveKind::Zip => zip_members(file, spool, found),
        _ => tar_members(decoder(file, kind)?, spool, found),
    }
}

/// Extracts the whole of `archive` (a `perf archive` tarball) into a new
/// spool folder.
pub(crate) fn extract_all(
    archive: &Path,
    kind: ArchiveKind,
    spool: &Path,
) -> Result<SpoolDir, String> {
    let file = File::open(archive).map_err(|e| format!("cannot open it: {e}"))?;
    let dir = SpoolDir(spool_name(spool, "symbols"));
    std::fs::create_dir_all(&dir.0).map_err(|e| format!("{}: {e}", dir.0.display()))?;
    match kind {
        ArchiveKind::Zip => {
            let mut zip =
                zip::ZipArchive::new(file).map_err(|e| format!("not a zip archive: {e}"))?;
            zip.extract(&dir.0).map_err(|e| e.to_string())?;
        }
        _ => {
            // `unpack` refuses members that would land outside the folder.
            tar::Archive::new(decoder(file, kind)?)
                .unpack(&dir.0)
                .map_err(|e| e.to_string())?;
        }
    }
    Ok(dir)
}

fn decoder(file: File, kind: ArchiveKind) -> Result<Box<dyn Read>, String> {
    let file = BufReader::with_capacity(1 << 16, file);
    Ok(match kind {
        ArchiveKind::Tar | ArchiveKind::Zip => Box::new(file),
        ArchiveKind::TarGz => Box::new(flate2::read::MultiGzDecoder::new(file)),
        ArchiveKind::TarBz2 => Box::new(bzip2::read::MultiBzDecoder::new(file)),
        ArchiveKind::TarZst => Box::new(
            zstd::stream::read::Decoder::with_buffer(file)
                .map_err(|e| format!("not zstd-compressed: {e}"))?,
        ),
    })
}

/// Reads up to 8 bytes: enough to tell a capture by its magic.
fn magic(r: &mut dyn Read) -> std::io::Result<Vec<u8>> {
    let mut start = Vec::with_capacity(8);
    r.take(8).read_to_end(&mut start)?;
    Ok(start)
}

/// Copies a member that starts with `start` into a new spool file.
fn spool_copy(spool: &Path, start: &[u8], rest: &mut dyn Read) -> std::io::Result<SpoolFile> {
    let file = SpoolFile(spool_name(spool, "capture"));
    let mut out = std::io::BufWriter::with_capacity(1 << 20, File::create(&file.0)?);
    out.write_all(start)?;
    std::io::copy(rest, &mut out)?;
    out.into_inner().map_err(|e| e.into_error())?;
    Ok(file)
}

/// The archive's build-id cache folder, made on its first member.
fn symbols_dir(
    symbols: &mut Option<Arc<SpoolDir>>,
    spool: &Path,
) -> std::io::Result<Arc<SpoolDir>> {
    if let Some(d) = symbols {
        return Ok(d.clone());
    }
    let d = SpoolDir(spool_name(spool, "symbols"));
    std::fs::create_dir_all(&d.0)?;
    Ok(symbols.insert(Arc::new(d)).clone())
}

fn tar_members(
    reader: Box<dyn Read>,
    spool: &Path,
    found: &mut dyn FnMut(Member),
) -> Result<usize, String> {
    let mut tar = tar::Archive::new(reader);
    let mut symbols: Option<Arc<SpoolDir>> = None;
    let mut captures = 0;
    let mut last = String::from("(none)");
    let entries = tar
        .entries()
        .map_err(|e| format!("not a tar archive: {e}"))?;
    for entry in entries {
        let mut entry = entry.map_err(|e| format!("{e} (after member {last})"))?;
        let at = entry.raw_header_position();
        let fail = |what: &str, e: std::io::Error| {
            format!("member {what} at byte {at} of the tar stream: {e}")
        };
        let name = entry
            .path()
            .map(|p| p.to_string_lossy().into_owned())
            .unwrap_or_else(|_| String::from_utf8_lossy(&entry.path_bytes()).into_owned());
        last.clone_from(&name);
        if is_symbol_member(&name) {
            let dir = symbols_dir(&mut symbols, spool).map_err(|e| fail(&name, e))?;
            // `unpack_in` refuses members that would land outside it.
            entry.unpack_in(&dir.0).map_err(|e| fail(&name, e))?;
            continue;
        }
        if !entry.header().entry_type().is_file() {
            continue;
        }
        let start = magic(&mut entry).map_err(|e| fail(&name, e))?;
        if !perfq_reader::is_capture_magic(&start) {
            continue;
        }
        let file = spool_copy(spool, &start, &mut entry).map_err(|e| fail(&name, e))?;
        captures += 1;
        found(Member {
            name,
            file,
            symbols: symbols.clone(),
        });
    }
    Ok(captures)
}

fn zip_members(file: File, spool: &Path, found: &mut dyn FnMut(Member)) -> Result<usize, String> {
    let mut zip = zip::ZipArchive::new(file).map_err(|e| format!("not a zip archive: {e}"))?;
    // The central directory lists every member up front: the build-id
    // cache is extracted first, so every capture can use it.
    let mut symbols: Option<Arc<SpoolDir>> = None;
    for i in 0..zip.len() {
        let mut m = zip.by_index(i).map_err(|e| format!("member {i}: {e}"))?;
        let Some(rel) = m.enclosed_name() else {
            continue;
        };
        let name = m
            .name()
            .map_or_else(|_| format!("member {i}"), |n| n.into_owned());
        if !is_symbol_member(&name) || m.is_dir() {
            continue;
        }
        let dir = symbols_dir(&mut symbols, spool).map_err(|e| format!("member {name}: {e}"))?;
        let dest = dir.0.join(rel);
        let write = (|| -> std::io::Result<()> {
            if let Some(parent) = dest.parent() {
                std::fs::create_dir_all(parent)?;
            }
            std::io::copy(&mut m, &mut File::create(&dest)?)?;
            Ok(())
        })();
        write.map_err(|e| format!("member {name}: {e}"))?;
    }
    let mut captures = 0;
    for i in 0..zip.len() {
        let mut m = zip.by_index(i).map_err(|e| format!("member {i}: {e}"))?;
        let name = m
            .name()
            .map_or_else(|_| format!("member {i}"), |n| n.into_owned());
        if m.is_dir() || is_symbol_member(&name) {
            continue;
        }
        let start = magic(&mut m).map_err(|e| format!("member {name}: {e}"))?;
        if !perfq_reader::is_capture_magic(&start) {
            continue;
        }
        let file = spool_copy(spool, &start, &mut m).map_err(|e| format!("member {name}: {e}"))?;
        captures += 1;
        found(Member {
            name,
            file,
            symbols: symbols.clone(),
        });
    }
    Ok(captures)
}
