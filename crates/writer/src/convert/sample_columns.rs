//! The samples table's row group as it fills: a typed vector per column
//! ([`columns`](crate::convert::columns)), in [`SAMPLES`]' order.
//! Columns the capture never fills (addr, weight, data_src, m0..m15
//! without group reads, ...) cost nothing per row.

use arrow_array::types::{Int32Type, UInt16Type, UInt32Type, UInt64Type, UInt8Type};
use arrow_array::ArrayRef;

use crate::convert::columns::{Full, Group, Sparse};
use crate::convert::samples::Fields;
use crate::convert::schema::{MEMBER_COLUMNS, SAMPLES};

/// The row group being filled.
pub(crate) struct SampleColumns {
    rows: usize,
    sample_id: Full<UInt64Type>,
    time: Sparse<UInt64Type>,
    pid: Sparse<Int32Type>,
    tid: Sparse<Int32Type>,
    cpu: Sparse<UInt32Type>,
    event_id: Full<UInt32Type>,
    cpumode: Full<UInt8Type>,
    period: Full<UInt64Type>,
    stack_id: Sparse<UInt32Type>,
    leaf_frame_id: Sparse<UInt32Type>,
    ip: Sparse<UInt64Type>,
    addr: Sparse<UInt64Type>,
    weight: Sparse<UInt64Type>,
    weight2: Sparse<UInt16Type>,
    weight3: Sparse<UInt16Type>,
    data_src: Sparse<UInt64Type>,
    phys_addr: Sparse<UInt64Type>,
    cgroup: Sparse<UInt64Type>,
    transaction: Sparse<UInt64Type>,
    /// m0..m15.
    members: [Sparse<UInt64Type>; MEMBER_COLUMNS],
}

impl SampleColumns {
    pub(crate) fn new() -> SampleColumns {
        SampleColumns {
            rows: 0,
            sample_id: Full::new(),
            time: Sparse::new(),
            pid: Sparse::new(),
            tid: Sparse::new(),
            cpu: Sparse::new(),
            event_id: Full::new(),
            cpumode: Full::new(),
            period: Full::new(),
            stack_id: Sparse::new(),
            leaf_frame_id: Sparse::new(),
            ip: Sparse::new(),
            addr: Sparse::new(),
            weight: Sparse::new(),
            weight2: Sparse::new(),
            weight3: Sparse::new(),
            data_src: Sparse::new(),
            phys_addr: Sparse::new(),
            cgroup: Sparse::new(),
            transaction: Sparse::new(),
            members: std::array::from_fn(|_| Sparse::new()),
        }
    }

    /// Appends the row of a sample with fields `r`, stack `stack_id` and
    /// group-read deltas (`m0..`) `members` (the columns past them are
    /// null).
    pub(crate) fn push(&mut self, r: &Fields, stack_id: Option<u32>, members: &[Option<u64>]) {
        // Pids and thread ids are perf's `int` fields.
        let i32_of = |v: Option<u32>| v.map(|v| v as i32);
        let row = self.rows;
        self.sample_id.push(r.sample_id);
        self.time.put(row, r.time);
        self.pid.put(row, i32_of(r.pid));
        self.tid.put(row, i32_of(r.tid));
        self.cpu.put(row, r.cpu);
        self.event_id.push(r.event);
        self.cpumode.push(r.cpumode);
        self.period.push(r.period);
        self.stack_id.put(row, stack_id);
        self.leaf_frame_id.put(row, r.leaf_frame);
        self.ip.put(row, r.ip);
        self.addr.put(row, r.addr);
        self.weight.put(row, r.weight);
        self.weight2.put(row, r.weight2);
        self.weight3.put(row, r.weight3);
        self.data_src.put(row, r.data_src);
        self.phys_addr.put(row, r.phys_addr);
        self.cgroup.put(row, r.cgroup);
        self.transaction.put(row, r.transaction);
        for (column, &v) in self.members.iter_mut().zip(members) {
            column.put(row, v);
        }
        self.rows += 1;
    }
}

impl Group for SampleColumns {
    fn rows(&self) -> usize {
        self.rows
    }

    /// The columns in [`SAMPLES`]' order.
    fn finish(&mut self) -> Vec<ArrayRef> {
        let rows = std::mem::take(&mut self.rows);
        let mut columns = vec![
            self.sample_id.finish(),
            self.time.finish(rows),
            self.pid.finish(rows),
            self.tid.finish(rows),
            self.cpu.finish(rows),
            self.event_id.finish(),
            self.cpumode.finish(),
            self.period.finish(),
            self.stack_id.finish(rows),
            self.leaf_frame_id.finish(rows),
            self.ip.finish(rows),
            self.addr.finish(rows),
            self.weight.finish(rows),
            self.weight2.finish(rows),
            self.weight3.finish(rows),
            self.data_src.finish(rows),
            self.phys_addr.finish(rows),
            self.cgroup.finish(rows),
            self.transaction.finish(rows),
        ];
        columns.extend(self.members.iter_mut().map(|m| m.finish(rows)));
        debug_assert_eq!(columns.len(), SAMPLES.len());
        columns
    }
}
