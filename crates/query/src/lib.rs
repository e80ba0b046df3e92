/*!
SQL over perfq datasets, on DataFusion.

A [`Session`] registers every table of a dataset (one or many captures,
partitioned by `capture`); [`topdown`] compiles the formula sets of
`perfq-topdown` into SQL views over those tables — per-sample topdown
values and their aggregations per function (self and total), thread,
process, DSO and time interval, with standard errors, clamping and
hierarchical flags — and runs them. `perf report`'s per-function self
and total read straight from a capture, the same aggregation as the
`function_self` and `function_total` views, is the `perfq-report` crate.

```no_run
use perfq_query::{topdown, Session};

let session = Session::open("dataset".as_ref())?;
let report = topdown::run(&session, &topdown::Options::default())?;
for row in &report.rows {
    println!("{:?} {}", row.keys, row.samples);
}
# Ok::<(), perfq_query::Error>(())
```
*/
#![deny(missing_docs)]

pub mod columns;
pub mod diff;
mod error;
pub mod events;
mod exact_sum;
pub mod flamegraph;
pub mod function_sums;
mod helpers;
mod inclusive;
mod named_samples;
pub mod nesting;
pub mod off_cpu;
pub mod profile;
mod session;
pub mod stack_counts;
mod stack_tables;
pub mod topdown;
pub mod views;

pub use crate::error::Error;
pub use crate::session::{Batches, Session, TABLES};
pub use datafusion::arrow;
