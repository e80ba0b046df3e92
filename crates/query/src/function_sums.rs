//! Per-function self and total samples and periods of one event, per
//! interval of the captures' time: the `function_self` and
//! `function_total` views' sums (self: the function of each sample's own
//! address; total: every function on its stack, once), split by time. The
//! HTML page's top functions and time line read them, so that its numbers
//! are the views' and `perf report`'s, not a sum of its own.
//!
//! An interval is counted from its capture's first sample, as
//! `perfq topdown --by interval` counts (`sql/_interval_samples.sql`).
//! Only the functions with a share of the samples worth showing come
//! back: a system-wide capture has hundreds of thousands of functions
//! (each unresolved address one), nearly all with a sample or two.

use std::collections::HashMap;

use crate::helpers::{self, Param};
use crate::inclusive::{Inclusive, SAME_STACK};
use crate::stack_counts::{self, StackCounts};
use crate::{columns, named_samples, views, Error, Session};

mod kept;

/// What to sum.
#[derive(Clone, Debug)]
pub struct Options<'a> {
    /// The event (`events.name`).
    pub event: &'a str,
    /// The intervals' length (ns; 0 is taken as 1).
    pub interval_ns: u64,
    /// Only the functions with at least this many total samples, over
    /// every interval (0 is taken as 1).
    pub min_total: u64,
}

impl Options<'_> {
    /// Interval template `template` (`{event}`, `{interval_ns}`) for these
    /// options.
    fn fill(&self, template: &str) -> String {
        let interval_ns = self.interval_ns.max(1).to_string();
        let params = [
            ("event", Param::Text(self.event)),
            ("interval_ns", Param::Sql(&interval_ns)),
        ];
        helpers::fill(template, &params)
    }
}

/// The functions' sums.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Sums {
    /// Per function and interval, ordered by interval, then symbol and
    /// DSO.
    pub rows: Vec<Row>,
    /// Functions left out: with total samples, but fewer than
    /// [`Options::min_total`].
    pub below: u64,
}

/// One function's sums in one interval.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Row {
    /// The interval: (time − the capture's first sample time) / its length.
    pub bucket: u64,
    /// The function's symbol (`functions.symbol`).
    pub symbol: String,
    /// Its DSO.
    pub dso: String,
    /// Samples whose own address is in the function.
    pub self_samples: u64,
    /// The sum of their periods.
    pub self_period: u64,
    /// Samples with the function on their stack.
    pub total_samples: u64,
    /// The sum of their periods.
    pub total_period: u64,
}

/// The event's per-function sums per interval, of the functions with at
/// least [`Options::min_total`] total samples. A function has a row in an
/// interval where it has self or total samples there.
///
/// Summed natively where perfq keeps the stack tables (`kept.rs`: *the*
/// implementation then, held equal to [`by_sql`] by a test), else by the
/// SQL.
pub fn by_interval(session: &Session, opt: &Options<'_>) -> Result<Sums, Error> {
    named_samples::require_tables(session)?;
    let choose = stack_counts::Choice::given(opt.event, opt.interval_ns);
    match stack_counts::count(session, choose, false)? {
        (Some(read), _) => Ok(of_counts(&read.place()?, opt.min_total)),
        (None, _) => by_sql(session, opt),
    }
}

/// [`by_interval`]'s sums of the functions with `min_total` total samples
/// or more, from one event's samples as already counted (in their
/// intervals).
pub fn of_counts(counts: &StackCounts, min_total: u64) -> Sums {
    kept::named(kept::sums(counts, min_total), &counts.stacks)
}

/// [`of_counts`] with each function by its id among the sampled stacks'
/// functions rather than by its names: the HTML page, which reads its
/// samples once for its flame graph, time line and these, numbers its
/// functions by those ids.
pub fn of_counts_by_id(counts: &StackCounts, min_total: u64) -> IdSums {
    kept::sums(counts, min_total)
}

/// [`Sums`] with each function by its id.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct IdSums {
    /// In [`Sums::rows`]' order.
    pub rows: Vec<IdRow>,
    /// As [`Sums::below`].
    pub below: u64,
}

/// [`Row`] with its function by its id among the sampled stacks'
/// functions ([`SampledStacks::with_name`](crate::views::SampledStacks::with_name)
/// names it; the id is its name's own, [`SampledStacks::canonical`](crate::views::SampledStacks::canonical)).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct IdRow {
    /// As [`Row::bucket`].
    pub bucket: u64,
    /// The function.
    pub function: u32,
    /// As [`Row::self_samples`].
    pub self_samples: u64,
    /// As [`Row::self_period`].
    pub self_period: u64,
    /// As [`Row::total_samples`].
    pub total_samples: u64,
    /// As [`Row::total_period`].
    pub total_period: u64,
}

/// [`by_interval`] by its definition: the views' SQL, split by interval.
#[doc(hidden)]
pub fn by_sql(session: &Session, opt: &Options<'_>) -> Result<Sums, Error> {
    views::ensure(session, "sample_symbols")?;
    let samples = opt.fill(helpers::INTERVAL_SAMPLES);
    let totals = format!(
        "SELECT ft.symbol AS symbol, ft.dso AS dso, SUM(ft.samples) AS n \
         FROM function_total ft JOIN events e ON e.capture = ft.capture AND e.event_id = ft.event_id \
         WHERE e.name = {} GROUP BY ft.symbol, ft.dso",
        crate::columns::quote(opt.event)
    );
    let min = opt.min_total.max(1);
    let shown = format!("SELECT symbol, dso FROM ({totals}) WHERE n >= {min}");
    let own = format!(
        "SELECT s.bucket AS bucket, s.symbol AS symbol, s.dso AS dso, COUNT(*) AS samples, \
         SUM(s.period) AS period FROM ({samples}) s \
         JOIN ({shown}) f ON f.symbol = s.symbol AND f.dso = s.dso \
         GROUP BY s.bucket, s.symbol, s.dso"
    );
    let total = Inclusive {
        keys: &["bucket"],
        samples: &format!("({samples})"),
        stack_sets: "stack_sets",
        on: SAME_STACK,
        sums: vec![
            ("samples".into(), "COUNT(*)".into()),
            ("period".into(), "SUM(s.period)".into()),
        ],
    }
    .sql();
    let total = format!(
        "SELECT t.* FROM ({total}) t JOIN ({shown}) f ON f.symbol = t.symbol AND f.dso = t.dso"
    );
    // It reads the stack tables, and function_total (through `shown`).
    views::keep_stack_tables_for(session, &total)?;
    let mut rows: HashMap<(u64, String, String), Row> = HashMap::new();
    for (sql, is_self) in [(own, true), (total, false)] {
        add(session, &sql, is_self, &mut rows)?;
    }
    let mut rows: Vec<Row> = rows.into_values().collect();
    rows.sort_unstable_by(|a, b| (a.bucket, &a.symbol, &a.dso).cmp(&(b.bucket, &b.symbol, &b.dso)));
    let below = format!("SELECT COUNT(*) AS n FROM ({totals}) WHERE n > 0 AND n < {min}");
    let below = match session.sql(&below)?.first() {
        Some(b) => columns::i64s(b, "n")?
            .first()
            .copied()
            .flatten()
            .unwrap_or(0),
        None => 0,
    };
    Ok(Sums {
        rows,
        below: below.max(0) as u64,
    })
}

/// Adds the rows of `sql` (bucket, symbol, dso, samples, period) to
/// `rows`, as self or total sums.
fn add(
    session: &Session,
    sql: &str,
    is_self: bool,
    rows: &mut HashMap<(u64, String, String), Row>,
) -> Result<(), Error> {
    for b in &session.sql(sql)? {
        let bucket = columns::i64s(b, "bucket")?;
        let (symbol, dso) = (columns::strings(b, "symbol")?, columns::strings(b, "dso")?);
        let samples = columns::i64s(b, "samples")?;
        let period = columns::u64s(b, "period")?;
        for i in 0..b.num_rows() {
            let key = (
                bucket[i].unwrap_or(0).max(0) as u64,
                symbol[i].clone().unwrap_or_default(),
                dso[i].clone().unwrap_or_default(),
            );
            let row = rows.entry(key).or_insert_with_key(|k| Row {
                bucket: k.0,
                symbol: k.1.clone(),
                dso: k.2.clone(),
                ..Row::default()
            });
            let n = samples[i].unwrap_or(0).max(0) as u64;
            let p = period[i].unwrap_or(0);
            match is_self {
                true => (row.self_samples, row.self_period) = (n, p),
                false => (row.total_samples, row.total_period) = (n, p),
            }
        }
    }
    Ok(())
}
