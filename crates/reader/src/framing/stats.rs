//! What a pass over the records counted: records by type (top level and
//! inside compressed records), samples by event, lost records and samples.

use std::collections::BTreeMap;

use crate::endian::Endian;
use crate::events::EventRef;
use crate::record_type::RecordType;

/// Counts of one record type.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct TypeCount {
    /// Records at the top level of the data section.
    pub top: u64,
    /// Records found inside compressed records.
    pub compressed: u64,
}

impl TypeCount {
    /// Both together.
    pub fn total(&self) -> u64 {
        self.top + self.compressed
    }
}

/// What a pass over the records saw.
#[derive(Clone, Debug, Default)]
pub struct Stats {
    /// Counts of types below 128, indexed by type (the hot path: no
    /// lookup structure per record).
    small: Vec<TypeCount>,
    /// Counts of other types.
    large: BTreeMap<RecordType, TypeCount>,
    /// Samples per event index.
    pub samples_per_event: Vec<u64>,
    /// Samples whose id matches no event.
    pub samples_unknown_id: u64,
    /// Samples whose event could not be told (no id in a multi-event capture).
    pub samples_no_event: u64,
    /// Sum of `LOST.lost`: records the kernel dropped.
    pub lost_records: u64,
    /// Sum of `LOST_SAMPLES.lost`.
    pub lost_samples: u64,
    /// Bytes produced by decompression.
    pub decompressed_bytes: u64,
    /// Bytes of the data section walked.
    pub data_bytes: u64,
    /// First and last sample time.
    pub sample_time: Option<(u64, u64)>,
}

impl Stats {
    /// Nothing counted yet, for a capture of `events` events.
    pub(super) fn for_events(events: usize) -> Stats {
        Stats {
            samples_per_event: vec![0; events],
            ..Stats::default()
        }
    }

    /// Total `SAMPLE` records, inside compressed records too.
    pub fn samples(&self) -> u64 {
        self.count(RecordType::SAMPLE).total()
    }

    /// The counts of one record type.
    pub fn count(&self, t: RecordType) -> TypeCount {
        match self.small.get(t.0 as usize) {
            Some(c) => *c,
            None => self.large.get(&t).copied().unwrap_or_default(),
        }
    }

    /// Every record type seen, in type order, with its counts.
    pub fn by_type(&self) -> impl Iterator<Item = (RecordType, TypeCount)> + '_ {
        let small = self
            .small
            .iter()
            .enumerate()
            .map(|(t, c)| (RecordType(t as u32), *c));
        small
            .chain(self.large.iter().map(|(t, c)| (*t, *c)))
            .filter(|(_, c)| c.total() > 0)
    }

    /// The counts of type `t`, to add to.
    pub(super) fn entry(&mut self, t: RecordType) -> &mut TypeCount {
        if self.small.is_empty() {
            self.small = vec![TypeCount::default(); 128];
        }
        match self.small.get_mut(t.0 as usize) {
            Some(c) => c,
            None => self.large.entry(t).or_default(),
        }
    }
}

/// Per-record statistics that need the record's content.
pub(super) fn account(
    stats: &mut Stats,
    kind: RecordType,
    body: &[u8],
    event: EventRef,
    time: Option<u64>,
    e: Endian,
) {
    match kind {
        RecordType::SAMPLE => {
            match event {
                EventRef::Known(i) => {
                    if let Some(n) = stats.samples_per_event.get_mut(i.0) {
                        *n += 1;
                    }
                }
                EventRef::UnknownId(_) => stats.samples_unknown_id += 1,
                EventRef::None => stats.samples_no_event += 1,
            }
            if let Some(t) = time {
                stats.sample_time = Some(match stats.sample_time {
                    Some((a, b)) => (a.min(t), b.max(t)),
                    None => (t, t),
                });
            }
        }
        RecordType::LOST => {
            stats.lost_records = stats
                .lost_records
                .saturating_add(e.u64_at(body, 8).unwrap_or(0))
        }
        RecordType::LOST_SAMPLES => {
            stats.lost_samples = stats
                .lost_samples
                .saturating_add(e.u64_at(body, 0).unwrap_or(0))
        }
        _ => {}
    }
}
