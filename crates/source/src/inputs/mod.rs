//! What a batch's inputs name: captures (files, the captures in folders
//! searched recursively, glob matches) and archives, in a fixed order; in
//! object storage, the same under a URL (`objects.rs`).

mod objects;

use std::path::{Path, PathBuf};

use rustc_hash::FxHashSet;

use crate::archive::ArchiveKind;
use crate::store::{looks_like_url, ObjectUrl};

/// One thing to convert, or why an input gave nothing.
#[derive(Debug)]
pub enum Item {
    /// A perf.data file.
    Capture {
        /// The file.
        path: PathBuf,
        /// A `perf archive` tarball beside it (`<capture>.tar.bz2`): the
        /// build-id cache of the binaries it was recorded with.
        symbols: Option<PathBuf>,
    },
    /// An archive whose captures are streamed out of it.
    Archive {
        /// The archive file.
        path: PathBuf,
        /// Its format.
        kind: ArchiveKind,
    },
    /// A capture in object storage.
    ObjectCapture {
        /// The object.
        url: ObjectUrl,
        /// A `perf archive` tarball beside it, as for a file.
        symbols: Option<ObjectUrl>,
    },
    /// An archive in object storage, streamed by range requests.
    ObjectArchive {
        /// The object.
        url: ObjectUrl,
        /// Its format.
        kind: ArchiveKind,
    },
    /// An input that names nothing convertible.
    Problem {
        /// The input as given.
        input: String,
        /// Why it gave nothing.
        reason: String,
    },
}

/// The items of `inputs`, each file once, folders' contents sorted by
/// name; `dataset` (when it is inside a folder searched) is left out.
pub fn expand(inputs: &[PathBuf], dataset: &Path) -> Vec<Item> {
    let mut found = Found {
        items: Vec::new(),
        seen: FxHashSet::default(),
        dataset: dataset.canonicalize().ok(),
    };
    for input in inputs {
        if input == Path::new("-") {
            // Standard input: read once, by the conversion.
            found.items.push(Item::Capture {
                path: input.clone(),
                symbols: None,
            });
            continue;
        }
        if let Some(url) = input.to_str().filter(|t| looks_like_url(t)) {
            found.items.extend(objects::expand(url));
            continue;
        }
        if input.symlink_metadata().is_ok() {
            found.path(input, true);
            continue;
        }
        let text = input.to_string_lossy();
        if text.contains(['*', '?', '[']) {
            // A pattern the shell did not expand (quoted, or too many
            // files for a command line).
            match glob::glob(&text) {
                Ok(paths) => {
                    let mut any = false;
                    for p in paths.flatten() {
                        any = true;
                        found.path(&p, false);
                    }
                    if !any {
                        found.problem(input, "no file matches this pattern".into());
                    }
                }
                Err(e) => found.problem(input, format!("not a valid pattern: {e}")),
            }
        } else {
            found.problem(input, "no such file or folder".into());
        }
    }
    pair_perf_archives(found.items)
}

struct Found {
    items: Vec<Item>,
    seen: FxHashSet<PathBuf>,
    dataset: Option<PathBuf>,
}

impl Found {
    fn problem(&mut self, input: &Path, reason: String) {
        self.items.push(Item::Problem {
            input: input.display().to_string(),
            reason,
        });
    }

    /// A file or folder. `named`: given by name, so that a file that is
    /// neither a capture nor an archive is a problem (in a folder or a
    /// pattern's matches, such files are passed over).
    fn path(&mut self, path: &Path, named: bool) {
        let canonical = path.canonicalize().unwrap_or_else(|_| path.to_path_buf());
        if self.dataset.as_ref() == Some(&canonical) || !self.seen.insert(canonical) {
            return;
        }
        if path.is_dir() {
            let mut entries: Vec<PathBuf> = match std::fs::read_dir(path) {
                Ok(rd) => rd.flatten().map(|e| e.path()).collect(),
                Err(e) => return self.problem(path, format!("cannot list it: {e}")),
            };
            entries.sort();
            for e in entries {
                // Hidden files and folders (perf's `.debug` cache, a
                // dataset's folders being written) hold no input.
                let hidden = e
                    .file_name()
                    .is_some_and(|n| n.to_string_lossy().starts_with('.'));
                if !hidden {
                    self.path(&e, false);
                }
            }
            return;
        }
        if let Some(kind) = ArchiveKind::of(path) {
            self.items.push(Item::Archive {
                path: path.to_path_buf(),
                kind,
            });
            return;
        }
        // A file given by name is converted whatever it holds, so that a
        // damaged one gets the reader's account of what is wrong; in a
        // folder, a file is a capture by its magic, or by a capture's name
        // when the magic is damaged.
        let capture = named || capture_name(path) || starts_like_capture(path).unwrap_or(false);
        if capture {
            self.items.push(Item::Capture {
                path: path.to_path_buf(),
                symbols: None,
            });
        }
    }
}

/// Whether `path` is named as perf names captures: `perf.data`,
/// `perf.data.old`, `*.data`.
fn capture_name(path: &Path) -> bool {
    path.file_name()
        .map(|n| n.to_string_lossy())
        .is_some_and(|n| n.starts_with("perf.data") || n.ends_with(".data"))
}

/// Whether the file at `path` starts with a perf.data magic.
fn starts_like_capture(path: &Path) -> std::io::Result<bool> {
    use std::io::Read;
    let mut start = [0u8; 8];
    let mut f = std::fs::File::open(path)?;
    let mut n = 0;
    while n < start.len() {
        match f.read(&mut start[n..])? {
            0 => break,
            k => n += k,
        }
    }
    Ok(perfq_reader::is_capture_magic(&start[..n]))
}

/// `perf archive FILE` writes `FILE.tar.bz2` beside the capture: the
/// build-id cache of the binaries it names. Such an archive symbolizes its
/// capture (whether it was named or found beside it) and is not an input
/// of its own.
fn pair_perf_archives(items: Vec<Item>) -> Vec<Item> {
    let sidecar = |capture: &Path| -> Option<PathBuf> {
        let mut name = capture.file_name()?.to_os_string();
        name.push(".tar.bz2");
        let p = capture.with_file_name(name);
        p.is_file().then_some(p)
    };
    let mut paired = FxHashSet::default();
    let mut items: Vec<Item> = items
        .into_iter()
        .map(|item| match item {
            Item::Capture {
                path,
                symbols: None,
            } => {
                let symbols = sidecar(&path);
                if let Some(s) = &symbols {
                    paired.insert(s.canonicalize().unwrap_or_else(|_| s.clone()));
                }
                Item::Capture { path, symbols }
            }
            other => other,
        })
        .collect();
    items.retain(|item| match item {
        Item::Archive { path, .. } => {
            !paired.contains(&path.canonicalize().unwrap_or_else(|_| path.clone()))
        }
        _ => true,
    });
    items
}
