use std::sync::Arc;

use datafusion::arrow::array::{Array, ArrayRef, Float64Array, Int64Array, RecordBatch};
use datafusion::arrow::datatypes::{DataType, Field, Schema};
use datafusion::datasource::MemTable;
use datafusion::prelude::{SessionConfig, SessionContext};

use super::sums::Sums;

/// Products of counts past 2^53, as topdown's standard errors sum them,
/// with a few small counts and negatives between.
fn products(n: u64) -> Vec<f64> {
    (0..n)
        .map(|k| {
            let a = (3_000_000_007 + 7919 * k) as f64;
            let b = (5_000_000_011 + 104_729 * (k % 97)) as f64;
            match k % 5 {
                0 => (k % 13) as f64,
                1 => -(a * b),
                _ => a * b,
            }
        })
        .collect()
}

/// The exact sum of whole values, rounded once.
fn exact(xs: &[f64]) -> f64 {
    xs.iter().map(|&x| x as i128).sum::<i128>() as f64
}

/// A session with perfq's `sum`, and table `t` of `(g, x)` rows cut into
/// `parts` partitions in the order of `xs`.
fn session(xs: &[f64], parts: usize) -> SessionContext {
    let config = SessionConfig::new()
        .with_target_partitions(4)
        .with_batch_size(64);
    let ctx = SessionContext::new_with_config(config);
    ctx.register_udaf(super::udaf());
    let schema = Arc::new(Schema::new(vec![
        Field::new("g", DataType::Int64, false),
        Field::new("x", DataType::Float64, true),
    ]));
    let chunk = xs.len().div_ceil(parts).max(1);
    let partitions = xs
        .chunks(chunk)
        .map(|c| {
            let g: ArrayRef = Arc::new(Int64Array::from_iter_values(
                c.iter().map(|x| (x.abs() as i64) % 3),
            ));
            let x: ArrayRef = Arc::new(Float64Array::from(c.to_vec()));
            vec![RecordBatch::try_new(schema.clone(), vec![g, x]).expect("batch")]
        })
        .collect();
    let table = MemTable::try_new(schema, partitions).expect("table");
    ctx.register_table("t", Arc::new(table)).expect("register");
    ctx
}

/// `sql`'s first column as DOUBLEs (null as NaN), in the query's order.
fn column(ctx: &SessionContext, sql: &str) -> Vec<f64> {
    let rt = tokio::runtime::Runtime::new().expect("runtime");
    let batches = rt
        .block_on(async { ctx.sql(sql).await?.collect().await })
        .expect(sql);
    batches
        .iter()
        .flat_map(|b| {
            let c = b
                .column(0)
                .as_any()
                .downcast_ref::<Float64Array>()
                .expect("DOUBLE");
            (0..c.len())
                .map(|i| if c.is_valid(i) { c.value(i) } else { f64::NAN })
                .collect::<Vec<_>>()
        })
        .collect()
}

/// In any order and any cut into partitions, the sums of whole values
/// are the same bits: the exact sum, rounded once.
#[test]
fn sums_of_whole_values_do_not_depend_on_order() {
    let xs = products(5_000);
    let mut reversed = xs.clone();
    reversed.reverse();
    let mut strided: Vec<f64> = xs.iter().step_by(2).copied().collect();
    strided.extend(xs.iter().skip(1).step_by(2));
    let total = "SELECT SUM(x) FROM t";
    let grouped = "SELECT SUM(x) FROM t GROUP BY g ORDER BY g";
    let want = column(&session(&xs, 1), grouped);
    assert_eq!(column(&session(&xs, 1), total), vec![exact(&xs)]);
    for (order, parts) in [(&xs, 7), (&reversed, 3), (&strided, 5), (&reversed, 1)] {
        let ctx = session(order, parts);
        assert_eq!(column(&ctx, total), vec![exact(&xs)], "{parts} partitions");
        assert_eq!(column(&ctx, grouped), want, "{parts} partitions");
    }
    // The plain DOUBLE sum of the same values is not the exact one.
    assert_ne!(xs.iter().sum::<f64>(), exact(&xs));
}

/// SQL's meaning is kept: no rows or only nulls sum to null, FILTER and
/// DISTINCT hold, integer sums stay DataFusion's, a window sums.
#[test]
fn sum_keeps_sql_semantics() {
    let ctx = session(&[1.0, 2.5, -4.0, 2.5], 2);
    let one = |sql: &str| column(&ctx, sql);
    assert!(one("SELECT SUM(x) FROM t WHERE x > 100")[0].is_nan());
    assert!(one("SELECT SUM(CAST(NULL AS DOUBLE)) FROM t")[0].is_nan());
    assert_eq!(one("SELECT SUM(x) FROM t"), vec![2.0]);
    assert_eq!(one("SELECT SUM(x) FILTER (WHERE x > 0) FROM t"), vec![6.0]);
    assert_eq!(one("SELECT SUM(DISTINCT x) FROM t"), vec![-0.5]);
    assert_eq!(one("SELECT CAST(SUM(g) AS DOUBLE) FROM t"), vec![6.0]);
    assert_eq!(
        one("SELECT SUM(x) OVER (ORDER BY x ROWS BETWEEN UNBOUNDED PRECEDING AND CURRENT ROW) AS s FROM t ORDER BY s"),
        vec![-4.0, -3.0, -0.5, 2.0]
    );
}

/// Fractions, NaN, infinities and values past the `i128`'s reach keep
/// their DOUBLE meaning.
#[test]
fn values_that_are_not_small_whole_numbers() {
    let sum = |xs: &[f64]| {
        let mut s = Sums::default();
        s.resize(1);
        s.add(&vec![0; xs.len()], &Float64Array::from(xs.to_vec()), None);
        s.part(0).value().expect("seen")
    };
    assert_eq!(sum(&[0.5, 0.25, 3.0]), 3.75);
    assert!(sum(&[1.0, f64::NAN]).is_nan());
    assert_eq!(sum(&[1.0, f64::INFINITY]), f64::INFINITY);
    assert_eq!(sum(&[1e30, 1.0, -1e30]), 1.0, "whole past 2^63 is exact");
    assert_eq!(sum(&[1e300, -1e300, 2.0]), 2.0);
    let big = 2f64.powi(99);
    assert_eq!(sum(&[big; 4]), big * 4.0);
    assert_eq!(
        sum(&[-(2f64.powi(62)), -(2f64.powi(62)), 1.0]),
        1.0 - 2f64.powi(63)
    );
}
