//! Symbol tables kept on disk between runs, by build id: the next
//! conversion of a capture of the same program reads a binary's table
//! back instead of parsing and sorting its ELF symbols again, which for
//! a large library takes far longer. DWARF is still read per run: what a
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

use crate::symtab::SymbolTable;

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

    /// The table kept under `key`, if any: the file mapped, so that only
    /// the symbols looked up are read.
    pub(crate) fn load(&self, key: &str) -> Option<SymbolTable> {
        let path = self.path(key);
        // perfq writes a table whole under another name and renames it
        // into place, never changing it after; pruning by another process
        // unlinks it, which leaves the map whole.
        let map = crate::binary::map(&path).ok()?;
        let table = SymbolTable::from_mapped(&map);
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
            w.write_all(table.bytes())?;
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

#[cfg(test)]
mod tests {
    use super::*;

    fn table() -> SymbolTable {
        SymbolTable::from_sorted([
            (0x10, 0x20, "a"),
            (0x20, 0x38, "_ZN4core3fmt5write17h0123456789abcdefE"),
        ])
        .expect("sorted")
    }

    fn symbols(t: &SymbolTable) -> Vec<(u64, u64, String)> {
        t.symbols()
            .map(|s| (s.start, s.end, s.name.to_string()))
            .collect()
    }

    #[test]
    fn tables_read_back_and_damage_is_refused() {
        let dir = std::env::temp_dir().join(format!("perfq-symdisk-cut-{}", std::process::id()));
        let _ = std::fs::remove_dir_all(&dir);
        let disk = SymbolDisk::new(dir.clone(), 1 << 20);
        let t = table();
        disk.store("t", &t);
        let mapped = disk.load("t").expect("reads back");
        assert_eq!(symbols(&mapped), symbols(&t));
        // Pages handed back are read again, the same.
        mapped.release_pages();
        assert_eq!(symbols(&mapped), symbols(&t));
        assert_eq!(mapped.find(0x21).map(|s| s.name.len()), Some(38));
        let b = t.bytes().to_vec();
        for cut in 0..b.len() {
            std::fs::write(disk.path("t"), &b[..cut]).expect("written");
            assert!(disk.load("t").is_none(), "cut at {cut}");
        }
        let mut longer = b.clone();
        longer.push(0);
        std::fs::write(disk.path("t"), &longer).expect("written");
        assert!(disk.load("t").is_none());
        // An entry pointing past the names names nothing; it does not panic.
        let mut bad = b.clone();
        bad[24 + 16] = 0xff;
        std::fs::write(disk.path("t"), &bad).expect("written");
        let t = disk.load("t").expect("layout intact");
        assert_eq!(t.find(0x10), None);
        assert_eq!(t.find(0x20).map(|s| s.name.len()), Some(38));
        let _ = std::fs::remove_dir_all(&dir);
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
            symbols(&again.load("ab12").expect("kept")),
            symbols(&table())
        );
        assert!(again.load("ab12-d").is_none());
        // A limit below one table's size keeps none of the older ones.
        let small = SymbolDisk::new(dir.clone(), 1);
        small.store("cd34", &table());
        assert!(small.load("ab12").is_none());
        let _ = std::fs::remove_dir_all(&dir);
    }
}
