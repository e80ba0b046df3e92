//! The per-sample tables, streamed in time order: samples, group-read
//! values with their deltas, branch-stack entries and raw data.

use perfq_reader::{EventIndex, Events, MemberDelta, ReadDeltas, Sample};
use rustc_hash::FxHashSet;

use crate::convert::schema::{BRANCHES, RAW, READ_VALUES, SAMPLES};
use crate::{CaptureWriter, Cell, Error, Table};

pub(crate) struct SampleTables {
    samples: Table,
    read_values: Table,
    branches: Table,
    raw: Table,
    deltas: ReadDeltas,
    members: Vec<MemberDelta>,
    /// Distinct data_src values, for the data_src table.
    pub(crate) data_src: FxHashSet<u64>,
    /// Rows written to the samples table.
    pub(crate) count: u64,
}

/// What the caller worked out for one sample.
pub(crate) struct SampleRow {
    pub(crate) event: EventIndex,
    pub(crate) period: u64,
    pub(crate) stack_id: Option<u32>,
    pub(crate) leaf_frame_id: Option<u32>,
}

impl SampleTables {
    pub(crate) fn create(w: &CaptureWriter) -> Result<SampleTables, Error> {
        Ok(SampleTables {
            samples: w.table("samples", SAMPLES)?,
            read_values: w.table("read_values", READ_VALUES)?,
            branches: w.table("branches", BRANCHES)?,
            raw: w.table("raw", RAW)?,
            deltas: ReadDeltas::new(),
            members: Vec::new(),
            data_src: FxHashSet::default(),
            count: 0,
        })
    }

    /// Writes sample `s`; `branch_frame` gives the frame id of a branch
    /// endpoint address.
    pub(crate) fn push(
        &mut self,
        events: &Events,
        s: &Sample<'_>,
        row: SampleRow,
        mut branch_frame: impl FnMut(u64) -> u32,
    ) -> Result<(), Error> {
        let sample_id = self.count;
        let u = |v: Option<u64>| v.map_or(Cell::Null, Cell::U);
        let i = |v: Option<u32>| v.map_or(Cell::Null, |v| Cell::I(i64::from(v as i32)));
        self.samples.push(&[
            Cell::U(sample_id),
            u(s.time),
            i(s.pid),
            i(s.tid),
            u(s.cpu.map(u64::from)),
            Cell::U(row.event.0 as u64),
            Cell::U(u64::from(s.cpu_mode())),
            Cell::U(row.period),
            u(row.stack_id.map(u64::from)),
            u(row.leaf_frame_id.map(u64::from)),
            u(s.ip),
            u(s.addr),
            u(s.weight_value()),
            u(s.weight_var2().map(u64::from)),
            u(s.weight_var3().map(u64::from)),
            u(s.data_src),
            u(s.phys_addr),
            u(s.cgroup),
            u(s.transaction),
        ])?;
        if let Some(v) = s.data_src {
            self.data_src.insert(v);
        }
        if s.read.is_some() {
            self.members.clear();
            self.deltas.apply(events, row.event, s, &mut self.members);
            for m in &self.members {
                self.read_values.push(&[
                    Cell::U(sample_id),
                    m.event.map_or(Cell::Null, |e| Cell::U(e.0 as u64)),
                    Cell::U(m.id),
                    Cell::U(m.value),
                    u(m.delta),
                    u(m.lost),
                ])?;
            }
        }
        if let Some(b) = &s.branch_stack {
            for (index, e) in b.entries().enumerate() {
                let f = e.flags();
                let counter = b.counters.and_then(|c| c.get(index));
                self.branches.push(&[
                    Cell::U(sample_id),
                    Cell::U(index as u64),
                    Cell::U(e.from),
                    Cell::U(e.to),
                    Cell::U(u64::from(branch_frame(e.from))),
                    Cell::U(u64::from(branch_frame(e.to))),
                    Cell::U(u64::from(f.mispred)),
                    Cell::U(u64::from(f.predicted)),
                    Cell::U(u64::from(f.in_tx)),
                    Cell::U(u64::from(f.abort)),
                    Cell::U(u64::from(f.cycles)),
                    Cell::U(u64::from(f.type_)),
                    Cell::U(u64::from(f.spec)),
                    Cell::U(u64::from(f.new_type)),
                    Cell::U(u64::from(f.priv_)),
                    u(counter),
                ])?;
            }
        }
        if let Some(raw) = s.raw {
            self.raw.push(&[Cell::U(sample_id), Cell::B(raw)])?;
        }
        self.count += 1;
        Ok(())
    }

    pub(crate) fn finish(self) -> Result<(), Error> {
        self.samples.finish()?;
        self.read_values.finish()?;
        self.branches.finish()?;
        self.raw.finish()
    }
}
