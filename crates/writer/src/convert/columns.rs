//! Typed column vectors that a row group fills one row at a time, for
//! the tables written at a row per sample or more (samples, read values).
//!
//! [`Table::row`]'s call per cell, which finds the column's builder and
//! matches its kind, was a large part of the instructions spent on these
//! tables. Here each column is a plain vector of its type, and a column
//! no row fills costs nothing per row.
//!
//! [`Table::row`]: crate::Table::row

use std::sync::Arc;

use arrow_array::types::{ArrowPrimitiveType, Int32Type, UInt16Type, UInt32Type, UInt64Type};
use arrow_array::{ArrayRef, PrimitiveArray};
use arrow_buffer::{BooleanBufferBuilder, NullBuffer, ScalarBuffer};

use crate::table::{null_column, ColumnType, ROWS_PER_GROUP};
use crate::{Error, Table};

/// A row group being filled a row at a time from these vectors.
pub(crate) trait Group {
    /// Rows appended since the last [`Group::finish`].
    fn rows(&self) -> usize;

    /// The group's columns, in its table's order; the vectors start the
    /// next group.
    fn finish(&mut self) -> Vec<ArrayRef>;
}

/// Writes `group` into `table` as a row group once it has
/// [`ROWS_PER_GROUP`] rows, or at the `end` if it has any.
pub(crate) fn flush(group: &mut impl Group, table: &mut Table, end: bool) -> Result<(), Error> {
    let rows = group.rows();
    if rows >= ROWS_PER_GROUP || (end && rows > 0) {
        table.push_group(group.finish())?;
    }
    Ok(())
}

/// A column every row fills: its values, in a plain vector (Arrow's
/// builder costs a few dozen instructions a value, the vector a few;
/// the samples thread fills ~20 columns a sample, and a group read
/// ~10 rows of 6).
pub(crate) struct Full<T: ArrowPrimitiveType>(Vec<T::Native>);

impl<T: ArrowPrimitiveType> Full<T> {
    pub(crate) fn new() -> Self {
        Full(Vec::with_capacity(ROWS_PER_GROUP))
    }

    #[inline]
    pub(crate) fn push(&mut self, v: T::Native) {
        self.0.push(v);
    }

    /// Appends `values`.
    #[inline]
    pub(crate) fn extend(&mut self, values: impl Iterator<Item = T::Native>) {
        self.0.extend(values);
    }

    /// The column; the next group starts as large at once.
    pub(crate) fn finish(&mut self) -> ArrayRef {
        let values = std::mem::replace(&mut self.0, Vec::with_capacity(ROWS_PER_GROUP));
        Arc::new(PrimitiveArray::<T>::new(ScalarBuffer::from(values), None))
    }
}

/// The column type of an Arrow type, for the shared all-null columns.
pub(crate) trait Typed: ArrowPrimitiveType {
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
pub(crate) struct Sparse<T: Typed> {
    values: Vec<T::Native>,
    valid: Option<BooleanBufferBuilder>,
}

impl<T: Typed> Sparse<T> {
    pub(crate) fn new() -> Self {
        Sparse {
            values: Vec::new(),
            valid: None,
        }
    }

    /// Gives row `row` (of the group) value `v`, if there is one.
    #[inline(always)]
    pub(crate) fn put(&mut self, row: usize, v: Option<T::Native>) {
        if let Some(v) = v {
            self.push(row, v);
        }
    }

    #[inline]
    pub(crate) fn push(&mut self, row: usize, v: T::Native) {
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

    /// Gives the rows from `row` on the values of `values`, where they
    /// have one. While every row so far has a value, values that all have
    /// one are copied in a loop of their own.
    #[inline]
    pub(crate) fn extend(
        &mut self,
        row: usize,
        values: impl ExactSizeIterator<Item = Option<T::Native>> + Clone,
    ) {
        let whole = self.valid.is_none() && self.values.len() == row;
        if whole && values.clone().all(|v| v.is_some()) {
            if self.values.capacity() == 0 {
                self.values.reserve(ROWS_PER_GROUP);
            }
            self.values.extend(values.flatten());
            return;
        }
        for (i, v) in values.enumerate() {
            self.put(row + i, v);
        }
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
    pub(crate) fn finish(&mut self, rows: usize) -> ArrayRef {
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

    /// Runs of rows given at once make the column their rows one at a
    /// time make: whole runs, runs with a null, runs after a null, and a
    /// run of none.
    #[test]
    fn sparse_runs_are_their_rows() {
        let runs: [&[Option<u64>]; 5] = [
            &[Some(1), Some(2)],
            &[Some(3), None, Some(4)],
            &[],
            &[Some(5), Some(6)],
            &[None],
        ];
        let (mut by_run, mut by_row) = (Sparse::<UInt64Type>::new(), Sparse::<UInt64Type>::new());
        let mut row = 0;
        for run in runs {
            by_run.extend(row, run.iter().copied());
            for &v in run {
                by_row.put(row, v);
                row += 1;
            }
        }
        let (a, b) = (by_run.finish(row), by_row.finish(row));
        let a = a.as_any().downcast_ref::<UInt64Array>().expect("u64");
        let b = b.as_any().downcast_ref::<UInt64Array>().expect("u64");
        assert_eq!(a, b);
        assert_eq!(a.null_count(), 2);
    }
}
