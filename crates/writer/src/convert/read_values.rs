//! The read_values table's row group as it fills: a row per value of a
//! sample's group read, and the sample's own `m0..m15` columns placed by
//! each value's member position.
//!
//! A top-down capture reads a group of about ten counters with every
//! sample: ten rows here per sample, the most rows of any table. They are
//! written on the samples thread, beside the sample's row, so that the
//! reading thread only hands the values over.

use arrow_array::types::{UInt32Type, UInt64Type};
use arrow_array::ArrayRef;
use perfq_reader::{Events, MemberDelta};

use crate::convert::columns::{Full, Group, Sparse};
use crate::convert::meta::members;
use crate::convert::schema::{MEMBER_COLUMNS, READ_VALUES};
use crate::table::ROWS_PER_GROUP;

/// Where each event's value goes among a sample's `m0..m15`: its
/// position in its group's read (`events.member`).
pub(crate) struct MemberPositions(Vec<u32>);

impl MemberPositions {
    pub(crate) fn of(events: &Events) -> MemberPositions {
        MemberPositions(members(events))
    }

    /// Places a sample's deltas by their event's member position; returns
    /// how many of `out`'s leading entries to write (the rest are null).
    /// Unknown ids and positions past the columns are left out: they are
    /// in read_values only.
    pub(crate) fn place(
        &self,
        members: &[ReadValue],
        out: &mut [Option<u64>; MEMBER_COLUMNS],
    ) -> usize {
        let mut n = 0;
        for m in members {
            let (Some(ev), Some(delta)) = (m.event(), m.delta()) else {
                continue;
            };
            let Some(&pos) = self.0.get(ev as usize) else {
                continue;
            };
            // Two values of one position (an event read twice) keep the
            // first, as ids keep their first event.
            if let Some(slot @ None) = out.get_mut(pos as usize) {
                *slot = Some(delta);
                n = n.max(pos as usize + 1);
            }
        }
        n
    }
}

/// A value of a sample's group read on its way to the samples thread: a
/// [`MemberDelta`] in 40 bytes rather than 64. A top-down capture reads
/// about ten a sample, each copied into the batch and read back on the
/// other thread.
#[derive(Clone, Copy, Debug, PartialEq)]
pub(crate) struct ReadValue {
    id: u64,
    value: u64,
    delta: u64,
    lost: u64,
    event: u32,
    /// Which of `event`, `delta` and `lost` there are ([`HAS_EVENT`]...).
    has: u8,
}

const HAS_EVENT: u8 = 1;
const HAS_DELTA: u8 = 2;
const HAS_LOST: u8 = 4;

impl ReadValue {
    #[inline]
    pub(crate) fn of(m: &MemberDelta) -> ReadValue {
        // An event past u32 has no event_id (it could not be one).
        let event = m.event.and_then(|e| u32::try_from(e.0).ok());
        let flag = |present: bool, bit: u8| if present { bit } else { 0 };
        ReadValue {
            id: m.id,
            value: m.value,
            delta: m.delta.unwrap_or(0),
            lost: m.lost.unwrap_or(0),
            event: event.unwrap_or(0),
            has: flag(event.is_some(), HAS_EVENT)
                | flag(m.delta.is_some(), HAS_DELTA)
                | flag(m.lost.is_some(), HAS_LOST),
        }
    }

    #[inline]
    fn event(&self) -> Option<u32> {
        (self.has & HAS_EVENT != 0).then_some(self.event)
    }

    #[inline]
    fn delta(&self) -> Option<u64> {
        (self.has & HAS_DELTA != 0).then_some(self.delta)
    }

    #[inline]
    fn lost(&self) -> Option<u64> {
        (self.has & HAS_LOST != 0).then_some(self.lost)
    }
}

/// The read_values row group being filled.
pub(crate) struct ReadValueColumns {
    rows: usize,
    sample_id: Full<UInt64Type>,
    event_id: Sparse<UInt32Type>,
    id: Full<UInt64Type>,
    value: Full<UInt64Type>,
    delta: Sparse<UInt64Type>,
    lost: Sparse<UInt64Type>,
}

impl ReadValueColumns {
    pub(crate) fn new() -> ReadValueColumns {
        ReadValueColumns {
            rows: 0,
            sample_id: Full::new(),
            event_id: Sparse::new(),
            id: Full::new(),
            value: Full::new(),
            delta: Sparse::new(),
            lost: Sparse::new(),
        }
    }

    /// Appends the rows of sample `sample_id`'s values `reads`, as many
    /// as the row group has room for; returns how many.
    ///
    /// A top-down sample reads about ten values: the columns are extended
    /// a sample at a time, each in a loop of its own, rather than six
    /// pushes a value.
    #[inline]
    pub(crate) fn extend(&mut self, sample_id: u64, reads: &[ReadValue]) -> usize {
        let room = ROWS_PER_GROUP.saturating_sub(self.rows).max(1);
        let reads = reads.get(..room).unwrap_or(reads);
        let row = self.rows;
        self.sample_id.extend(reads.iter().map(|_| sample_id));
        self.event_id
            .extend(row, reads.iter().map(ReadValue::event));
        self.id.extend(reads.iter().map(|m| m.id));
        self.value.extend(reads.iter().map(|m| m.value));
        self.delta.extend(row, reads.iter().map(ReadValue::delta));
        self.lost.extend(row, reads.iter().map(ReadValue::lost));
        self.rows += reads.len();
        reads.len()
    }
}

impl Group for ReadValueColumns {
    fn rows(&self) -> usize {
        self.rows
    }

    /// The columns in [`READ_VALUES`]' order.
    fn finish(&mut self) -> Vec<ArrayRef> {
        let rows = std::mem::take(&mut self.rows);
        let columns = vec![
            self.sample_id.finish(),
            self.event_id.finish(rows),
            self.id.finish(),
            self.value.finish(),
            self.delta.finish(rows),
            self.lost.finish(rows),
        ];
        debug_assert_eq!(columns.len(), READ_VALUES.len());
        columns
    }
}

#[cfg(test)]
mod tests {
    use perfq_reader::EventIndex;

    use super::*;

    /// A value keeps what it had and what it had not: each of event,
    /// delta and lost present or absent, zero where present.
    #[test]
    fn read_values_keep_what_is_absent() {
        for bits in 0..8u8 {
            let m = MemberDelta {
                event: (bits & 1 != 0).then_some(EventIndex(3)),
                id: 77,
                value: u64::MAX,
                delta: (bits & 2 != 0).then_some(0),
                lost: (bits & 4 != 0).then_some(5),
            };
            let r = ReadValue::of(&m);
            assert_eq!((r.id, r.value), (m.id, m.value));
            assert_eq!(r.event(), m.event.map(|e| e.0 as u32));
            assert_eq!((r.delta(), r.lost()), (m.delta, m.lost));
        }
        let far = MemberDelta {
            event: Some(EventIndex(usize::MAX)),
            id: 1,
            value: 2,
            delta: Some(3),
            lost: None,
        };
        assert_eq!(ReadValue::of(&far).event(), None, "no event_id past u32");
    }
}
