//! The stream on generated captures, whose every sample is known: each
//! sample once, in time order, with the group read's deltas and the
//! delivery perf makes of them; a capture cut short keeps every record
//! before the cut and says where the read stopped.

use std::collections::BTreeMap;

use std::io::Cursor;
use std::path::PathBuf;

use perfq_reader::{Capture, RawRecord, RecordData, SampleId};
use perfq_stream::{
    Flow, Interrupted, Located, Locating, Location, Sink, Stream, Tracker, Unnumbered,
};
use perfq_testgen::{presets, Binary, CallTree, Preset, Workload, Writer};

const SAMPLES: u64 = 1500;

/// The repository root: the generated captures name `testdata/td-demo`.
fn root() -> PathBuf {
    std::env::var_os("CARGO_MANIFEST_DIR")
        .map_or_else(|| PathBuf::from(env!("CARGO_MANIFEST_DIR")), PathBuf::from)
        .join("../..")
}

/// One sample as the generator wrote it.
#[derive(Debug, PartialEq, Eq)]
struct Written {
    time: u64,
    tid: u32,
    event: usize,
    period: u64,
    /// Per read member, its event and delta: what perf delivers.
    members: Vec<(usize, u64)>,
}

/// A capture of `preset`, in memory, with what was written into it.
fn generate(preset: &Preset) -> (Vec<u8>, Vec<Written>) {
    let binary = Binary::open(root().join("testdata/td-demo")).expect("demo binary");
    let workload = Workload::new(&binary, "testdata/td-demo");
    let mut w = Writer::new(Cursor::new(Vec::new()), &workload.spec(preset)).expect("writer");
    let mut written = Vec::new();
    workload
        .run(preset, &CallTree::td_demo(), SAMPLES, &mut w, |e| {
            let reads = &preset.samplers[e.sampler].reads;
            written.push(Written {
                time: e.sample.time,
                tid: e.sample.tid,
                event: e.sample.event,
                period: e.sample.period,
                members: reads
                    .iter()
                    .copied()
                    .zip(e.deltas.iter().copied())
                    .collect(),
            });
        })
        .expect("generate");
    let (out, summary) = w.finish_into().expect("finish");
    assert_eq!(summary.samples, SAMPLES);
    (out.into_inner(), written)
}

/// What the stream hands over of each sample, and its sideband records.
#[derive(Default)]
struct Seen {
    samples: Vec<Written>,
    /// (event, period) as delivered, per sample.
    delivered: Vec<Vec<(usize, u64)>>,
    sideband: u64,
}

impl Sink for Seen {
    type Key = Location;
    type Numbers = Unnumbered;
    type Error = Interrupted;

    fn sideband(
        &mut self,
        _: &Tracker,
        _: &RawRecord<'_>,
        _: &RecordData<'_>,
        _: Option<SampleId>,
    ) -> Result<(), Interrupted> {
        self.sideband += 1;
        Ok(())
    }

    fn sample(&mut self, v: &Located<'_, '_, '_>, _: &mut Unnumbered) -> Result<Flow, Interrupted> {
        let v = v.view();
        let s = v.sample();
        self.samples.push(Written {
            time: s.time.expect("time"),
            tid: s.tid.expect("tid"),
            event: v.event().0,
            period: v.period(),
            members: v
                .members()
                .iter()
                .map(|m| (m.event.expect("known id").0, m.delta.expect("delta")))
                .collect(),
        });
        self.delivered
            .push(v.delivered().map(|(e, p)| (e.0, p)).collect());
        Ok(Flow::Go)
    }
}

fn read(bytes: Vec<u8>) -> (Seen, perfq_stream::Read) {
    let capture = Capture::from_bytes(bytes).expect("opens");
    let mut stream = Stream::new(&capture);
    let mut seen = Seen::default();
    let mut last = (0, 0);
    stream
        .run(
            &mut Locating::default(),
            &mut Unnumbered,
            &mut seen,
            &mut |done, of| last = (done, of),
        )
        .expect("infallible");
    assert_eq!(last.0, last.1, "the last progress call says the end");
    (seen, stream.finish())
}

/// Presets of each kind of read: groups read by one sampler, events
/// sampled each on their own, hybrid machines with two PMUs.
const PRESETS: &[&str] = &[
    "sapphirerapids",
    "zen4-independent",
    "alderlake-hybrid",
    "neoverse-v2",
];

#[test]
fn every_sample_once_in_time_order_with_its_group_deltas() {
    for name in PRESETS {
        let preset = presets::get(name).expect("preset");
        let (bytes, mut written) = generate(&preset);
        let (seen, read) = read(bytes);
        assert_eq!(read.damage.summary(), None, "{name}");
        assert!(seen.sideband > 0, "{name}: the process's records");
        assert!(
            seen.samples.windows(2).all(|w| w[0].time <= w[1].time),
            "{name}: in time order"
        );
        // The generator writes threads in turn; the stream orders by time.
        written.sort_by_key(|w| (w.time, w.tid));
        let mut got = seen.samples;
        got.sort_by_key(|w| (w.time, w.tid));
        assert_eq!(got, written, "{name}: samples, periods and deltas");
    }
}

#[test]
fn a_group_read_is_delivered_once_per_member_that_moved() {
    let preset = presets::get("sapphirerapids").expect("preset");
    let (bytes, _) = generate(&preset);
    let (seen, _) = read(bytes);
    let mut by_event: BTreeMap<usize, u64> = BTreeMap::new();
    for (s, delivered) in seen.samples.iter().zip(&seen.delivered) {
        let moved: Vec<(usize, u64)> = s.members.iter().copied().filter(|m| m.1 > 0).collect();
        assert_eq!(delivered, &moved, "a sample at {}", s.time);
        for (e, p) in delivered {
            *by_event.entry(*e).or_default() += p;
        }
    }
    assert!(
        by_event.len() > 1,
        "several members delivered: {by_event:?}"
    );
}

/// The samples of `whole` (time, tid) in records that end at or before
/// `offset`, in file order, and the offset of the first record past it.
fn samples_before(whole: &Capture, offset: u64) -> (Vec<(u64, u32)>, u64) {
    let mut before = Vec::new();
    let mut records = whole.records();
    while let Some(r) = records.next_record().expect("whole capture") {
        let end = r.offset.0 + 8 + r.body.len() as u64; // header and body
        if end > offset {
            return (before, r.offset.0);
        }
        if let (RecordData::Sample(s), _) = whole.parse(&r).expect("decodes") {
            before.push((s.time.expect("time"), s.tid.expect("tid")));
        }
    }
    (before, whole.data_range().end)
}

fn sorted_times(seen: &Seen) -> Vec<(u64, u32)> {
    let mut v: Vec<_> = seen.samples.iter().map(|s| (s.time, s.tid)).collect();
    v.sort();
    v
}

#[test]
fn a_capture_cut_short_keeps_every_record_before_the_cut_and_says_so() {
    let preset = presets::get("sapphirerapids").expect("preset");
    let (bytes, _) = generate(&preset);
    let whole = Capture::from_bytes(bytes.clone()).expect("opens");
    // Two thirds into the records: inside some record, past many samples.
    let data = whole.data_range();
    let cut = data.start + (data.end - data.start) * 2 / 3 + 3;
    let (mut before, _) = samples_before(&whole, cut);
    let (part, read) = read(bytes[..cut as usize].to_vec());
    // A cut file is what a killed perf leaves: said, and not damage.
    let said: Vec<String> = read.warnings.iter().map(|w| w.to_string()).collect();
    assert!(
        said.iter().any(|w| w.contains("the file is cut")),
        "{said:?}"
    );
    assert!(
        said.iter()
            .any(|w| w.contains("partial record was dropped")),
        "{said:?}"
    );
    assert_eq!(read.damage.summary(), None);
    before.sort();
    assert!(!before.is_empty());
    assert_eq!(
        sorted_times(&part),
        before,
        "every sample before the cut, and only those"
    );
}

#[test]
fn a_broken_record_stops_the_read_there_and_keeps_what_came_before() {
    let preset = presets::get("sapphirerapids").expect("preset");
    let (mut bytes, _) = generate(&preset);
    let whole = Capture::from_bytes(bytes.clone()).expect("opens");
    let data = whole.data_range();
    let (mut before, at) = samples_before(&whole, (data.start + data.end) / 2);
    // The record's size (perf_event_header: u32 type, u16 misc, u16
    // size) made smaller than its header: its framing is broken.
    bytes[at as usize + 6..at as usize + 8].copy_from_slice(&3u16.to_le_bytes());
    let (part, read) = read(bytes);
    let lost = read.damage.summary().expect("the damage is said");
    assert!(lost.contains(&format!("at file offset {at:#x}")), "{lost}");
    assert!(lost.contains("reading stopped there"), "{lost}");
    before.sort();
    assert_eq!(
        sorted_times(&part),
        before,
        "every sample before the broken record"
    );
}
