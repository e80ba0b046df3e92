//! Every capture in `testdata/` is described in `testdata/README.md`, so
//! the README's commands stay the truth about how each was made.

mod common;

#[test]
fn every_capture_is_listed_in_the_readme() {
    let dir = common::root().join("testdata");
    let readme = std::fs::read_to_string(dir.join("README.md")).expect("testdata/README.md");
    let record = std::fs::read_to_string(dir.join("record.sh")).expect("testdata/record.sh");
    let mut n = 0;
    for entry in std::fs::read_dir(&dir).expect("testdata/") {
        let name = entry
            .expect("entry")
            .file_name()
            .to_string_lossy()
            .into_owned();
        if name.ends_with(".data") {
            n += 1;
            assert!(
                readme.contains(&format!("`{name}`")),
                "{name} is not described in testdata/README.md"
            );
            assert!(
                record.contains(&name),
                "{name} is not made by testdata/record.sh"
            );
        }
    }
    assert!(n >= 7, "expected the recorded captures, found {n}");
}
