//! Reading query results back into Rust values, a column at a time, for
//! the small tables the topdown plan reads and the per-stack and
//! per-function results of `flamegraph` and `diff`; and SQL string
//! literals for the statements they write. Integer widths differ between dataset versions and between an
//! aggregate's result types (`COUNT` is Int64, `SUM` of u64 is UInt64), so
//! every column is cast to the type the caller reads.

use datafusion::arrow::array::{Array, ArrayRef, AsArray};
use datafusion::arrow::datatypes::{
    ArrowPrimitiveType, DataType, Int64Type, UInt32Type, UInt64Type,
};
use datafusion::arrow::record_batch::RecordBatch;

use crate::Error;

/// Column `col` of `b`, cast to `to`.
pub(crate) fn cast(b: &RecordBatch, col: &str, to: &DataType) -> Result<ArrayRef, Error> {
    let a = b
        .column_by_name(col)
        .ok_or_else(|| Error::Shape(format!("no column {col}")))?;
    datafusion::arrow::compute::cast(a, to).map_err(|e| Error::Shape(format!("{col}: {e}")))
}

/// A text column (any type, as text).
pub fn strings(b: &RecordBatch, col: &str) -> Result<Vec<Option<String>>, Error> {
    let a = cast(b, col, &DataType::Utf8)?;
    Ok(a.as_string::<i32>()
        .iter()
        .map(|v| v.map(str::to_string))
        .collect())
}

fn numbers<T: ArrowPrimitiveType>(
    b: &RecordBatch,
    col: &str,
) -> Result<Vec<Option<T::Native>>, Error> {
    let a = cast(b, col, &T::DATA_TYPE)?;
    Ok(a.as_primitive::<T>().iter().collect())
}

/// An unsigned integer column.
pub fn u64s(b: &RecordBatch, col: &str) -> Result<Vec<Option<u64>>, Error> {
    numbers::<UInt64Type>(b, col)
}

/// An unsigned 32-bit integer column.
pub(crate) fn u32s(b: &RecordBatch, col: &str) -> Result<Vec<Option<u32>>, Error> {
    numbers::<UInt32Type>(b, col)
}

/// A signed integer column.
pub(crate) fn i64s(b: &RecordBatch, col: &str) -> Result<Vec<Option<i64>>, Error> {
    numbers::<Int64Type>(b, col)
}

/// A boolean column (null as false).
pub(crate) fn bools(b: &RecordBatch, col: &str) -> Result<Vec<bool>, Error> {
    let a = cast(b, col, &DataType::Boolean)?;
    let a = a.as_boolean();
    Ok((0..a.len()).map(|i| a.is_valid(i) && a.value(i)).collect())
}

/// A `list<u32>` column (stacks' frame ids), null lists as `None`.
pub(crate) fn u32_lists(b: &RecordBatch, col: &str) -> Result<Vec<Option<Vec<u32>>>, Error> {
    let a = b
        .column_by_name(col)
        .ok_or_else(|| Error::Shape(format!("no column {col}")))?;
    let item = DataType::List(std::sync::Arc::new(
        datafusion::arrow::datatypes::Field::new_list_field(DataType::UInt32, true),
    ));
    let a = datafusion::arrow::compute::cast(a, &item)
        .map_err(|e| Error::Shape(format!("{col}: {e}")))?;
    let list = a.as_list::<i32>();
    Ok((0..list.len())
        .map(|i| {
            list.is_valid(i).then(|| {
                let v = list.value(i);
                v.as_primitive::<datafusion::arrow::datatypes::UInt32Type>()
                    .iter()
                    .flatten()
                    .collect()
            })
        })
        .collect())
}

/// SQL string literal.
pub(crate) fn quote(s: &str) -> String {
    format!("'{}'", s.replace('\'', "''"))
}
