//! Field-by-field agreement of `perfq dump` with perf itself on the
//! captures recorded in `testdata/`: `perf report -D` (raw fields,
//! callchain entries, group-read values, registers) and `perf script`
//! (ip, pid, tid, time, cpu, period, and one line per group member with
//! its delta as period).

mod common;

use common::{hex_field, perf_report_d, perfq_dump, testdata};

const CAPTURES: &[&str] = common::RECORDED;

fn skip_without_perf() -> bool {
    if !common::have_perf() {
        common::skip("perf is not installed; agreement with perf not checked");
        return true;
    }
    false
}

/// The attr period of each event (perf reports it as the period of samples
/// that do not carry PERIOD).
fn attr_periods(file: &std::path::Path) -> Vec<(String, Option<u64>)> {
    let info = common::perfq_json(&["info", "--json", file.to_str().expect("path")]);
    info["events"]
        .as_array()
        .expect("events")
        .iter()
        .map(|e| {
            (
                e["name"].as_str().unwrap_or("").to_string(),
                e["sample_period"].as_u64(),
            )
        })
        .collect()
}

#[test]
fn dump_agrees_with_perf_report_d() {
    if skip_without_perf() {
        return;
    }
    for name in CAPTURES {
        let file = testdata(name);
        let (perf, _) = perf_report_d(&file).unwrap_or_else(|| panic!("perf report -D {name}"));
        let ours = perfq_dump(&file);
        let periods = attr_periods(&file);
        assert_eq!(ours.len(), perf.len(), "{name}: sample count");
        assert!(!ours.is_empty(), "{name}: no samples");
        for (i, (o, p)) in ours.iter().zip(&perf).enumerate() {
            let ctx = format!("{name} sample #{i} ({o})");
            assert_eq!(o["time"].as_u64(), p.time, "{ctx}: time");
            assert_eq!(o["pid"].as_i64(), Some(p.pid), "{ctx}: pid");
            assert_eq!(o["tid"].as_i64(), Some(p.tid), "{ctx}: tid");
            assert_eq!(o["cpu"].as_u64().map(|c| c as u32), p.cpu, "{ctx}: cpu");
            assert_eq!(hex_field(&o["ip"]), Some(p.ip), "{ctx}: ip");
            let period = o["period"].as_u64().or_else(|| {
                periods
                    .iter()
                    .find(|(n, _)| o["event"] == n.as_str())
                    .and_then(|(_, p)| *p)
            });
            assert_eq!(period, Some(p.period), "{ctx}: period");
            // Callchain: perf prints the raw entries; ours are the addresses
            // with the context of the marker before them.
            let markers: &[(u64, &str)] = &[
                (-128i64 as u64, "kernel"),
                (-512i64 as u64, "user"),
                (-32i64 as u64, "hv"),
            ];
            let mut ctxname = None;
            let mut expected = Vec::new();
            for &e in &p.chain {
                match markers.iter().find(|(m, _)| *m == e) {
                    Some((_, n)) => ctxname = Some(*n),
                    None => expected.push((e, ctxname)),
                }
            }
            let got: Vec<(u64, Option<&str>)> = o["callchain"]
                .as_array()
                .map(|a| {
                    a.iter()
                        .map(|f| {
                            (
                                hex_field(&f["addr"]).unwrap_or(u64::MAX),
                                f["context"].as_str(),
                            )
                        })
                        .collect()
                })
                .unwrap_or_default();
            assert_eq!(got, expected, "{ctx}: callchain");
            let read: Vec<(u64, u64, Option<u64>)> = o["read"]["values"]
                .as_array()
                .map(|a| {
                    a.iter()
                        .map(|v| {
                            (
                                v["id"].as_u64().unwrap_or(0),
                                v["value"].as_u64().unwrap_or(0),
                                v["lost"].as_u64(),
                            )
                        })
                        .collect()
                })
                .unwrap_or_default();
            assert_eq!(read, p.read, "{ctx}: read values");
            if let Some(abi) = &p.regs_abi {
                assert_eq!(
                    o["regs_user"]["abi"].as_u64(),
                    Some(if abi == "64-bit" { 2 } else { 1 }),
                    "{ctx}: regs abi"
                );
                let regs: Vec<u64> = o["regs_user"]["values"]
                    .as_array()
                    .expect("regs")
                    .iter()
                    .filter_map(hex_field)
                    .collect();
                assert_eq!(regs, p.regs, "{ctx}: user regs");
            }
            if let Some(size) = p.ustack_size {
                // perf reports the valid part (dyn_size) as the size.
                let st = &o["stack_user"];
                assert_eq!(
                    st["dyn_size"].as_u64().or(st["size"].as_u64()),
                    Some(size),
                    "{ctx}: user stack size"
                );
            }
        }
        println!("{name}: {} samples agree with perf report -D", ours.len());
    }
}

/// One line of `perf script -G -F event,tid,pid,time,period,ip[,cpu] --ns`.
#[derive(Debug, PartialEq, Eq)]
struct ScriptLine {
    event: String,
    pid: i64,
    tid: i64,
    cpu: Option<u32>,
    time: u64,
    period: u64,
    ip: u64,
}

fn perf_script(file: &std::path::Path, with_cpu: bool) -> Vec<ScriptLine> {
    let fields = if with_cpu {
        "event,tid,pid,time,cpu,period,ip"
    } else {
        "event,tid,pid,time,period,ip"
    };
    let out = common::perf(&[
        "script",
        "-G",
        "-i",
        file.to_str().expect("path"),
        "-F",
        fields,
        "--ns",
    ])
    .expect("perf script");
    out.lines()
        .filter(|l| !l.trim().is_empty())
        .map(|l| {
            let t: Vec<&str> = l.split_whitespace().collect();
            let (pid, tid) = t[0].split_once('/').expect("pid/tid");
            let mut i = 1;
            let cpu = if with_cpu {
                i += 1;
                Some(
                    t[1].trim_matches(|c| c == '[' || c == ']')
                        .parse()
                        .expect("cpu"),
                )
            } else {
                None
            };
            let (s, ns) = t[i].trim_end_matches(':').split_once('.').expect("time");
            ScriptLine {
                pid: pid.parse().expect("pid"),
                tid: tid.parse().expect("tid"),
                cpu,
                time: s.parse::<u64>().expect("s") * 1_000_000_000 + ns.parse::<u64>().expect("ns"),
                period: t[i + 1].parse().expect("period"),
                event: t[i + 2].trim_end_matches(':').to_string(),
                ip: u64::from_str_radix(t[i + 3], 16).expect("ip"),
            }
        })
        .collect()
}

#[test]
fn dump_agrees_with_perf_script() {
    if skip_without_perf() {
        return;
    }
    for name in CAPTURES {
        let file = testdata(name);
        let ours = perfq_dump(&file);
        let with_cpu = ours.first().is_some_and(|o| o.get("cpu").is_some());
        let perf = perf_script(&file, with_cpu);
        let periods = attr_periods(&file);
        // perf splits a group-read sample into one sample per member whose
        // delta is not 0, with the delta as period.
        let mut expected = Vec::new();
        for o in &ours {
            let base = |event: &str, period: u64| ScriptLine {
                event: event.to_string(),
                pid: o["pid"].as_i64().expect("pid"),
                tid: o["tid"].as_i64().expect("tid"),
                cpu: o["cpu"].as_u64().map(|c| c as u32),
                time: o["time"].as_u64().expect("time"),
                period,
                ip: hex_field(&o["ip"]).expect("ip"),
            };
            match o["read"]["values"].as_array() {
                Some(values) => {
                    for v in values {
                        let d = v["delta"].as_u64().expect("delta");
                        if d != 0 {
                            expected.push(base(v["event"].as_str().expect("member event"), d));
                        }
                    }
                }
                None => {
                    let event = o["event"].as_str().expect("event");
                    let period = o["period"].as_u64().or_else(|| {
                        periods
                            .iter()
                            .find(|(n, _)| n == event)
                            .and_then(|(_, p)| *p)
                    });
                    expected.push(base(event, period.expect("period")));
                }
            }
        }
        assert_eq!(expected.len(), perf.len(), "{name}: line count");
        for (i, (e, p)) in expected.iter().zip(&perf).enumerate() {
            assert_eq!(e, p, "{name}: perf script line {i}");
        }
        println!("{name}: {} perf script lines agree", perf.len());
    }
}

/// Group-read deltas summed per symbol equal `perf report --group`'s
/// per-member periods. perf names the symbol of each sample (through
/// `perf script`), so this checks the deltas, not symbolization; samples
/// perf cannot symbolize are compared as one total.
#[test]
fn group_deltas_per_symbol_agree_with_perf_report_group() {
    if skip_without_perf() {
        return;
    }
    for name in ["group.data", "group-pipe.data"] {
        let file = testdata(name);
        let path = file.to_str().expect("path");
        let report = common::perf(&[
            "report",
            "-i",
            path,
            "--group",
            "--stdio",
            "--no-children",
            "--sort",
            "sym",
            "--show-total-period",
            "-g",
            "none",
        ])
        .expect("perf report --group");
        let script = common::perf(&["script", "-G", "-i", path, "-F", "tid,time,ip,sym", "--ns"])
            .expect("perf script");
        let mut sym_of = std::collections::HashMap::new();
        for l in script.lines() {
            let t: Vec<&str> = l.split_whitespace().collect();
            // tid, time, ip, symbol (which may contain spaces)
            if t.len() < 4 {
                continue;
            }
            let (s, ns) = t[1].trim_end_matches(':').split_once('.').expect("time");
            let time =
                s.parse::<u64>().expect("s") * 1_000_000_000 + ns.parse::<u64>().expect("ns");
            sym_of
                .entry((t[0].parse::<i64>().expect("tid"), time))
                .or_insert_with(|| t[3..].join(" "));
        }
        // perf: symbol → periods per member; unresolved ("[.] 0x...") summed.
        const UNRESOLVED: &str = "<unresolved>";
        let mut perf_sums: std::collections::BTreeMap<String, Vec<u64>> = Default::default();
        let mut members = 0;
        for l in report.lines() {
            let t: Vec<&str> = l.split_whitespace().collect();
            let pct = t.iter().take_while(|x| x.ends_with('%')).count();
            if pct == 0 || t.len() < 2 * pct + 2 {
                continue;
            }
            members = pct;
            let periods: Vec<u64> = t[pct..2 * pct]
                .iter()
                .map(|x| x.parse().expect("period"))
                .collect();
            let sym = t[2 * pct + 1..].join(" ");
            let key = if sym.starts_with("0x") {
                UNRESOLVED.to_string()
            } else {
                sym
            };
            let e = perf_sums.entry(key).or_insert_with(|| vec![0; pct]);
            for (a, b) in e.iter_mut().zip(periods) {
                *a += b;
            }
        }
        assert!(members >= 2, "{name}: perf report shows a group");
        let mut ours: std::collections::BTreeMap<String, Vec<u64>> = Default::default();
        for o in perfq_dump(&file) {
            let values = o["read"]["values"].as_array().expect("group read");
            let deltas: Vec<u64> = values
                .iter()
                .map(|v| v["delta"].as_u64().expect("delta"))
                .collect();
            if deltas.iter().all(|d| *d == 0) {
                continue;
            }
            let key = (
                o["tid"].as_i64().expect("tid"),
                o["time"].as_u64().expect("time"),
            );
            let sym = sym_of
                .get(&key)
                .unwrap_or_else(|| panic!("{name}: perf script has no sample at {key:?}"));
            let sym = if sym == "[unknown]" {
                UNRESOLVED.to_string()
            } else {
                sym.clone()
            };
            let e = ours.entry(sym).or_insert_with(|| vec![0; deltas.len()]);
            for (a, b) in e.iter_mut().zip(deltas) {
                *a += b;
            }
        }
        assert_eq!(ours, perf_sums, "{name}: per-symbol group periods");
        println!(
            "{name}: {} symbols x {members} members agree with perf report --group",
            ours.len()
        );
    }
}
