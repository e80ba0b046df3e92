//! Damaged input: cut captures keep every complete record and say where
//! they were cut; a zero data size reads to the end of the file; an
//! impossible record size stops with an error naming the offset; random
//! corruption never panics. Expected counts come from perf's own record
//! list (`perf report -D` of the undamaged file).

mod common;

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

use serde_json::Value;

fn skip_without_perf() -> bool {
    if !common::have_perf() {
        common::skip("perf is not installed; damaged-input oracles not available");
        return true;
    }
    false
}

fn name_of(ty: u32) -> String {
    match ty {
        1 => "MMAP",
        2 => "LOST",
        3 => "COMM",
        4 => "EXIT",
        5 => "THROTTLE",
        6 => "UNTHROTTLE",
        7 => "FORK",
        9 => "SAMPLE",
        10 => "MMAP2",
        68 => "FINISHED_ROUND",
        69 => "ID_INDEX",
        73 => "THREAD_MAP",
        74 => "CPU_MAP",
        78 => "EVENT_UPDATE",
        82 => "FINISHED_INIT",
        _ => return format!("type {ty}"),
    }
    .to_string()
}

fn info(path: &Path) -> (Option<i32>, Value, String) {
    let out = common::perfq(&["info", "--json", path.to_str().expect("path")]);
    let v = serde_json::from_slice(&out.stdout).unwrap_or(Value::Null);
    (
        out.status.code(),
        v,
        String::from_utf8_lossy(&out.stderr).into_owned(),
    )
}

fn counts(v: &Value) -> BTreeMap<String, u64> {
    v["records"]
        .as_object()
        .into_iter()
        .flatten()
        .map(|(k, n)| (k.clone(), n.as_u64().unwrap_or(0)))
        .collect()
}

fn data_section(bytes: &[u8]) -> (u64, u64) {
    let u = |o: usize| u64::from_le_bytes(bytes[o..o + 8].try_into().expect("8 bytes"));
    (u(40), u(48))
}

fn scratch(name: &str) -> PathBuf {
    let dir = std::env::temp_dir().join(format!("perfq-damaged-{}", std::process::id()));
    std::fs::create_dir_all(&dir).expect("temp dir");
    dir.join(name)
}

/// Sample offsets of the undamaged file mapped to their event names: perf
/// report -D's delivery order and perf script's order are both time order.
fn sample_events(file: &Path, samples_in_time_order: usize) -> BTreeMap<u64, String> {
    let out = common::perf(&["report", "-D", "-i", file.to_str().expect("path")])
        .expect("perf report -D");
    let offsets: Vec<u64> = out
        .lines()
        .filter_map(|l| {
            let pos = l.find(": PERF_RECORD_SAMPLE(")?;
            let off = l[..pos].split_whitespace().find(|t| t.starts_with("0x"))?;
            u64::from_str_radix(off.trim_start_matches("0x"), 16).ok()
        })
        .collect();
    let script = common::perf(&[
        "script",
        "-G",
        "-i",
        file.to_str().expect("path"),
        "-F",
        "event",
    ])
    .expect("perf script");
    let events: Vec<String> = script
        .lines()
        .map(|l| l.trim().trim_end_matches(':').to_string())
        .collect();
    assert_eq!(offsets.len(), samples_in_time_order);
    assert_eq!(events.len(), offsets.len());
    offsets.into_iter().zip(events).collect()
}

#[test]
fn cut_captures_keep_every_complete_record() {
    if skip_without_perf() {
        return;
    }
    for name in ["fp.data", "multi.data"] {
        let file = common::testdata(name);
        let bytes = std::fs::read(&file).expect("read capture");
        let (_, records) = common::perf_report_d(&file).expect("perf report -D");
        let nsamples = records.iter().filter(|r| r.2 == 9).count();
        let events = sample_events(&file, nsamples);
        let (start, size) = data_section(&bytes);
        for k in 0..=24u64 {
            // Cuts spread over the data section, most inside records.
            let cut = start + size * k / 24 + (k % 5) * 3;
            let cut = cut.min(start + size) as usize;
            let path = scratch(&format!("{name}.cut{k}"));
            std::fs::write(&path, &bytes[..cut]).expect("write cut file");
            let (code, v, stderr) = info(&path);
            assert_eq!(code, Some(0), "{name} cut at {cut}: {stderr}");
            let complete: Vec<_> = records
                .iter()
                .filter(|(off, sz, _)| off + sz <= cut as u64)
                .collect();
            let mut expected = BTreeMap::new();
            for (_, _, ty) in &complete {
                *expected.entry(name_of(*ty)).or_insert(0u64) += 1;
            }
            assert_eq!(counts(&v), expected, "{name} cut at {cut}: record counts");
            let mut per_event: BTreeMap<String, u64> = BTreeMap::new();
            for (off, _, ty) in &complete {
                if *ty == 9 {
                    *per_event.entry(events[off].clone()).or_default() += 1;
                }
            }
            for e in v["events"].as_array().expect("events") {
                let n = per_event
                    .get(e["name"].as_str().expect("name"))
                    .copied()
                    .unwrap_or(0);
                assert_eq!(
                    e["samples"].as_u64(),
                    Some(n),
                    "{name} cut at {cut}: samples of {}",
                    e["name"]
                );
            }
            if cut < (start + size) as usize {
                let w = v["warnings"].to_string();
                assert!(
                    w.contains("cut"),
                    "{name} cut at {cut}: no warning says it is cut: {w}"
                );
            }
            std::fs::remove_file(&path).ok();
        }
    }
}

#[test]
fn cut_inside_the_header_is_a_one_line_error() {
    let bytes = std::fs::read(common::testdata("fp.data")).expect("read");
    for cut in [0usize, 7, 8, 50, 103] {
        let path = scratch(&format!("header.cut{cut}"));
        std::fs::write(&path, &bytes[..cut]).expect("write");
        let (code, _, stderr) = info(&path);
        assert_eq!(code, Some(1), "cut at {cut}");
        assert_eq!(stderr.lines().count(), 1, "cut at {cut}: {stderr}");
        assert!(
            stderr.contains(path.to_str().expect("path")),
            "error names the file: {stderr}"
        );
    }
}

#[test]
fn zero_data_size_reads_to_the_end_of_the_file() {
    if skip_without_perf() {
        return;
    }
    let file = common::testdata("fp.data");
    let mut bytes = std::fs::read(&file).expect("read");
    let (start, size) = data_section(&bytes);
    // What perf leaves when killed: no feature sections, data size 0.
    bytes.truncate((start + size) as usize);
    bytes[48..56].copy_from_slice(&0u64.to_le_bytes());
    let path = scratch("zero-size.data");
    std::fs::write(&path, &bytes).expect("write");
    let (code, v, stderr) = info(&path);
    assert_eq!(code, Some(0), "{stderr}");
    let expected = common::perf_report_d_counts(&file).expect("perf counts");
    assert_eq!(counts(&v), expected);
    assert!(
        v["warnings"].to_string().contains("data section is empty"),
        "{}",
        v["warnings"]
    );
}

#[test]
fn impossible_record_size_stops_with_the_offset() {
    if skip_without_perf() {
        return;
    }
    let file = common::testdata("fp.data");
    let mut bytes = std::fs::read(&file).expect("read");
    let (_, records) = common::perf_report_d(&file).expect("perf report -D");
    let (off, _, _) = records[records.len() / 2];
    bytes[off as usize + 6..off as usize + 8].copy_from_slice(&4u16.to_le_bytes());
    let path = scratch("bad-size.data");
    std::fs::write(&path, &bytes).expect("write");
    // What came before is described, the loss said in one line.
    let (code, v, stderr) = info(&path);
    assert_eq!(code, Some(0), "{stderr}");
    assert_eq!(stderr.lines().count(), 1, "{stderr}");
    assert!(
        stderr.starts_with("perfq: warning: ") && stderr.contains(&format!("{off:#x}")),
        "the warning names offset {off:#x}: {stderr}"
    );
    let before = records.iter().filter(|r| r.0 < off).count() as u64;
    assert_eq!(
        counts(&v).values().sum::<u64>(),
        before,
        "records before the bad one are kept"
    );
    // --strict makes the same line the error.
    let strict = common::perfq(&["info", "--strict", path.to_str().expect("path")]);
    assert_eq!(strict.status.code(), Some(1));
    let said = stderr
        .trim_end()
        .replacen("perfq: warning: ", "perfq: error: ", 1);
    assert_eq!(
        String::from_utf8_lossy(&strict.stderr).lines().last(),
        Some(said.as_str())
    );
}

#[test]
fn random_corruption_never_panics() {
    let mut seed = 0x2545_f491_4f6c_dd1du64;
    let mut next = || {
        seed ^= seed << 13;
        seed ^= seed >> 7;
        seed ^= seed << 17;
        seed
    };
    for name in [
        "fp.data",
        "group.data",
        "compressed.data",
        "group-pipe.data",
        "dwarf.data",
    ] {
        let orig = std::fs::read(common::testdata(name)).expect("read");
        for round in 0..12 {
            let mut b = orig.clone();
            for _ in 0..1 + round % 4 {
                let at = (next() % b.len() as u64) as usize;
                b[at] = next() as u8;
            }
            let path = scratch(&format!("{name}.fuzz{round}"));
            std::fs::write(&path, &b).expect("write");
            for args in [
                &["info", "--json"][..],
                &["dump"][..],
                &["dump", "--format", "csv"][..],
            ] {
                let mut a = args.to_vec();
                a.push(path.to_str().expect("path"));
                let out = common::perfq(&a);
                let code = out.status.code();
                assert!(
                    matches!(code, Some(0) | Some(1)),
                    "{name} round {round} {args:?}: status {code:?}: {}",
                    String::from_utf8_lossy(&out.stderr)
                );
            }
            std::fs::remove_file(&path).ok();
        }
    }
}

/// What one command did with a capture: its exit status, the samples it
/// kept when it says, and what it said of the capture's damage (and, not
/// compared, its error).
#[derive(Debug)]
struct Kept {
    code: Option<i32>,
    samples: Option<u64>,
    damage: Vec<String>,
    error: Option<String>,
}

impl PartialEq for Kept {
    fn eq(&self, other: &Kept) -> bool {
        (self.code, self.samples, &self.damage) == (other.code, other.samples, &other.damage)
    }
}

/// The same damaged capture through every command that reads one: each
/// keeps the same samples, says the same one line of what it lost, and
/// exits the same way. Mutations of a generated Sapphire Rapids capture
/// (so that `topdown` has its events): cut, bytes flipped, ranges zeroed,
/// record sizes enlarged.
#[test]
fn every_command_keeps_and_says_the_same_of_a_damaged_capture() {
    let dir = common::scratch("damaged", "policy");
    let base = common::td_demo_capture(
        &dir.join("base.data"),
        &common::preset("sapphirerapids"),
        400,
    );
    let orig = std::fs::read(&base).expect("read");
    let (start, size) = data_section(&orig);
    let (start, end) = (start as usize, (start + size) as usize);
    // Record starts in the data section (walked by their size fields).
    let mut records = Vec::new();
    let mut at = start;
    while at + 8 <= end {
        records.push(at);
        let size = usize::from(u16::from_le_bytes([orig[at + 6], orig[at + 7]]));
        if size < 8 {
            break;
        }
        at += size;
    }
    let mut rng = perfq_testgen::Rng::new(0x9e37_79b9_7f4a_7c15);
    let mut next = move || rng.next_u64();
    let mut mutations: Vec<(String, Vec<u8>)> = Vec::new();
    for i in 0..200 {
        let mut b = orig.clone();
        let in_data = start + (next() as usize) % (end - start);
        let what = match i % 4 {
            0 => {
                b.truncate(in_data);
                format!("cut at {in_data:#x}")
            }
            1 => {
                for _ in 0..1 + next() % 4 {
                    let at = start + (next() as usize) % (end - start);
                    b[at] ^= 1 << (next() % 8);
                }
                "bits flipped".to_string()
            }
            2 => {
                let len = 1 + (next() as usize) % 64;
                let to = (in_data + len).min(end);
                b[in_data..to].fill(0);
                format!("zeroed {in_data:#x}..{to:#x}")
            }
            _ => {
                let r = records[(next() as usize) % records.len()];
                let size = u16::from_le_bytes([b[r + 6], b[r + 7]]);
                let more = size.saturating_add(8 * (1 + (next() % 8) as u16));
                b[r + 6..r + 8].copy_from_slice(&more.to_le_bytes());
                format!("record at {r:#x} enlarged {size} -> {more}")
            }
        };
        mutations.push((what, b));
    }
    let checked = std::sync::atomic::AtomicUsize::new(0);
    let damaged = std::sync::atomic::AtomicUsize::new(0);
    let chunks: Vec<_> = mutations.chunks(mutations.len().div_ceil(2)).collect();
    std::thread::scope(|s| {
        for (part, chunk) in chunks.into_iter().enumerate() {
            let dir = &dir;
            let (checked, damaged) = (&checked, &damaged);
            s.spawn(move || {
                for (i, (what, bytes)) in chunk.iter().enumerate() {
                    let path = dir.join(format!("m{part}-{i}.data"));
                    std::fs::write(&path, bytes).expect("write");
                    let kept = through_every_command(&path, dir);
                    let (first, rest) = kept.split_first().expect("commands");
                    for (command, k) in rest {
                        assert_eq!(
                            k,
                            &first.1,
                            "{what}: {command} against {} ({command} said: {}): {:?}",
                            first.0,
                            k.error.as_deref().unwrap_or("no error"),
                            kept
                        );
                    }
                    if !first.1.damage.is_empty() {
                        damaged.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
                    }
                    checked.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
                    std::fs::remove_file(&path).ok();
                }
            });
        }
    });
    let damaged = damaged.into_inner();
    assert_eq!(checked.into_inner(), mutations.len());
    // Most mutations lose something; the others change values only.
    assert!(damaged >= mutations.len() / 4, "{damaged} damaged");
    std::fs::remove_dir_all(&dir).ok();
}

/// Runs every command that reads a capture on `path`.
fn through_every_command(path: &Path, dir: &Path) -> Vec<(&'static str, Kept)> {
    let file = path.to_str().expect("path");
    let stem = path.file_stem().and_then(|s| s.to_str()).expect("stem");
    let dataset = dir.join(format!("{stem}-ds"));
    let batch_dataset = dir.join(format!("{stem}-batch"));
    let said = |out: &std::process::Output| -> Vec<String> {
        let prefix = format!("perfq: warning: {file}: ");
        String::from_utf8_lossy(&out.stderr)
            .lines()
            .filter_map(|l| l.strip_prefix(&prefix))
            // The damage's line (perfq_stream::Damage::summary), not the
            // warnings a cut capture has.
            .filter(|l| l.contains("reading stopped there") || l.contains("could not be read ("))
            .map(String::from)
            .collect()
    };
    let json = |out: &std::process::Output| -> Value {
        serde_json::from_slice(&out.stdout).unwrap_or(Value::Null)
    };
    let kept = |out: &std::process::Output, samples: Option<u64>| Kept {
        code: out.status.code(),
        samples: if out.status.success() { samples } else { None },
        damage: said(out),
        error: (!out.status.success())
            .then(|| String::from_utf8_lossy(&out.stderr).trim_end().to_string()),
    };
    let mut all = Vec::new();
    let info = common::perfq(&["info", "--json", file]);
    let samples = {
        let v = json(&info);
        v["events"].as_array().map(|events| {
            events
                .iter()
                .filter_map(|e| e["samples"].as_u64())
                .sum::<u64>()
        })
    };
    // info counts the samples framed; the commands keep those that decode.
    let undecoded = json(&info)["records_undecodable"]["SAMPLE"]
        .as_u64()
        .unwrap_or(0);
    all.push(("info", kept(&info, samples.map(|n| n - undecoded))));
    let convert = common::perfq(&["convert", "-o", dataset.to_str().expect("path"), file]);
    let rows = std::fs::read_dir(&dataset).ok().and_then(|_| {
        let out = common::perfq(&[
            "query",
            dataset.to_str().expect("path"),
            "SELECT count(*) AS n FROM samples",
            "--format",
            "json",
        ]);
        json(&out)[0]["n"].as_u64()
    });
    all.push(("convert", kept(&convert, rows)));
    let batch = common::perfq(&[
        "batch",
        "-o",
        batch_dataset.to_str().expect("path"),
        "--format",
        "json",
        file,
    ]);
    let batch_samples = json(&batch)[0]["samples"].as_u64();
    all.push(("batch", kept(&batch, batch_samples)));
    let query = common::perfq(&[
        "query",
        file,
        "SELECT count(*) AS n FROM samples",
        "--format",
        "json",
    ]);
    all.push(("query", kept(&query, json(&query)[0]["n"].as_u64())));
    let dump = common::perfq(&["dump", file]);
    let dumped = String::from_utf8_lossy(&dump.stdout)
        .lines()
        // A sample of an unknown event has `"event":null` first (a group
        // read's member of an unknown id has one later).
        .filter(|l| {
            l.split_once(",\"event\":")
                .is_some_and(|(_, rest)| rest.starts_with('"'))
        })
        .count() as u64;
    all.push(("dump", kept(&dump, Some(dumped))));
    // report, topdown and the flame graph count delivered samples, or
    // none: their status and what they say are compared.
    for (name, args) in [
        ("report", &["report", "--format", "json"][..]),
        // A cut capture has no CPU id: the formulas are named.
        (
            "topdown",
            &[
                "topdown",
                "--cpu-model",
                "sapphirerapids",
                "--format",
                "json",
            ][..],
        ),
        ("flamegraph", &["flamegraph", "--folded"][..]),
    ] {
        let mut a = args.to_vec();
        a.push(file);
        let out = common::perfq(&a);
        let mut k = kept(&out, None);
        k.samples = all[0].1.samples.filter(|_| k.code == Some(0));
        all.push((name, k));
    }
    let _ = std::fs::remove_dir_all(&dataset);
    let _ = std::fs::remove_dir_all(&batch_dataset);
    all
}
