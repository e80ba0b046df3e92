//! `perfq batch`: folders, archives and damaged files into one dataset,
//! with perf's own sample counts as the oracle; a second run converts
//! nothing; a batch killed midway and run again ends with every capture
//! once; a `perf archive` tarball symbolizes the capture beside it.

mod common;

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::process::{Command, Output};

use common::{perfq, scratch, testdata};
use serde_json::Value;

fn batch(args: &[&str]) -> Output {
    let mut a = vec!["batch", "--format", "json"];
    a.extend_from_slice(args);
    perfq(&a)
}

/// The summary rows of a batch's JSON output.
fn rows(out: &Output) -> Vec<Value> {
    serde_json::from_slice(&out.stdout).unwrap_or_else(|e| {
        panic!(
            "summary is not JSON ({e}): {}\n{}",
            String::from_utf8_lossy(&out.stdout),
            String::from_utf8_lossy(&out.stderr)
        )
    })
}

/// Samples per capture id, as a query over the dataset sees them.
fn samples_per_capture(dataset: &Path) -> BTreeMap<String, u64> {
    common::perfq_rows(&[
        "query",
        dataset.to_str().expect("path"),
        "SELECT capture, COUNT(*) AS n FROM samples GROUP BY capture",
        "--format",
        "json",
    ])
    .iter()
    .map(|r| {
        (
            r["capture"].as_str().expect("capture").to_string(),
            r["n"].as_u64().expect("n"),
        )
    })
    .collect()
}

/// Folders a writer leaves while it works: none may stay after a batch.
fn leftovers(dataset: &Path) -> Vec<String> {
    std::fs::read_dir(dataset)
        .expect("dataset")
        .flatten()
        .map(|e| e.file_name().to_string_lossy().into_owned())
        .filter(|n| n.starts_with('.'))
        .collect()
}

fn copy(from: &Path, to: &Path) {
    std::fs::create_dir_all(to.parent().expect("parent")).expect("mkdir");
    std::fs::copy(from, to).unwrap_or_else(|e| panic!("{}: {e}", from.display()));
}

fn run(cmd: &mut Command) -> bool {
    cmd.output().is_ok_and(|o| o.status.success())
}

/// perf's count of SAMPLE records in `file`.
fn perf_samples(file: &Path) -> Option<u64> {
    common::perf_report_d_counts(file).map(|c| c.get("SAMPLE").copied().unwrap_or(0))
}

/// What a folder of inputs is expected to give: its name in the summary (a
/// path's last part, or an archive member's name) → the file it was made
/// from.
type Expected = BTreeMap<String, PathBuf>;

/// Fills `input` with testdata captures (one in a subfolder), a few from
/// the corpus, a capture whose header is destroyed and a file that is no
/// capture: what they should give, and how many came from the corpus.
fn folder_of_captures(input: &Path) -> (Expected, usize) {
    let mut expected = Expected::new();
    for (name, at) in [
        ("fp.data", "fp.data"),
        ("dwarf.data", "dwarf.data"),
        ("pipe.data", "sub/deeper/pipe.data"),
    ] {
        copy(&testdata(name), &input.join(at));
        expected.insert(name.into(), testdata(name));
    }
    // Captures from other projects, named as they were there.
    let mut from_corpus = 0;
    if let Some(corpus) = common::corpus() {
        for (rel, name) in [
            (
                "perf_data_converter/src/quipper/testdata/perf.data.remmap-3.2",
                "perf.data.remmap-3.2",
            ),
            (
                "perfparser/tests/auto/perfdata/fork_static_gcc/perf.data.zstd",
                "perf.data.zstd",
            ),
            (
                "perfparser/tests/auto/perfdata/cpp-inlining/cpp-inlining.perf.data",
                "cpp-inlining.perf.data",
            ),
        ] {
            if corpus.join(rel).is_file() {
                copy(&corpus.join(rel), &input.join("corpus").join(name));
                expected.insert(name.into(), corpus.join(rel));
                from_corpus += 1;
            }
        }
    } else {
        common::skip("in part: ../shared/corpus is absent; testdata captures only");
    }
    // A capture whose header is destroyed, and a file that is no capture.
    let mut broken = std::fs::read(testdata("fp.data")).expect("read");
    broken[..8].copy_from_slice(b"XXXXXXXX");
    std::fs::write(input.join("broken.data"), &broken).expect("write");
    std::fs::write(input.join("notes.txt"), "not a capture").expect("write");
    (expected, from_corpus)
}

/// Archives of every kind, made by the usual tools in `input` from
/// testdata captures copied to `members`: the names of those that could
/// be made here (at least one).
fn archives_of_captures(input: &Path, members: &Path, expected: &mut Expected) -> Vec<String> {
    for name in [
        "multi.data",
        "group.data",
        "compressed.data",
        "group-pipe.data",
    ] {
        copy(&testdata(name), &members.join(name));
        expected.insert(name.into(), testdata(name));
    }
    let m = |n: &str| n.to_string();
    let tar = |flags: &str, out: &str, files: &[&str]| {
        let mut c = Command::new("tar");
        c.arg("-C").arg(members).arg(flags).arg(input.join(out));
        c.args(files);
        run(&mut c)
    };
    let mut archives = vec![];
    if tar("-czf", "a.tar.gz", &["multi.data", "group.data"]) {
        archives.push(m("a.tar.gz"));
    }
    if tar("-cjf", "b.tar.bz2", &["compressed.data"]) {
        archives.push(m("b.tar.bz2"));
    }
    if run(Command::new("tar")
        .arg("--zstd")
        .arg("-C")
        .arg(members)
        .arg("-cf")
        .arg(input.join("c.tar.zst"))
        .arg("group-pipe.data"))
    {
        archives.push(m("c.tar.zst"));
    }
    if run(Command::new("zip")
        .arg("-q")
        .arg("-j")
        .arg(input.join("d.zip"))
        .arg(members.join("multi.data"))
        .arg(members.join("group.data")))
    {
        archives.push(m("d.zip"));
    }
    if archives.len() < 4 {
        common::skip(format_args!(
            "in part: only these archives could be made here: {archives:?}"
        ));
    }
    assert!(
        !archives.is_empty(),
        "no archive could be made (tar missing?)"
    );
    archives
}

/// The summary row's input.
fn input_of(r: &Value) -> String {
    r["input"].as_str().unwrap_or("").to_string()
}

/// The first batch's summary: every capture found once (the zip repeats
/// two of the tarball's captures: found twice, converted once) with perf's
/// sample count, the damaged one reported, the text file passed over.
/// Returns the samples per capture converted, and how many counts perf
/// gave to compare with.
fn first_summary_agrees(first: &[Value], expected: &Expected) -> (BTreeMap<String, u64>, usize) {
    let broken_row: Vec<&Value> = first
        .iter()
        .filter(|r| input_of(r).ends_with("broken.data"))
        .collect();
    assert_eq!(broken_row.len(), 1, "{first:#?}");
    assert_eq!(broken_row[0]["status"], "failed");
    assert!(
        broken_row[0]["reason"]
            .as_str()
            .unwrap_or("")
            .contains("not a perf.data file"),
        "{:?}",
        broken_row[0]
    );
    assert!(!first.iter().any(|r| input_of(r).ends_with("notes.txt")));
    let mut converted = BTreeMap::new();
    let mut checked = 0;
    for r in first {
        let input = input_of(r);
        if input.ends_with("broken.data") {
            continue;
        }
        let name = input.rsplit(['/', '!']).next().unwrap_or("").to_string();
        let Some(file) = expected.get(&name) else {
            panic!("unexpected input {input} in {first:#?}");
        };
        let status = r["status"].as_str().unwrap_or("");
        let capture = r["capture"].as_str().expect("capture id").to_string();
        assert!(
            status == "converted" || status == "skipped",
            "{input}: {r:?}"
        );
        if status == "converted" {
            let n = r["samples"].as_u64().expect("samples");
            assert!(
                converted.insert(capture.clone(), n).is_none(),
                "{capture} converted twice"
            );
            if let Some(want) = perf_samples(file) {
                assert_eq!(n, want, "{input}: samples against perf report -D");
                checked += 1;
            }
        }
    }
    // Distinct captures: each testdata/corpus file once, however often it
    // was found.
    assert_eq!(converted.len(), expected.len(), "{first:#?}");
    (converted, checked)
}

#[test]
fn folder_of_captures_archives_and_a_damaged_file() {
    let dir = scratch("batch", "folder");
    let input = dir.join("in");
    let (mut expected, from_corpus) = folder_of_captures(&input);
    let archives = archives_of_captures(&input, &dir.join("members"), &mut expected);

    let dataset = dir.join("ds");
    let ds = dataset.to_str().expect("path");
    let out = batch(&[input.to_str().expect("path"), "-o", ds, "-j", "2"]);
    assert_eq!(out.status.code(), Some(1), "a failed input makes exit 1");
    let (converted, checked) = first_summary_agrees(&rows(&out), &expected);
    if checked == 0 {
        common::skip("in part: perf is absent; sample counts not checked against it");
    }
    // The dataset holds each capture once, all of its samples.
    assert_eq!(samples_per_capture(&dataset), converted);
    assert!(leftovers(&dataset).is_empty(), "{:?}", leftovers(&dataset));
    println!(
        "batch: {} captures ({from_corpus} from the corpus, {} archives), {checked} sample counts equal perf's",
        converted.len(),
        archives.len()
    );

    // Again: nothing to convert; the damaged file still reported.
    let again = batch(&[input.to_str().expect("path"), "-o", ds, "-j", "2"]);
    assert_eq!(again.status.code(), Some(1));
    for r in rows(&again) {
        if input_of(&r).ends_with("broken.data") {
            assert_eq!(r["status"], "failed");
        } else {
            assert_eq!(r["status"], "skipped", "{r:?}");
        }
    }
    assert!(String::from_utf8_lossy(&again.stderr).contains("0 converted"));
    assert_eq!(samples_per_capture(&dataset), converted);

    // The table format ends with the counts; an input that names nothing
    // is reported as such.
    let table = perfq(&["batch", "-o", ds, "/nonexistent/x.data", "no-match-*.data"]);
    assert_eq!(table.status.code(), Some(1));
    let text = String::from_utf8_lossy(&table.stdout);
    assert!(text.contains("no such file or folder"), "{text}");
    assert!(text.contains("no file matches this pattern"), "{text}");
    assert!(text.contains("0 converted, 0 skipped"), "{text}");
    let _ = std::fs::remove_dir_all(&dir);
}

/// Captures of the test program, each with its own number of samples (so
/// each has its own content hash).
fn generated(dir: &Path, n: usize, samples: u64) -> Vec<(PathBuf, u64)> {
    let preset = common::preset("sapphirerapids");
    (0..n)
        .map(|i| {
            let count = samples + i as u64;
            let path = common::td_demo_capture(&dir.join(format!("gen-{i}.data")), &preset, count);
            (path, count)
        })
        .collect()
}

#[test]
fn killed_batch_resumes_with_every_capture_once() {
    let dir = scratch("batch", "killed");
    let input = dir.join("in");
    std::fs::create_dir_all(&input).expect("mkdir");
    let captures = generated(&input, 6, 40_000);
    let want: Vec<u64> = captures.iter().map(|c| c.1).collect();
    let dataset = dir.join("ds");
    let ds = dataset.to_str().expect("path");
    let mut child = Command::new(env!("CARGO_BIN_EXE_perfq"))
        .args(["batch", input.to_str().expect("path"), "-o", ds, "-j", "1"])
        .stdout(std::process::Stdio::null())
        .stderr(std::process::Stdio::null())
        .spawn()
        .expect("perfq batch");
    // Queries while it runs see whole captures only.
    let complete = |dataset: &Path| {
        if !dataset.is_dir()
            || !std::fs::read_dir(dataset).is_ok_and(|mut d| {
                d.any(|e| e.is_ok_and(|e| e.file_name().to_string_lossy().starts_with("capture=")))
            })
        {
            return 0;
        }
        let seen = samples_per_capture(dataset);
        for n in seen.values() {
            assert!(want.contains(n), "a query saw part of a capture: {seen:?}");
        }
        seen.len()
    };
    let start = std::time::Instant::now();
    let mut killed_after = None;
    while start.elapsed() < std::time::Duration::from_secs(120) {
        if child.try_wait().expect("wait").is_some() {
            break;
        }
        let n = complete(&dataset);
        if n >= 2 {
            child.kill().expect("kill");
            killed_after = Some(n);
            break;
        }
        std::thread::sleep(std::time::Duration::from_millis(20));
    }
    let _ = child.wait();
    match killed_after {
        Some(n) => println!("killed after {n} of {} captures", want.len()),
        None => eprintln!("note: the batch ended before it could be killed"),
    }
    complete(&dataset);
    // Run again: the rest is converted, what was there is skipped, and what
    // the killed run left half-written is gone.
    let out = batch(&[input.to_str().expect("path"), "-o", ds, "-j", "2"]);
    let summary = common::json_rows(&out, "perfq batch");
    let skipped = summary.iter().filter(|r| r["status"] == "skipped").count();
    if let Some(n) = killed_after {
        assert!(skipped >= n, "{summary:#?}");
    }
    assert_eq!(summary.len(), want.len());
    let mut seen: Vec<u64> = samples_per_capture(&dataset).into_values().collect();
    seen.sort();
    assert_eq!(seen, want, "every capture once, whole");
    assert!(leftovers(&dataset).is_empty(), "{:?}", leftovers(&dataset));
    // ~100 MB of generated captures and their dataset.
    let _ = std::fs::remove_dir_all(&dir);
}

/// A program built and recorded in the test, `perf archive`d from a build-id
/// cache of the test's own, then its binaries deleted: only the tarball
/// beside the capture can name its frames.
#[test]
fn perf_archive_beside_a_capture_symbolizes_it() {
    let Some(dir) = common::c_program_or_skip("batch", "archive", "perf archive") else {
        return;
    };
    let cache = dir.join("buildid-cache");
    let cache_opt = ["--buildid-dir", cache.to_str().expect("path")];
    let input = dir.join("in");
    std::fs::create_dir_all(&input).expect("mkdir");
    let data = common::record(
        &dir,
        "in/fp.data",
        &cache_opt,
        &["-g"],
        &["./prog", "30000000"],
    );
    let made = Command::new("perf")
        .args(cache_opt)
        .arg("archive")
        .arg(&data)
        .output()
        .expect("perf archive");
    let tarball = input.join("fp.data.tar.bz2");
    assert!(
        made.status.success() && tarball.is_file(),
        "perf archive: {}",
        String::from_utf8_lossy(&made.stderr)
    );
    for bin in ["prog", "libhot.so"] {
        std::fs::remove_file(dir.join(bin)).expect("remove the binary");
    }
    // Nothing at the recorded paths (an empty --symfs) and no ~/.debug.
    let empty = dir.join("empty");
    std::fs::create_dir_all(&empty).expect("mkdir");
    let named = |dataset: &Path| -> BTreeMap<String, u64> {
        let args = [
            "batch",
            "--symfs",
            empty.to_str().expect("path"),
            input.to_str().expect("path"),
            "-o",
            dataset.to_str().expect("path"),
        ];
        common::succeeded(&common::perfq_in_home(&args, &empty), "perfq batch");
        common::perfq_rows(&[
            "query",
            dataset.to_str().expect("path"),
            "SELECT symbol, COUNT(*) AS n FROM frames \
             WHERE kind = 'user' AND symbol IS NOT NULL GROUP BY symbol",
            "--format",
            "json",
        ])
        .iter()
        .map(|r| {
            let symbol = r["symbol"].as_str().expect("symbol").to_string();
            (symbol, r["n"].as_u64().expect("n"))
        })
        .collect()
    };
    let with = named(&dir.join("with"));
    for own in ["main", "leaf_sum", "lib_inner"] {
        assert!(
            with.contains_key(own),
            "the archive names the program's {own}: {with:?}\n{}",
            archived(&cache_opt, &data, &tarball)
        );
    }
    std::fs::remove_file(&tarball).expect("remove");
    let without = named(&dir.join("without"));
    assert!(
        without.is_empty(),
        "no binaries, no user symbols: {without:?}"
    );
    println!(
        "perf archive: {} user frames named from it, none without it",
        with.values().sum::<u64>()
    );
    let _ = std::fs::remove_dir_all(&dir);
}

/// What perf recorded and archived, for a failure's message: the capture's
/// build ids with hits, and the tarball's files.
fn archived(cache_opt: &[&str], data: &Path, tarball: &Path) -> String {
    let run = |cmd: &mut Command| {
        cmd.output().map_or_else(
            |e| e.to_string(),
            |o| String::from_utf8_lossy(&[o.stdout, o.stderr].concat()).into_owned(),
        )
    };
    let ids = run(Command::new("perf")
        .args(cache_opt)
        .args(["buildid-list", "--with-hits", "-i"])
        .arg(data));
    let files = run(Command::new("tar").arg("tjf").arg(tarball));
    format!("perf buildid-list --with-hits:\n{ids}\ntar tjf:\n{files}")
}

/// Symbol tables kept on disk by one run give the next run (a new
/// process) the same frames as parsing the binaries did.
#[test]
fn symbol_tables_kept_between_runs_give_the_same_frames() {
    let dir = scratch("batch", "symdisk");
    let cache = dir.join("cache");
    let frames = |dataset: &Path| -> String {
        common::perfq_cached_ok(
            &[
                "convert",
                "-o",
                dataset.to_str().expect("path"),
                testdata("fp.data").to_str().expect("path"),
                testdata("dwarf.data").to_str().expect("path"),
            ],
            &cache,
        );
        common::perfq_ok(&[
            "query",
            dataset.to_str().expect("path"),
            "SELECT capture, frame_id, inline_depth, function, symbol, file, line, dso \
             FROM frames ORDER BY capture, frame_id, inline_depth",
            "--format",
            "csv",
        ])
    };
    let first = frames(&dir.join("a"));
    let kept = std::fs::read_dir(cache.join("symbols-v2"))
        .map(|d| d.count())
        .unwrap_or(0);
    assert!(kept > 0, "no symbol table was kept");
    let second = frames(&dir.join("b"));
    assert!(first.lines().count() > 10);
    assert_eq!(first, second);
    println!("symbol tables kept: {kept}");
    let _ = std::fs::remove_dir_all(&dir);
}
