//! Symbol tables kept on disk between runs, by build id: the next
//! conversion of a capture of the same program reads a binary's table
//! back (a few ms) instead of parsing and sorting its ELF symbols again
//! (~0.4 s for `librustc_driver`). DWARF is still read per run: what a
//! run needs of it depends on its addresses.
//!
//! One file per table, named by its key (the build id and the sizes of
//! the sections it was read from: a binary stripped in place keeps its
//! build id but not its table), written under a temporary name and
//! renamed into place, so that processes sharing the folder never read half a file;
//! a file that does not read back whole is ignored and written again.
//! The folder is kept under a size limit, least recently used first
//! (a read touches the file).

use std::io::Write;
use std::path::PathBuf;
use std::sync::atomic::{AtomicU64, Ordering};

use crate::symtab::{Symbol, SymbolTable};

/// The format's first bytes; a new layout gets a new magic.
const MAGIC: &[u8; 8] = b"PQSYMS01";

/// A folder of symbol tables.
#[derive(Clone, Debug)]
pub struct SymbolDisk {
    dir: PathBuf,
    limit: u64,
}

static NEXT: AtomicU64 = AtomicU64::new(0);

impl SymbolDisk {
    /// Tables in `dir` (made when first written), pruned to about
    /// `limit` bytes.
    pub fn new(dir: PathBuf, limit: u64) -> SymbolDisk {
        SymbolDisk { dir, limit }
    }

    fn path(&self, key: &str) -> PathBuf {
        self.dir.join(format!("{key}.syms"))
    }

    /// The table kept under `key`, if any.
    pub(crate) fn load(&self, key: &str) -> Option<SymbolTable> {
        let path = self.path(key);
        let bytes = std::fs::read(&path).ok()?;
        let table = decode(&bytes);
        if table.is_some() {
            // Recently used: kept longest when the folder is pruned.
            if let Ok(f) = std::fs::File::options().append(true).open(&path) {
                let _ = f.set_modified(std::time::SystemTime::now());
            }
        }
        table
    }

    /// Keeps `table` under `key`. Failures only cost the next run the
    /// parsing: they are not reported.
    pub(crate) fn store(&self, key: &str, table: &SymbolTable) {
        if std::fs::create_dir_all(&self.dir).is_err() {
            return;
        }
        let dest = self.path(key);
        let tmp = self.dir.join(format!(
            ".tmp-{}-{}",
            std::process::id(),
            NEXT.fetch_add(1, Ordering::Relaxed)
        ));
        let written = std::fs::File::create(&tmp).and_then(|f| {
            let mut w = std::io::BufWriter::new(f);
            w.write_all(&encode(table))?;
            w.into_inner().map_err(|e| e.into_error())?.sync_all()
        });
        if written.is_err() || std::fs::rename(&tmp, &dest).is_err() {
            let _ = std::fs::remove_file(&tmp);
            return;
        }
        self.prune();
    }

    /// Removes the least recently used tables until the rest fit the limit.
    fn prune(&self) {
        let Ok(entries) = std::fs::read_dir(&self.dir) else {
            return;
        };
        let mut files: Vec<(std::time::SystemTime, u64, PathBuf)> = entries
            .flatten()
            .filter(|e| e.file_name().to_string_lossy().ends_with(".syms"))
            .filter_map(|e| {
                let m = e.metadata().ok()?;
                Some((m.modified().ok()?, m.len(), e.path()))
            })
            .collect();
        let mut total: u64 = files.iter().map(|f| f.1).sum();
        files.sort();
        for (_, len, path) in files {
            if total <= self.limit {
                break;
            }
            if std::fs::remove_file(&path).is_ok() {
                total -= len;
            }
        }
    }
}

/// magic, count (u64), then per symbol start, end (u64) and the name's
/// length (u32) and bytes; all little-endian.
fn encode(table: &SymbolTable) -> Vec<u8> {
    let syms = table.symbols();
    let names: usize = syms.iter().map(|s| s.name.len()).sum();
    let mut b = Vec::with_capacity(16 + syms.len() * 20 + names);
    b.extend_from_slice(MAGIC);
    b.extend_from_slice(&(syms.len() as u64).to_le_bytes());
    for s in syms {
        b.extend_from_slice(&s.start.to_le_bytes());
        b.extend_from_slice(&s.end.to_le_bytes());
        b.extend_from_slice(&(s.name.len() as u32).to_le_bytes());
        b.extend_from_slice(s.name.as_bytes());
    }
    b
}

fn decode(b: &[u8]) -> Option<SymbolTable> {
    let mut r = Reader(b);
    if r.take(8)? != MAGIC {
        return None;
    }
    let n = usize::try_from(r.u64()?).ok()?;
    // Each symbol takes at least 20 bytes: a damaged count cannot make
    // this allocate more than the file holds.
    let mut syms = Vec::with_capacity(n.min(b.len() / 20));
    for _ in 0..n {
        let start = r.u64()?;
        let end = r.u64()?;
        let len = r.u32()? as usize;
        let name = std::str::from_utf8(r.take(len)?).ok()?.to_string();
        syms.push(Symbol { start, end, name });
    }
    // Trailing bytes mean another layout or a damaged file.
    r.0.is_empty().then(|| SymbolTable::from_sorted(syms))?
}

struct Reader<'a>(&'a [u8]);

impl<'a> Reader<'a> {
    fn take(&mut self, n: usize) -> Option<&'a [u8]> {
        if self.0.len() < n {
            return None;
        }
        let (a, rest) = self.0.split_at(n);
        self.0 = rest;
        Some(a)
    }
    fn u64(&mut self) -> Option<u64> {
        Some(u64::from_le_bytes(self.take(8)?.try_into().ok()?))
    }
    fn u32(&mut self) -> Option<u32> {
        Some(u32::from_le_bytes(self.take(4)?.try_into().ok()?))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn table() -> SymbolTable {
        SymbolTable::from_sorted(vec![
            Symbol {
                start: 0x10,
                end: 0x20,
                name: "a".into(),
            },
            Symbol {
                start: 0x20,
                end: 0x38,
                name: "_ZN4core3fmt5write17h0123456789abcdefE".into(),
            },
        ])
        .expect("sorted")
    }

    #[test]
    fn tables_read_back_and_damage_is_refused() {
        let t = table();
        let b = encode(&t);
        assert_eq!(decode(&b).expect("decodes").symbols(), t.symbols());
        for cut in 0..b.len() {
            assert!(decode(&b[..cut]).is_none(), "cut at {cut}");
        }
        let mut longer = b.clone();
        longer.push(0);
        assert!(decode(&longer).is_none());
    }

    #[test]
    fn kept_between_instances_and_pruned() {
        let dir = std::env::temp_dir().join(format!("perfq-symdisk-{}", std::process::id()));
        let _ = std::fs::remove_dir_all(&dir);
        let disk = SymbolDisk::new(dir.clone(), 1 << 20);
        assert!(disk.load("ab12").is_none());
        disk.store("ab12", &table());
        let again = SymbolDisk::new(dir.clone(), 1 << 20);
        assert_eq!(
            again.load("ab12").expect("kept").symbols(),
            table().symbols()
        );
        assert!(again.load("ab12-d").is_none());
        // A limit below one table's size keeps none of the older ones.
        let small = SymbolDisk::new(dir.clone(), 1);
        small.store("cd34", &table());
        assert!(small.load("ab12").is_none());
        let _ = std::fs::remove_dir_all(&dir);
    }
}
