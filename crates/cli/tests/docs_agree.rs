//! What the docs state that the workspace itself can tell: the crate
//! graph of docs/architecture.md is the one `cargo metadata` gives.

mod common;

use std::collections::BTreeMap;

/// Each perfq crate's folder and the perfq crates it depends on (normal
/// dependencies), by name.
type Graph = BTreeMap<String, (String, Vec<String>)>;

#[test]
fn the_architecture_crate_graph_is_cargo_metadatas() {
    let root = common::root();
    let out = std::process::Command::new(env!("CARGO"))
        .args([
            "metadata",
            "--format-version",
            "1",
            "--no-deps",
            "--offline",
        ])
        .current_dir(&root)
        .output()
        .expect("cargo metadata");
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let meta: serde_json::Value = serde_json::from_slice(&out.stdout).expect("metadata JSON");
    let root_dir = std::fs::canonicalize(&root).expect("root");
    let mut cargo = Graph::new();
    for p in meta["packages"].as_array().expect("packages") {
        let manifest = std::path::Path::new(p["manifest_path"].as_str().expect("manifest"));
        let dir = manifest.parent().expect("folder");
        let Ok(folder) = dir.strip_prefix(&root_dir) else {
            continue;
        };
        let folder = folder.to_string_lossy().into_owned();
        if !folder.starts_with("crates/") {
            continue;
        }
        let mut deps: Vec<String> = p["dependencies"]
            .as_array()
            .expect("dependencies")
            .iter()
            .filter(|d| d["kind"].is_null())
            .filter_map(|d| d["name"].as_str())
            .filter(|n| n.starts_with("perfq"))
            .map(String::from)
            .collect();
        deps.sort();
        let name = p["name"].as_str().expect("name").to_string();
        cargo.insert(name, (folder, deps));
    }

    let doc = std::fs::read_to_string(root.join("docs/architecture.md")).expect("architecture.md");
    let table = doc
        .split_once("<!-- crate graph -->")
        .and_then(|(_, rest)| rest.split_once("<!-- end crate graph -->"))
        .map(|(t, _)| t)
        .expect("docs/architecture.md marks its crate graph");
    let unquote = |c: &str| c.trim().trim_matches('`').to_string();
    let mut documented = Graph::new();
    for line in table.lines().filter(|l| l.starts_with("| `")) {
        let cells: Vec<&str> = line.trim_matches('|').split('|').collect();
        let [name, folder, deps] = cells.as_slice() else {
            panic!("a row of three cells: {line}");
        };
        let mut deps: Vec<String> = deps
            .split(',')
            .map(unquote)
            .filter(|d| !d.is_empty())
            .collect();
        deps.sort();
        documented.insert(unquote(name), (unquote(folder), deps));
    }
    assert_eq!(documented, cargo);
}
