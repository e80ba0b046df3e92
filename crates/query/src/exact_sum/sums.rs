//! The sums of groups of DOUBLE values, exact for whole values.
//!
//! Each group keeps an `i128` of its whole values, a DOUBLE of the rest
//! (values with a fraction, past ±2^100, NaN or infinite, added in the
//! order they come) and whether it saw a value. Most batches are counts,
//! or products of counts below 2^51: those go first into an `i64` per
//! group, one integer add per row, and into the `i128` only when the
//! `i64` could overflow or the sums are read.

use std::ops::Range;

use datafusion::arrow::array::{Array, BooleanArray, Float64Array};
use datafusion::logical_expr::EmitTo;

/// The largest magnitude added as an integer, 2^100: an `i128` holds
/// 2^27 of them. A sum that passes 2^127 all the same goes on as DOUBLE.
const WHOLE_LIMIT: f64 = 1_267_650_600_228_229_401_496_703_205_376.0;
/// 2^63: every DOUBLE from here up is whole.
const TWO_63: f64 = 9_223_372_036_854_775_808.0;
/// Below 2^51 in magnitude, a value is whole when adding and taking
/// away [`MAGIC`] leaves it unchanged.
const SMALL: f64 = 2_251_799_813_685_248.0;
/// 1.5 * 2^52: a whole `x` below [`SMALL`], added to it, is the low bits.
const MAGIC: f64 = 6_755_399_441_055_744.0;
/// How much the `i64`s may take between two folds into the `i128`s: a
/// bound on the magnitudes added since, kept under 2^62.
const LOW_ROOM: u128 = 1 << 62;
/// The rows taken at a time: the magnitudes of 2^13 values below 2^51
/// sum to less than 2^64.
const CHUNK: usize = 8192;

/// One group's sum, as read out and as merged in.
#[derive(Debug, Clone, Copy, Default, PartialEq)]
pub(super) struct Part {
    pub(super) whole: i128,
    pub(super) rest: f64,
    pub(super) seen: bool,
}

impl Part {
    /// The whole part rounded once, plus the rest; none for no value.
    pub(super) fn value(&self) -> Option<f64> {
        self.seen.then_some(self.whole as f64 + self.rest)
    }
}

/// The sums of groups `0..len`, by group index.
#[derive(Debug, Default)]
pub(super) struct Sums {
    whole: Vec<i128>,
    low: Vec<i64>,
    rest: Vec<f64>,
    seen: Vec<bool>,
    /// A bound on the magnitudes added to `low` since its last fold.
    low_used: u128,
}

impl Sums {
    pub(super) fn resize(&mut self, groups: usize) {
        self.whole.resize(groups, 0);
        self.low.resize(groups, 0);
        self.rest.resize(groups, 0.0);
        self.seen.resize(groups, false);
    }

    /// Adds each row `i` of `values` that has a value and passes
    /// `filter` to group `groups[i]`.
    pub(super) fn add(
        &mut self,
        groups: &[usize],
        values: &Float64Array,
        filter: Option<&BooleanArray>,
    ) {
        let xs = values.values();
        let clean = values.null_count() == 0 && filter.is_none();
        for start in (0..xs.len()).step_by(CHUNK) {
            let rows = start..xs.len().min(start + CHUNK);
            let small = self.small_room(&xs[rows.clone()]);
            if small && clean {
                // The common case: one integer add per row.
                for (&g, &x) in groups[rows.clone()].iter().zip(&xs[rows]) {
                    self.add_small(g, x);
                }
            } else if small {
                each_row(values, filter, rows, |i| self.add_small(groups[i], xs[i]));
            } else {
                each_row(values, filter, rows, |i| self.add_one(groups[i], xs[i]));
            }
        }
    }

    /// Whether `xs` are all whole and below 2^51 in magnitude, and fit in
    /// the `i64`s (after a fold if need be).
    fn small_room(&mut self, xs: &[f64]) -> bool {
        let (small, magnitudes) = small_wholes(xs);
        let magnitudes = u128::from(magnitudes);
        if !small || magnitudes >= LOW_ROOM {
            return false;
        }
        if self.low_used + magnitudes >= LOW_ROOM {
            self.fold();
        }
        self.low_used += magnitudes;
        true
    }

    /// Adds `x`, whole and below 2^51 in magnitude, room for it made by
    /// [`Self::small_room`].
    #[inline]
    fn add_small(&mut self, g: usize, x: f64) {
        self.low[g] = self.low[g].wrapping_add(small_whole(x));
        self.seen[g] = true;
    }

    fn add_one(&mut self, g: usize, x: f64) {
        self.seen[g] = true;
        // To i64 is one instruction; a value that does not come back
        // equal has a fraction, or is NaN or past 2^63 (i64::MAX, which
        // it saturates to, reads back as 2^63).
        let i = x as i64;
        if i as f64 == x && i != i64::MAX {
            self.add_whole(g, i128::from(i));
        } else if (TWO_63..=WHOLE_LIMIT).contains(&x.abs()) {
            self.add_whole(g, large_whole(x));
        } else {
            self.rest[g] += x;
        }
    }

    fn add_whole(&mut self, g: usize, w: i128) {
        match self.whole[g].checked_add(w) {
            Some(s) => self.whole[g] = s,
            // Past 2^127: the whole part goes on as DOUBLE.
            None => {
                self.rest[g] += self.whole[g] as f64 + w as f64;
                self.whole[g] = 0;
            }
        }
    }

    /// Adds another partial sum of the same values to group `g`.
    pub(super) fn merge(&mut self, g: usize, whole: i128, rest: f64) {
        self.seen[g] = true;
        self.add_whole(g, whole);
        self.rest[g] += rest;
    }

    /// Moves the `i64`s into the `i128`s.
    fn fold(&mut self) {
        for g in 0..self.low.len() {
            let low = std::mem::take(&mut self.low[g]);
            if low != 0 {
                self.add_whole(g, i128::from(low));
            }
        }
        self.low_used = 0;
    }

    /// Group `g`'s sum, left in place.
    pub(super) fn part(&mut self, g: usize) -> Part {
        self.fold();
        Part {
            whole: self.whole[g],
            rest: self.rest[g],
            seen: self.seen[g],
        }
    }

    /// The sums of the groups `emit` names, taken out (the rest move up).
    pub(super) fn take(&mut self, emit: EmitTo) -> Vec<Part> {
        self.fold();
        let whole = emit.take_needed(&mut self.whole);
        let rest = emit.take_needed(&mut self.rest);
        let seen = emit.take_needed(&mut self.seen);
        emit.take_needed(&mut self.low);
        whole
            .into_iter()
            .zip(rest)
            .zip(seen)
            .map(|((whole, rest), seen)| Part { whole, rest, seen })
            .collect()
    }

    pub(super) fn size(&self) -> usize {
        use std::mem::size_of;
        self.whole.capacity() * size_of::<i128>()
            + self.low.capacity() * size_of::<i64>()
            + self.rest.capacity() * size_of::<f64>()
            + self.seen.capacity() * size_of::<bool>()
    }
}

/// Whether every value of `xs` is whole and below 2^51 in magnitude,
/// and if so the sum of their magnitudes (below 2^64 for a [`CHUNK`]).
/// The loop is branch-free, for the compiler to take it a vector at a
/// time.
fn small_wholes(xs: &[f64]) -> (bool, u64) {
    xs.iter().fold((true, 0u64), |(ok, sum), &x| {
        let a = x.abs();
        let ok = ok & ((x + MAGIC) - MAGIC == x) & (a < SMALL);
        (ok, sum.wrapping_add(small_whole(a) as u64))
    })
}

/// `x`, whole and below 2^51 in magnitude, as an integer: the low bits
/// of `x + MAGIC`.
fn small_whole(x: f64) -> i64 {
    (x + MAGIC).to_bits() as i64 - MAGIC.to_bits() as i64
}

/// `x`, whole and at least 2^53 in magnitude, as an `i128`: its mantissa
/// shifted by its exponent (a float-to-i128 cast is a call).
fn large_whole(x: f64) -> i128 {
    let bits = x.to_bits();
    let shift = ((bits >> 52) & 0x7ff) as u32 - 1075;
    let mantissa = i128::from((bits & ((1 << 52) - 1)) | (1 << 52));
    let magnitude = mantissa << shift;
    match x < 0.0 {
        true => -magnitude,
        false => magnitude,
    }
}

/// `f(i)` for each row `i` of `rows` that has a value and passes the
/// filter.
fn each_row(
    values: &Float64Array,
    filter: Option<&BooleanArray>,
    rows: Range<usize>,
    mut f: impl FnMut(usize),
) {
    let kept = |i: usize| filter.is_none_or(|m| m.is_valid(i) && m.value(i));
    for i in rows {
        if values.is_valid(i) && kept(i) {
            f(i);
        }
    }
}
