//! Binaries shared between the symbolizers of many captures: a batch of
//! captures of the same programs reads each binary's symbol table and
//! DWARF once, not once per capture (for a large binary such as
//! `librustc_driver` that is most of a conversion's symbolizing).

use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex};

use rustc_hash::FxHashMap;

use crate::binary::{Binary, BinaryError};

/// Opened binaries by the identity of their files, the least recently
/// used dropped when what they hold in memory passes a limit (binaries a
/// symbolizer still uses are kept).
pub struct BinaryCache {
    limit: u64,
    state: Mutex<State>,
}

#[derive(Default)]
struct State {
    clock: u64,
    entries: FxHashMap<Key, (Arc<Binary>, u64)>,
    hits: u64,
    opened: u64,
}

/// The runtime file and the debug file a binary was opened from, each as
/// path, device, inode, length and modification time: a file replaced by
/// a rebuild at the same path is another binary.
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
struct Key([Option<FileId>; 2]);

#[derive(Clone, Debug, PartialEq, Eq, Hash)]
struct FileId {
    path: PathBuf,
    dev: u64,
    ino: u64,
    len: u64,
    mtime_ns: i128,
}

impl FileId {
    fn of(path: &Path) -> Option<FileId> {
        use std::os::unix::fs::MetadataExt;
        let m = std::fs::metadata(path).ok()?;
        Some(FileId {
            path: path.to_path_buf(),
            dev: m.dev(),
            ino: m.ino(),
            len: m.len(),
            mtime_ns: i128::from(m.mtime()) * 1_000_000_000 + i128::from(m.mtime_nsec()),
        })
    }
}

impl std::fmt::Debug for BinaryCache {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        let (n, hits, opened) = self.stats();
        f.debug_struct("BinaryCache")
            .field("limit", &self.limit)
            .field("binaries", &n)
            .field("hits", &hits)
            .field("opened", &opened)
            .finish()
    }
}

impl BinaryCache {
    /// A cache holding at most about `limit` bytes of symbol tables and
    /// decompressed DWARF (the files themselves are mapped, not counted).
    pub fn new(limit: u64) -> BinaryCache {
        BinaryCache {
            limit,
            state: Mutex::new(State::default()),
        }
    }

    /// (binaries held, lookups answered from the cache, binaries opened).
    pub fn stats(&self) -> (usize, u64, u64) {
        self.state
            .lock()
            .map_or((0, 0, 0), |s| (s.entries.len(), s.hits, s.opened))
    }

    /// The binary of `path` (with `debug`'s symbols and DWARF), opened by
    /// `open` unless the cache has it. Opening happens outside the lock:
    /// symbolizers open different binaries in parallel.
    pub(crate) fn get_or_open(
        &self,
        path: &Path,
        debug: Option<&Path>,
        open: impl FnOnce() -> Result<Binary, BinaryError>,
    ) -> Result<Arc<Binary>, BinaryError> {
        let Some(runtime) = FileId::of(path) else {
            return open().map(Arc::new);
        };
        let key = Key([Some(runtime), debug.and_then(FileId::of)]);
        if let Ok(mut s) = self.state.lock() {
            s.clock += 1;
            let now = s.clock;
            if let Some((b, used)) = s.entries.get_mut(&key) {
                *used = now;
                let b = b.clone();
                s.hits += 1;
                return Ok(b);
            }
        }
        let b = Arc::new(open()?);
        if let Ok(mut s) = self.state.lock() {
            s.opened += 1;
            s.clock += 1;
            let now = s.clock;
            // Another symbolizer may have opened it meanwhile: one copy.
            let b = s.entries.entry(key).or_insert((b, now)).0.clone();
            self.evict(&mut s);
            return Ok(b);
        }
        Ok(b)
    }

    /// Drops the least recently used binaries no symbolizer holds until
    /// the rest fit the limit.
    fn evict(&self, s: &mut State) {
        let mut total: u64 = s.entries.values().map(|(b, _)| b.heap_bytes()).sum();
        while total > self.limit {
            let victim = s
                .entries
                .iter()
                .filter(|(_, (b, _))| Arc::strong_count(b) == 1)
                .min_by_key(|(_, (_, used))| *used)
                .map(|(k, (b, _))| (k.clone(), b.heap_bytes()));
            let Some((key, bytes)) = victim else { break };
            s.entries.remove(&key);
            total -= bytes;
        }
    }
}
