//! [`super::by_interval`] over the stack tables perfq keeps: the rows of
//! its SQL (a test holds them equal), summed from each sample's leaf
//! frame's function and its stack's set as `stack_counts` read them,
//! instead of by DataFusion's joins of every sample with its stack's
//! functions and names (what `function_total` was computed natively for,
//! and the HTML page's time on a system-wide capture).

use rustc_hash::FxHashMap;

use super::{IdRow, IdSums, Row, Sums};
use crate::stack_counts::StackCounts;
use crate::stack_tables::SetList;
use crate::views::SampledStacks;

/// One function's sums in one interval: self samples and period, then
/// total samples and period (wrapping, as perf's and DataFusion's sums
/// do).
type Cell = [u64; 4];

/// Where [`Cells::add`] adds a sample: to its self or its total sums.
const SELF: usize = 0;
const TOTAL: usize = 2;

/// At most this many cells are kept in one array (32 MiB); the intervals
/// past them, if any, are kept in a hash map.
const DENSE_CELLS: usize = 1 << 20;

/// The sums of the functions with `min_total` total samples or more from
/// `counts`' samples; those without an interval (no `capture` row) count
/// only in the totals that choose the functions.
pub(super) fn sums(counts: &StackCounts, min_total: u64) -> IdSums {
    let stacks = &*counts.stacks;
    let set_samples = samples_per_set(counts);
    let totals = totals(stacks, &set_samples);
    let min = min_total.max(1);
    let below = totals.iter().filter(|&&t| t > 0 && t < min).count() as u64;
    let shown = Shown::of(stacks, &totals, min);
    let sets = shown.sets(stacks, &set_samples);
    let mut cells = Cells::new(counts.intervals, shown.functions.len());
    for s in counts.leaves() {
        let Some(bucket) = s.bucket else { continue };
        if let Some(slot) = shown.slot(stacks.canonical(s.function)) {
            cells.add(bucket, slot, SELF, s.period);
        }
        let set = s.place.map(|p| stacks.set_of(p));
        for &slot in set.map_or(&[][..], |n| sets.get(n)) {
            cells.add(bucket, slot, TOTAL, s.period);
        }
    }
    IdSums {
        rows: cells.rows(&shown.functions),
        below,
    }
}

/// The samples of each set of functions, by set.
fn samples_per_set(counts: &StackCounts) -> Vec<u64> {
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
    set_samples
}

/// Each function's total samples over every interval (which says whether
/// it is shown), by its canonical id.
fn totals(stacks: &SampledStacks, set_samples: &[u64]) -> Vec<u64> {
    let mut totals = vec![0u64; stacks.last_function() as usize + 1];
    for (set, &n) in (0..).zip(set_samples) {
        if n > 0 {
            for &f in stacks.set(set) {
                if let Some(t) = totals.get_mut(stacks.canonical(f) as usize) {
                    *t = t.wrapping_add(n);
                }
            }
        }
    }
    totals
}

/// The functions with rows, each numbered by its place in name order
/// (its slot), so that cells in slot order are rows in name order.
struct Shown {
    /// Each canonical function's slot (`u32::MAX`: not shown).
    slot: Vec<u32>,
    /// Each slot's function.
    functions: Vec<u32>,
}

impl Shown {
    /// The functions with `min` total samples or more.
    fn of(stacks: &SampledStacks, totals: &[u64], min: u64) -> Self {
        let mut functions: Vec<u32> = (0..)
            .zip(totals)
            .filter(|(_, &t)| t >= min)
            .map(|(f, _)| f)
            .collect();
        functions.sort_unstable_by_key(|&f| stacks.name_order(f));
        let mut slot = vec![u32::MAX; totals.len()];
        for (n, &f) in (0..).zip(&functions) {
            slot[f as usize] = n;
        }
        Shown { slot, functions }
    }

    fn slot(&self, f: u32) -> Option<u32> {
        self.slot
            .get(f as usize)
            .copied()
            .filter(|&s| s != u32::MAX)
    }

    /// The slots of each set's shown functions, by set number, for the
    /// sets with samples (empty for the others): a sample's total sums
    /// visit only those.
    fn sets(&self, stacks: &SampledStacks, set_samples: &[u64]) -> SetList {
        let mut sets = SetList::default();
        for (set, &n) in (0..).zip(set_samples) {
            let functions = match n {
                0 => &[][..],
                _ => stacks.set(set),
            };
            sets.push(
                functions
                    .iter()
                    .filter_map(|&f| self.slot(stacks.canonical(f))),
            );
        }
        sets
    }
}

/// The cells of every (interval, slot) with samples: an array of
/// intervals by slots where it is small enough (no hashing per sample
/// and function), a hash map for the intervals past it.
struct Cells {
    dense: Vec<Cell>,
    /// Slots per interval in `dense`.
    width: usize,
    /// Intervals in `dense`.
    intervals: u64,
    past: FxHashMap<(u64, u32), Cell>,
}

impl Cells {
    fn new(intervals: u64, width: usize) -> Self {
        let fits = usize::try_from(intervals)
            .ok()
            .and_then(|n| n.checked_mul(width))
            .filter(|&n| n <= DENSE_CELLS);
        let (dense, intervals) = match fits {
            Some(n) => (vec![[0u64; 4]; n], intervals),
            None => (Vec::new(), 0),
        };
        Cells {
            dense,
            width,
            intervals,
            past: FxHashMap::default(),
        }
    }

    /// Adds a sample of `period` to the self or total sums (`at`) of
    /// `slot` in `bucket`.
    fn add(&mut self, bucket: u64, slot: u32, at: usize, period: u64) {
        let cell = match bucket < self.intervals {
            true => &mut self.dense[bucket as usize * self.width + slot as usize],
            false => self.past.entry((bucket, slot)).or_default(),
        };
        cell[at] = cell[at].wrapping_add(1);
        cell[at + 1] = cell[at + 1].wrapping_add(period);
    }

    /// The cells with samples as rows, by interval and then slot
    /// (`functions`: each slot's function).
    fn rows(self, functions: &[u32]) -> Vec<IdRow> {
        let width = self.width.max(1);
        let dense = (0..)
            .zip(self.dense.chunks(width))
            .flat_map(|(bucket, row)| {
                (0..)
                    .zip(row)
                    .map(move |(slot, &cell)| ((bucket, slot), cell))
            });
        let mut past: Vec<_> = self.past.into_iter().collect();
        past.sort_unstable_by_key(|&(key, _)| key);
        dense
            .chain(past)
            .filter(|(_, c)| c[0] > 0 || c[2] > 0)
            .map(|((bucket, slot), c)| IdRow {
                bucket,
                function: functions[slot as usize],
                self_samples: c[0],
                self_period: c[1],
                total_samples: c[2],
                total_period: c[3],
            })
            .collect()
    }
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

#[cfg(test)]
mod tests {
    use super::{Cells, SELF, TOTAL};

    /// The rows of `adds` (bucket, slot, self or total, period) into cells
    /// of `intervals` intervals by three slots.
    fn rows_of(intervals: u64, adds: &[(u64, u32, usize, u64)]) -> Vec<(u64, u32, [u64; 4])> {
        let mut cells = Cells::new(intervals, 3);
        for &(bucket, slot, at, period) in adds {
            cells.add(bucket, slot, at, period);
        }
        let functions = [30, 10, 20];
        (cells.rows(&functions).into_iter())
            .map(|r| {
                let sums = [
                    r.self_samples,
                    r.self_period,
                    r.total_samples,
                    r.total_period,
                ];
                (r.bucket, r.function, sums)
            })
            .collect()
    }

    #[test]
    fn cells_in_the_array_and_past_it_give_the_same_rows() {
        let adds = [
            (4, 2, TOTAL, 7),
            (0, 1, SELF, 5),
            (0, 1, TOTAL, 5),
            (4, 2, TOTAL, u64::MAX),
            (1, 0, TOTAL, 3),
            (0, 0, TOTAL, 2),
        ];
        let expected = vec![
            (0, 30, [0, 0, 1, 2]),
            (0, 10, [1, 5, 1, 5]),
            (1, 30, [0, 0, 1, 3]),
            (4, 20, [0, 0, 2, 6]),
        ];
        // All in the array; some past it; none in it (too many cells).
        assert_eq!(rows_of(5, &adds), expected);
        assert_eq!(rows_of(2, &adds), expected);
        assert_eq!(rows_of(u64::MAX, &adds), expected);
    }
}
