//! The conversion cache over months of use: bounded (`PERFQ_CACHE_MAX`,
//! least recently used removed first), seen and emptied with `perfq
//! cache list/prune/clear`, a damaged entry converted again instead of
//! answered from, and two commands on one capture of a cold cache
//! answering from one conversion.

mod common;

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::process::{Command, Output};

fn perfq(args: &[&str], cache: &Path, max: Option<&str>) -> Output {
    let mut c = Command::new(env!("CARGO_BIN_EXE_perfq"));
    c.args(args)
        .current_dir(common::root())
        .env("PERFQ_CACHE_DIR", cache);
    match max {
        Some(m) => c.env("PERFQ_CACHE_MAX", m),
        None => c.env_remove("PERFQ_CACHE_MAX"),
    };
    c.output().expect("run perfq")
}

/// `perfq cache list`'s rows: capture → (source path, bytes), least
/// recently used first.
fn listed(cache: &Path) -> Vec<(String, String, u64)> {
    let out = perfq(&["cache", "list", "--format", "json"], cache, None);
    common::rows(&common::succeeded(&out, "perfq cache list"))
        .iter()
        .map(|r| {
            (
                r["capture"].as_str().expect("capture").to_string(),
                r["source_path"].as_str().unwrap_or_default().to_string(),
                r["bytes"].as_u64().expect("bytes"),
            )
        })
        .collect()
}

fn count(file: &str, cache: &Path, max: Option<&str>) -> (u64, String) {
    let out = perfq(
        &[
            "query",
            file,
            "SELECT COUNT(*) AS n FROM samples",
            "--format",
            "json",
        ],
        cache,
        max,
    );
    let rows = common::rows(&common::succeeded(&out, file));
    (
        rows[0]["n"].as_u64().expect("n"),
        String::from_utf8_lossy(&out.stderr).into_owned(),
    )
}

#[test]
fn the_cache_stays_under_its_limit_least_recently_used_first() {
    let cache = common::scratch("cache", "limit");
    let files = [
        "testdata/fp.data",
        "testdata/group.data",
        "testdata/multi.data",
        "testdata/topdown-spr.data",
    ];
    // Each capture's size in the cache, with no limit.
    let mut sizes = BTreeMap::new();
    for f in files {
        count(f, &cache, None);
    }
    for (_, source, bytes) in listed(&cache) {
        sizes.insert(PathBuf::from(source), bytes);
    }
    assert_eq!(sizes.len(), files.len(), "{sizes:?}");
    let path = |f: &str| common::root().join(f).canonicalize().expect("testdata");
    let size = |f: &str| sizes[&path(f)];
    // A limit that holds the two largest but not three captures.
    let mut by_size: Vec<u64> = sizes.values().copied().collect();
    by_size.sort();
    let limit = by_size[by_size.len() - 1] + by_size[by_size.len() - 2];
    let limit_text = limit.to_string();
    let out = perfq(&["cache", "clear"], &cache, None);
    common::succeeded(&out, "perfq cache clear");
    assert!(listed(&cache).is_empty());
    let mut used: Vec<&str> = Vec::new();
    for f in files.iter().chain(&files[..2]) {
        count(f, &cache, Some(&limit_text));
        used.retain(|u| u != f);
        used.push(f);
        let held = listed(&cache);
        let total: u64 = held.iter().map(|(_, _, b)| b).sum();
        assert!(total <= limit, "{total} > {limit}: {held:?}");
        // What is held is the most recently used, as many as fit.
        let mut want = Vec::new();
        let mut room = limit;
        for u in used.iter().rev() {
            if size(u) > room {
                break;
            }
            room -= size(u);
            want.push(path(u).display().to_string());
        }
        let mut have: Vec<String> = held.into_iter().map(|(_, s, _)| s).collect();
        have.reverse();
        assert_eq!(have, want, "after {f}");
    }
    // prune to a smaller limit: the least recently used goes.
    let out = perfq(&["cache", "prune", "--max", "1"], &cache, None);
    common::succeeded(&out, "perfq cache prune");
    assert!(listed(&cache).is_empty());
    let _ = std::fs::remove_dir_all(&cache);
}

#[test]
fn a_damaged_entry_is_converted_again() {
    let cache = common::scratch("cache", "damaged");
    let (n, _) = count("testdata/fp.data", &cache, None);
    let [(id, _, _)] = listed(&cache).try_into().expect("one capture");
    let samples = cache.join(format!("datasets-v6/capture={id}/samples.parquet"));
    let len = std::fs::metadata(&samples).expect("stat").len();
    let f = std::fs::File::options()
        .write(true)
        .open(&samples)
        .expect("open");
    f.set_len(len / 2).expect("truncate");
    drop(f);
    let (again, stderr) = count("testdata/fp.data", &cache, None);
    assert_eq!(again, n, "{stderr}");
    assert!(
        stderr.contains("the cache's copy of testdata/fp.data is damaged")
            && stderr.contains("samples.parquet")
            && stderr.contains("converting it again"),
        "{stderr}"
    );
    assert_eq!(std::fs::metadata(&samples).expect("stat").len(), len);
    // A table gone is damage too.
    std::fs::remove_file(&samples).expect("remove");
    let (again, stderr) = count("testdata/fp.data", &cache, None);
    assert_eq!(again, n, "{stderr}");
    assert!(stderr.contains("converting it again"), "{stderr}");
    let _ = std::fs::remove_dir_all(&cache);
}

#[test]
fn two_commands_on_a_cold_cache_convert_once() {
    let cache = common::scratch("cache", "concurrent");
    let spawn = || {
        Command::new(env!("CARGO_BIN_EXE_perfq"))
            .args(["topdown", "testdata/topdown-spr.data", "--format", "json"])
            .current_dir(common::root())
            .env("PERFQ_CACHE_DIR", &cache)
            .stdout(std::process::Stdio::piped())
            .stderr(std::process::Stdio::piped())
            .spawn()
            .expect("run perfq")
    };
    let (a, b) = (spawn(), spawn());
    let (a, b) = (
        a.wait_with_output().expect("wait"),
        b.wait_with_output().expect("wait"),
    );
    let a = common::succeeded(&a, "first topdown");
    let b = common::succeeded(&b, "second topdown");
    assert_eq!(a, b);
    assert!(!common::rows(&a).is_empty());
    let entries: Vec<String> = std::fs::read_dir(cache.join("datasets-v6"))
        .expect("ls")
        .flatten()
        .map(|e| e.file_name().to_string_lossy().into_owned())
        .collect();
    assert_eq!(entries.len(), 1, "one conversion stored: {entries:?}");
    let _ = std::fs::remove_dir_all(&cache);
}
