//! Tables kept in perfq's own compact form and made into Arrow batches
//! only as a statement reads them, a batch at a time: `functions`,
//! `stack_sets`, `set_functions` and `function_total`. Held as Arrow
//! columns, the strings of a system-wide capture's functions, or the two
//! 64-bit columns of its set–function rows, took far more memory than
//! the numbers they are made from, for the whole session (and
//! `stack_sets`' set ids are worked out only when read:
//! `stack_sets.rs`).

use std::fmt::Debug;
use std::sync::Arc;

use datafusion::arrow::array::RecordBatch;
use datafusion::arrow::datatypes::SchemaRef;
use datafusion::catalog::streaming::StreamingTable;
use datafusion::execution::{SendableRecordBatchStream, TaskContext};
use datafusion::physical_plan::stream::RecordBatchStreamAdapter;
use datafusion::physical_plan::streaming::PartitionStream;

use crate::{Error, Session};

/// A table whose rows are made from units (a row each, or a group of
/// rows) numbered `0..len()`.
pub(super) trait OnRead: Debug + Send + Sync + 'static {
    /// The schema every batch has.
    fn schema(&self) -> &SchemaRef;

    /// How many units there are.
    fn len(&self) -> usize;

    /// How many units make a batch of about `rows` rows.
    fn units_per_batch(&self, rows: usize) -> usize {
        rows
    }

    /// Whether the table is read in one partition, its units in order
    /// (as a table kept whole in memory is read), rather than in one
    /// per core.
    fn in_order(&self) -> bool {
        false
    }

    /// Units `start..end` as a batch.
    fn batch(&self, start: usize, end: usize) -> Result<RecordBatch, Error>;
}

/// Registers `table` in the session under `name`, read in as many
/// partitions as there are cores, each a run of its units.
pub(super) fn register<T: OnRead>(
    session: &Session,
    name: &str,
    table: Arc<T>,
) -> Result<(), Error> {
    let parts = match table.in_order() {
        true => 1,
        false => std::thread::available_parallelism().map_or(1, |n| n.get()),
    };
    let len = table.len();
    let step = len.div_ceil(parts).max(1);
    let partitions: Vec<Arc<dyn PartitionStream>> = (0..len.max(1))
        .step_by(step)
        .map(|start| {
            Arc::new(Part {
                table: table.clone(),
                start,
                end: (start + step).min(len),
            }) as Arc<dyn PartitionStream>
        })
        .collect();
    let context = format!("keeping {name}");
    let provider = StreamingTable::try_new(table.schema().clone(), partitions)
        .map_err(|e| Error::query(&context, e))?;
    session
        .context()
        .register_table(name, Arc::new(provider))
        .map_err(|e| Error::query(&context, e))?;
    Ok(())
}

/// A run of a table's units, read as one partition.
#[derive(Debug)]
struct Part<T> {
    table: Arc<T>,
    start: usize,
    end: usize,
}

impl<T: OnRead> PartitionStream for Part<T> {
    fn schema(&self) -> &SchemaRef {
        self.table.schema()
    }

    fn execute(&self, ctx: Arc<TaskContext>) -> SendableRecordBatchStream {
        let rows = ctx.session_config().batch_size().max(1);
        let step = self.table.units_per_batch(rows).max(1);
        let (table, end) = (self.table.clone(), self.end);
        let batches = (self.start..end).step_by(step).map(move |at| {
            table
                .batch(at, (at + step).min(end))
                .map_err(|e| datafusion::error::DataFusionError::External(e.into()))
        });
        Box::pin(RecordBatchStreamAdapter::new(
            self.table.schema().clone(),
            futures::stream::iter(batches),
        ))
    }
}
