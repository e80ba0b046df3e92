//! Values given sample by sample reach the file exactly: the worked
//! example of `perfq-reader`'s `deltas.rs` (three Ice Lake samples,
//! cumulative values in two functions) read back by perfq-reader and split
//! by perf; and a mix-driven capture whose per-function top-down fractions
//! come back.

mod common;

use common::{have_perf, perf, problems, root, temp_dir, Written};
use perfq_reader::{Capture, ReadDeltas, RecordType};
use perfq_testgen::{presets, Binary, CallTree, ExplicitSample, Values, Workload, Writer};

/// The worked example with foo = parse_input, bar = checksum; members in
/// group order (slots, cycles, retiring, bad-spec, fe-bound, be-bound).
fn worked_example(cumulative: bool) -> Vec<ExplicitSample> {
    let rows: [(&str, [u64; 6]); 3] = [
        (
            "parse_input",
            [
                10_000_000, 2_000_000, 2_980_392, 980_392, 2_509_803, 3_529_411,
            ],
        ),
        (
            "checksum",
            [
                20_000_000, 4_000_000, 4_980_392, 1_480_392, 4_509_803, 9_029_411,
            ],
        ),
        (
            "parse_input",
            [
                30_000_000, 6_000_000, 7_980_392, 2_480_392, 6_509_803, 13_029_411,
            ],
        ),
    ];
    let mut prev = [0u64; 6];
    rows.iter()
        .map(|(leaf, values)| {
            let v = if cumulative {
                values.to_vec()
            } else {
                values.iter().zip(prev).map(|(a, b)| a - b).collect()
            };
            prev = *values;
            let stack = match *leaf {
                "checksum" => vec!["checksum", "parse_input", "run", "main"],
                _ => vec!["parse_input", "run", "main"],
            };
            ExplicitSample {
                sampler: 0,
                stack: stack.into_iter().map(String::from).collect(),
                thread: 0,
                values: if cumulative {
                    Values::Cumulative(v)
                } else {
                    Values::Deltas(v)
                },
            }
        })
        .collect()
}

fn write_example(path: &std::path::Path, cumulative: bool) -> Vec<Written> {
    let preset = presets::get("icelake").expect("preset");
    let binary = Binary::open(root().join("testdata/td-demo")).expect("binary");
    let workload = Workload::new(&binary, "testdata/td-demo");
    let mut w = Writer::create(path, &workload.spec(&preset)).expect("create");
    let mut written = Vec::new();
    workload
        .run_explicit(&preset, &worked_example(cumulative), &mut w, |e| {
            written.push(Written::from(e))
        })
        .expect("explicit samples");
    w.finish().expect("finish");
    written
}

#[test]
fn worked_example_11_3_reads_back_exactly() {
    let dir = temp_dir("explicit");
    let path = dir.join("icl.data");
    let written = write_example(&path, true);
    // Deltas and cumulative values describe the same file.
    let again = dir.join("icl-deltas.data");
    write_example(&again, false);
    assert_eq!(
        std::fs::read(&path).expect("read"),
        std::fs::read(&again).expect("read")
    );

    let binary = Binary::open(root().join("testdata/td-demo")).expect("binary");
    let function_of = |ip: u64| {
        let link = ip - 0x5555_5555_4000;
        binary
            .functions()
            .iter()
            .find(|f| (f.addr..f.addr + f.size).contains(&link))
            .map(|f| f.name.clone())
            .expect("ip in a function")
    };
    let c = Capture::open(&path).expect("open");
    assert!(c.warnings().is_empty(), "{:?}", c.warnings());
    let mut deltas = ReadDeltas::new();
    let mut out = Vec::new();
    // Per function: (ret, bad, fe, be) deltas summed.
    let mut per_fn: Vec<(String, [u64; 4])> = Vec::new();
    let mut records = c.records();
    while let Some(r) = records.next_record().expect("records") {
        if r.kind != RecordType::SAMPLE {
            continue;
        }
        let s = c.sample(&r).expect("sample");
        out.clear();
        deltas.apply(c.events(), r.event.index().expect("event"), &s, &mut out);
        let d: Vec<u64> = out.iter().map(|m| m.delta.expect("delta")).collect();
        let f = function_of(s.ip.expect("ip"));
        let row = match per_fn.iter_mut().find(|(n, _)| *n == f) {
            Some(r) => r,
            None => {
                per_fn.push((f, [0; 4]));
                per_fn.last_mut().expect("pushed")
            }
        };
        for i in 0..4 {
            row.1[i] += d[2 + i];
        }
    }
    assert_eq!(
        per_fn,
        vec![
            (
                "parse_input".to_string(),
                [5_980_392, 1_980_392, 4_509_803, 7_529_411]
            ),
            (
                "checksum".to_string(),
                [2_000_000, 500_000, 2_000_000, 5_500_000]
            ),
        ]
    );
    // foo's retiring is 29.9020 % of SUM4 (5,980,392 of 19,999,998).
    let foo = per_fn[0].1;
    let ret = foo[0] as f64 / foo.iter().sum::<u64>() as f64;
    assert!((ret - 0.299020).abs() < 5e-7, "{ret}");

    if have_perf("worked_example_11_3_reads_back_exactly") {
        let (out, err) = perf(&[
            "script",
            "-G",
            "-F",
            "ip,sym,event,period",
            "-i",
            path.to_str().expect("utf-8"),
        ]);
        assert!(problems(&err, "x86_64").is_empty(), "{err}");
        let lines: Vec<String> = out
            .lines()
            .filter(|l| !l.trim().is_empty())
            .map(|l| l.split_whitespace().collect::<Vec<_>>().join(" "))
            .collect();
        // Sample 2 in checksum: its deltas, each a split sample of its own.
        let s2 = &written[1];
        for (name, d) in [
            "slots",
            "cycles",
            "topdown-retiring",
            "topdown-bad-spec",
            "topdown-fe-bound",
            "topdown-be-bound",
        ]
        .iter()
        .zip(&s2.deltas)
        {
            let want = format!("{d} {name}: {:x} checksum", s2.ip);
            assert!(lines.iter().any(|l| l == &want), "no `{want}` in\n{out}");
        }
        assert_eq!(lines.len(), 18);
    }
    let _ = std::fs::remove_dir_all(dir);
}

#[test]
fn mixes_come_back_per_function() {
    // Sapphire Rapids, no jitter: each function's SUM4-normalised level 1
    // and its level-2 shares are its mix, up to PERF_METRICS quantisation.
    let preset = presets::get("sapphirerapids").expect("preset");
    let binary = Binary::open(root().join("testdata/td-demo")).expect("binary");
    let mut workload = Workload::new(&binary, "testdata/td-demo");
    workload.noise = 0.0;
    let tree = CallTree::td_demo();
    let dir = temp_dir("mixes");
    let path = dir.join("spr.data");
    let mut w = Writer::create(&path, &workload.spec(&preset)).expect("create");
    let mut sums: Vec<(String, [u64; 8])> = Vec::new();
    workload
        .run(&preset, &tree, 3000, &mut w, |e| {
            let row = match sums.iter_mut().position(|(n, _)| n == e.leaf) {
                Some(i) => &mut sums[i],
                None => {
                    sums.push((e.leaf.to_string(), [0; 8]));
                    sums.last_mut().expect("pushed")
                }
            };
            for i in 0..8 {
                row.1[i] += e.deltas[2 + i];
            }
        })
        .expect("run");
    w.finish().expect("finish");
    for (f, _, mix) in tree.expected_by_function() {
        let (_, s) = sums.iter().find(|(n, _)| *n == f).expect("sampled");
        let sum4 = (s[0] + s[1] + s[2] + s[3]) as f64;
        let frac = |i: usize| s[i] as f64 / sum4;
        let close =
            |a: f64, b: f64, what: &str| assert!((a - b).abs() < 0.005, "{f} {what}: {a} vs {b}");
        close(frac(0), mix.retiring, "retiring");
        close(frac(1), mix.bad_speculation, "bad speculation");
        close(frac(2), mix.frontend, "frontend");
        close(frac(3), mix.backend, "backend");
        // A level-2 byte is its share of the parent's byte, rounded: off
        // by at most half a unit of that byte.
        let l2 = |child: usize, parent: usize, share: f64, what: &str| {
            let got = s[child] as f64 / s[parent] as f64;
            let bound = 0.5 / (frac(parent) * 255.0) + 1e-3;
            assert!((got - share).abs() <= bound, "{f} {what}: {got} vs {share}");
        };
        l2(4, 0, mix.heavy, "heavy share");
        l2(5, 1, mix.mispredict, "mispredict share");
        l2(6, 2, mix.fetch_latency, "fetch latency share");
        l2(7, 3, mix.memory, "memory share");
    }
    let _ = std::fs::remove_dir_all(dir);
}
