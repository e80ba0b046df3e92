//! Which members of a build-id cache a capture needs: those of the build
//! ids it names. A `perf archive` tarball, or a cache gathered over many
//! runs, holds binaries of other captures too; unpacking only a capture's
//! own keeps an archive of gigabytes from landing on disk for a handful
//! of binaries.
//!
//! A capture names its binaries' build ids in its `BUILD_ID` header
//! feature (what `perf archive` packs), or, recorded with
//! `--buildid-mmap` (no such feature), in its MMAP2 records: the two
//! places the symbolizer takes them from.

use std::path::Path;

use perfq_reader::{misc, Capture, RecordData, RecordType};
use rustc_hash::FxHashSet;

/// The build ids some captures name, as lowercase hex.
#[derive(Clone, Debug, Default)]
pub struct BuildIds(FxHashSet<String>);

/// `bytes` as perf spells a build id in its cache: lowercase hex, the
/// zero bytes an id without a recorded size is padded with dropped.
fn spelled(bytes: &[u8]) -> String {
    let end = bytes.iter().rposition(|b| *b != 0).map_or(0, |i| i + 1);
    bytes[..end].iter().map(|b| format!("{b:02x}")).collect()
}

/// A cache path component as a build id, spelled as [`spelled`] does.
fn normalized(hex: &str) -> String {
    let mut s = hex.to_ascii_lowercase();
    while s.len() >= 2 && s.ends_with("00") {
        s.truncate(s.len() - 2);
    }
    s
}

impl BuildIds {
    /// The build ids the captures at `paths` name, or `None` when one of
    /// them cannot be read as a capture file (standard input, a damaged
    /// header): then which members are needed is not known.
    pub fn of_captures<P: AsRef<Path>>(paths: &[P]) -> Option<BuildIds> {
        let mut ids = BuildIds::default();
        for path in paths {
            let capture = Capture::open(path.as_ref()).ok()?;
            ids.add_capture(&capture);
        }
        Some(ids)
    }

    /// Adds the build ids `capture` names: its header's, else its MMAP2
    /// records'.
    pub fn add_capture(&mut self, capture: &Capture) {
        let header = &capture.meta().build_ids;
        for entry in header {
            self.insert(&entry.build_id);
        }
        if !header.is_empty() {
            return;
        }
        let mut records = capture.records();
        let mut error = None;
        while let Some(r) = records.next_ok(&mut error) {
            let carries_id = r.kind == RecordType::MMAP2 && r.misc & misc::MMAP_BUILD_ID != 0;
            if !(carries_id || r.kind == RecordType::HEADER_BUILD_ID) {
                continue;
            }
            match capture.parse(&r) {
                Ok((RecordData::Mmap(m), _)) => {
                    if let Some(perfq_reader::MmapFileId::BuildId(b)) = m.file_id {
                        self.insert(b);
                    }
                }
                Ok((RecordData::BuildId { build_id, .. }, _)) => self.insert(build_id),
                _ => {}
            }
        }
    }

    /// Adds a build id spelled in hex.
    #[cfg(test)]
    pub(crate) fn add_hex(&mut self, hex: &str) {
        self.0.insert(normalized(hex));
    }

    fn insert(&mut self, bytes: &[u8]) {
        let id = spelled(bytes);
        if !id.is_empty() {
            self.0.insert(id);
        }
    }

    /// How many build ids.
    pub fn len(&self) -> usize {
        self.0.len()
    }

    /// Whether there are none.
    pub fn is_empty(&self) -> bool {
        self.0.is_empty()
    }

    /// Whether the cache member `name` belongs to one of these ids: a
    /// `.build-id/xx/<rest>` link (`<rest>` perhaps with a suffix such as
    /// `.debug`), or anything under a `<path>/<build id>/` folder.
    pub(crate) fn admits(&self, name: &str) -> bool {
        let parts: Vec<&str> = name.split('/').filter(|p| !p.is_empty()).collect();
        let hex = |p: &str| !p.is_empty() && p.bytes().all(|b| b.is_ascii_hexdigit());
        let named = |p: &str| hex(p) && self.0.contains(&normalized(p));
        if parts.iter().any(|p| named(p)) {
            return true;
        }
        parts.windows(3).any(|w| {
            let rest = w[2].split('.').next().unwrap_or("");
            w[0] == ".build-id" && w[1].len() == 2 && named(&format!("{}{rest}", w[1]))
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn members_of_the_ids_named_are_admitted() {
        let mut ids = BuildIds::default();
        ids.insert(&[0xab; 20]);
        let mut short = vec![0xcd; 16];
        short.extend([0; 4]);
        ids.insert(&short);
        let ab = "ab".repeat(20);
        let cd = "cd".repeat(16);
        for admitted in [
            format!(".build-id/ab/{}", &ab[2..]),
            format!(".build-id/ab/{}.debug", &ab[2..]),
            format!("usr/lib/libc.so.6/{ab}/elf"),
            format!("[kernel.kallsyms]/{ab}/kallsyms"),
            format!("usr/bin/x/{cd}/"),
            format!("usr/bin/x/{}/elf", cd.to_uppercase()),
        ] {
            assert!(ids.admits(&admitted), "{admitted}");
        }
        for passed in [
            format!(".build-id/ef/{}", &ab[2..]),
            format!("usr/lib/libc.so.6/{}/elf", "ef".repeat(20)),
            "usr/lib/libc.so.6/".to_string(),
            ".build-id/ab/".to_string(),
        ] {
            assert!(!ids.admits(&passed), "{passed}");
        }
    }
}
