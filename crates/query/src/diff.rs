//! Two captures compared per function (symbol and DSO) or per DSO: each
//! key's share of the samples in A and in B, the change, and whether the
//! samples behind it make the change significant.
//!
//! The captures may live in different datasets: [`counts`] runs over one
//! session (one capture) and gives a small per-key result; [`compare`]
//! joins two of them (a key found in one capture only has 0 samples in
//! the other) into one table.
//!
//! Attribution is self (the function of each sample's own address, as
//! `perf diff` compares), over the samples of one event. The change in
//! share is tested with the two-proportion z-test:
//!
//! ```text
//! p_A = x_A / n_A   p_B = x_B / n_B   p = (x_A + x_B) / (n_A + n_B)
//! z = (p_B - p_A) / sqrt(p (1 - p) (1/n_A + 1/n_B))
//! p-value = erfc(|z| / sqrt 2)            (two-sided)
//! ```
//!
//! where x is the key's samples and n the event's samples in a capture
//! (z = 0 and p-value = 1 when p is 0 or 1: no sample anywhere, or all of
//! them, leaves nothing to test). Samples are taken as independent draws,
//! which periodic sampling of a program's run approximates; the test says
//! nothing about run-to-run variation of the program itself.

use std::collections::{BTreeMap, BTreeSet, HashMap};
use std::sync::Arc;

use datafusion::arrow::array::{ArrayRef, Float64Array, StringArray, UInt64Array};
use datafusion::arrow::datatypes::{DataType, Field, Schema, SchemaRef};
use datafusion::arrow::record_batch::RecordBatch;

use crate::columns;
use crate::helpers::{self, Param};
use crate::{topdown, views, Error, Session};

/// What the rows are.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub enum By {
    /// Per function: symbol and DSO (`frame_functions`' names).
    #[default]
    Function,
    /// Per DSO of the sample's own address.
    Dso,
}

impl By {
    /// The key columns of this grouping.
    pub fn keys(self) -> &'static [&'static str] {
        match self {
            By::Function => &["symbol", "dso"],
            By::Dso => &["dso"],
        }
    }
}

/// One capture's samples of one event per key.
#[derive(Clone, Debug, Default)]
pub struct Counts {
    /// The event.
    pub event: String,
    /// Its samples.
    pub samples: u64,
    /// The sum of their periods.
    pub period: u64,
    /// Key (symbol and DSO, or DSO) → (samples, period).
    pub rows: BTreeMap<Vec<String>, (u64, u64)>,
    /// Level-1 top-down shares per key (self), when the capture has
    /// topdown events: the nodes, and each key's values in their order.
    pub topdown: Option<Topdown>,
}

/// A capture's level-1 top-down shares per key.
#[derive(Clone, Debug, Default)]
pub struct Topdown {
    /// The level-1 nodes (`retiring`, ...), in perf's order.
    pub nodes: Vec<String>,
    /// Key → each node's share of slots (0..1).
    pub rows: HashMap<Vec<String>, Vec<Option<f64>>>,
}

/// The samples of `event` per key in the session, with level-1 top-down
/// shares when its captures have topdown events.
pub fn counts(session: &Session, by: By, event: &str) -> Result<Counts, Error> {
    views::ensure(session, "frame_functions")?;
    views::ensure(session, "sample_symbols")?;
    let keys = by.keys().join(", ");
    let rows = session.sql(&helpers::fill(
        helpers::DIFF_COUNTS,
        &[("keys", Param::Sql(&keys)), ("event", Param::Text(event))],
    ))?;
    let mut out = Counts {
        event: event.to_string(),
        ..Counts::default()
    };
    for b in &rows {
        let cols = by
            .keys()
            .iter()
            .map(|k| columns::strings(b, k))
            .collect::<Result<Vec<_>, _>>()?;
        let samples = columns::i64s(b, "samples")?;
        let period = columns::u64s(b, "period")?;
        for i in 0..b.num_rows() {
            let key: Vec<String> = cols
                .iter()
                .map(|c| c[i].clone().unwrap_or_default())
                .collect();
            let n = samples[i].unwrap_or(0).max(0) as u64;
            let p = period[i].unwrap_or(0);
            // Periods add up wrapping, as perf's and SQL's sums do.
            out.samples += n;
            out.period = out.period.wrapping_add(p);
            let e = out.rows.entry(key).or_default();
            e.0 += n;
            e.1 = e.1.wrapping_add(p);
        }
    }
    if out.samples == 0 {
        return Err(Error::NoSamples(format!("no samples of event {event}")));
    }
    out.topdown = topdown_shares(session, by)?;
    Ok(out)
}

/// Level-1 self shares per key, `None` without topdown events.
fn topdown_shares(session: &Session, by: By) -> Result<Option<Topdown>, Error> {
    let report = match topdown::run(
        session,
        &topdown::Options {
            by: match by {
                By::Function => topdown::By::Function,
                By::Dso => topdown::By::Dso,
            },
            mode: topdown::Mode::SelfTime,
            level: 1,
            min_samples: 0,
            ..topdown::Options::default()
        },
    ) {
        Ok(r) => r,
        Err(Error::NoTopdown(_)) | Err(Error::Cpu(_)) => return Ok(None),
        Err(e) => return Err(e),
    };
    let nodes: Vec<String> = report.level1().iter().map(|n| n.name.clone()).collect();
    let rows = report
        .rows_by(by.keys())
        .into_iter()
        .map(|(k, r)| {
            let v = nodes.iter().map(|n| r.value(n)).collect();
            (k, v)
        })
        .collect();
    Ok(Some(Topdown { nodes, rows }))
}

/// The comparison of A and B as one table, largest absolute change in
/// share of samples first (then by key). Columns: the keys, `a_samples`,
/// `b_samples`, `a_pct`, `b_pct` (share of the event's samples, %),
/// `change_pp` (B − A, percentage points), `a_period_pct`,
/// `b_period_pct`, `period_change_pp`, `z`, `p_value`; when both captures
/// have topdown events, for each level-1 node `a_<node>_pct`,
/// `b_<node>_pct` and `<node>_change_pp` (null where a capture has no
/// topdown samples of the key).
pub fn compare(a: &Counts, b: &Counts, by: By) -> Result<(SchemaRef, RecordBatch), Error> {
    let keys: BTreeSet<&Vec<String>> = a.rows.keys().chain(b.rows.keys()).collect();
    struct Row<'a> {
        key: &'a Vec<String>,
        xa: u64,
        xb: u64,
        pa: f64,
        pb: f64,
        qa: f64,
        qb: f64,
        test: ZTest,
    }
    let share = |x: u64, n: u64| if n == 0 { 0.0 } else { x as f64 / n as f64 };
    let mut rows: Vec<Row> = keys
        .into_iter()
        .map(|key| {
            let (xa, ya) = a.rows.get(key).copied().unwrap_or_default();
            let (xb, yb) = b.rows.get(key).copied().unwrap_or_default();
            Row {
                key,
                xa,
                xb,
                pa: share(xa, a.samples),
                pb: share(xb, b.samples),
                qa: share(ya, a.period),
                qb: share(yb, b.period),
                test: z_test(xa, a.samples, xb, b.samples),
            }
        })
        .collect();
    rows.sort_by(|x, y| {
        let (dx, dy) = ((x.pb - x.pa).abs(), (y.pb - y.pa).abs());
        dy.total_cmp(&dx).then_with(|| x.key.cmp(y.key))
    });

    let mut fields = Vec::new();
    let mut cols: Vec<ArrayRef> = Vec::new();
    for (i, k) in by.keys().iter().enumerate() {
        fields.push(Field::new(*k, DataType::Utf8, false));
        cols.push(Arc::new(StringArray::from_iter_values(
            rows.iter().map(|r| r.key.get(i).map_or("", String::as_str)),
        )));
    }
    let mut u64_col = |name: &str, f: &dyn Fn(&Row) -> u64| {
        fields.push(Field::new(name, DataType::UInt64, false));
        cols.push(Arc::new(UInt64Array::from_iter_values(rows.iter().map(f))));
    };
    u64_col("a_samples", &|r| r.xa);
    u64_col("b_samples", &|r| r.xb);
    let mut f64_col = |name: &str, f: &dyn Fn(&Row) -> Option<f64>| {
        fields.push(Field::new(name, DataType::Float64, true));
        cols.push(Arc::new(Float64Array::from_iter(rows.iter().map(f))));
    };
    f64_col("a_pct", &|r| Some(r.pa * 100.0));
    f64_col("b_pct", &|r| Some(r.pb * 100.0));
    f64_col("change_pp", &|r| Some((r.pb - r.pa) * 100.0));
    f64_col("a_period_pct", &|r| Some(r.qa * 100.0));
    f64_col("b_period_pct", &|r| Some(r.qb * 100.0));
    f64_col("period_change_pp", &|r| Some((r.qb - r.qa) * 100.0));
    f64_col("z", &|r| Some(r.test.z));
    f64_col("p_value", &|r| Some(r.test.p_value));
    if let (Some(ta), Some(tb)) = (&a.topdown, &b.topdown) {
        for (ia, node) in ta.nodes.iter().enumerate() {
            let Some(ib) = tb.nodes.iter().position(|n| n == node) else {
                continue;
            };
            let va = |r: &Row| ta.rows.get(r.key).and_then(|v| v[ia]).map(|x| x * 100.0);
            let vb = |r: &Row| tb.rows.get(r.key).and_then(|v| v[ib]).map(|x| x * 100.0);
            f64_col(&format!("a_{node}_pct"), &va);
            f64_col(&format!("b_{node}_pct"), &vb);
            f64_col(&format!("{node}_change_pp"), &|r| Some(vb(r)? - va(r)?));
        }
    }
    let schema = Arc::new(Schema::new(fields));
    let batch =
        RecordBatch::try_new(schema.clone(), cols).map_err(|e| Error::Shape(e.to_string()))?;
    Ok((schema, batch))
}

/// A two-proportion z-test's statistic and two-sided p-value.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct ZTest {
    /// (p_B − p_A) / its standard error under "no change".
    pub z: f64,
    /// The probability of a |z| at least as large without a change.
    pub p_value: f64,
}

/// The two-proportion z-test of `xa` of `na` against `xb` of `nb` (see
/// the module's documentation).
pub fn z_test(xa: u64, na: u64, xb: u64, nb: u64) -> ZTest {
    if na == 0 || nb == 0 {
        return ZTest {
            z: 0.0,
            p_value: 1.0,
        };
    }
    let (na, nb) = (na as f64, nb as f64);
    let (pa, pb) = (xa as f64 / na, xb as f64 / nb);
    let p = (xa + xb) as f64 / (na + nb);
    let var = p * (1.0 - p) * (1.0 / na + 1.0 / nb);
    if var <= 0.0 {
        return ZTest {
            z: 0.0,
            p_value: 1.0,
        };
    }
    let z = (pb - pa) / var.sqrt();
    ZTest {
        z,
        p_value: erfc(z.abs() / std::f64::consts::SQRT_2).min(1.0),
    }
}

/// The complementary error function, by the Chebyshev fit of Numerical
/// Recipes (`erfcc`): relative error below 1.2e-7 everywhere, which keeps
/// small p-values meaningful (an absolute-error fit would round them to 0).
pub fn erfc(x: f64) -> f64 {
    let z = x.abs();
    let t = 1.0 / (1.0 + 0.5 * z);
    let poly = -z * z - 1.265_512_23
        + t * (1.000_023_68
            + t * (0.374_091_96
                + t * (0.096_784_18
                    + t * (-0.186_288_06
                        + t * (0.278_868_07
                            + t * (-1.135_203_98
                                + t * (1.488_515_87 + t * (-0.822_152_23 + t * 0.170_872_77))))))));
    let r = t * poly.exp();
    if x >= 0.0 {
        r
    } else {
        2.0 - r
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn erfc_matches_known_values() {
        // erfc(0) = 1, erfc(1) = 0.157299207050285, erfc(3) = 2.20904969985854e-5,
        // erfc(-1) = 1.84270079294971.
        for (x, want) in [
            (0.0, 1.0),
            (1.0, 0.157_299_207_050_285),
            (3.0, 2.209_049_699_858_54e-5),
            (-1.0, 1.842_700_792_949_71),
        ] {
            let got = erfc(x);
            assert!(
                ((got - want) / want).abs() < 2e-7,
                "erfc({x}) = {got}, want {want}"
            );
        }
    }

    #[test]
    fn z_test_of_a_textbook_case() {
        // 45 of 100 against 60 of 120: p = 105/220; z and p-value as
        // Python's math.erfc gives them.
        let t = z_test(45, 100, 60, 120);
        assert!((t.z - 0.739_313_093_980_944_5).abs() < 1e-12, "{t:?}");
        assert!((t.p_value - 0.459_716_900_096_861_5).abs() < 1e-7, "{t:?}");
        assert_eq!(
            z_test(0, 10, 0, 10),
            ZTest {
                z: 0.0,
                p_value: 1.0
            }
        );
        assert_eq!(
            z_test(5, 0, 1, 10),
            ZTest {
                z: 0.0,
                p_value: 1.0
            }
        );
    }

    #[test]
    fn keys_of_one_capture_only_have_zero_samples_in_the_other() {
        let counts = |rows: &[(&str, u64)]| Counts {
            event: "cpu-clock".into(),
            samples: rows.iter().map(|r| r.1).sum(),
            period: rows.iter().map(|r| r.1 * 10).sum(),
            rows: rows
                .iter()
                .map(|(k, n)| (vec![k.to_string(), "prog".into()], (*n, n * 10)))
                .collect(),
            topdown: None,
        };
        let a = counts(&[("f", 50), ("g", 50)]);
        let b = counts(&[("f", 20), ("g", 50), ("h", 30)]);
        let (_, batch) = compare(&a, &b, By::Function).unwrap();
        let sym = columns::strings(&batch, "symbol").unwrap();
        let change = columns::cast(&batch, "change_pp", &DataType::Float64).unwrap();
        let change = datafusion::arrow::array::AsArray::as_primitive::<
            datafusion::arrow::datatypes::Float64Type,
        >(&change);
        // f: 50% → 20%, h: 0 → 30%, g: 50% → 50%.
        assert_eq!(sym, [Some("f".into()), Some("h".into()), Some("g".into())]);
        assert!((change.value(0) + 30.0).abs() < 1e-9);
        assert!((change.value(1) - 30.0).abs() < 1e-9);
        let a_samples = columns::u64s(&batch, "a_samples").unwrap();
        assert_eq!(a_samples[1], Some(0));
    }
}
