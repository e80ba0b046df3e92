//! `stack_sets` as perfq keeps it: each sampled stack's capture and id as
//! they were read, and its set's number among the interned sets. The set
//! ids themselves, `DENSE_RANK` over the sets' sorted lists, are worked
//! out when `stack_sets` or `set_functions` is first read ([`Ranks`]):
//! ranking a system-wide capture's sets is a sort of nearly a list per
//! stack, and the HTML page and the exported profiles read neither table
//! (they read the sampled stacks and their sets directly).

use std::sync::{Arc, OnceLock};

use datafusion::arrow::array::{ArrayRef, RecordBatch, UInt64Array};
use datafusion::arrow::compute::concat_batches;
use datafusion::arrow::datatypes::SchemaRef;
use rayon::slice::ParallelSliceMut;

use super::on_read::OnRead;
use super::{typed, SetList};
use crate::Error;

/// The sets' ids, by their number as interned: worked out at the first
/// read of a table that gives them, once, for every table that does.
#[derive(Debug)]
pub(super) struct Ranks {
    sets: Arc<SetList>,
    ids: OnceLock<Vec<u32>>,
}

impl Ranks {
    pub(super) fn new(sets: Arc<SetList>) -> Self {
        Ranks {
            sets,
            ids: OnceLock::new(),
        }
    }

    /// Each set's id, by its number as interned.
    pub(super) fn ids(&self) -> &[u32] {
        self.ids.get_or_init(|| ranks(&self.sets))
    }
}

/// Set ids as `DENSE_RANK() OVER (ORDER BY functions)` numbers them, by
/// interned number: from 1, in the lists' order (element by element, a
/// prefix first).
fn ranks(sets: &SetList) -> Vec<u32> {
    let mut ordered: Vec<u32> = (0..sets.len()).collect();
    ordered.par_sort_unstable_by(|&a, &b| sets.get(a).cmp(sets.get(b)));
    let mut rank = vec![0u32; ordered.len()];
    for (r, &interned) in ordered.iter().enumerate() {
        // At most u32::MAX sets (they are numbered by u32).
        rank[interned as usize] = r as u32 + 1;
    }
    rank
}

/// The rows of `stack_sets`, a batch of sampled stacks as read a unit:
/// read in one partition, in that order, as when the table was kept
/// whole.
#[derive(Debug)]
pub(super) struct StackSets {
    schema: SchemaRef,
    /// Each batch's capture and stack id columns, and where its stacks
    /// start in `set_of_stack`.
    ids: Vec<([ArrayRef; 2], usize)>,
    /// Each sampled stack's set, by its number as interned.
    set_of_stack: Vec<u32>,
    ranks: Arc<Ranks>,
}

impl StackSets {
    pub(super) fn new(
        schema: SchemaRef,
        stack_ids: &[[ArrayRef; 2]],
        set_of_stack: Vec<u32>,
        ranks: Arc<Ranks>,
    ) -> Self {
        let mut at = 0;
        let ids = stack_ids
            .iter()
            .map(|columns| {
                let start = at;
                at += columns[1].len();
                (columns.clone(), start)
            })
            .collect();
        StackSets {
            schema,
            ids,
            set_of_stack,
            ranks,
        }
    }

    /// Batch `n`'s rows.
    fn rows(&self, n: usize) -> Result<RecordBatch, Error> {
        let ([capture, stack_id], start) = &self.ids[n];
        let rank = self.ranks.ids();
        let sets = self
            .set_of_stack
            .get(*start..start + stack_id.len())
            .ok_or_else(|| Error::Shape("stack_sets: fewer sets than stacks".into()))?;
        let ids: UInt64Array = sets.iter().map(|&s| u64::from(rank[s as usize])).collect();
        let columns = [capture.clone(), stack_id.clone(), Arc::new(ids) as ArrayRef];
        typed(&self.schema, &columns)
    }
}

impl OnRead for StackSets {
    fn schema(&self) -> &SchemaRef {
        &self.schema
    }

    fn len(&self) -> usize {
        self.ids.len()
    }

    /// A batch as read is about a batch's rows.
    fn units_per_batch(&self, _rows: usize) -> usize {
        1
    }

    fn in_order(&self) -> bool {
        true
    }

    fn batch(&self, start: usize, end: usize) -> Result<RecordBatch, Error> {
        let batches = (start..end)
            .map(|n| self.rows(n))
            .collect::<Result<Vec<_>, _>>()?;
        concat_batches(&self.schema, &batches).map_err(|e| Error::Shape(format!("stack_sets: {e}")))
    }
}
