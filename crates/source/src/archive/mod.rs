//! Captures streamed out of archives one member at a time: each capture
//! member is copied into a spool file beside the dataset (a capture is
//! read through a memory map, so it must be a file) and handed on while
//! the archive is read further; nothing else of the archive reaches the
//! disk but the build-id cache it may hold (only the members of the
//! build ids its capture names, when the capture is known beforehand:
//! `wanted`). perfq's one reader of archives: `perfq batch`'s and the
//! build-id caches of `--archive` ([`unpack_symbols`]). Members are
//! written only inside their folder (`member`), and an archive's expanded
//! bytes are bounded (`budget`).

mod budget;
mod member;
mod wanted;

use budget::Budget;
use member::{Folder, Kind};
pub use wanted::BuildIds;

use std::fs::File;
use std::io::{BufReader, Read, Seek, Write};
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::Arc;

use crate::store::{ObjectReader, ObjectUrl};

/// The archive formats a batch reads, told by the file name.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum ArchiveKind {
    /// `.tar`.
    Tar,
    /// `.tar.gz`, `.tgz`.
    TarGz,
    /// `.tar.bz2`, `.tbz2` (what `perf archive` writes).
    TarBz2,
    /// `.tar.zst`, `.tzst`.
    TarZst,
    /// `.zip`.
    Zip,
}

impl ArchiveKind {
    /// The kind `path`'s name says, if it names an archive.
    pub fn of(path: &Path) -> Option<ArchiveKind> {
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
    pub fn sniff(at: ArchiveAt<'_>) -> Result<ArchiveKind, String> {
        let mut start = Vec::with_capacity(4);
        let mut bytes = at.open()?;
        (&mut bytes)
            .take(4)
            .read_to_end(&mut start)
            .map_err(|e| format!("cannot read it: {e}"))?;
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
pub struct SpoolFile(pub PathBuf);

impl Drop for SpoolFile {
    fn drop(&mut self) {
        let _ = std::fs::remove_file(&self.0);
    }
}

/// A folder in the spool folder, removed when the last capture that
/// uses it is done.
#[derive(Debug)]
pub struct SpoolDir(pub PathBuf);

impl Drop for SpoolDir {
    fn drop(&mut self) {
        let _ = std::fs::remove_dir_all(&self.0);
    }
}

/// A capture found in an archive.
pub struct Member {
    /// Its path inside the archive.
    pub name: String,
    /// Its bytes, copied out.
    pub file: SpoolFile,
    /// The build-id cache the archive held before this member, if any.
    pub symbols: Option<Arc<SpoolDir>>,
}

/// Names of spool files and folders, unique within the process.
static NEXT: AtomicU64 = AtomicU64::new(0);

/// A new name in the spool folder `spool`, starting with `what`.
pub fn spool_name(spool: &Path, what: &str) -> PathBuf {
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

/// Where an archive is.
#[derive(Clone, Copy, Debug)]
pub enum ArchiveAt<'a> {
    /// A file.
    File(&'a Path),
    /// An object, read by range requests as it is streamed.
    Object(&'a ObjectUrl),
}

/// An archive's bytes: read front to back (tar), or by seeking (zip).
trait Bytes: Read + Seek + Send {}
impl<T: Read + Seek + Send> Bytes for T {}

impl ArchiveAt<'_> {
    /// The archive's name in messages: its path, or its URL.
    pub fn name(self) -> PathBuf {
        match self {
            ArchiveAt::File(path) => path.to_path_buf(),
            ArchiveAt::Object(url) => PathBuf::from(url.to_string()),
        }
    }

    /// The kind its name says, if it names one.
    pub fn kind_by_name(self) -> Option<ArchiveKind> {
        match self {
            ArchiveAt::File(path) => ArchiveKind::of(path),
            ArchiveAt::Object(url) => ArchiveKind::of(Path::new(url.key().filename()?)),
        }
    }

    fn open(self) -> Result<Box<dyn Bytes>, String> {
        match self {
            ArchiveAt::File(path) => {
                let file = File::open(path).map_err(|e| format!("cannot open it: {e}"))?;
                Ok(Box::new(file))
            }
            ArchiveAt::Object(url) => match ObjectReader::open(url) {
                Ok(reader) => Ok(Box::new(reader)),
                // The archive is named already.
                Err(crate::Error::Store { why, .. }) => Err(format!("cannot open it: {why}")),
                Err(e) => Err(format!("cannot open it: {e}")),
            },
        }
    }
}

/// Reads `archive`, calling `found` with each capture member as soon as
/// it is copied out (other members are passed over, except a build-id
/// cache, extracted for the captures that come after it: only the members
/// of `wanted`'s build ids when given). Gives how many captures there
/// were and the lines naming the members refused, or what stopped the
/// reading (the captures handed on before it stand).
pub fn stream(
    archive: ArchiveAt<'_>,
    kind: ArchiveKind,
    spool: &Path,
    wanted: Option<&BuildIds>,
    found: &mut dyn FnMut(Member),
) -> Result<Streamed, String> {
    let file = archive.open()?;
    let mut reader = Reader {
        spool,
        budget: Budget::new(),
        wanted,
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
            let expanded = reader.budget.metered(decoder(counted, kind)?);
            reader.tar_members(Box::new(expanded))?
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
pub struct Streamed {
    /// Its captures.
    pub captures: usize,
    /// Its build-id cache, if it held one.
    pub symbols: Option<Arc<SpoolDir>>,
    /// A line for each member refused, naming it.
    pub refused: Vec<String>,
}

/// The build-id cache `archive` holds (a `perf archive` tarball; only
/// `wanted`'s build ids when given), unpacked into a new folder in
/// `spool` (empty when it holds none), and the lines naming the members
/// refused.
pub fn extract_symbols(
    archive: ArchiveAt<'_>,
    kind: ArchiveKind,
    spool: &Path,
    wanted: Option<&BuildIds>,
) -> Result<(Arc<SpoolDir>, Vec<String>), String> {
    let streamed = stream(archive, kind, spool, wanted, &mut |_| {})?;
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
/// With `wanted`, only the members of those build ids are unpacked.
pub fn unpack_symbols(
    archive: ArchiveAt<'_>,
    into: &Path,
    wanted: Option<&BuildIds>,
) -> Result<Unpacked, crate::Error> {
    let fail = |why: String| crate::Error::Archive {
        path: archive.name(),
        why,
    };
    let kind = match archive.kind_by_name() {
        Some(k) => k,
        None => ArchiveKind::sniff(archive).map_err(fail)?,
    };
    let (dir, refused) = extract_symbols(archive, kind, into, wanted).map_err(fail)?;
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
    /// The build ids whose cache members are unpacked (all when `None`).
    wanted: Option<&'a BuildIds>,
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
            if self.wanted.is_some_and(|w| !w.admits(&name)) {
                return Ok(0);
            }
            let (_, folder) = symbols_folder(&mut self.symbols, self.spool)
                .map_err(|e| format!("member {name}: {e}"))?;
            folder.unpack(&name, kind)?;
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
        out.write_all(start).map_err(|e| e.to_string())?;
        std::io::copy(rest, &mut out).map_err(|e| e.to_string())?;
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
            // Reading past a member decompresses it: a bomb passed over is
            // named as one unpacked is.
            let mut entry = entry.map_err(|e| match budget::spent(&e) {
                true => format!("member {last}: {e}"),
                false => format!("{e} (after member {last})"),
            })?;
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

    fn zip_members(&mut self, file: Box<dyn Bytes>) -> Result<usize, String> {
        let mut zip = zip::ZipArchive::new(BufReader::with_capacity(1 << 16, file))
            .map_err(|e| format!("not a zip archive: {e}"))?;
        // The central directory lists every member up front: the build-id
        // cache is unpacked first, so every capture can use it.
        let mut captures = 0;
        for symbols_first in [true, false] {
            for i in 0..zip.len() {
                let m = zip.by_index(i).map_err(|e| format!("member {i}: {e}"))?;
                let name = m
                    .name()
                    .map_or_else(|_| format!("member {i}"), |n| n.into_owned());
                if is_symbol_member(&name) != symbols_first {
                    continue;
                }
                // A zip is read by seeking: each member's own compressed
                // bytes are what its expansion is measured against, and a
                // member passed over is not decompressed.
                self.budget.compressed(m.compressed_size());
                let (dir, symlink) = (m.is_dir(), m.is_symlink());
                let mut m = self.budget.metered(m);
                let kind = if dir {
                    Kind::Dir
                } else if symlink {
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

#[cfg(test)]
mod tests {
    use super::*;

    /// A `perf archive`-like tarball: for each id, perf's link and the
    /// binary it leads to.
    fn perf_archive(path: &Path, ids: &[&str]) {
        let mut tar = tar::Builder::new(File::create(path).expect("create"));
        for id in ids {
            let binary = format!("usr/bin/x/{id}/elf");
            let mut h = tar::Header::new_gnu();
            h.set_size(4);
            h.set_mode(0o644);
            tar.append_data(&mut h, &binary, &b"\x7fELF"[..])
                .expect("file");
            let mut l = tar::Header::new_gnu();
            l.set_entry_type(tar::EntryType::Symlink);
            l.set_size(0);
            let link = format!(".build-id/{}/{}", &id[..2], &id[2..]);
            tar.append_link(&mut l, &link, format!("../../usr/bin/x/{id}"))
                .expect("link");
        }
        tar.finish().expect("finish");
    }

    fn files(root: &Path) -> Vec<String> {
        let mut out = Vec::new();
        let mut stack = vec![root.to_path_buf()];
        while let Some(dir) = stack.pop() {
            for e in std::fs::read_dir(&dir).expect("ls").flatten() {
                let p = e.path();
                if e.file_type().expect("type").is_dir() {
                    stack.push(p);
                } else {
                    let rel = p.strip_prefix(root).expect("below");
                    out.push(rel.display().to_string());
                }
            }
        }
        out.sort();
        out
    }

    #[test]
    fn only_the_build_ids_wanted_are_unpacked() {
        let dir = tempfile::tempdir().expect("tempdir");
        let (ab, ef) = ("ab".repeat(20), "ef".repeat(20));
        let archive = dir.path().join("perf.data.tar");
        perf_archive(&archive, &[&ab, &ef]);
        let all = unpack_symbols(ArchiveAt::File(&archive), dir.path(), None).expect("all");
        assert_eq!(files(all.path()).len(), 4, "{:?}", files(all.path()));
        let mut wanted = BuildIds::default();
        wanted.add_hex(&ab);
        let some =
            unpack_symbols(ArchiveAt::File(&archive), dir.path(), Some(&wanted)).expect("some");
        assert_eq!(
            files(some.path()),
            [
                format!(".build-id/ab/{}", &ab[2..]),
                format!("usr/bin/x/{ab}/elf")
            ]
        );
        // The link leads to the binary.
        let link = some.path().join(format!(".build-id/ab/{}/elf", &ab[2..]));
        assert_eq!(std::fs::read(link).expect("through the link"), b"\x7fELF");
        let none = unpack_symbols(
            ArchiveAt::File(&archive),
            dir.path(),
            Some(&BuildIds::default()),
        )
        .expect("none");
        assert!(files(none.path()).is_empty());
    }
}
