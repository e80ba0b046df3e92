//! The fixture machines the tests share.

use std::path::{Path, PathBuf};

use perfq_record::{Request, Target};

/// This crate's `tests/` folder.
pub fn here() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("tests")
}

/// Each fixture machine, written out under a temporary root.
pub fn machines() -> Vec<(String, tempfile::TempDir)> {
    let mut names: Vec<PathBuf> = std::fs::read_dir(here().join("machines"))
        .expect("machines/")
        .flatten()
        .map(|e| e.path())
        .filter(|p| p.extension().is_some_and(|e| e == "tree"))
        .collect();
    names.sort();
    names
        .into_iter()
        .map(|p| {
            let name = p.file_stem().expect("stem").to_string_lossy().into_owned();
            let root = tempfile::tempdir().expect("tempdir");
            let text = std::fs::read_to_string(&p).expect("read");
            perfq_record::fixture::write_tree(&text, root.path()).expect("write the machine");
            (name, root)
        })
        .collect()
}

/// A top-down recording of `argv` with frame-pointer call chains at
/// `level`, written to `output`.
pub fn request(level: u8, argv: &[&str], output: &Path) -> Request {
    Request {
        target: Target::Command {
            argv: argv.iter().map(|a| a.to_string()).collect(),
            all_cpus: false,
        },
        duration: None,
        call_graph: Some("fp".into()),
        rate: None,
        level,
        events: None,
        cpu_model: None,
        output: output.to_path_buf(),
        all_threads: false,
        off_cpu: false,
    }
}
