//! [`super::by_interval`] over the stack tables perfq keeps: the rows of
//! its SQL (a test holds them equal), summed from each sample's leaf
//! frame's function and its stack's set instead of by DataFusion's joins
//! of every sample with its stack's functions and names (what
//! `function_total` was computed natively for, and the HTML page's time
//! on a system-wide capture).

use datafusion::arrow::array::{Array, AsArray};
use datafusion::arrow::datatypes::{DataType, Int64Type, UInt64Type};
use rustc_hash::FxHashMap;

use super::{Options, Row, Sums};
use crate::helpers;
use crate::views::SampledStacks;
use crate::{columns, views, Error, Session};

/// Samples and the sum of their periods (wrapping, as perf's and
/// DataFusion's sums do).
type Sum = (u64, u64);

fn add(sum: &mut Sum, samples: u64, period: u64) {
    sum.0 = sum.0.wrapping_add(samples);
    sum.1 = sum.1.wrapping_add(period);
}

/// The samples of the event with an interval, each as (interval, its
/// leaf's function, its set or [`NO_SET`], period); and every set's
/// samples, those without an interval (no `capture` row) included. Kept
/// per sample and summed once the functions shown are known: grouped by
/// (interval, function) and (interval, set) first, the groups of a
/// system-wide capture were nearly as many as its samples, in two large
/// tables.
#[derive(Default)]
struct Read {
    samples: Vec<(u64, u32, u32, u64)>,
    set_samples: Vec<u64>,
}

/// A sample without a set.
const NO_SET: u32 = u32::MAX;

/// The sums of `opt` from `stacks`.
pub(super) fn sums(
    session: &Session,
    stacks: &SampledStacks,
    opt: &Options<'_>,
) -> Result<Sums, Error> {
    let read = read(session, stacks, opt)?;
    // Each function's total samples over every interval, which says
    // whether it is shown.
    let mut totals = vec![0u64; stacks.last_function() as usize + 1];
    for (set, &n) in (0..).zip(&read.set_samples) {
        if n > 0 {
            for &f in stacks.set(set) {
                if let Some(t) = totals.get_mut(stacks.canonical(f) as usize) {
                    *t = t.wrapping_add(n);
                }
            }
        }
    }
    let min = opt.min_total.max(1);
    let below = totals.iter().filter(|&&t| t > 0 && t < min).count() as u64;
    // (A byte per function, read per function of each set: the totals
    // themselves are eight times as large and read at random.)
    let shown: Vec<bool> = totals.iter().map(|&t| t >= min).collect();
    let shown = |f: u32| shown.get(f as usize).copied().unwrap_or(false);
    let mut own: FxHashMap<(u64, u32), Sum> = FxHashMap::default();
    let mut total: FxHashMap<(u64, u32), Sum> = FxHashMap::default();
    for &(bucket, f, set, p) in &read.samples {
        let f = stacks.canonical(f);
        if shown(f) {
            add(own.entry((bucket, f)).or_default(), 1, p);
        }
        let functions = if set == NO_SET {
            &[][..]
        } else {
            stacks.set(set)
        };
        for &f in functions {
            let f = stacks.canonical(f);
            if shown(f) {
                add(total.entry((bucket, f)).or_default(), 1, p);
            }
        }
    }
    let rows = rows(own, total, stacks);
    Ok(Sums { rows, below })
}

/// The rows of the self and total sums, named and in order (interval,
/// then symbol and DSO: function ids are ranked by name).
fn rows(
    own: FxHashMap<(u64, u32), Sum>,
    total: FxHashMap<(u64, u32), Sum>,
    stacks: &SampledStacks,
) -> Vec<Row> {
    let mut by_key: FxHashMap<(u64, u32), [Sum; 2]> = FxHashMap::default();
    for (i, sums) in [own, total].into_iter().enumerate() {
        for (key, sum) in sums {
            by_key.entry(key).or_default()[i] = sum;
        }
    }
    let mut keyed: Vec<((u64, u32), [Sum; 2])> = by_key.into_iter().collect();
    keyed.sort_unstable_by_key(|&((bucket, f), _)| (bucket, stacks.name_order(f)));
    keyed
        .into_iter()
        .map(|((bucket, f), [own, total])| {
            let (symbol, dso) = stacks.with_name(f, |s, d| (s.to_string(), d.to_string()));
            Row {
                bucket,
                symbol,
                dso,
                self_samples: own.0,
                self_period: own.1,
                total_samples: total.0,
                total_period: total.1,
            }
        })
        .collect()
}

/// The event's samples ([`Read`]).
fn read(session: &Session, stacks: &SampledStacks, opt: &Options<'_>) -> Result<Read, Error> {
    views::ensure(session, "delivered_samples")?;
    let sql = opt.fill(helpers::INTERVAL_LEAVES);
    let mut g = Read {
        set_samples: vec![0; stacks.sets() as usize],
        ..Read::default()
    };
    session.for_each_batch(&sql, |b| {
        let capture = columns::cast(&b, "capture", &DataType::Utf8)?;
        let capture = capture.as_string::<i32>();
        let u64s = |c: &str| columns::cast(&b, c, &DataType::UInt64);
        let (stack, leaf, period) = (u64s("stack_id")?, u64s("leaf_frame_id")?, u64s("period")?);
        let stack = stack.as_primitive::<UInt64Type>();
        let leaf = leaf.as_primitive::<UInt64Type>();
        let period = period.as_primitive::<UInt64Type>();
        let bucket = columns::cast(&b, "bucket", &DataType::Int64)?;
        let bucket = bucket.as_primitive::<Int64Type>();
        let captures = stacks.capture_numbers(capture);
        for (row, c) in captures.into_iter().enumerate() {
            let p = if period.is_valid(row) {
                period.value(row)
            } else {
                0
            };
            let place = c.zip(stack.is_valid(row).then(|| stack.value(row)));
            let set = place
                .and_then(|(c, s)| stacks.place(c, s))
                .map(|at| stacks.set_of(at));
            if let Some(set) = set {
                g.set_samples[set as usize] += 1;
            }
            // Without a capture row: in the totals only.
            if bucket.is_null(row) {
                continue;
            }
            let bucket = bucket.value(row).max(0) as u64;
            let own = match (c, leaf.is_valid(row)) {
                (Some(c), true) => stacks.function_of(c, leaf.value(row)),
                _ => 0,
            };
            g.samples.push((bucket, own, set.unwrap_or(NO_SET), p));
        }
        Ok(())
    })?;
    Ok(g)
}
