//! `set_functions` as perfq keeps it: the interned sets themselves (4
//! bytes a function of a set) and each set's id, its rows made as they
//! are read. Made whole, the two 64-bit columns of a system-wide
//! capture's set–function rows held a large block of memory for the
//! session's life, mostly for statements that never read the table.

use std::sync::Arc;

use datafusion::arrow::array::{ArrayRef, RecordBatch, UInt64Array};
use datafusion::arrow::datatypes::SchemaRef;

use super::on_read::OnRead;
use super::stack_sets::Ranks;
use super::{typed, Named, SetList};
use crate::Error;

/// A row per function of each set that the functions table names, read
/// a run of sets (in the order they were met) at a time.
#[derive(Debug)]
pub(super) struct SetFunctions {
    schema: SchemaRef,
    sets: Arc<SetList>,
    /// Each set's id (as `stack_sets` gives it), by its number in `sets`.
    ranks: Arc<Ranks>,
    named: Named,
}

impl SetFunctions {
    pub(super) fn new(
        schema: SchemaRef,
        sets: Arc<SetList>,
        ranks: Arc<Ranks>,
        named: Named,
    ) -> Self {
        SetFunctions {
            schema,
            sets,
            ranks,
            named,
        }
    }
}

impl OnRead for SetFunctions {
    fn schema(&self) -> &SchemaRef {
        &self.schema
    }

    fn len(&self) -> usize {
        self.sets.len() as usize
    }

    /// By the sets' mean size.
    fn units_per_batch(&self, rows: usize) -> usize {
        let functions = self.sets.functions().max(1);
        (rows * self.len()).div_ceil(functions)
    }

    fn batch(&self, start: usize, end: usize) -> Result<RecordBatch, Error> {
        let (mut set_ids, mut function_ids) = (Vec::new(), Vec::new());
        let ids = self.ranks.ids().get(start..end).unwrap_or_default();
        for (n, &id) in (start..end).zip(ids) {
            let set = self.sets.get(n as u32);
            for &f in set.iter().filter(|&&f| self.named.contains(f)) {
                set_ids.push(u64::from(id));
                function_ids.push(u64::from(f));
            }
        }
        let columns = [
            Arc::new(UInt64Array::from(set_ids)) as ArrayRef,
            Arc::new(UInt64Array::from(function_ids)) as ArrayRef,
        ];
        typed(&self.schema, &columns)
    }
}
