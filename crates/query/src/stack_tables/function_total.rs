//! `function_total` from the stack tables perfq keeps: the rows of its
//! SQL definition (`sql/function_total.sql`; a test holds them equal),
//! summed here instead of by DataFusion's joins and groupings. Those pair
//! every sample with its stack's set, then every (capture, event, set)
//! group with each function of the set: on a system-wide capture a row
//! per sample and many set–function rows grouped into functions, a large
//! part of the inclusive query's time. Here it is a lookup per sample and
//! a sum per set–function pair.

use std::sync::Arc;

use datafusion::arrow::array::{
    Array, ArrayRef, AsArray, Int64Array, RecordBatch, StringArray, UInt32Array, UInt64Array,
};
use datafusion::arrow::buffer::{BooleanBuffer, NullBuffer};
use datafusion::arrow::compute::take;
use datafusion::arrow::datatypes::{DataType, SchemaRef, UInt32Type, UInt64Type};
use perfq_ids::{Interner, Numbering};

use super::on_read::{self, OnRead};
use super::{typed, FunctionNames, SampledStacks};
use crate::{columns, helpers, views, Error, Session};

/// A group's `COUNT(*)` and `SUM(period)`, wrapping as DataFusion's sums
/// do. (Every period is there: see [`keep`].)
#[derive(Clone, Copy, Default)]
struct Sum {
    samples: i64,
    period: u64,
}

impl Sum {
    fn add(&mut self, samples: i64, period: u64) {
        self.samples = self.samples.wrapping_add(samples);
        self.period = self.period.wrapping_add(period);
    }
}

/// A (capture number, event) pair, which `function_total` sums by.
type Pair = (u32, Option<u64>);

/// The samples with a set, grouped by (capture, event) pair. The first
/// pair's are summed by set as they are read: a dataset of one capture
/// and one event (most) keeps nothing per sample. The other pairs' are
/// kept (set and period) and summed in turn.
struct ByPair {
    /// The pairs in the order met.
    pairs: Vec<Pair>,
    /// The first pair's sums by set, and the sets it has, in the order met.
    first: Vec<Sum>,
    first_sets: Vec<u32>,
    /// Each other pair's samples' sets and periods.
    rest: Vec<(Vec<u32>, Vec<u64>)>,
}

/// Computes `function_total` (its SQL `sql`) and keeps it in the session
/// under that name, typed as its SQL plans it. A sample without a period
/// (none perfq writes; `SUM` would skip it), or a stacks table perfq does
/// not write ([`set_index`]), leaves the view to its SQL: nothing is kept.
///
/// Sums go into arrays indexed by set and by function id rather than
/// hash tables keyed by (capture, event, set or function): a sample's
/// lookups are then one load each, where a probe of a large table of
/// groups was a cache miss or two (slower than DataFusion's own
/// aggregation). One (capture, event) pair is
/// summed at a time, in arrays reused for the next. The rows are kept by
/// number and named as the table is read ([`Totals`]).
pub(super) fn keep(session: &Session, stacks: &SampledStacks, sql: &str) -> Result<(), Error> {
    let Some(by_pair) = samples_by_pair(session, stacks)? else {
        return Ok(());
    };
    let functions = stacks.names().clone();
    let (pairs, mut rows) = sum_by_function(by_pair, stacks, functions.last());
    // Kept for the session's life, without slack.
    rows.shrink_to_fit();
    let schema = session.schema_of(sql)?;
    let (pair_captures, events): (Vec<u32>, Vec<Option<u64>>) = pairs.into_iter().unzip();
    let totals = Totals {
        schema,
        captures: StringArray::from_iter_values(stacks.capture_names()),
        pair_captures: UInt32Array::from(pair_captures),
        pair_events: UInt64Array::from(events),
        functions,
        rows,
    };
    on_read::register(session, "function_total", Arc::new(totals))
}

/// Per pair: COUNT(*) and SUM(period) by set, then summed again by
/// function over each set's functions that the functions table names
/// (ids to `last`: the SQL's join with set_functions, which has only
/// those); the pairs, and their rows pair after pair.
fn sum_by_function(by_pair: ByPair, sets: &SampledStacks, last: u32) -> (Vec<Pair>, Rows) {
    let ByPair {
        pairs,
        first: mut by_set,
        first_sets: mut sets_met,
        mut rest,
    } = by_pair;
    let mut by_function = vec![Sum::default(); last as usize + 1];
    let mut functions_met = Vec::new();
    let mut rows = Rows::default();
    for pair in 0..pairs.len() {
        // The first pair's sets are summed already.
        if let Some(samples) = pair.checked_sub(1).and_then(|p| rest.get_mut(p)) {
            let (sets, periods) = std::mem::take(samples);
            for (set, period) in sets.into_iter().zip(periods) {
                let sum = &mut by_set[set as usize];
                if sum.samples == 0 {
                    sets_met.push(set);
                }
                sum.add(1, period);
            }
        }
        for set in sets_met.drain(..) {
            let sum = std::mem::take(&mut by_set[set as usize]);
            for &f in sets.set(set) {
                if let Some(total) = by_function.get_mut(f as usize) {
                    if total.samples == 0 {
                        functions_met.push(f);
                    }
                    total.add(sum.samples, sum.period);
                }
            }
        }
        // Room for exactly the first pair's rows: most datasets have no
        // other (grown by doubling, a system-wide capture's rows left
        // much of their room unused).
        rows.reserve(functions_met.len());
        for f in functions_met.drain(..) {
            let sum = std::mem::take(&mut by_function[f as usize]);
            // Id f is row f - 1 of the functions table, and id 0
            // (`[unknown]`) its last row.
            rows.functions.push(f.checked_sub(1).unwrap_or(last));
            rows.samples.push(sum.samples);
            rows.periods.push(sum.period);
        }
        rows.pair_ends.push(rows.functions.len());
    }
    (pairs, rows)
}

/// Each capture's sampled stacks' sets, by stack id.
/// Each sample with a set, its set and period, grouped by (capture,
/// event) pair ([`ByPair`]; `sets` sets). `None` if a sample has no
/// period.
fn samples_by_pair(session: &Session, stacks: &SampledStacks) -> Result<Option<ByPair>, Error> {
    let sets = stacks.sets() as usize;
    let mut numbers: Interner<Pair> = Interner::new();
    let mut by_pair = ByPair {
        pairs: Vec::new(),
        first: vec![Sum::default(); sets],
        first_sets: Vec::new(),
        rest: Vec::new(),
    };
    let mut complete = true;
    views::ensure(session, "delivered_samples")?;
    session.for_each_batch(helpers::STACK_SET_SAMPLES, |b| {
        let capture = columns::cast(&b, "capture", &DataType::Utf8)?;
        let capture = capture.as_string::<i32>();
        let event = columns::cast(&b, "event_id", &DataType::UInt64)?;
        let event = event.as_primitive::<UInt64Type>();
        let stack = columns::cast(&b, "stack_id", &DataType::UInt64)?;
        let stack = stack.as_primitive::<UInt64Type>();
        let period = columns::cast(&b, "period", &DataType::UInt64)?;
        let period = period.as_primitive::<UInt64Type>();
        let mut last: Option<(Pair, usize)> = None;
        let captures = stacks.capture_numbers(capture);
        for (row, c) in captures.into_iter().enumerate() {
            // A capture or stack without a set joins nothing.
            let (Some(c), false) = (c, stack.is_null(row)) else {
                continue;
            };
            let Some(place) = stacks.place(c, stack.value(row)) else {
                continue;
            };
            let set = stacks.set_of(place);
            complete &= period.is_valid(row);
            let key = (c, event.is_valid(row).then(|| event.value(row)));
            let pair = match last {
                Some((k, p)) if k == key => p,
                _ => {
                    let next = by_pair.pairs.len();
                    let p = numbers.number(key) as usize;
                    if p == next {
                        by_pair.pairs.push(key);
                        if p > 0 {
                            by_pair.rest.push(Default::default());
                        }
                    }
                    last = Some((key, p));
                    p
                }
            };
            let period = period.value(row);
            match pair.checked_sub(1) {
                None => {
                    // (A set id from the index is one of the sets.)
                    let Some(sum) = by_pair.first.get_mut(set as usize) else {
                        continue;
                    };
                    if sum.samples == 0 {
                        by_pair.first_sets.push(set);
                    }
                    sum.add(1, period);
                }
                Some(p) => {
                    let (sets, periods) = &mut by_pair.rest[p];
                    sets.push(set);
                    periods.push(period);
                }
            }
        }
        Ok(())
    })?;
    Ok(complete.then_some(by_pair))
}

/// `function_total`'s rows by number, in (capture, event) pair order:
/// each one's function's row in the functions table and its sums.
#[derive(Debug, Default)]
struct Rows {
    functions: Vec<u32>,
    samples: Vec<i64>,
    periods: Vec<u64>,
    /// Where each pair's rows end.
    pair_ends: Vec<usize>,
}

impl Rows {
    /// Room for `more` rows: exactly, for the first pair's.
    fn reserve(&mut self, more: usize) {
        if self.functions.is_empty() {
            self.functions.reserve_exact(more);
            self.samples.reserve_exact(more);
            self.periods.reserve_exact(more);
        } else {
            self.functions.reserve(more);
            self.samples.reserve(more);
            self.periods.reserve(more);
        }
    }

    fn shrink_to_fit(&mut self) {
        self.functions.shrink_to_fit();
        self.samples.shrink_to_fit();
        self.periods.shrink_to_fit();
    }

    /// The pair of each of rows `start..end`.
    fn pairs(&self, start: usize, end: usize) -> UInt32Array {
        let mut pair = self.pair_ends.partition_point(|&e| e <= start);
        (start..end)
            .map(|row| {
                while self.pair_ends.get(pair).is_some_and(|&e| e <= row) {
                    pair += 1;
                }
                pair as u32
            })
            .collect()
    }
}

/// `function_total` as kept: its rows by number, named a batch at a time
/// as they are read. Made whole, the names of a system-wide capture's
/// rows (its capture's id, a function's symbol and DSO) took far more
/// memory than the numbers.
#[derive(Debug)]
struct Totals {
    schema: SchemaRef,
    /// The captures' names, by number.
    captures: StringArray,
    /// Each pair's capture number and event.
    pair_captures: UInt32Array,
    pair_events: UInt64Array,
    /// The functions table, whose rows name the functions.
    functions: Arc<FunctionNames>,
    rows: Rows,
}

impl OnRead for Totals {
    fn schema(&self) -> &SchemaRef {
        &self.schema
    }

    fn len(&self) -> usize {
        self.rows.functions.len()
    }

    /// Rows `start..end` as a batch of the table's schema.
    fn batch(&self, start: usize, end: usize) -> Result<RecordBatch, Error> {
        let r = &self.rows;
        let pairs = r.pairs(start, end);
        let shape =
            |e: datafusion::arrow::error::ArrowError| Error::Shape(format!("function_total: {e}"));
        let capture_numbers = take(&self.pair_captures, &pairs, None).map_err(shape)?;
        let functions = r.functions[start..end].iter().map(|&f| f as usize);
        let (symbols, dsos) = self.functions.columns(functions)?;
        let columns = [
            take(
                &self.captures,
                capture_numbers.as_primitive::<UInt32Type>(),
                None,
            )
            .map_err(shape)?,
            take(&self.pair_events, &pairs, None).map_err(shape)?,
            Arc::new(symbols),
            Arc::new(dsos),
            Arc::new(Int64Array::from(r.samples[start..end].to_vec())) as ArrayRef,
            Arc::new(UInt64Array::new(
                r.periods[start..end].to_vec().into(),
                Some(NullBuffer::new(BooleanBuffer::new_set(end - start))),
            )),
        ];
        typed(&self.schema, &columns)
    }
}

#[cfg(test)]
mod tests {
    use super::Rows;

    /// Each row's pair from where the pairs' rows end, empty pairs
    /// included, for any run of rows.
    #[test]
    fn rows_find_their_pairs() {
        let rows = Rows {
            functions: vec![0; 7],
            pair_ends: vec![2, 2, 5, 7],
            ..Rows::default()
        };
        let want = [0u32, 0, 2, 2, 2, 3, 3];
        for start in 0..7 {
            for end in start..=7 {
                assert_eq!(
                    rows.pairs(start, end).values(),
                    &want[start..end],
                    "{start}..{end}"
                );
            }
        }
    }
}
