//! Writing an archive's members into a folder of their own, and nowhere
//! else: what `tar -xf` would trust, refused.
//!
//! - A member's name must be relative and free of `..`: `/etc/x` and
//!   `../../x` are refused.
//! - Nothing is written through a link: a member whose folder on disk is
//!   (or passes through) a symbolic link is refused, and a file replaces
//!   a link at its own name instead of writing where the link points.
//! - A symbolic link's target must be relative and stay inside the
//!   folder, read from where the link is; when the archive is done,
//!   every link is resolved on disk ([`Folder::finish`]) and one that
//!   leads out, through other links, is removed.
//! - A hard link must name a regular file unpacked before it.
//! - Other kinds (devices, fifos) are passed over.
//!
//! Each refusal is one line naming the member; the rest of the archive
//! is unpacked.

use std::fs::File;
use std::io::Read;
use std::path::{Component, Path, PathBuf};

/// What a member is.
pub(crate) enum Kind<'a> {
    Dir,
    File(&'a mut dyn Read),
    Symlink(PathBuf),
    HardLink(PathBuf),
    Other,
}

/// A folder an archive is unpacked into.
pub(crate) struct Folder {
    root: PathBuf,
    /// Lines naming the members refused, and why.
    pub(crate) refused: Vec<String>,
}

/// `name` as a path below the folder: `None` when absolute or with `..`.
pub(super) fn confined(name: &Path) -> Option<PathBuf> {
    let mut rel = PathBuf::new();
    for c in name.components() {
        match c {
            Component::Normal(part) => rel.push(part),
            Component::CurDir => {}
            Component::ParentDir | Component::RootDir | Component::Prefix(_) => return None,
        }
    }
    Some(rel)
}

/// Whether a link at `link` (below the folder) to the relative `target`
/// stays inside the folder, read as written (no link followed).
fn target_inside(link: &Path, target: &Path) -> bool {
    let mut depth: isize = link.components().count() as isize - 1;
    for c in target.components() {
        match c {
            Component::Normal(_) => depth += 1,
            Component::CurDir => {}
            Component::ParentDir => {
                depth -= 1;
                if depth < 0 {
                    return false;
                }
            }
            Component::RootDir | Component::Prefix(_) => return false,
        }
    }
    true
}

impl Folder {
    pub(crate) fn new(root: PathBuf) -> Folder {
        Folder {
            root,
            refused: Vec::new(),
        }
    }

    fn refuse(&mut self, name: &str, why: &str) {
        self.refused.push(format!("member {name}: refused: {why}"));
    }

    /// Makes the folders of `rel` below the root, refusing to pass through
    /// a link (or a file).
    fn parent_dirs(&self, rel: &Path) -> Result<(), &'static str> {
        let mut at = self.root.clone();
        let parts: Vec<_> = rel.components().collect();
        for part in parts.iter().take(parts.len().saturating_sub(1)) {
            at.push(part);
            match std::fs::symlink_metadata(&at) {
                Ok(m) if m.is_dir() => {}
                Ok(m) if m.file_type().is_symlink() => return Err("its folder is a link"),
                Ok(_) => return Err("its folder is a file"),
                Err(_) => std::fs::create_dir(&at).map_err(|_| "cannot make its folder")?,
            }
        }
        Ok(())
    }

    /// Removes what is at `path` unless it is a folder, so that nothing is
    /// written through a link an earlier member made.
    fn clear(path: &Path) -> std::io::Result<()> {
        match std::fs::symlink_metadata(path) {
            Ok(m) if m.is_dir() => Ok(()),
            Ok(_) => std::fs::remove_file(path),
            Err(_) => Ok(()),
        }
    }

    /// Unpacks one member (a file's bytes read through the archive's
    /// budget). An error ends the archive (the budget spent, or the disk
    /// failing); a refusal is counted and the archive goes on.
    pub(crate) fn unpack(&mut self, name: &str, kind: Kind<'_>) -> Result<(), String> {
        let Some(rel) = confined(Path::new(name)) else {
            self.refuse(name, "its name leads out of the archive's folder");
            return Ok(());
        };
        if rel.as_os_str().is_empty() || matches!(kind, Kind::Other) {
            return Ok(());
        }
        if let Err(why) = self.parent_dirs(&rel) {
            self.refuse(name, why);
            return Ok(());
        }
        let path = self.root.join(&rel);
        let io = |e: std::io::Error| format!("member {name}: {e}");
        match kind {
            Kind::Dir => match std::fs::symlink_metadata(&path) {
                Ok(m) if m.is_dir() => {}
                Ok(_) => self.refuse(name, "a file or link has its name"),
                Err(_) => std::fs::create_dir(&path).map_err(io)?,
            },
            Kind::File(data) => {
                Folder::clear(&path).map_err(io)?;
                let mut out = File::options()
                    .write(true)
                    .create_new(true)
                    .open(&path)
                    .map_err(io)?;
                std::io::copy(data, &mut out).map_err(io)?;
            }
            Kind::Symlink(target) => {
                if !target_inside(&rel, &target) {
                    self.refuse(name, "a link that leads out of the archive's folder");
                    return Ok(());
                }
                Folder::clear(&path).map_err(io)?;
                std::os::unix::fs::symlink(&target, &path).map_err(io)?;
            }
            Kind::HardLink(target) => {
                let source = confined(&target).map(|t| self.root.join(t));
                match source {
                    Some(s) if std::fs::symlink_metadata(&s).is_ok_and(|m| m.is_file()) => {
                        Folder::clear(&path).map_err(io)?;
                        std::fs::hard_link(&s, &path).map_err(io)?;
                    }
                    _ => self.refuse(name, "a hard link to no file of the archive"),
                }
            }
            Kind::Other => {}
        }
        Ok(())
    }

    /// Resolves every link on disk and removes those that lead out of the
    /// folder through other links (each target was inside as written).
    /// Links to nothing are left: perf's build-id links may name binaries
    /// the archive does not hold.
    pub(crate) fn finish(&mut self) {
        let Ok(root) = self.root.canonicalize() else {
            return;
        };
        let mut stack = vec![self.root.clone()];
        while let Some(dir) = stack.pop() {
            let Ok(entries) = std::fs::read_dir(&dir) else {
                continue;
            };
            for entry in entries.flatten() {
                let path = entry.path();
                let Ok(kind) = entry.file_type() else {
                    continue;
                };
                if kind.is_dir() {
                    stack.push(path);
                } else if kind.is_symlink() {
                    let out = path.canonicalize().is_ok_and(|t| !t.starts_with(&root));
                    if out && std::fs::remove_file(&path).is_ok() {
                        let name = path.strip_prefix(&self.root).unwrap_or(&path);
                        self.refuse(
                            &name.display().to_string(),
                            "a link that leads out of the archive's folder through other links",
                        );
                    }
                }
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn names_and_targets_are_read_without_following_anything() {
        assert_eq!(confined(Path::new("./a/b")), Some(PathBuf::from("a/b")));
        assert_eq!(confined(Path::new("/etc/x")), None);
        assert_eq!(confined(Path::new("a/../../x")), None);
        let link = Path::new(".build-id/ab/cdef");
        assert!(target_inside(link, Path::new("../../usr/bin/ls/abcdef")));
        assert!(!target_inside(link, Path::new("../../../etc")));
        assert!(!target_inside(link, Path::new("/")));
    }

    #[test]
    fn nothing_is_written_through_links() {
        let dir = tempfile::tempdir().expect("tempdir");
        let outside = tempfile::tempdir().expect("tempdir");
        let root = dir.path().join("root");
        std::fs::create_dir(&root).expect("mkdir");
        let mut folder = Folder::new(root.clone());
        let unpack = |f: &mut Folder, name: &str, kind: Kind<'_>| {
            f.unpack(name, kind).expect("unpacked");
        };
        // A link inside as written, out once the link it passes through
        // is on disk.
        unpack(&mut folder, "d", Kind::Symlink(".".into()));
        unpack(&mut folder, "e", Kind::Symlink("d/..".into()));
        unpack(&mut folder, "up", Kind::Symlink(outside.path().into()));
        unpack(&mut folder, "d/x", Kind::File(&mut &b"through d"[..]));
        unpack(&mut folder, "f", Kind::Symlink(".".into()));
        unpack(&mut folder, "f", Kind::File(&mut &b"replaces the link"[..]));
        unpack(&mut folder, "h", Kind::HardLink("/etc/passwd".into()));
        unpack(&mut folder, "ok/y", Kind::File(&mut &b"fine"[..]));
        unpack(&mut folder, "ok/z", Kind::HardLink("ok/y".into()));
        folder.finish();
        let refused = folder.refused.join("\n");
        for (member, why) in [
            ("up", "leads out"),
            ("d/x", "its folder is a link"),
            ("h", "hard link"),
            ("e", "through other links"),
        ] {
            assert!(
                refused.contains(&format!("member {member}: refused: ")),
                "{refused}"
            );
            assert!(refused.contains(why), "{refused}");
        }
        assert_eq!(folder.refused.len(), 4, "{refused}");
        assert_eq!(
            std::fs::read(root.join("f")).expect("f"),
            b"replaces the link"
        );
        assert_eq!(std::fs::read(root.join("ok/z")).expect("z"), b"fine");
        assert_eq!(std::fs::read_dir(outside.path()).expect("ls").count(), 0);
    }
}
