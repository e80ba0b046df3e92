//! `perfq convert` round trip: the Parquet tables hold what the capture
//! holds. Sample counts equal `perfq info`'s; per-event periods and
//! per-function self periods, computed from samples → stacks → frames,
//! equal `perfq report`'s; group-read deltas sum to perf report --group's
//! totals per member and sit in each sample's row by member position; the
//! pmus table holds `perfq info`'s PMU features; an existing capture is
//! kept without --force.

mod common;

use std::collections::BTreeMap;
use std::fs::File;
use std::path::{Path, PathBuf};

use arrow_array::{
    Array, BooleanArray, ListArray, RecordBatch, StringArray, UInt16Array, UInt32Array, UInt64Array,
};
use parquet::arrow::arrow_reader::ParquetRecordBatchReaderBuilder;
use serde_json::Value;

fn read(path: &Path) -> Vec<RecordBatch> {
    let f = File::open(path).unwrap_or_else(|e| panic!("{}: {e}", path.display()));
    ParquetRecordBatchReaderBuilder::try_new(f)
        .expect("parquet")
        .build()
        .expect("reader")
        .collect::<Result<Vec<_>, _>>()
        .expect("batches")
}

fn col<'a, T: 'static>(b: &'a RecordBatch, name: &str) -> &'a T {
    b.column_by_name(name)
        .unwrap_or_else(|| panic!("column {name}"))
        .as_any()
        .downcast_ref::<T>()
        .unwrap_or_else(|| panic!("type of {name}"))
}

fn convert(files: &[&Path], out: &Path, extra: &[&str]) -> std::process::Output {
    let mut args: Vec<&str> = vec!["convert", "-o", out.to_str().expect("path")];
    args.extend_from_slice(extra);
    args.extend(files.iter().map(|f| f.to_str().expect("path")));
    common::perfq(&args)
}

/// event_id → name, from a capture folder's events table.
fn event_names(dir: &Path) -> BTreeMap<u32, String> {
    let mut events = BTreeMap::new();
    for b in read(&dir.join("events.parquet")) {
        let id = col::<UInt32Array>(&b, "event_id");
        let nm = col::<StringArray>(&b, "name");
        for i in 0..b.num_rows() {
            events.insert(id.value(i), nm.value(i).to_string());
        }
    }
    events
}

fn capture_dir(out: &Path) -> PathBuf {
    std::fs::read_dir(out)
        .expect("dataset")
        .map(|e| e.expect("entry").path())
        .find(|p| {
            p.file_name()
                .is_some_and(|n| n.to_string_lossy().starts_with("capture="))
        })
        .expect("a capture folder")
}

#[test]
fn parquet_round_trip_matches_info_and_report() {
    for name in ["fp.data", "multi.data", "compressed.data", "pipe.data"] {
        let file = common::testdata(name);
        let out = std::env::temp_dir().join(format!("perfq-convert-{}-{name}", std::process::id()));
        let _ = std::fs::remove_dir_all(&out);
        common::succeeded(&convert(&[&file], &out, &[]), name);
        let dir = capture_dir(&out);

        let info = common::perfq_json(&["info", "--json", file.to_str().expect("path")]);
        let samples = read(&dir.join("samples.parquet"));
        let n: usize = samples.iter().map(RecordBatch::num_rows).sum();
        assert_eq!(
            Some(n as u64),
            info["samples"].as_u64(),
            "{name}: sample rows"
        );
        // No group reads: the member columns are there, all null.
        for b in &samples {
            for m in member_columns(b) {
                assert_eq!(m.null_count(), m.len(), "{name}: member columns");
            }
        }
        pmus_agree_with_info(&dir, &info);
        sideband_tables_agree_with_info(&dir, &info, name);
        let ours = self_periods(&dir, &samples, name);
        let report =
            common::perfq_rows(&["report", "--format", "json", file.to_str().expect("path")]);
        let mut checked = 0;
        for r in report.iter().filter(|r| r.get("unresolved").is_none()) {
            let key = (
                r["event"].as_str().unwrap_or("").to_string(),
                r["dso"].as_str().unwrap_or("").to_string(),
                r["symbol"].as_str().unwrap_or("").to_string(),
            );
            assert_eq!(
                ours.get(&key).copied(),
                r["period"].as_u64(),
                "{name}: {key:?}"
            );
            checked += 1;
        }
        match common::recorded_binaries_here(&file) {
            Ok(()) => assert!(checked > 5, "{name}: {checked} symbols compared"),
            Err(why) => common::skip(format_args!(
                "in part: {why}; {name}'s self periods compared on unnamed frames only"
            )),
        }
        println!("{name}: {n} samples, {checked} functions' self periods equal perfq report");
        std::fs::remove_dir_all(&out).ok();
    }
}

/// The sideband tables of a capture folder hold every COMM/FORK/EXIT and
/// MMAP/MMAP2 record `perfq info` counts, and quality every loss and
/// throttle.
fn sideband_tables_agree_with_info(dir: &Path, info: &Value, name: &str) {
    let count = |t: &str| -> u64 {
        read(&dir.join(format!("{t}.parquet")))
            .iter()
            .map(|b| b.num_rows() as u64)
            .sum()
    };
    let rec = |k: &str| info["records"][k].as_u64().unwrap_or(0);
    assert_eq!(
        count("threads"),
        rec("COMM") + rec("FORK") + rec("EXIT"),
        "{name}: threads"
    );
    assert_eq!(
        count("mappings"),
        rec("MMAP") + rec("MMAP2"),
        "{name}: mappings"
    );
    assert_eq!(
        count("quality"),
        rec("LOST") + rec("LOST_SAMPLES") + rec("THROTTLE") + rec("UNTHROTTLE"),
        "{name}: quality"
    );
}

/// (event, dso, symbol) → self period, from a capture folder's samples →
/// stacks → frames: each sample's leaf frame (which must be its stack's)
/// by its depth-0 symbol.
fn self_periods(
    dir: &Path,
    samples: &[RecordBatch],
    name: &str,
) -> BTreeMap<(String, String, String), u64> {
    let mut leaf_of_stack: BTreeMap<u32, u32> = BTreeMap::new();
    for b in read(&dir.join("stacks.parquet")) {
        let ids = col::<UInt32Array>(&b, "stack_id");
        let leaf = col::<UInt32Array>(&b, "frame_id");
        let frames = col::<ListArray>(&b, "frame_ids");
        for i in 0..b.num_rows() {
            // Listed frames, where given, start with the leaf frame.
            if !frames.is_null(i) {
                let f = frames.value(i);
                let f = f.as_any().downcast_ref::<UInt32Array>().expect("u32 list");
                assert_eq!(f.value(0), leaf.value(i), "{name}: leaf frame");
            }
            leaf_of_stack.insert(ids.value(i), leaf.value(i));
        }
    }
    let mut name_of_frame: BTreeMap<u32, (String, String)> = BTreeMap::new();
    for b in read(&dir.join("frames.parquet")) {
        let id = col::<UInt32Array>(&b, "frame_id");
        let depth = col::<UInt16Array>(&b, "inline_depth");
        let dso = col::<StringArray>(&b, "dso");
        let sym = col::<StringArray>(&b, "symbol");
        for i in 0..b.num_rows() {
            if depth.value(i) == 0 && !sym.is_null(i) {
                name_of_frame.insert(
                    id.value(i),
                    (dso.value(i).to_string(), sym.value(i).to_string()),
                );
            }
        }
    }
    let events = event_names(dir);
    let mut ours: BTreeMap<(String, String, String), u64> = BTreeMap::new();
    for b in samples {
        let ev = col::<UInt32Array>(b, "event_id");
        let period = col::<UInt64Array>(b, "period");
        let stack = col::<UInt32Array>(b, "stack_id");
        let leaf_frame = col::<UInt32Array>(b, "leaf_frame_id");
        for i in 0..b.num_rows() {
            if stack.is_null(i) {
                continue;
            }
            let leaf = leaf_frame.value(i);
            assert_eq!(leaf, leaf_of_stack[&stack.value(i)], "{name}: leaf frame");
            if let Some((dso, sym)) = name_of_frame.get(&leaf) {
                *ours
                    .entry((events[&ev.value(i)].clone(), dso.clone(), sym.clone()))
                    .or_default() += period.value(i);
            }
        }
    }
    ours
}

#[test]
fn existing_capture_is_kept_without_force_and_failed_writes_leave_nothing() {
    let file = common::testdata("group.data");
    let out = std::env::temp_dir().join(format!("perfq-convert-force-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&out);
    common::succeeded(&convert(&[&file], &out, &[]), "perfq convert");
    // Converting it again, without --force, says so and leaves it alone.
    let again = common::succeeded(&convert(&[&file], &out, &[]), "perfq convert again");
    assert!(again.contains("already in the dataset"));
    common::succeeded(
        &convert(&[&file], &out, &["--force"]),
        "perfq convert --force",
    );
    // Only the capture folder: no temporary folders left behind.
    let names: Vec<String> = std::fs::read_dir(&out)
        .expect("dataset")
        .map(|e| e.expect("entry").file_name().to_string_lossy().into_owned())
        .collect();
    assert_eq!(names.len(), 1, "{names:?}");
    assert!(names[0].starts_with("capture="));
    // Group-read deltas per member sum to what perf script splits out.
    let dir = capture_dir(&out);
    let mut per_member: BTreeMap<u32, u64> = BTreeMap::new();
    for b in read(&dir.join("read_values.parquet")) {
        let ev = col::<UInt32Array>(&b, "event_id");
        let d = col::<UInt64Array>(&b, "delta");
        for i in 0..b.num_rows() {
            *per_member.entry(ev.value(i)).or_default() += d.value(i);
        }
    }
    let dump = common::perfq_dump(&file);
    let mut expected: BTreeMap<u32, u64> = BTreeMap::new();
    for s in &dump {
        for (k, v) in s["read"]["values"]
            .as_array()
            .expect("read")
            .iter()
            .enumerate()
        {
            *expected.entry(k as u32).or_default() += v["delta"].as_u64().expect("delta");
        }
    }
    assert_eq!(per_member, expected);
    std::fs::remove_dir_all(&out).ok();
}

/// The 16 member columns `m0..m15` of a samples batch.
fn member_columns(b: &RecordBatch) -> Vec<&UInt64Array> {
    (0..16)
        .map(|k| col::<UInt64Array>(b, &format!("m{k}")))
        .collect()
}

/// One pmus row: type, name, cpus, caps.
type PmuRow = (Option<u32>, String, Option<String>, Option<String>);

/// The pmus table of a capture folder equals the PMU features `perfq info
/// --json` reports: one row per PMU name, in mapping order, then those only
/// caps or the hybrid topology name. Returns the number of rows.
fn pmus_agree_with_info(dir: &Path, info: &Value) -> usize {
    let mut ours: Vec<PmuRow> = Vec::new();
    for b in read(&dir.join("pmus.parquet")) {
        let ty = col::<UInt32Array>(&b, "type");
        let name = col::<StringArray>(&b, "name");
        let cpus = col::<StringArray>(&b, "cpus");
        let caps = col::<StringArray>(&b, "caps");
        let text = |a: &StringArray, i: usize| (!a.is_null(i)).then(|| a.value(i).to_string());
        for i in 0..b.num_rows() {
            ours.push((
                (!ty.is_null(i)).then(|| ty.value(i)),
                name.value(i).to_string(),
                text(cpus, i),
                text(caps, i),
            ));
        }
    }
    let list = |k: &str| info[k].as_array().cloned().unwrap_or_default();
    let text = |v: &Value| v.as_str().expect("a string").to_string();
    let mut expected: Vec<PmuRow> = Vec::new();
    fn row<'a>(rows: &'a mut Vec<PmuRow>, name: &str) -> &'a mut PmuRow {
        if let Some(i) = rows.iter().position(|r| r.1 == name) {
            return &mut rows[i];
        }
        rows.push((None, name.to_string(), None, None));
        rows.last_mut().expect("just pushed")
    }
    for m in list("pmu_mappings") {
        let r = row(&mut expected, &text(&m["name"]));
        r.0 = r.0.or(m["type"].as_u64().map(|t| t as u32));
    }
    for p in list("pmu_caps") {
        let r = row(&mut expected, &text(&p["pmu"]));
        for c in p["caps"].as_array().expect("caps") {
            let line = format!("{}={}", text(&c["name"]), text(&c["value"]));
            r.3 = Some(match r.3.take() {
                Some(prev) => format!("{prev}\n{line}"),
                None => line,
            });
        }
    }
    for h in list("hybrid_topology") {
        let r = row(&mut expected, &text(&h["pmu"]));
        r.2 = r.2.take().or(Some(text(&h["cpus"])));
    }
    assert_eq!(ours, expected, "{}: pmus", dir.display());
    ours.len()
}

/// group.data and group-pipe.data: `events.member` is each event's
/// position in the group's read, and every sample's `m0..m15` hold its
/// read_values deltas by that position (null past the group).
#[test]
fn group_read_deltas_sit_in_samples_by_member() {
    let cases: [(&str, &[u32]); 2] = [("group.data", &[0, 1, 2]), ("group-pipe.data", &[0, 1])];
    for (name, members) in cases {
        let file = common::testdata(name);
        let out =
            std::env::temp_dir().join(format!("perfq-convert-m-{}-{name}", std::process::id()));
        let _ = std::fs::remove_dir_all(&out);
        common::succeeded(&convert(&[&file], &out, &["--no-symbols"]), name);
        let dir = capture_dir(&out);

        let mut member_of: BTreeMap<u32, u32> = BTreeMap::new();
        for b in read(&dir.join("events.parquet")) {
            let id = col::<UInt32Array>(&b, "event_id");
            let member = col::<UInt32Array>(&b, "member");
            for i in 0..b.num_rows() {
                member_of.insert(id.value(i), member.value(i));
            }
        }
        assert_eq!(
            member_of.values().copied().collect::<Vec<_>>(),
            members,
            "{name}: events.member"
        );

        // Each sample's read values, in the order of its read.
        // Per sample: (event, delta) of each read value.
        type Reads = BTreeMap<u64, Vec<(Option<u32>, Option<u64>)>>;
        let mut reads: Reads = BTreeMap::new();
        for b in read(&dir.join("read_values.parquet")) {
            let sid = col::<UInt64Array>(&b, "sample_id");
            let ev = col::<UInt32Array>(&b, "event_id");
            let delta = col::<UInt64Array>(&b, "delta");
            for i in 0..b.num_rows() {
                reads.entry(sid.value(i)).or_default().push((
                    (!ev.is_null(i)).then(|| ev.value(i)),
                    (!delta.is_null(i)).then(|| delta.value(i)),
                ));
            }
        }
        let mut checked = 0;
        for b in read(&dir.join("samples.parquet")) {
            let sid = col::<UInt64Array>(&b, "sample_id");
            let m = member_columns(&b);
            for i in 0..b.num_rows() {
                let values = reads.get(&sid.value(i)).expect("every sample has a read");
                let mut expected = [None; 16];
                for (k, (ev, delta)) in values.iter().enumerate() {
                    let ev = ev.expect("known id");
                    // The position in the read is the event's member.
                    assert_eq!(member_of[&ev], k as u32, "{name}: member of event {ev}");
                    expected[member_of[&ev] as usize] = *delta;
                }
                let got: Vec<Option<u64>> = m
                    .iter()
                    .map(|c| (!c.is_null(i)).then(|| c.value(i)))
                    .collect();
                assert_eq!(got, expected, "{name}: sample {}", sid.value(i));
                checked += 1;
            }
        }
        assert_eq!(checked, reads.len(), "{name}: samples with a read");
        assert!(checked > 10, "{name}: {checked} samples");

        let info = common::perfq_json(&["info", "--json", file.to_str().expect("path")]);
        let pmus = pmus_agree_with_info(&dir, &info);
        assert!(pmus >= 5, "{name}: {pmus} PMUs");
        println!(
            "{name}: {checked} samples' m columns equal their read_values deltas; {pmus} PMUs"
        );
        std::fs::remove_dir_all(&out).ok();
    }
}

/// (event, DSO) → (self period, total period).
type DsoPeriods = BTreeMap<(String, String), (u64, u64)>;

/// Per (event, dso): (self period, total period counting each DSO once
/// per sample), computed from a capture folder's samples → stacks →
/// frames, and the sample count.
fn dso_periods(dir: &Path) -> (DsoPeriods, u64) {
    let events = event_names(dir);
    let mut dso_of_frame: BTreeMap<u32, String> = BTreeMap::new();
    for b in read(&dir.join("frames.parquet")) {
        let id = col::<UInt32Array>(&b, "frame_id");
        let dso = col::<StringArray>(&b, "dso");
        for i in 0..b.num_rows() {
            dso_of_frame.insert(id.value(i), dso.value(i).to_string());
        }
    }
    let mut frames_of_stack: BTreeMap<u32, Vec<u32>> = BTreeMap::new();
    for b in read(&dir.join("stacks.parquet")) {
        let ids = col::<UInt32Array>(&b, "stack_id");
        let frames = col::<ListArray>(&b, "frame_ids");
        for i in 0..b.num_rows() {
            if !frames.is_null(i) {
                let f = frames.value(i);
                let f = f.as_any().downcast_ref::<UInt32Array>().expect("u32 list");
                frames_of_stack.insert(ids.value(i), f.values().to_vec());
            }
        }
    }
    // Sample-read samples count once per member, with the member's delta
    // as period (zero deltas dropped), as perf report splits them.
    let mut members: BTreeMap<u64, Vec<(u32, u64)>> = BTreeMap::new();
    for b in read(&dir.join("read_values.parquet")) {
        let sample = col::<UInt64Array>(&b, "sample_id");
        let ev = col::<UInt32Array>(&b, "event_id");
        let delta = col::<UInt64Array>(&b, "delta");
        for i in 0..b.num_rows() {
            let m = members.entry(sample.value(i)).or_default();
            if !ev.is_null(i) && !delta.is_null(i) && delta.value(i) != 0 {
                m.push((ev.value(i), delta.value(i)));
            }
        }
    }
    let mut out = DsoPeriods::new();
    let mut n = 0;
    for b in read(&dir.join("samples.parquet")) {
        let ev = col::<UInt32Array>(&b, "event_id");
        let period = col::<UInt64Array>(&b, "period");
        let stack = col::<UInt32Array>(&b, "stack_id");
        let leaf_frame = col::<UInt32Array>(&b, "leaf_frame_id");
        let sample = col::<UInt64Array>(&b, "sample_id");
        for i in 0..b.num_rows() {
            n += 1;
            let counted = match members.get(&sample.value(i)) {
                Some(m) => m.clone(),
                None => vec![(ev.value(i), period.value(i))],
            };
            for (ev, p) in counted {
                let event = &events[&ev];
                if !leaf_frame.is_null(i) {
                    let leaf = &dso_of_frame[&leaf_frame.value(i)];
                    out.entry((event.clone(), leaf.clone())).or_default().0 += p;
                }
                if stack.is_null(i) {
                    continue;
                }
                let frames = &frames_of_stack[&stack.value(i)];
                let dsos: std::collections::BTreeSet<&String> =
                    frames.iter().map(|f| &dso_of_frame[f]).collect();
                for d in dsos {
                    out.entry((event.clone(), d.clone())).or_default().1 += p;
                }
            }
        }
    }
    (out, n)
}

/// The corpus round trip: every capture perf reads, converted into one
/// dataset (a folder per capture), holds `perfq info`'s sample count and,
/// per event and DSO, `perfq report --children --sort dso`'s self and total
/// periods exactly (the corpus's binaries are absent: DSOs are what
/// resolves). Branch entries equal `perf script -F brstack`'s and data_src
/// rows perf's decoding, where captures have them.
#[test]
fn corpus_round_trip_per_dso() {
    let Some(corpus) = common::corpus() else {
        common::skip("../shared/corpus is absent; corpus round trip not checked");
        return;
    };
    let files: Vec<PathBuf> = common::catalog(&corpus)
        .iter()
        .filter(|e| e["script61"].as_str().is_some_and(|s| s.starts_with("OK")))
        .map(|e| corpus.join(e["path"].as_str().expect("path")))
        .collect();
    let out = std::env::temp_dir().join(format!("perfq-convert-corpus-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&out);
    let refs: Vec<&Path> = files.iter().map(PathBuf::as_path).collect();
    let o = convert(&refs, &out, &[]);
    let stdout = String::from_utf8_lossy(&o.stdout);
    // "FILE -> DIR" per capture written.
    let dirs: BTreeMap<PathBuf, PathBuf> = stdout
        .lines()
        .filter_map(|l| l.split_once(" -> "))
        .map(|(f, d)| {
            (
                PathBuf::from(f),
                PathBuf::from(d.split(" (").next().unwrap_or(d)),
            )
        })
        .collect();
    let (mut captures, mut rows, mut branches, mut data_src, mut pmus) = (0, 0, 0, 0, 0);
    for file in &files {
        let Some(dir) = dirs.get(file) else {
            panic!(
                "{} not converted: {}",
                file.display(),
                String::from_utf8_lossy(&o.stderr)
            );
        };
        let f = file.to_str().expect("path");
        let info = common::perfq_json(&["info", "--json", f]);
        let (ours, n) = dso_periods(dir);
        assert_eq!(Some(n), info["samples"].as_u64(), "{f}: sample rows");
        let report = common::perfq_rows(&[
            "report",
            "--children",
            "--sort",
            "dso",
            "--format",
            "json",
            f,
        ]);
        let theirs: DsoPeriods = report
            .iter()
            .map(|r| {
                let s = |k: &str| r[k].as_str().unwrap_or("").to_string();
                let u = |k: &str| r[k].as_u64().unwrap_or(0);
                ((s("event"), s("dso")), (u("period"), u("total_period")))
            })
            .filter(|(_, v)| *v != (0, 0))
            .collect();
        assert_eq!(ours, theirs, "{f}: per-DSO self and total periods");
        pmus += pmus_agree_with_info(dir, &info);
        if common::have_perf() {
            branches += branches_agree_with_perf_script(dir, f);
            data_src += data_src_agrees_with_perf_script(dir, f);
        }
        captures += 1;
        rows += theirs.len();
    }
    assert!(captures >= 100, "{captures} corpus captures compared");
    println!("corpus: {captures} captures converted into one dataset; {rows} (event, DSO) self and total periods equal perfq report; {pmus} pmus rows equal perfq info");
    if common::have_perf() {
        assert!(
            branches >= 10_000,
            "{branches} samples' branch entries compared"
        );
        assert!(data_src >= 50, "{data_src} samples' data_src compared");
        println!("corpus: branches of {branches} samples equal perf script -F brstack; data_src of {data_src} samples decodes as perf script -F data_src shows it");
    } else {
        common::skip("perf is not installed; branches and data_src tables not compared with it");
    }
    std::fs::remove_dir_all(&out).ok();
}

/// The branches table of a capture folder, per sample in `perf script -F
/// brstack`'s words (from/to/M or P/X/A/cycles), against perf's. Returns
/// the number of samples compared.
fn branches_agree_with_perf_script(dir: &Path, file: &str) -> usize {
    let mut ours: BTreeMap<u64, Vec<String>> = BTreeMap::new();
    for b in read(&dir.join("branches.parquet")) {
        let sample = col::<UInt64Array>(&b, "sample_id");
        let from = col::<UInt64Array>(&b, "from");
        let to = col::<UInt64Array>(&b, "to");
        let cycles = col::<UInt16Array>(&b, "cycles");
        let flag = |name: &str, i: usize, c: &'static str| {
            if col::<BooleanArray>(&b, name).value(i) {
                c
            } else {
                "-"
            }
        };
        for i in 0..b.num_rows() {
            let pred = match flag("mispred", i, "M") {
                "M" => "M",
                _ => flag("predicted", i, "P"),
            };
            ours.entry(sample.value(i)).or_default().push(format!(
                "{:#x}/{:#x}/{pred}/{}/{}/{}",
                from.value(i),
                to.value(i),
                flag("in_tx", i, "X"),
                flag("abort", i, "A"),
                cycles.value(i)
            ));
        }
    }
    if ours.is_empty() {
        return 0;
    }
    let perf: Vec<String> = common::perf_brstack(Path::new(file))
        .expect("perf script")
        .into_iter()
        .filter(|l| !l.is_empty())
        .collect();
    let ours: Vec<String> = ours.into_values().map(|v| v.join(" ")).collect();
    assert_eq!(ours, perf, "{file}: branch entries");
    ours.len()
}

/// Each sample's data_src, decoded through the data_src table, in the
/// words `perf script -F data_src` (perf 6.1) prints. Returns the number of
/// samples compared.
fn data_src_agrees_with_perf_script(dir: &Path, file: &str) -> usize {
    let mut text: BTreeMap<u64, String> = BTreeMap::new();
    for b in read(&dir.join("data_src.parquet")) {
        let v = col::<UInt64Array>(&b, "data_src");
        let s = |name: &str, i: usize| -> Option<String> {
            let c = col::<StringArray>(&b, name);
            (!c.is_null(i)).then(|| c.value(i).to_string())
        };
        let t = |name: &str, i: usize| -> Option<bool> {
            let c = col::<BooleanArray>(&b, name);
            (!c.is_null(i)).then(|| c.value(i))
        };
        let hit_miss = |h: Option<bool>| match h {
            Some(true) => " hit",
            Some(false) => " miss",
            None => "",
        };
        for i in 0..b.num_rows() {
            let lvl: Vec<String> = [s("level", i), s("level_num", i)]
                .into_iter()
                .flatten()
                .collect();
            let lvl = if lvl.is_empty() {
                "N/A".to_string()
            } else {
                lvl.join(" or ")
            };
            let lock = match t("locked", i) {
                None => "N/A",
                Some(true) => "Yes",
                Some(false) => "No",
            };
            text.insert(
                v.value(i),
                format!(
                    "|OP {}|LVL {lvl}{}|SNP {}|TLB {}{}|LCK {lock}|BLK  {}",
                    // perf says "No" when no op bit is set.
                    s("op", i).unwrap_or("No".into()),
                    hit_miss(t("hit", i)),
                    s("snoop", i).unwrap_or("N/A".into()),
                    s("tlb", i).unwrap_or("N/A".into()),
                    hit_miss(t("tlb_hit", i)),
                    s("blocked", i).unwrap_or("N/A".into()),
                ),
            );
        }
    }
    if text.is_empty() {
        return 0;
    }
    let mut ours = Vec::new();
    for b in read(&dir.join("samples.parquet")) {
        let d = col::<UInt64Array>(&b, "data_src");
        for i in 0..b.num_rows() {
            ours.push(text[&d.value(i)].clone());
        }
    }
    let script =
        common::perf(&["script", "-G", "-i", file, "-F", "data_src"]).expect("perf script");
    let perf: Vec<String> = script
        .lines()
        .filter_map(|l| l.trim().split_once(' '))
        .map(|(_, t)| t.trim().to_string())
        .collect();
    assert_eq!(ours, perf, "{file}: data_src");
    ours.len()
}

/// A damaged capture converts up to the damage: a cut file keeps every
/// complete sample (with the cut in `capture.warnings`, exit 0); an
/// impossible record size ends reading with a warning naming the file and
/// offset (exit 0; with `--strict`, the same line as the error and exit
/// 1), and the samples before it are in the dataset with the loss in
/// `capture.read_error` and the bytes not read in `quality`.
#[test]
fn damaged_captures_convert_up_to_the_damage() {
    let src = std::fs::read(common::testdata("fp.data")).expect("fp.data");
    let tmp = std::env::temp_dir().join(format!("perfq-convert-damaged-{}", std::process::id()));
    std::fs::create_dir_all(&tmp).expect("tmp");
    let samples_of = |file: &Path| -> u64 {
        let info = common::perfq_json(&["info", "--json", file.to_str().expect("path")]);
        info["samples"].as_u64().expect("samples")
    };
    let capture_row = |out: &Path| -> (u64, Option<String>, String) {
        let b = &read(&capture_dir(out).join("capture.parquet"))[0];
        let err = col::<StringArray>(b, "read_error");
        (
            col::<UInt64Array>(b, "samples").value(0),
            (!err.is_null(0)).then(|| err.value(0).to_string()),
            col::<StringArray>(b, "warnings").value(0).to_string(),
        )
    };
    let rows = |out: &Path| -> u64 {
        read(&capture_dir(out).join("samples.parquet"))
            .iter()
            .map(|b| b.num_rows() as u64)
            .sum()
    };

    // Cut in the middle of the data section.
    let cut = tmp.join("cut.data");
    std::fs::write(&cut, &src[..src.len() / 3]).expect("write");
    let out = tmp.join("cut-ds");
    common::succeeded(&convert(&[&cut], &out, &[]), "perfq convert");
    let (n, err, warnings) = capture_row(&out);
    assert_eq!(n, samples_of(&cut));
    assert_eq!(rows(&out), n);
    assert!(err.is_none());
    assert!(warnings.contains("cut"), "{warnings}");

    // An impossible size in the 200th record.
    let mut bad = src.clone();
    let data_offset = u64::from_le_bytes(bad[40..48].try_into().expect("u64")) as usize;
    let mut at = data_offset;
    for _ in 0..200 {
        at += usize::from(u16::from_le_bytes([bad[at + 6], bad[at + 7]]));
    }
    bad[at + 6..at + 8].copy_from_slice(&3u16.to_le_bytes());
    let badf = tmp.join("bad.data");
    std::fs::write(&badf, &bad).expect("write");
    let out = tmp.join("bad-ds");
    let o = convert(&[&badf], &out, &[]);
    assert_eq!(o.status.code(), Some(0));
    let stderr = String::from_utf8_lossy(&o.stderr);
    let warning = format!("perfq: warning: {}: ", badf.display());
    let said = stderr
        .lines()
        .find_map(|l| l.strip_prefix(&warning))
        .unwrap_or_else(|| panic!("a warning names the file: {stderr}"));
    assert!(
        said.contains(&format!("{at:#x}")),
        "the warning names the offset: {said}"
    );
    let strict = tmp.join("bad-ds-strict");
    let o = convert(&[&badf], &strict, &["--strict"]);
    assert_eq!(o.status.code(), Some(1));
    let stderr = String::from_utf8_lossy(&o.stderr);
    assert_eq!(
        stderr.lines().last(),
        Some(format!("perfq: error: {}: {said}", badf.display()).as_str()),
        "--strict says the same as the error"
    );
    let quality = read(&capture_dir(&out).join("quality.parquet"));
    let unread: u64 = quality
        .iter()
        .flat_map(|b| {
            let kind = col::<StringArray>(b, "kind");
            let count = col::<UInt64Array>(b, "count");
            (0..b.num_rows())
                .filter(|&i| kind.value(i) == "unread_bytes")
                .map(|i| count.value(i))
                .collect::<Vec<_>>()
        })
        .sum();
    let data_end = u64::from_le_bytes(bad[40..48].try_into().expect("u64"))
        + u64::from_le_bytes(bad[48..56].try_into().expect("u64"));
    assert_eq!(
        unread,
        data_end - at as u64,
        "bytes of the data section not read"
    );
    let (n, err, _) = capture_row(&out);
    assert!(
        n > 0 && rows(&out) == n,
        "samples before the damage kept: {n}"
    );
    assert!(err.is_some_and(|e| e.contains(&format!("{at:#x}"))));
    std::fs::remove_dir_all(&tmp).ok();
}

/// A frame_id's rows in the frames table, as text: every column but the
/// id, one line per inlining level.
fn frame_texts(dir: &Path) -> BTreeMap<u32, String> {
    let mut texts: BTreeMap<u32, String> = BTreeMap::new();
    for b in read(&dir.join("frames.parquet")) {
        let ids = col::<UInt32Array>(&b, "frame_id");
        let rest: Vec<_> = (0..b.num_columns())
            .filter(|&c| b.schema().field(c).name() != "frame_id")
            .map(|c| b.column(c).clone())
            .collect();
        for i in 0..b.num_rows() {
            let line: Vec<String> = rest
                .iter()
                .map(|a| format!("{:?}", a.slice(i, 1)))
                .collect();
            let t = texts.entry(ids.value(i)).or_default();
            t.push_str(&line.join("|"));
            t.push('\n');
        }
    }
    texts
}

/// A sample's stack (its frames' text, leaf first) and own frame's text.
type SampleFrames = (Option<Vec<String>>, Option<String>);

/// Each sample's frames (leaf first, as their frames rows' text) and own
/// frame, in row order, from a capture folder's samples, stacks and
/// frames tables; and how many stacks and distinct frame ids it has.
fn sample_frames(dir: &Path) -> (Vec<SampleFrames>, usize, usize) {
    let texts = frame_texts(dir);
    let text = |id: u32| {
        texts
            .get(&id)
            .cloned()
            .unwrap_or_else(|| panic!("frame {id} unlisted"))
    };
    let mut frames_of: BTreeMap<u32, Vec<String>> = BTreeMap::new();
    let mut stacks = 0;
    for b in read(&dir.join("stacks.parquet")) {
        let ids = col::<UInt32Array>(&b, "stack_id");
        let lists = col::<ListArray>(&b, "frame_ids");
        stacks += b.num_rows();
        for i in (0..b.num_rows()).filter(|&i| !lists.is_null(i)) {
            let list = lists.value(i);
            let items = list.as_any().downcast_ref::<UInt32Array>().expect("u32");
            frames_of.insert(
                ids.value(i),
                items.values().iter().map(|&f| text(f)).collect(),
            );
        }
    }
    let mut samples = Vec::new();
    for b in read(&dir.join("samples.parquet")) {
        let ids = col::<UInt32Array>(&b, "stack_id");
        let leaf = col::<UInt32Array>(&b, "leaf_frame_id");
        for i in 0..b.num_rows() {
            let stack = (!ids.is_null(i)).then(|| {
                let id = ids.value(i);
                frames_of
                    .get(&id)
                    .cloned()
                    .unwrap_or_else(|| panic!("stack {id} unlisted"))
            });
            samples.push((stack, (!leaf.is_null(i)).then(|| text(leaf.value(i)))));
        }
    }
    (samples, stacks, texts.len())
}

/// `--stack-memory` cuts the stack tree and the locations into segments:
/// every sample keeps its frames (as the frames rows name them), the
/// other tables are the same, and per-function totals and the flame graph
/// come out the same as without a limit.
///
/// Besides testdata's small captures (whose segments all wait until the
/// last batch is in), a generated one of 40,000 samples with group reads,
/// whose segments are cut, symbolized and written while it is still read.
#[test]
fn stack_memory_limit_keeps_every_sample_and_result() {
    let dir = common::scratch("stack-memory", "generated");
    let generated = common::td_demo_capture(
        &dir.join("td-demo.data"),
        &common::preset("sapphirerapids"),
        40_000,
    );
    let files = ["fp.data", "dwarf.data", "multi.data", "pipe.data"]
        .map(|n| (n, common::testdata(n)))
        .into_iter()
        .chain([("td-demo.data", generated)]);
    for (name, file) in files {
        let whole = common::scratch("stack-memory", &format!("{name}-whole"));
        let cut = common::scratch("stack-memory", &format!("{name}-cut"));
        for (out, extra) in [(&whole, &[][..]), (&cut, &["--stack-memory", "4K"][..])] {
            common::succeeded(&convert(&[&file], out, extra), name);
        }
        let (a, b) = (capture_dir(&whole), capture_dir(&cut));
        let (whole_frames, whole_stacks, whole_locations) = sample_frames(&a);
        let (cut_frames, cut_stacks, cut_locations) = sample_frames(&b);
        assert!(
            whole_frames.iter().any(|s| s.0.is_some()),
            "{name}: no stacks"
        );
        assert!(
            whole_frames == cut_frames,
            "{name}: a sample's frames changed"
        );
        // A DWARF capture's user stacks are unwound with the binaries it
        // recorded: without them its few kernel-only stacks fit one segment.
        let not_unwound = (name == "dwarf.data" && cut_stacks <= whole_stacks)
            .then(|| common::recorded_binaries_here(&file).err())
            .flatten();
        match not_unwound {
            Some(why) => common::skip(format_args!("in part: {why}; {name}'s stacks not cut")),
            None => assert!(
                cut_stacks > whole_stacks,
                "{name}: {cut_stacks} stacks in segments, {whole_stacks} whole"
            ),
        }
        // A location met again after a cut is found again (a second id)
        // only when the reading thread's cache of them misses: on these
        // small captures, hardly ever.
        assert!(cut_locations >= whole_locations, "{name}");
        for table in [
            "dsos.parquet",
            "threads.parquet",
            "events.parquet",
            "mappings.parquet",
        ] {
            assert_eq!(
                std::fs::read(a.join(table)).expect("table"),
                std::fs::read(b.join(table)).expect("table"),
                "{name}: {table} differs"
            );
        }
        for args in [
            &[
                "query",
                "",
                "SELECT * FROM function_total ORDER BY event_id, symbol, dso",
                "--format",
                "csv",
            ][..],
            &[
                "query",
                "",
                "SELECT * FROM function_self ORDER BY event_id, symbol, dso",
                "--format",
                "csv",
            ][..],
            &["flamegraph", "", "--folded"][..],
        ] {
            let run = |ds: &Path| {
                let mut args = args.to_vec();
                args[1] = ds.to_str().expect("path");
                common::perfq_ok(&args)
            };
            let (x, y) = (run(&whole), run(&cut));
            assert!(!x.is_empty());
            assert!(x == y, "{name}: {args:?} differs");
        }
        let _ = std::fs::remove_dir_all(&whole);
        let _ = std::fs::remove_dir_all(&cut);
    }
    let _ = std::fs::remove_dir_all(&dir);
}
