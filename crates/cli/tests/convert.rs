//! `perfq convert` round trip: the Parquet tables hold what the capture
//! holds. Sample counts equal `perfq info`'s; per-event periods and
//! per-function self periods, computed from samples → stacks → frames,
//! equal `perfq report`'s; group-read deltas sum to perf report --group's
//! totals per member; an existing capture is kept without --force.

mod common;

use std::collections::BTreeMap;
use std::fs::File;
use std::path::{Path, PathBuf};

use arrow_array::{
    Array, ListArray, RecordBatch, StringArray, UInt16Array, UInt32Array, UInt64Array,
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
        let o = convert(&[&file], &out, &[]);
        assert!(
            o.status.success(),
            "{name}: {}",
            String::from_utf8_lossy(&o.stderr)
        );
        let dir = capture_dir(&out);

        let info: Value = serde_json::from_slice(
            &common::perfq(&["info", "--json", file.to_str().expect("path")]).stdout,
        )
        .expect("info");
        let samples = read(&dir.join("samples.parquet"));
        let n: usize = samples.iter().map(RecordBatch::num_rows).sum();
        assert_eq!(
            Some(n as u64),
            info["samples"].as_u64(),
            "{name}: sample rows"
        );

        // Sideband tables hold every COMM/FORK/EXIT and MMAP/MMAP2.
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

        // Stacks and frames: leaf frame of each stack, depth-0 symbol.
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
        let mut events: BTreeMap<u32, String> = BTreeMap::new();
        for b in read(&dir.join("events.parquet")) {
            let id = col::<UInt32Array>(&b, "event_id");
            let nm = col::<StringArray>(&b, "name");
            for i in 0..b.num_rows() {
                events.insert(id.value(i), nm.value(i).to_string());
            }
        }
        let mut ours: BTreeMap<(String, String, String), u64> = BTreeMap::new();
        for b in &samples {
            let ev = col::<UInt32Array>(b, "event_id");
            let period = col::<UInt64Array>(b, "period");
            let stack = col::<UInt32Array>(b, "stack_id");
            for i in 0..b.num_rows() {
                if stack.is_null(i) {
                    continue;
                }
                let leaf = leaf_of_stack[&stack.value(i)];
                if let Some((dso, sym)) = name_of_frame.get(&leaf) {
                    *ours
                        .entry((events[&ev.value(i)].clone(), dso.clone(), sym.clone()))
                        .or_default() += period.value(i);
                }
            }
        }
        let report: Vec<Value> = serde_json::from_slice(
            &common::perfq(&["report", "--format", "json", file.to_str().expect("path")]).stdout,
        )
        .expect("report json");
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
        assert!(checked > 5, "{name}: {checked} symbols compared");
        println!("{name}: {n} samples, {checked} functions' self periods equal perfq report");
        std::fs::remove_dir_all(&out).ok();
    }
}

#[test]
fn existing_capture_needs_force_and_failed_writes_leave_nothing() {
    let file = common::testdata("group.data");
    let out = std::env::temp_dir().join(format!("perfq-convert-force-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&out);
    assert!(convert(&[&file], &out, &[]).status.success());
    let again = convert(&[&file], &out, &[]);
    assert_eq!(again.status.code(), Some(1));
    assert!(String::from_utf8_lossy(&again.stderr).contains("--force"));
    assert!(convert(&[&file], &out, &["--force"]).status.success());
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
