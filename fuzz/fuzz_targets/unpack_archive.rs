//! Any bytes as an archive handed to `--archive` or `perfq batch` (its kind
//! told by its first bytes: tar, gzip, bzip2, zstd or zip): unpacking its
//! build-id cache must never panic or hang, and writes only inside the
//! folder it is given (member.rs, budget.rs).

#![no_main]

use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| {
    let dir = std::env::temp_dir().join(format!("perfq-fuzz-archive-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    let into = dir.join("into");
    std::fs::create_dir_all(&into).expect("fuzz folder");
    let archive = dir.join("archive");
    std::fs::write(&archive, data).expect("fuzz input");
    if let Ok(unpacked) = perfq_source::unpack_symbols(perfq_source::archive::ArchiveAt::File(&archive), &into, None) {
        assert!(unpacked.path().starts_with(&into));
    }
    // Nothing but the archive and the folder given beside each other.
    let names: Vec<_> = std::fs::read_dir(&dir)
        .expect("ls")
        .flatten()
        .map(|e| e.file_name())
        .collect();
    assert_eq!(names.len(), 2, "{names:?}");
    let _ = std::fs::remove_dir_all(&dir);
});
