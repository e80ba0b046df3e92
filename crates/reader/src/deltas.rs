//! From cumulative `PERF_SAMPLE_READ` values to per-sample deltas.
//!
//! Each read value is a running total since the counter was enabled. perf
//! (`deliver_sample_value` in `util/session.c`) turns it into the period of
//! one split sample per group member: `value - previous value of the same
//! id`, the previous value starting at 0. When the sampling event has
//! inherit + SAMPLE_READ + TID the kernel keeps per-thread counts, so the
//! previous value is kept per (id, tid) (perf >= 6.13). Feed samples in
//! time order (see [`crate::Capture::records_by_time`]).

use rustc_hash::FxHashMap;

use crate::events::{EventIndex, Events};
use crate::sample::Sample;

/// One member's share of a sample.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct MemberDelta {
    /// The member event, or `None` when the id belongs to no event (perf
    /// counts these as unknown ids and skips them).
    pub event: Option<EventIndex>,
    /// The value's id.
    pub id: u64,
    /// The cumulative value.
    pub value: u64,
    /// The change since the previous sample of the same id (and thread):
    /// the member's period for this sample. `None` for unknown ids.
    pub delta: Option<u64>,
    /// Lost samples, when `PERF_FORMAT_LOST`.
    pub lost: Option<u64>,
}

/// Per-stream state of cumulative read values.
///
/// A stream (an id, and a thread where counts are per thread) has a slot
/// holding its last value. A group read names the same ids in the same
/// order sample after sample, so the slots and events of each group's
/// members are remembered by the group's first id: a sample's values
/// then cost no lookup each, only a comparison of their ids with the
/// remembered ones (a top-down group reads about ten values a sample).
#[derive(Clone, Debug, Default)]
pub struct ReadDeltas {
    /// The slot of each stream.
    slots: FxHashMap<(u64, Option<u32>), u32>,
    /// Each slot's last value.
    last: Vec<u64>,
    /// By (first id, thread): the members that read had, in order.
    groups: FxHashMap<(u64, Option<u32>), Vec<Member>>,
    /// Values whose id matched no event.
    pub unknown_ids: u64,
    /// Values smaller than the previous value of the same stream (the delta
    /// wrapped, as in perf; a sign of a reset counter or out-of-order input).
    pub backwards: u64,
}

/// One value of a remembered group read: its id, its event, and its
/// stream's slot (`None` when the id belongs to no event).
#[derive(Clone, Copy, Debug)]
struct Member {
    id: u64,
    event: Option<(EventIndex, u32)>,
}

impl ReadDeltas {
    /// A fresh state: every stream starts at 0.
    pub fn new() -> Self {
        Self::default()
    }

    /// Computes the deltas of `sample` (of event `sampler`), appending one
    /// entry per read value to `out`. Samples without read values add
    /// nothing.
    pub fn apply(
        &mut self,
        events: &Events,
        sampler: EventIndex,
        sample: &Sample<'_>,
        out: &mut Vec<MemberDelta>,
    ) {
        let Some(read) = &sample.read else { return };
        let per_thread = events
            .get(sampler)
            .is_some_and(|e| e.attr.per_thread_sample_read());
        let tid = if per_thread { sample.tid } else { None };
        let Some(first) = read.values().next() else {
            return;
        };
        let ReadDeltas {
            slots,
            last,
            groups,
            unknown_ids,
            backwards,
        } = self;
        let members = groups.entry((first.id.unwrap_or(0), tid)).or_default();
        let mut n = 0;
        for v in read.values() {
            let id = v.id.unwrap_or(0);
            let member = match members.get(n) {
                Some(&m) if m.id == id => m,
                // A read unlike the group's last one from here on: its
                // members are found and remembered.
                _ => {
                    let m = Member {
                        id,
                        event: events.by_id(id).map(|e| (e, slot(slots, last, id, tid))),
                    };
                    members.truncate(n);
                    members.push(m);
                    m
                }
            };
            n += 1;
            let delta = match member.event {
                Some((_, slot)) => {
                    let last = &mut last[slot as usize];
                    if v.value < *last {
                        *backwards += 1;
                    }
                    let d = v.value.wrapping_sub(*last);
                    *last = v.value;
                    Some(d)
                }
                None => {
                    *unknown_ids += 1;
                    None
                }
            };
            out.push(MemberDelta {
                event: member.event.map(|(e, _)| e),
                id,
                value: v.value,
                delta,
                lost: v.lost,
            });
        }
        members.truncate(n);
    }
}

/// The slot of stream (`id`, `tid`), made (its last value 0) if new.
fn slot(
    slots: &mut FxHashMap<(u64, Option<u32>), u32>,
    last: &mut Vec<u64>,
    id: u64,
    tid: Option<u32>,
) -> u32 {
    *slots.entry((id, tid)).or_insert_with(|| {
        last.push(0);
        // One slot per distinct id and thread of a capture's reads,
        // each 8 bytes or more of its records: fewer than 2^32.
        (last.len() - 1) as u32
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::attr::{Attr, AttrFlags, ReadFormat, SampleType};
    use crate::endian::Endian;
    use crate::events::Event;
    use crate::sample::parse_sample;

    /// Five events like an Ice Lake topdown group: slots leads, then the
    /// four level-1 metrics; ids 1..=5.
    fn topdown_events(inherit: bool) -> Events {
        let mut b = vec![0u8; 128];
        b[4..8].copy_from_slice(&128u32.to_le_bytes());
        let st = SampleType::IP | SampleType::TID | SampleType::READ;
        b[24..32].copy_from_slice(&st.bits().to_le_bytes());
        let rf = ReadFormat::ID | ReadFormat::GROUP;
        b[32..40].copy_from_slice(&rf.bits().to_le_bytes());
        let mut attr = Attr::parse(&b, Endian::Little).expect("attr");
        if inherit {
            attr.flags |= AttrFlags::INHERIT;
        }
        let names = [
            "slots",
            "topdown-retiring",
            "topdown-bad-spec",
            "topdown-fe-bound",
            "topdown-be-bound",
        ];
        let list = names
            .iter()
            .enumerate()
            .map(|(i, n)| Event {
                name: n.to_string(),
                attr: attr.clone(),
                ids: vec![i as u64 + 1],
                group_leader: Some(EventIndex(0)),
                group_name: None,
            })
            .collect();
        Events::new(list).0
    }

    fn sample_bytes(ip: u64, tid: u32, values: &[u64]) -> Vec<u8> {
        let mut w = vec![
            ip,
            (u64::from(tid) << 32) | u64::from(tid),
            values.len() as u64,
        ];
        for (i, v) in values.iter().enumerate() {
            w.push(*v);
            w.push(i as u64 + 1);
        }
        w.iter().flat_map(|x| x.to_le_bytes()).collect()
    }

    /// A worked example: three Ice Lake group reads (cumulative values) in
    /// two functions → deltas → per-function sums and level-1 shares.
    #[test]
    fn worked_example_11_3() {
        let events = topdown_events(false);
        let attr = events.get(EventIndex(0)).expect("leader").attr.clone();
        let samples: [(u64, [u64; 5]); 3] = [
            (
                0xf00,
                [10_000_000, 2_980_392, 980_392, 2_509_803, 3_529_411],
            ),
            (
                0xba5,
                [20_000_000, 4_980_392, 1_480_392, 4_509_803, 9_029_411],
            ),
            (
                0xf00,
                [30_000_000, 7_980_392, 2_480_392, 6_509_803, 13_029_411],
            ),
        ];
        let mut d = ReadDeltas::new();
        let mut per_ip: std::collections::HashMap<u64, [u64; 5]> = Default::default();
        let mut all = Vec::new();
        for (ip, values) in samples {
            let bytes = sample_bytes(ip, 7, &values);
            let s = parse_sample(&bytes, 0, &attr, Endian::Little).expect("sample");
            let mut out = Vec::new();
            d.apply(&events, EventIndex(0), &s, &mut out);
            let sums = per_ip.entry(ip).or_default();
            for (k, m) in out.iter().enumerate() {
                sums[k] += m.delta.expect("known id");
            }
            all.push(
                out.iter()
                    .map(|m| m.delta.expect("known"))
                    .collect::<Vec<_>>(),
            );
        }
        assert_eq!(
            all[1],
            [10_000_000, 2_000_000, 500_000, 2_000_000, 5_500_000]
        );
        assert_eq!(
            all[2],
            [10_000_000, 3_000_000, 1_000_000, 2_000_000, 4_000_000]
        );
        let foo = per_ip[&0xf00];
        assert_eq!(&foo[1..], &[5_980_392, 1_980_392, 4_509_803, 7_529_411]);
        let sum4: u64 = foo[1..].iter().sum();
        assert_eq!(sum4, 19_999_998);
        let pct = |x: u64| (x as f64 / sum4 as f64 * 1e6).round() / 1e4;
        assert_eq!(pct(foo[1]), 29.902);
        assert_eq!(pct(foo[3]), 22.549);
        assert_eq!(pct(foo[4]), 37.6471);
        assert_eq!(pct(foo[2]), 9.902);
        let bar = per_ip[&0xba5];
        let sum: u64 = bar[1..].iter().sum();
        assert_eq!(
            [
                bar[1] * 100 / sum,
                bar[3] * 100 / sum,
                bar[4] * 100 / sum,
                bar[2] * 100 / sum
            ],
            [20, 20, 55, 5]
        );
        assert_eq!(d.backwards, 0);
    }

    /// With inherit, each thread's values are its own running totals: the
    /// previous value is per (id, tid).
    #[test]
    fn inherit_keeps_state_per_thread() {
        let events = topdown_events(true);
        let attr = events.get(EventIndex(0)).expect("leader").attr.clone();
        assert!(attr.per_thread_sample_read());
        let mut d = ReadDeltas::new();
        let mut deltas = |tid: u32, slots: u64| {
            let bytes = sample_bytes(0x1, tid, &[slots, 0, 0, 0, 0]);
            let s = parse_sample(&bytes, 0, &attr, Endian::Little).expect("sample");
            let mut out = Vec::new();
            d.apply(&events, EventIndex(0), &s, &mut out);
            out[0].delta
        };
        assert_eq!(deltas(10, 100), Some(100));
        assert_eq!(deltas(11, 40), Some(40));
        assert_eq!(deltas(10, 150), Some(50));
        assert_eq!(deltas(11, 45), Some(5));
    }

    #[test]
    fn unknown_ids_are_counted_not_given_to_an_event() {
        let events = topdown_events(false);
        let attr = events.get(EventIndex(0)).expect("leader").attr.clone();
        let mut w: Vec<u64> = vec![0x1, 0, 1, 500, 99];
        w[1] = 3;
        let bytes: Vec<u8> = w.iter().flat_map(|x| x.to_le_bytes()).collect();
        let s = parse_sample(&bytes, 0, &attr, Endian::Little).expect("sample");
        let mut out = Vec::new();
        let mut d = ReadDeltas::new();
        d.apply(&events, EventIndex(0), &s, &mut out);
        assert_eq!(
            out,
            [MemberDelta {
                event: None,
                id: 99,
                value: 500,
                delta: None,
                lost: None
            }]
        );
        assert_eq!(d.unknown_ids, 1);
    }
}
