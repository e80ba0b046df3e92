//! The samples table's row group as it fills: a typed vector per column,
//! in [`SAMPLES`]' order.
//!
//! A system-wide capture has many samples of 35 columns each;
//! [`Table::row`]'s call per cell, which finds the column's builder and
//! matches its kind, was a large part of the samples thread's
//! instructions. Columns the capture never fills (addr, weight, data_src,
//! m0..m15 without group reads, ...) cost nothing per row.
//!
//! [`Table::row`]: crate::Table::row

use std::sync::Arc;

use arrow_array::types::{
    ArrowPrimitiveType, Int32Type, UInt16Type, UInt32Type, UInt64Type, UInt8Type,
};
use arrow_array::{ArrayRef, PrimitiveArray};
use arrow_buffer::{BooleanBufferBuilder, NullBuffer, ScalarBuffer};

use crate::convert::samples::Fields;
use crate::convert::schema::{MEMBER_COLUMNS, SAMPLES};
use crate::table::{null_column, ColumnType, ROWS_PER_GROUP};

/// A column every row fills: its values, in a plain vector (Arrow's
/// builder costs a few dozen instructions a value, the vector a few;
/// the samples thread fills ~20 columns a sample).
struct Full<T: ArrowPrimitiveType>(Vec<T::Native>);

impl<T: ArrowPrimitiveType> Full<T> {
    fn new() -> Self {
        Full(Vec::with_capacity(ROWS_PER_GROUP))
    }

    #[inline]
    fn push(&mut self, v: T::Native) {
        self.0.push(v);
    }

    /// The column; the next group starts as large at once.
    fn finish(&mut self) -> ArrayRef {
        let values = std::mem::replace(&mut self.0, Vec::with_capacity(ROWS_PER_GROUP));
        Arc::new(PrimitiveArray::<T>::new(ScalarBuffer::from(values), None))
    }
}

/// The column type of an Arrow type, for the shared all-null columns.
trait Typed: ArrowPrimitiveType {
    const COLUMN: ColumnType;
}

impl Typed for UInt16Type {
    const COLUMN: ColumnType = ColumnType::U16;
}

impl Typed for UInt32Type {
    const COLUMN: ColumnType = ColumnType::U32;
}

impl Typed for UInt64Type {
    const COLUMN: ColumnType = ColumnType::U64;
}

impl Typed for Int32Type {
    const COLUMN: ColumnType = ColumnType::I32;
}

/// A column rows may leave null: a row without a value costs a test.
/// Values go into a plain vector, made at the first value; the rows
/// before a value that have none get a default value and a null bit
/// then (and those after the last value at the end of the group). The
/// validity bitmap is made at the first such null: a column whose rows
/// all have values has none.
struct Sparse<T: Typed> {
    values: Vec<T::Native>,
    valid: Option<BooleanBufferBuilder>,
}

impl<T: Typed> Sparse<T> {
    fn new() -> Self {
        Sparse {
            values: Vec::new(),
            valid: None,
        }
    }

    /// Gives row `row` (of the group) value `v`, if there is one.
    #[inline(always)]
    fn put(&mut self, row: usize, v: Option<T::Native>) {
        if let Some(v) = v {
            self.push(row, v);
        }
    }

    #[inline]
    fn push(&mut self, row: usize, v: T::Native) {
        if self.values.capacity() == 0 {
            self.values.reserve(ROWS_PER_GROUP);
        }
        if self.values.len() < row {
            self.nulls_to(row);
        }
        if let Some(valid) = &mut self.valid {
            valid.append(true);
        }
        self.values.push(v);
    }

    /// Nulls for the rows from the last value to `row`.
    #[cold]
    fn nulls_to(&mut self, row: usize) {
        let have = self.values.len();
        let valid = self.valid.get_or_insert_with(|| {
            let mut b = BooleanBufferBuilder::new(ROWS_PER_GROUP);
            b.append_n(have, true);
            b
        });
        valid.append_n(row - have, false);
        self.values.resize(row, T::Native::default());
    }

    /// The column of a group of `rows` rows.
    fn finish(&mut self, rows: usize) -> ArrayRef {
        if self.values.is_empty() {
            return null_column(T::COLUMN, rows);
        }
        if self.values.len() < rows {
            self.nulls_to(rows);
        }
        let values = std::mem::take(&mut self.values);
        let nulls = self.valid.take().map(|mut v| NullBuffer::new(v.finish()));
        Arc::new(PrimitiveArray::<T>::new(ScalarBuffer::from(values), nulls))
    }
}

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

    /// Whether the group has [`ROWS_PER_GROUP`] rows.
    pub(crate) fn is_full(&self) -> bool {
        self.rows >= ROWS_PER_GROUP
    }

    pub(crate) fn is_empty(&self) -> bool {
        self.rows == 0
    }

    /// The group's columns, in [`SAMPLES`]' order; the builders start the
    /// next group.
    pub(crate) fn finish(&mut self) -> Vec<ArrayRef> {
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

#[cfg(test)]
mod tests {
    use arrow_array::{Array, UInt64Array};

    use super::*;

    /// Rows without a value are nulls wherever they fall: before the
    /// first value, between values and after the last; a column no row
    /// fills is all null.
    #[test]
    fn sparse_columns_place_nulls_by_row() {
        let mut c = Sparse::<UInt64Type>::new();
        for (row, v) in [None, None, Some(7), None, Some(9), None, None]
            .into_iter()
            .enumerate()
        {
            c.put(row, v);
        }
        let a = c.finish(7);
        let a = a.as_any().downcast_ref::<UInt64Array>().expect("u64");
        let got: Vec<Option<u64>> = a.iter().collect();
        assert_eq!(got, [None, None, Some(7), None, Some(9), None, None]);
        // The builder starts the next group empty.
        c.put(1, Some(3));
        let a = c.finish(2);
        let a = a.as_any().downcast_ref::<UInt64Array>().expect("u64");
        assert_eq!(a.iter().collect::<Vec<_>>(), [None, Some(3)]);
        let empty = Sparse::<UInt64Type>::new().finish(4);
        assert_eq!((empty.len(), empty.null_count()), (4, 4));
    }
}
