//! THIRD-PARTY-LICENSES.md is what cargo-about makes of Cargo.lock now
//! (`sh .ci/licenses.sh` writes it), so a dependency added or updated
//! cannot ship without its licence listed.

mod common;

use std::process::Command;

use common::{root, skip, succeeded};

#[test]
fn third_party_licences_are_current() {
    let have = Command::new("cargo")
        .args(["about", "--version"])
        .output()
        .is_ok_and(|o| o.status.success());
    if !have {
        return skip("cargo-about is not installed (.ci/setup.sh installs it)");
    }
    let root = root();
    let out = Command::new("cargo")
        .args(["about", "generate", "--locked", "--offline"])
        .args(["--manifest-path", "crates/python/Cargo.toml"])
        .args(["-c", "about.toml", "about.hbs"])
        .current_dir(&root)
        .output()
        .expect("run cargo about");
    let made = succeeded(&out, "cargo about generate");
    let kept = std::fs::read_to_string(root.join("THIRD-PARTY-LICENSES.md")).unwrap_or_default();
    assert!(
        made == kept,
        "THIRD-PARTY-LICENSES.md is not current: run `sh .ci/licenses.sh`"
    );
    // The flame graph's drawing code is CDDL-1.0, whose notice must ship.
    let cddl = kept
        .split("\n## ")
        .find(|s| s.starts_with("Common Development and Distribution License 1.0"))
        .expect("a CDDL-1.0 section");
    assert!(cddl.contains("- inferno "), "{cddl}");
    assert!(cddl.contains("COMMON DEVELOPMENT AND DISTRIBUTION LICENSE"));
}
