//! Every preset, generated small: perfq-reader reads back every sample,
//! read value and feature exactly; perf 6.1 reads the file without
//! complaint, counts the same samples, splits each group sample into the
//! same per-member periods, and reports the demo's functions.

mod common;

use std::collections::BTreeMap;

use common::{have_perf, perf, problems, root, temp_dir, Cursor, Written};
use perfq_reader::{features::id as feat, Capture, ReadDeltas, RecordData, RecordType};
use perfq_testgen::{presets, Binary, CallTree, Preset, Workload, Writer};

const SAMPLES: u64 = 2000;

/// Writes a capture of `name` and returns it with what was written.
fn generate(name: &str) -> (std::path::PathBuf, Preset, Vec<Written>) {
    let preset = presets::get(name).expect("known preset");
    let binary = Binary::open(root().join("testdata/td-demo")).expect("demo binary");
    let workload = Workload::new(&binary, "testdata/td-demo");
    let dir = temp_dir(name);
    let path = dir.join(format!("{name}.data"));
    let mut w = Writer::create(&path, &workload.spec(&preset)).expect("create");
    let mut written = Vec::new();
    workload
        .run(&preset, &CallTree::td_demo(), SAMPLES, &mut w, |e| {
            written.push(Written::from(e))
        })
        .expect("generate");
    let summary = w.finish().expect("finish");
    assert_eq!(summary.samples, SAMPLES);
    assert_eq!(written.len() as u64, SAMPLES);
    (path, preset, written)
}

/// perfq-reader: no warnings, every header fact, event, record, sample
/// field and read value as written, and the deltas as generated.
fn check_reader(path: &std::path::Path, preset: &Preset, written: &[Written]) {
    let c = Capture::open(path).expect("perfq-reader opens it");
    assert!(c.warnings().is_empty(), "{:?}", c.warnings());
    let spec = &preset.spec;
    let m = c.meta();
    assert_eq!(m.hostname.as_deref(), Some(spec.hostname.as_str()));
    assert_eq!(m.os_release.as_deref(), Some(spec.os_release.as_str()));
    assert_eq!(m.perf_version.as_deref(), Some(spec.perf_version.as_str()));
    assert_eq!(m.arch.as_deref(), Some(spec.arch.as_str()));
    assert_eq!(m.cpu_desc, spec.cpu_desc);
    assert_eq!(m.cpuid.as_deref(), Some(spec.cpuid.as_str()));
    assert_eq!(m.nr_cpus, Some(spec.nr_cpus));
    assert_eq!(m.total_mem_kb, Some(spec.total_mem_kb));
    let mut cmdline = spec.cmdline.clone();
    *cmdline.last_mut().expect("program") = "testdata/td-demo".into();
    assert_eq!(m.cmdline.as_ref(), Some(&cmdline));
    let first = written.iter().map(|w| w.time).min();
    let last = written.iter().map(|w| w.time).max();
    assert_eq!(m.sample_time, first.zip(last));
    let binary = Binary::open(root().join("testdata/td-demo")).expect("demo binary");
    assert_eq!(m.build_ids.len(), 1);
    assert_eq!(Some(m.build_ids[0].build_id.as_slice()), binary.build_id());
    assert_eq!(m.build_ids[0].filename, "testdata/td-demo");
    assert_eq!(m.build_ids[0].pid, -1);

    // Groups and events.
    assert_eq!(m.groups.len(), spec.groups.len());
    for (g, s) in m.groups.iter().zip(&spec.groups) {
        assert_eq!(
            (g.leader as usize, g.nr_members as usize),
            (s.leader, s.len)
        );
        assert_eq!(g.name, "{anon_group}");
    }
    let events = c.events().list();
    assert_eq!(events.len(), spec.events.len());
    let mut next_id = spec.first_id;
    for (e, s) in events.iter().zip(&spec.events) {
        assert_eq!(e.name, s.name);
        assert_eq!(e.attr.type_, s.attr.type_, "{}", s.name);
        assert_eq!(e.attr.config, s.attr.config, "{}", s.name);
        assert_eq!(e.attr.size, spec.attr_size.bytes());
        assert_eq!(e.attr.sample_type.bits(), s.attr.sample_type);
        assert_eq!(e.attr.read_format.bits(), s.attr.read_format);
        assert_eq!(e.attr.flags.bits(), s.attr.flags_word());
        let period = match s.attr.sampling {
            perfq_testgen::Sampling::None => 0,
            perfq_testgen::Sampling::Period(p) | perfq_testgen::Sampling::Freq(p) => p,
        };
        assert_eq!(e.attr.sample_period_or_freq, period);
        let ids: Vec<u64> = (next_id..next_id + s.cpus.len() as u64).collect();
        assert_eq!(e.ids, ids);
        next_id += s.cpus.len() as u64;
    }

    // The features perfq-reader keeps as bytes.
    let f = |id| c.feature_data(id);
    let mut p = Cursor(f(feat::PMU_MAPPINGS).expect("PMU_MAPPINGS"));
    let n = p.u32();
    let mappings: Vec<(u32, String)> = (0..n).map(|_| (p.u32(), p.string())).collect();
    assert!(p.done());
    assert_eq!(mappings, spec.pmu_mappings);
    match &spec.cpu_pmu_caps {
        Some(caps) => {
            let mut p = Cursor(f(feat::CPU_PMU_CAPS).expect("CPU_PMU_CAPS"));
            assert_eq!(&p.caps(), caps);
            assert!(p.done());
        }
        None => assert!(f(feat::CPU_PMU_CAPS).is_none()),
    }
    match &spec.pmu_caps {
        Some(pmus) => {
            let mut p = Cursor(f(feat::PMU_CAPS).expect("PMU_CAPS"));
            let n = p.u32();
            let got: Vec<(String, Vec<(String, String)>)> = (0..n)
                .map(|_| {
                    let caps = p.caps();
                    (p.string(), caps)
                })
                .collect();
            assert!(p.done());
            assert_eq!(&got, pmus);
        }
        None => assert!(f(feat::PMU_CAPS).is_none()),
    }
    match &spec.hybrid_topology {
        Some(nodes) => {
            let mut p = Cursor(f(feat::HYBRID_TOPOLOGY).expect("HYBRID_TOPOLOGY"));
            let n = p.u32();
            let got: Vec<(String, String)> = (0..n).map(|_| (p.string(), p.string())).collect();
            assert!(p.done());
            assert_eq!(&got, nodes);
        }
        None => assert!(f(feat::HYBRID_TOPOLOGY).is_none()),
    }

    // Records, in file order.
    let mut samples = written.iter();
    let mut deltas = ReadDeltas::new();
    let mut out = Vec::new();
    let mut kinds: BTreeMap<u32, u64> = BTreeMap::new();
    let mut records = c.records();
    while let Some(r) = records.next_record().expect("valid records") {
        *kinds.entry(r.kind.0).or_default() += 1;
        let (data, _) = c.parse(&r).expect("decodes");
        match data {
            RecordData::Sample(s) => {
                let w = samples.next().expect("no more samples than written");
                assert_eq!(r.event.index().map(|i| i.0), Some(w.event));
                assert_eq!(
                    (s.ip, s.pid, s.tid, s.time, s.cpu, s.period),
                    (
                        Some(w.ip),
                        Some(w.pid),
                        Some(w.tid),
                        Some(w.time),
                        Some(w.cpu),
                        Some(w.period)
                    )
                );
                let chain: Vec<u64> = s.callchain.expect("callchain").raw.iter().collect();
                let mut want = vec![perfq_testgen::records::PERF_CONTEXT_USER];
                want.extend(&w.user_chain);
                assert_eq!(chain, want);
                let sampler = &preset.samplers[w.sampler];
                match s.read {
                    Some(read) => {
                        let got: Vec<(usize, u64, u64)> = read
                            .values()
                            .map(|v| {
                                let id = v.id.expect("ID");
                                (
                                    c.events().by_id(id).expect("known id").0,
                                    v.value,
                                    v.lost.expect("LOST"),
                                )
                            })
                            .collect();
                        let want: Vec<(usize, u64, u64)> =
                            w.reads.iter().map(|&(e, v)| (e, v, 0)).collect();
                        assert_eq!(got, want);
                        // Each member's id is its instance on this cpu.
                        for v in read.values() {
                            let e = c.events().by_id(v.id.unwrap_or(0)).expect("id").0;
                            let slot = spec.events[e]
                                .cpus
                                .iter()
                                .position(|&x| x == w.cpu)
                                .expect("cpu");
                            assert_eq!(v.id, Some(events[e].ids[slot]));
                        }
                        out.clear();
                        deltas.apply(c.events(), r.event.index().expect("event"), &s, &mut out);
                        let got: Vec<u64> = out.iter().map(|d| d.delta.expect("known")).collect();
                        assert_eq!(got, w.deltas);
                        assert_eq!(sampler.reads.len(), got.len());
                    }
                    None => assert!(sampler.reads.is_empty()),
                }
            }
            RecordData::Mmap(mm) if r.kind == RecordType::MMAP2 => {
                assert_eq!(mm.filename, "testdata/td-demo");
                match mm.file_id {
                    Some(perfq_reader::MmapFileId::BuildId(b)) => {
                        assert_eq!(Some(b), binary.build_id())
                    }
                    other => panic!("MMAP2 without build id: {other:?}"),
                }
            }
            _ => {}
        }
    }
    assert!(samples.next().is_none(), "fewer samples read than written");
    assert_eq!(deltas.unknown_ids + deltas.backwards, 0);
    let threads = 4;
    assert_eq!(kinds.get(&9), Some(&SAMPLES));
    assert_eq!(kinds.get(&1), Some(&1), "kernel MMAP");
    assert_eq!(kinds.get(&10), Some(&1), "MMAP2");
    assert_eq!(kinds.get(&3), Some(&1), "COMM");
    assert_eq!(kinds.get(&7), Some(&(threads - 1)), "FORK");
    assert_eq!(kinds.get(&4), Some(&threads), "EXIT");
    assert_eq!(records.stats().samples(), SAMPLES);
}

/// perf 6.1: `report -D` and `script` read it cleanly and agree on every
/// sample; `report --group` lists the demo's functions.
fn check_perf(test: &str, path: &std::path::Path, preset: &Preset, written: &[Written]) {
    if !have_perf(test) {
        return;
    }
    let file = path.to_str().expect("utf-8 path");
    let arch = preset.spec.arch.as_str();

    let (out, err) = perf(&["report", "-D", "-i", file]);
    assert_eq!(problems(&err, arch), Vec::<String>::new(), "perf report -D");
    let n = out
        .lines()
        .filter(|l| l.contains("PERF_RECORD_SAMPLE("))
        .count() as u64;
    assert_eq!(n, SAMPLES, "samples perf report -D sees");
    let total = out
        .lines()
        .find_map(|l| l.trim().strip_prefix("SAMPLE events:"))
        .and_then(|v| v.split_whitespace().next())
        .and_then(|v| v.parse::<u64>().ok());
    assert_eq!(total, Some(SAMPLES));

    // One line per member with a non-zero delta, as perf splits group
    // samples (deliver_sample_value drops zero periods).
    let (out, err) = perf(&["script", "-F", "tid,cpu,time,event,period", "-i", file]);
    assert_eq!(problems(&err, arch), Vec::<String>::new(), "perf script");
    let mut got: Vec<String> = out
        .lines()
        .filter(|l| !l.trim().is_empty())
        .map(|l| l.split_whitespace().collect::<Vec<_>>().join(" "))
        .collect();
    let mut want: Vec<String> = Vec::new();
    for w in written {
        for (e, d) in w.members(preset) {
            if d == 0 {
                continue;
            }
            want.push(format!(
                "{} [{:03}] {}.{:06}: {} {}:",
                w.tid,
                w.cpu,
                w.time / 1_000_000_000,
                w.time % 1_000_000_000 / 1000,
                d,
                preset.spec.events[e].name
            ));
        }
    }
    got.sort();
    want.sort();
    assert_eq!(got.len(), want.len(), "split samples perf script prints");
    assert_eq!(got, want);

    let (out, err) = perf(&["report", "--group", "--stdio", "-i", file]);
    assert_eq!(
        problems(&err, arch),
        Vec::<String>::new(),
        "perf report --group"
    );
    for f in [
        "main",
        "run",
        "parse_input",
        "hash_table_probe",
        "sort_records",
        "branchy_search",
        "checksum",
    ] {
        assert!(
            out.lines().any(|l| l.contains(&format!("[.] {f}"))),
            "perf report --group does not list {f}:\n{out}"
        );
    }
    if !preset.spec.groups.is_empty() {
        assert!(out.contains("anon group {"), "{out}");
    }
}

fn check(name: &str) {
    let (path, preset, written) = generate(name);
    check_reader(&path, &preset, &written);
    check_perf(name, &path, &preset, &written);
    let _ = std::fs::remove_dir_all(path.parent().expect("dir"));
}

macro_rules! preset_tests {
    ($($f:ident => $name:literal),* $(,)?) => {
        $(#[test] fn $f() { check($name); })*

        #[test]
        fn every_preset_has_a_test() {
            let tested = [$($name),*];
            assert_eq!(tested.as_slice(), presets::NAMES);
        }
    };
}

preset_tests! {
    icelake => "icelake",
    icelake_corrections => "icelake-corrections",
    sapphirerapids => "sapphirerapids",
    icelake_gp => "icelake-gp",
    sapphirerapids_gp => "sapphirerapids-gp",
    skylake => "skylake",
    skylake_l1 => "skylake-l1",
    skylake_l2_smt => "skylake-l2-smt",
    zen4 => "zen4",
    zen4_l2 => "zen4-l2",
    zen4_watchdog => "zen4-watchdog",
    zen4_watchdog_l2 => "zen4-watchdog-l2",
    zen4_ris => "zen4-ris",
    zen4_independent => "zen4-independent",
    zen5 => "zen5",
    zen5_l2 => "zen5-l2",
    gracemont => "gracemont",
    gracemont_l2 => "gracemont-l2",
    neoverse_v2 => "neoverse-v2",
    alderlake_hybrid => "alderlake-hybrid",
    alderlake_hybrid_gp => "alderlake-hybrid-gp",
    alderlake_hybrid_gp_l2 => "alderlake-hybrid-gp-l2",
    lunarlake_hybrid_gp => "lunarlake-hybrid-gp",
    lunarlake_hybrid_gp_l2 => "lunarlake-hybrid-gp-l2",
}

/// `testdata/topdown-spr.data` is exactly what the command in
/// `testdata/README.md` writes (the generator is deterministic), so the
/// shipped capture and the generator cannot drift apart.
#[test]
fn shipped_capture_is_what_its_command_writes() {
    let shipped = root().join("testdata/topdown-spr.data");
    let preset = presets::get("sapphirerapids").expect("preset");
    let binary = Binary::open(root().join("testdata/td-demo")).expect("demo binary");
    let workload = Workload::new(&binary, "testdata/td-demo");
    let dir = temp_dir("shipped");
    let path = dir.join("topdown-spr.data");
    workload
        .write(&path, &preset, &CallTree::td_demo(), 2600)
        .expect("generate");
    let (a, b) = (
        std::fs::read(&shipped).expect("testdata/topdown-spr.data"),
        std::fs::read(&path).expect("generated"),
    );
    assert!(a.len() <= 1 << 20, "the shipped capture stays under 1 MB");
    assert!(
        a == b,
        "testdata/topdown-spr.data differs from what its README command writes; regenerate it"
    );
    let _ = std::fs::remove_dir_all(dir);
}
