//! From cumulative `PERF_SAMPLE_READ` values to per-sample deltas.
//!
//! Each read value is a running total since the counter was enabled. perf
//! (`deliver_sample_value` in `util/session.c`) turns it into the period of
//! one split sample per group member: `value - previous value of the same
//! id`, the previous value starting at 0. When the sampling event has
//! inherit + SAMPLE_READ + TID the kernel keeps per-thread counts, so the
//! previous value is kept per (id, tid) (perf >= 6.13). Feed samples in
//! time order (see [`crate::Capture::records_by_time`]).

use std::collections::HashMap;

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
#[derive(Clone, Debug, Default)]
pub struct ReadDeltas {
    last: HashMap<(u64, Option<u32>), u64>,
    /// Values whose id matched no event.
    pub unknown_ids: u64,
    /// Values smaller than the previous value of the same stream (the delta
    /// wrapped, as in perf; a sign of a reset counter or out-of-order input).
    pub backwards: u64,
}

impl ReadDeltas {
    /// A fresh state: every stream starts at 0.
    pub fn new() -> Self {
        Self::default()
    }

    /// Computes the deltas of `sample` (of event `sampler`), appending one
    /// entry per read value to `out`. Samples without read values add
    /// nothing.
    pub fn apply(&mut self, events: &Events, sampler: EventIndex, sample: &Sample<'_>, out: &mut Vec<MemberDelta>) {
        let Some(read) = &sample.read else { return };
        let per_thread = events.get(sampler).is_some_and(|e| e.attr.per_thread_sample_read());
        let tid = if per_thread { sample.tid } else { None };
        for v in read.values() {
            let id = v.id.unwrap_or(0);
            let event = events.by_id(id);
            let delta = match event {
                Some(_) => {
                    let last = self.last.entry((id, tid)).or_insert(0);
                    if v.value < *last {
                        self.backwards += 1;
                    }
                    let d = v.value.wrapping_sub(*last);
                    *last = v.value;
                    Some(d)
                }
                None => {
                    self.unknown_ids += 1;
                    None
                }
            };
            out.push(MemberDelta { event, id, value: v.value, delta, lost: v.lost });
        }
    }
}
