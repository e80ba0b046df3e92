//! The writer's layouts the presets do not use: IDENTIFIER, single
//! (non-group) reads with enabled/running times, kernel callchains,
//! frequency sampling, inode MMAP2s, VER8 attrs. perfq-reader decodes
//! them; perf 6.1 reads the VER7 file and refuses the VER8 one for the
//! reason it gives for any perf >= 6.3 capture.

mod common;

use std::io::Cursor;

use common::{have_perf, perf, temp_dir};
use perfq_reader::{CallchainContext, Capture, RecordData, RecordType};
use perfq_testgen::attr::{flags, read_format as rf, sample_type as st};
use perfq_testgen::{
    Attr, AttrSize, Callchain, CaptureSpec, Comm, EventSpec, KernelMmap, Mmap2, MmapFile,
    SampleSpec, Sampling, Writer,
};

fn spec(size: AttrSize) -> CaptureSpec {
    let sample_type = st::IDENTIFIER
        | st::IP
        | st::TID
        | st::TIME
        | st::READ
        | st::CALLCHAIN
        | st::CPU
        | st::PERIOD;
    let event = |name: &str, config: u64, sampling| {
        let mut a = Attr::new(1, config); // software: cpu-clock, page-faults
        a.sample_type = sample_type;
        a.read_format = rf::TOTAL_TIME_ENABLED | rf::TOTAL_TIME_RUNNING | rf::ID;
        a.flags |= flags::DISABLED | flags::ENABLE_ON_EXEC;
        a.sampling = sampling;
        EventSpec {
            name: name.into(),
            attr: a,
            cpus: vec![0, 1],
        }
    };
    let mut first = event("cpu-clock", 0, Sampling::Freq(4000));
    first.attr.flags |= flags::TRACKING;
    CaptureSpec {
        attr_size: size,
        ..CaptureSpec::software(vec![first, event("page-faults", 2, Sampling::Period(100))])
    }
}

fn write(size: AttrSize) -> Vec<u8> {
    let mut w = Writer::new(Cursor::new(Vec::new()), &spec(size)).expect("writer");
    assert_eq!(w.id(1, 1), Some(10));
    w.kernel_mmap(&KernelMmap {
        addr: 0xffff_ffff_8100_0000,
        len: 0x140_0000,
        pgoff: 0xffff_ffff_8100_0000,
        filename: "[kernel.kallsyms]_text",
    })
    .expect("kernel mmap");
    w.comm(&Comm {
        pid: 5,
        tid: 5,
        name: "prog",
        exec: true,
        time: 1_000,
        cpu: 1,
    })
    .expect("comm");
    w.mmap2(&Mmap2 {
        pid: 5,
        tid: 5,
        addr: 0x40_0000,
        len: 0x1000,
        pgoff: 0,
        prot: 5,
        flags: 2,
        file: MmapFile::Inode {
            maj: 8,
            min: 1,
            ino: 99,
            ino_generation: 3,
        },
        filename: "/bin/prog",
        time: 1_500,
        cpu: 1,
    })
    .expect("mmap2");
    for (i, event) in [(0u64, 0usize), (1, 1), (2, 0)] {
        let kernel = [0xffff_ffff_8100_1234u64, 0xffff_ffff_8100_5678];
        w.sample(&SampleSpec {
            event,
            ip: kernel[0],
            pid: 5,
            tid: 5,
            time: 2_000 + i * 1_000,
            cpu: 1,
            period: 100 + i,
            callchain: Callchain {
                kernel: &kernel,
                user: &[0x40_0100, 0x40_0200],
            },
            reads: &[(event, 1000 * (i + 1))],
        })
        .expect("sample");
    }
    // A group read is refused for an event that is in no group.
    let bad = w.sample(&SampleSpec {
        event: 0,
        ip: 1,
        pid: 5,
        tid: 5,
        time: 9_000,
        cpu: 1,
        period: 1,
        callchain: Callchain::default(),
        reads: &[(0, 1), (1, 2)],
    });
    assert!(bad.is_err());
    let (out, summary) = w.finish_into().expect("finish");
    assert_eq!(summary.samples, 3);
    assert_eq!(summary.samples_per_event, vec![2, 1]);
    out.into_inner()
}

#[test]
fn rarer_layouts_read_back() {
    for size in [AttrSize::Ver7, AttrSize::Ver8] {
        let c = Capture::from_bytes(write(size)).expect("opens");
        assert!(c.warnings().is_empty(), "{:?}", c.warnings());
        let ev = c.events().list();
        assert_eq!(ev[0].attr.size, size.bytes());
        assert!(ev[0].attr.is_freq());
        assert_eq!(ev[0].attr.sample_period_or_freq, 4000);
        assert_eq!(ev[1].ids, vec![9, 10]);
        let mut records = c.records();
        let mut n = 0;
        while let Some(r) = records.next_record().expect("records") {
            let (data, sid) = c.parse(&r).expect("decodes");
            match data {
                RecordData::Sample(s) => {
                    let want_event = [0usize, 1, 0][n];
                    assert_eq!(r.event.index().map(|i| i.0), Some(want_event));
                    assert_eq!(s.identifier, Some([8, 10, 8][n]));
                    assert_eq!(s.period, Some(100 + n as u64));
                    let read = s.read.expect("read");
                    assert!(!read.is_group());
                    assert_eq!(read.time_enabled, Some(1_000 + 1_000 * n as u64));
                    assert_eq!(read.time_running, read.time_enabled);
                    let v: Vec<_> = read.values().collect();
                    assert_eq!(v.len(), 1);
                    assert_eq!(
                        (v[0].value, v[0].id, v[0].lost),
                        (1000 * (n as u64 + 1), s.identifier, None)
                    );
                    let frames: Vec<_> = s
                        .callchain
                        .expect("callchain")
                        .frames()
                        .map(|f| (f.addr, f.context))
                        .collect();
                    let (k, u) = (Some(CallchainContext::Kernel), Some(CallchainContext::User));
                    assert_eq!(
                        frames,
                        vec![
                            (0xffff_ffff_8100_1234, k),
                            (0xffff_ffff_8100_5678, k),
                            (0x40_0100, u),
                            (0x40_0200, u)
                        ]
                    );
                    assert_eq!(s.cpu_mode(), perfq_reader::misc::KERNEL);
                    n += 1;
                }
                RecordData::Mmap(m) if r.kind == RecordType::MMAP => {
                    assert_eq!(
                        (m.pid, m.filename.as_str()),
                        (u32::MAX, "[kernel.kallsyms]_text")
                    );
                    // perf's synthesized records carry a zeroed trailer:
                    // id 0 names no event.
                    assert_eq!(r.event, perfq_reader::EventRef::UnknownId(0));
                }
                RecordData::Mmap(m) => {
                    assert_eq!(m.filename, "/bin/prog");
                    assert_eq!(
                        m.file_id,
                        Some(perfq_reader::MmapFileId::Inode {
                            maj: 8,
                            min: 1,
                            ino: 99,
                            ino_generation: 3
                        })
                    );
                    let sid = sid.expect("trailer");
                    assert_eq!((sid.time, sid.cpu, sid.id), (Some(1_500), Some(1), Some(8)));
                }
                RecordData::Comm(cm) => {
                    assert!(cm.is_exec);
                    assert_eq!(cm.comm, "prog");
                }
                _ => assert_eq!(r.kind, RecordType::FINISHED_ROUND),
            }
        }
        assert_eq!(n, 3);
    }
}

#[test]
fn perf_reads_ver7_and_names_the_abi_of_ver8() {
    if !have_perf("perf_reads_ver7_and_names_the_abi_of_ver8") {
        return;
    }
    let dir = temp_dir("writer");
    let v7 = dir.join("v7.data");
    std::fs::write(&v7, write(AttrSize::Ver7)).expect("write");
    let (out, err) = perf(&["report", "-D", "-i", v7.to_str().expect("utf-8")]);
    assert!(err.trim().is_empty(), "{err}");
    assert_eq!(out.matches("PERF_RECORD_SAMPLE(").count(), 3);
    assert!(
        out.contains("PERF_RECORD_MMAP2 5/5: [0x400000(0x1000) @ 0 08:01 99 3]: r-xp /bin/prog"),
        "{out}"
    );
    // perf 6.1 knows attrs up to VER7 (128 bytes) and stops at a larger one.
    let v8 = dir.join("v8.data");
    std::fs::write(&v8, write(AttrSize::Ver8)).expect("write");
    let o = std::process::Command::new("perf")
        .args(["report", "-v", "-D", "-i", v8.to_str().expect("utf-8")])
        .output()
        .expect("perf");
    let err = String::from_utf8_lossy(&o.stderr);
    let version = String::from_utf8_lossy(
        &std::process::Command::new("perf")
            .arg("--version")
            .output()
            .expect("perf")
            .stdout,
    )
    .into_owned();
    if version.contains(" 6.1.") {
        assert!(
            err.contains("file uses a more recent and unsupported ABI (8 bytes extra)"),
            "{err}"
        );
    }
    let _ = std::fs::remove_dir_all(dir);
}
