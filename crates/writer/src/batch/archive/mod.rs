//! Captures streamed out of archives one member at a time: each capture
//! member is copied into a spool file beside the dataset (a capture is
//! read through a memory map, so it must be a file) and handed on while
//! the archive is read further; nothing else of the archive reaches the
//! disk but the build-id cache it may hold. perfq's one reader of
//! archives: `perfq batch`'s and the build-id caches of `--archive`
//! ([`unpack_symbols`]). Members are written only inside their folder
//! (`member`), and an archive's expanded bytes are bounded (`budget`).

mod budget;
mod member;

use budget::Budget;
use member::{Folder, Kind};

use std::fs::File;
use std::io::{BufReader, Read};
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

impl ArchiveKind {
    /// The kind `path`'s first bytes say: a compressed stream is taken
    /// for a compressed tar, anything else for a plain tar.
    pub(crate) fn sniff(path: &Path) -> std::io::Result<ArchiveKind> {
        let mut start = Vec::with_capacity(4);
        File::open(path)?.take(4).read_to_end(&mut start)?;
        Ok(match start.as_slice() {
            [b'B', b'Z', b'h', ..] => ArchiveKind::TarBz2,
            [0x1f, 0x8b, ..] => ArchiveKind::TarGz,
            [0x28, 0xb5, 0x2f, 0xfd] => ArchiveKind::TarZst,
            [b'P', b'K', 3, 4] => ArchiveKind::Zip,
            _ => ArchiveKind::Tar,
        })
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
/// captures there were and the lines naming the members refused, or what
/// stopped the reading (the captures handed on before it stand).
pub(crate) fn stream(
    archive: &Path,
    kind: ArchiveKind,
    spool: &Path,
    found: &mut dyn FnMut(Member),
) -> Result<Streamed, String> {
    let file = File::open(archive).map_err(|e| format!("cannot open it: {e}"))?;
    let mut reader = Reader {
        spool,
        budget: Budget::new(),
        symbols: None,
        refused: Vec::new(),
        refused_links: Vec::new(),
        found,
    };
    let captures = match kind {
        ArchiveKind::Zip => reader.zip_members(file)?,
        _ => {
            let counted = reader
                .budget
                .counted(BufReader::with_capacity(1 << 16, file));
            reader.tar_members(decoder(counted, kind)?)?
        }
    };
    let symbols = reader.symbols.take().map(|(dir, mut folder)| {
        folder.finish();
        reader.refused.append(&mut folder.refused);
        dir
    });
    Ok(Streamed {
        captures,
        symbols,
        refused: reader.refused,
    })
}

/// What an archive held.
pub(crate) struct Streamed {
    /// Its captures.
    pub(crate) captures: usize,
    /// Its build-id cache, if it held one.
    pub(crate) symbols: Option<Arc<SpoolDir>>,
    /// A line for each member refused, naming it.
    pub(crate) refused: Vec<String>,
}

/// The build-id cache `archive` holds (a `perf archive` tarball),
/// unpacked into a new folder in `spool` (empty when it holds none), and
/// the lines naming the members refused.
pub(crate) fn extract_all(
    archive: &Path,
    kind: ArchiveKind,
    spool: &Path,
) -> Result<(Arc<SpoolDir>, Vec<String>), String> {
    let streamed = stream(archive, kind, spool, &mut |_| {})?;
    let dir = match streamed.symbols {
        Some(dir) => dir,
        None => {
            let dir = SpoolDir(spool_name(spool, "symbols"));
            std::fs::create_dir_all(&dir.0).map_err(|e| format!("{}: {e}", dir.0.display()))?;
            Arc::new(dir)
        }
    };
    Ok((dir, streamed.refused))
}

/// A build-id cache unpacked from an archive, removed when dropped.
pub struct Unpacked {
    dir: Arc<SpoolDir>,
    /// A line for each member refused, naming it and why.
    pub refused: Vec<String>,
}

impl Unpacked {
    /// The build-id cache folder (as perf's `--buildid-dir`).
    pub fn path(&self) -> &Path {
        &self.dir.0
    }
}

/// Unpacks the build-id cache that `archive` holds (a `perf archive`
/// tarball; any kind `perfq batch` reads, told by its name or else its
/// first bytes) into a new folder inside `into`, with the same checks as
/// a batch's archives: members confined to the folder, expansion bounded.
pub fn unpack_symbols(archive: &Path, into: &Path) -> Result<Unpacked, crate::Error> {
    let fail = |why: String| crate::Error::Archive {
        path: archive.to_path_buf(),
        why,
    };
    let kind = match ArchiveKind::of(archive) {
        Some(k) => k,
        None => ArchiveKind::sniff(archive).map_err(|e| fail(format!("cannot read it: {e}")))?,
    };
    let (dir, refused) = extract_all(archive, kind, into).map_err(fail)?;
    Ok(Unpacked { dir, refused })
}

fn decoder<'a>(file: impl Read + 'a, kind: ArchiveKind) -> Result<Box<dyn Read + 'a>, String> {
    Ok(match kind {
        ArchiveKind::Tar | ArchiveKind::Zip => Box::new(file),
        ArchiveKind::TarGz => Box::new(flate2::read::MultiGzDecoder::new(file)),
        ArchiveKind::TarBz2 => Box::new(bzip2::read::MultiBzDecoder::new(file)),
        ArchiveKind::TarZst => Box::new(
            zstd::stream::read::Decoder::new(file)
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

/// One archive being read.
struct Reader<'a> {
    spool: &'a Path,
    budget: Budget,
    /// The build-id cache folder, made on its first member.
    symbols: Option<(Arc<SpoolDir>, Folder)>,
    refused: Vec<String>,
    /// The links refused: a member under one is refused too.
    refused_links: Vec<PathBuf>,
    found: &'a mut dyn FnMut(Member),
}

/// Whether a member's name or link leads out of wherever it would be
/// unpacked: never so in a capture's or perf's archive, so such a member
/// is refused whatever it is.
fn leads_out(name: &str, link: Option<&Path>) -> Option<&'static str> {
    if member::confined(Path::new(name)).is_none() {
        Some("its name leads out of the archive's folder")
    } else if link.is_some_and(|l| l.is_absolute()) {
        Some("a link that leads out of the archive's folder")
    } else {
        None
    }
}

/// The build-id cache folder, made in `spool` on its first member.
fn symbols_folder<'s>(
    symbols: &'s mut Option<(Arc<SpoolDir>, Folder)>,
    spool: &Path,
) -> std::io::Result<&'s mut (Arc<SpoolDir>, Folder)> {
    if let Some(made) = symbols {
        return Ok(made);
    }
    let dir = SpoolDir(spool_name(spool, "symbols"));
    std::fs::create_dir_all(&dir.0)?;
    let folder = Folder::new(dir.0.clone());
    Ok(symbols.insert((Arc::new(dir), folder)))
}

impl Reader<'_> {
    /// One member: refused, unpacked into the build-id cache, spooled as
    /// a capture, or passed over. Counts the captures.
    fn member(&mut self, name: String, kind: Kind<'_>) -> Result<usize, String> {
        let link = match &kind {
            Kind::Symlink(t) | Kind::HardLink(t) => Some(t.as_path()),
            _ => None,
        };
        let why = leads_out(&name, link).or_else(|| {
            let through = |l: &PathBuf| Path::new(&name).starts_with(l);
            self.refused_links
                .iter()
                .any(through)
                .then_some("it lies under a link refused before it")
        });
        if let Some(why) = why {
            if link.is_some() {
                self.refused_links.push(PathBuf::from(&name));
            }
            self.refused.push(format!("member {name}: refused: {why}"));
            return Ok(0);
        }
        if is_symbol_member(&name) {
            let (_, folder) = symbols_folder(&mut self.symbols, self.spool)
                .map_err(|e| format!("member {name}: {e}"))?;
            folder.unpack(&name, kind, &mut self.budget)?;
            return Ok(0);
        }
        let Kind::File(data) = kind else {
            return Ok(0);
        };
        let start = magic(data).map_err(|e| format!("member {name}: {e}"))?;
        if !perfq_reader::is_capture_magic(&start) {
            return Ok(0);
        }
        let file = self
            .spool_copy(&start, data)
            .map_err(|e| format!("member {name}: {e}"))?;
        let symbols = self.symbols.as_ref().map(|(dir, _)| dir.clone());
        (self.found)(Member {
            name,
            file,
            symbols,
        });
        Ok(1)
    }

    /// Copies a member that starts with `start` into a new spool file.
    fn spool_copy(&mut self, start: &[u8], rest: &mut dyn Read) -> Result<SpoolFile, String> {
        let file = SpoolFile(spool_name(self.spool, "capture"));
        let created = File::create(&file.0).map_err(|e| e.to_string())?;
        let mut out = std::io::BufWriter::with_capacity(1 << 20, created);
        self.budget.copy(&mut &start[..], &mut out)?;
        self.budget.copy(rest, &mut out)?;
        out.into_inner().map_err(|e| e.into_error().to_string())?;
        Ok(file)
    }

    fn tar_members(&mut self, reader: Box<dyn Read + '_>) -> Result<usize, String> {
        let mut tar = tar::Archive::new(reader);
        let mut captures = 0;
        let mut last = String::from("(none)");
        let entries = tar
            .entries()
            .map_err(|e| format!("not a tar archive: {e}"))?;
        for entry in entries {
            let mut entry = entry.map_err(|e| format!("{e} (after member {last})"))?;
            let at = entry.raw_header_position();
            let name = String::from_utf8_lossy(&entry.path_bytes()).into_owned();
            last.clone_from(&name);
            let link = entry
                .link_name()
                .map_err(|e| format!("member {name} at byte {at} of the tar stream: {e}"))?
                .map(|l| l.into_owned());
            let kind = entry.header().entry_type();
            let kind = match (kind, link) {
                (t, _) if t.is_dir() => Kind::Dir,
                (t, _) if t.is_file() => Kind::File(&mut entry),
                (t, Some(l)) if t.is_symlink() => Kind::Symlink(l),
                (t, Some(l)) if t.is_hard_link() => Kind::HardLink(l),
                _ => Kind::Other,
            };
            captures += self
                .member(name, kind)
                .map_err(|e| format!("{e} (at byte {at} of the tar stream)"))?;
        }
        Ok(captures)
    }

    fn zip_members(&mut self, file: File) -> Result<usize, String> {
        let mut zip = zip::ZipArchive::new(BufReader::with_capacity(1 << 16, file))
            .map_err(|e| format!("not a zip archive: {e}"))?;
        // The central directory lists every member up front: the build-id
        // cache is unpacked first, so every capture can use it.
        let mut captures = 0;
        for symbols_first in [true, false] {
            for i in 0..zip.len() {
                let mut m = zip.by_index(i).map_err(|e| format!("member {i}: {e}"))?;
                let name = m
                    .name()
                    .map_or_else(|_| format!("member {i}"), |n| n.into_owned());
                if is_symbol_member(&name) != symbols_first {
                    continue;
                }
                // A zip is read by seeking: each member's own compressed
                // bytes are what its expansion is measured against.
                self.budget.compressed(m.compressed_size());
                let kind = if m.is_dir() {
                    Kind::Dir
                } else if m.is_symlink() {
                    let mut target = Vec::new();
                    (&mut m)
                        .take(4096)
                        .read_to_end(&mut target)
                        .map_err(|e| format!("member {name}: {e}"))?;
                    Kind::Symlink(PathBuf::from(String::from_utf8_lossy(&target).into_owned()))
                } else {
                    Kind::File(&mut m)
                };
                captures += self.member(name, kind)?;
            }
        }
        Ok(captures)
    }
}
