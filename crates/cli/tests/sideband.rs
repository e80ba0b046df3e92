//! The sideband agrees with `perf report -D`: every MMAP, MMAP2, COMM,
//! FORK and EXIT record in delivery (time) order with its fields and time,
//! and the ID_INDEX entries.

mod common;

use serde_json::Value;

fn perf_lines(file: &std::path::Path) -> (Vec<String>, Vec<String>) {
    let out = common::perf(&["report", "-D", "-i", file.to_str().expect("path")])
        .expect("perf report -D");
    let mut records = Vec::new();
    let mut id_index = Vec::new();
    for line in out.lines() {
        if let Some(rest) = line.trim_start().strip_prefix("... id: ") {
            // " ... id: 178  idx: 0  cpu: 0  tid: 6868"
            let v: Vec<&str> = rest.split_whitespace().collect();
            if v.len() >= 7 {
                id_index.push(format!("{} {} {} {}", v[0], v[2], v[4], v[6]));
            }
            continue;
        }
        let Some(pos) = line.find(": PERF_RECORD_") else {
            continue;
        };
        let head: Vec<&str> = line[..pos].split_whitespace().collect();
        // [cpu] time offset [size]; time 0 means none.
        let time = head
            .iter()
            .rev()
            .nth(2)
            .and_then(|t| t.parse::<u64>().ok())
            .filter(|t| *t != 0);
        let body = &line[pos + ": PERF_RECORD_".len()..];
        let keep = ["MMAP ", "MMAP2 ", "COMM", "FORK(", "EXIT("]
            .iter()
            .any(|p| body.starts_with(p));
        if keep {
            let body = body
                .replace("COMM exec:", "COMM exec")
                .replace("COMM:", "COMM");
            records.push(format!(
                "{} {body}",
                time.map(|t| t.to_string()).unwrap_or_default()
            ));
        }
    }
    (records, id_index)
}

fn hexs(v: &Value) -> String {
    let n =
        u64::from_str_radix(v.as_str().unwrap_or("0x0").trim_start_matches("0x"), 16).unwrap_or(0);
    if n == 0 {
        "0".into()
    } else {
        format!("{n:#x}")
    }
}

fn ours(file: &std::path::Path) -> (Vec<String>, Vec<String>) {
    let dump = common::perfq_ok(&["dump", "--records", "all", file.to_str().expect("path")]);
    let mut records = Vec::new();
    let mut id_index = Vec::new();
    for r in common::json_lines(&dump) {
        let time = r["time"]
            .as_u64()
            .filter(|t| *t != 0)
            .map(|t| t.to_string())
            .unwrap_or_default();
        let s = match r["type"].as_str().unwrap_or("") {
            "MMAP" => format!(
                "MMAP {}/{}: [{}({}) @ {}]: {} {}",
                r["pid"],
                r["tid"],
                hexs(&r["addr"]),
                hexs(&r["len"]),
                hexs(&r["pgoff"]),
                if r["data"] == true { "r" } else { "x" },
                r["filename"].as_str().unwrap_or("")
            ),
            "MMAP2" => {
                let prot = r["prot"].as_u64().unwrap_or(0);
                let flags = r["flags"].as_u64().unwrap_or(0);
                let p = format!(
                    "{}{}{}{}",
                    if prot & 1 != 0 { 'r' } else { '-' },
                    if prot & 2 != 0 { 'w' } else { '-' },
                    if prot & 4 != 0 { 'x' } else { '-' },
                    if flags & 1 != 0 { 's' } else { 'p' }
                );
                format!(
                    "MMAP2 {}/{}: [{}({}) @ {} {:02x}:{:02x} {} {}]: {p} {}",
                    r["pid"],
                    r["tid"],
                    hexs(&r["addr"]),
                    hexs(&r["len"]),
                    hexs(&r["pgoff"]),
                    r["maj"].as_u64().unwrap_or(0),
                    r["min"].as_u64().unwrap_or(0),
                    r["ino"],
                    r["ino_generation"],
                    r["filename"].as_str().unwrap_or("")
                )
            }
            "COMM" => format!(
                "COMM{} {}:{}/{}",
                if r["exec"] == true { " exec" } else { "" },
                r["comm"].as_str().unwrap_or(""),
                r["pid"],
                r["tid"]
            ),
            t @ ("FORK" | "EXIT") => format!(
                "{t}({}:{}):({}:{})",
                r["pid"], r["tid"], r["ppid"], r["ptid"]
            ),
            "ID_INDEX" => {
                for e in r["entries"].as_array().expect("entries") {
                    id_index.push(format!(
                        "{} {} {} {}",
                        e["id"], e["idx"], e["cpu"], e["tid"]
                    ));
                }
                continue;
            }
            _ => continue,
        };
        records.push(format!("{time} {s}"));
    }
    (records, id_index)
}

#[test]
fn sideband_agrees_with_perf_report_d() {
    if !common::have_perf() {
        common::skip("perf is not installed; sideband not compared");
        return;
    }
    for name in [
        "fp.data",
        "dwarf.data",
        "multi.data",
        "compressed.data",
        "pipe.data",
        "group-pipe.data",
    ] {
        let file = common::testdata(name);
        let (perf, perf_ids) = perf_lines(&file);
        let (got, got_ids) = ours(&file);
        assert!(perf.len() > 5, "{name}: perf shows sideband");
        assert_eq!(got.len(), perf.len(), "{name}: sideband record count");
        for (i, (g, p)) in got.iter().zip(&perf).enumerate() {
            assert_eq!(g, p, "{name}: sideband record {i}");
        }
        assert_eq!(got_ids, perf_ids, "{name}: ID_INDEX");
        println!(
            "{name}: {} sideband records and {} ID_INDEX entries agree",
            got.len(),
            got_ids.len()
        );
    }
}
