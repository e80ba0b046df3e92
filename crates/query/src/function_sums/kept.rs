//! [`super::by_interval`] over the stack tables perfq keeps: the rows of
//! its SQL (a test holds them equal), summed from each sample's leaf
//! frame's function and its stack's set as `stack_counts` read them,
//! instead of by DataFusion's joins of every sample with its stack's
//! functions and names (what `function_total` was computed natively for,
//! and the HTML page's time on a system-wide capture).

use rustc_hash::FxHashMap;

use super::{IdRow, IdSums, Row, Sums};
use crate::stack_counts::StackCounts;
use crate::views::SampledStacks;

/// Samples and the sum of their periods (wrapping, as perf's and
/// DataFusion's sums do).
type Sum = (u64, u64);

fn add(sum: &mut Sum, samples: u64, period: u64) {
    sum.0 = sum.0.wrapping_add(samples);
    sum.1 = sum.1.wrapping_add(period);
}

/// The sums of the functions with `min_total` total samples or more from
/// `counts`' samples; those without an interval (no `capture` row) count
/// only in the totals that choose the functions.
pub(super) fn sums(counts: &StackCounts, min_total: u64) -> IdSums {
    let stacks = &*counts.stacks;
    let mut set_samples = vec![0u64; stacks.sets() as usize];
    for s in counts.leaves() {
        if let Some(n) = s
            .place
            .and_then(|p| set_samples.get_mut(stacks.set_of(p) as usize))
        {
            *n += 1;
        }
    }
    // Each function's total samples over every interval, which says
    // whether it is shown.
    let mut totals = vec![0u64; stacks.last_function() as usize + 1];
    for (set, &n) in (0..).zip(&set_samples) {
        if n > 0 {
            for &f in stacks.set(set) {
                if let Some(t) = totals.get_mut(stacks.canonical(f) as usize) {
                    *t = t.wrapping_add(n);
                }
            }
        }
    }
    let min = min_total.max(1);
    let below = totals.iter().filter(|&&t| t > 0 && t < min).count() as u64;
    // (A byte per function, read per function of each set: the totals
    // themselves are eight times as large and read at random.)
    let shown: Vec<bool> = totals.iter().map(|&t| t >= min).collect();
    let shown = |f: u32| shown.get(f as usize).copied().unwrap_or(false);
    let mut own: FxHashMap<(u64, u32), Sum> = FxHashMap::default();
    let mut total: FxHashMap<(u64, u32), Sum> = FxHashMap::default();
    for s in counts.leaves() {
        let Some(bucket) = s.bucket else { continue };
        let f = stacks.canonical(s.function);
        if shown(f) {
            add(own.entry((bucket, f)).or_default(), 1, s.period);
        }
        let functions = s.place.map_or(&[][..], |p| stacks.set(stacks.set_of(p)));
        for &f in functions {
            let f = stacks.canonical(f);
            if shown(f) {
                add(total.entry((bucket, f)).or_default(), 1, s.period);
            }
        }
    }
    let rows = rows(own, total, stacks);
    IdSums { rows, below }
}

/// The rows of the self and total sums, in order (interval, then symbol
/// and DSO: function ids are ranked by name).
fn rows(
    own: FxHashMap<(u64, u32), Sum>,
    total: FxHashMap<(u64, u32), Sum>,
    stacks: &SampledStacks,
) -> Vec<IdRow> {
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
        .map(|((bucket, function), [own, total])| IdRow {
            bucket,
            function,
            self_samples: own.0,
            self_period: own.1,
            total_samples: total.0,
            total_period: total.1,
        })
        .collect()
}

/// `sums` with each function named.
pub(super) fn named(sums: IdSums, stacks: &SampledStacks) -> Sums {
    let rows = sums.rows.into_iter().map(|r| {
        let (symbol, dso) = stacks.with_name(r.function, |s, d| (s.to_string(), d.to_string()));
        Row {
            bucket: r.bucket,
            symbol,
            dso,
            self_samples: r.self_samples,
            self_period: r.self_period,
            total_samples: r.total_samples,
            total_period: r.total_period,
        }
    });
    Sums {
        rows: rows.collect(),
        below: sums.below,
    }
}
