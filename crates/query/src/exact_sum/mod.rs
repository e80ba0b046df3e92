//! `SUM` of DOUBLE values in an order-free way: the session's `sum`.
//!
//! DataFusion sums a DOUBLE column per partition and then adds the
//! partitions' sums, and the rows of a group reach the final sum in the
//! order its worker threads deliver them. Floating-point addition is not
//! associative, so the last digits of a sum changed from run to run, and
//! with them topdown's standard errors (sums of products of counts, past
//! 2^53). Here whole values (all counts cast to DOUBLE, and every DOUBLE
//! of 2^53 or more, are whole) are added exactly (`sums`); the sum is
//! that integer rounded once. Only values with a fraction, or beyond
//! ±2^100, are added as DOUBLE, in the order they come, as before.
//!
//! [`Sum`] wraps DataFusion's own `sum` and hands it every other type.

mod sums;

use sums::{Part, Sums};

use std::sync::Arc;

use datafusion::arrow::array::{
    Array, ArrayRef, AsArray, BooleanArray, Decimal128Array, Float64Array,
};
use datafusion::arrow::datatypes::{DataType, Field, FieldRef, Float64Type};
use datafusion::common::{internal_datafusion_err, Result, ScalarValue};
use datafusion::functions_aggregate::sum::Sum as Builtin;
use datafusion::logical_expr::expr::AggregateFunction;
use datafusion::logical_expr::function::{AccumulatorArgs, StateFieldsArgs};
use datafusion::logical_expr::utils::{format_state_name, AggregateOrderSensitivity};
use datafusion::logical_expr::{
    Accumulator, AggregateUDF, AggregateUDFImpl, Documentation, EmitTo, Expr, GroupsAccumulator,
    Operator, ReversedUDAF, SetMonotonicity, Signature, StatisticsArgs,
};

/// The `sum` aggregate of a perfq session: exact for whole DOUBLE values,
/// DataFusion's own for every other type.
#[derive(Debug, PartialEq, Eq, Hash, Default)]
pub(crate) struct Sum {
    builtin: Builtin,
}

/// The session's `sum`, to register in place of DataFusion's.
pub(crate) fn udaf() -> AggregateUDF {
    AggregateUDF::new_from_impl(Sum::default())
}

/// The whole part's type in the partial state: an `i128` of whole units.
const WHOLE: DataType = DataType::Decimal128(WHOLE_PRECISION, 0);
const WHOLE_PRECISION: u8 = 38;

fn is_float(t: &DataType) -> bool {
    matches!(t, DataType::Float64)
}

/// The partial state's columns: the whole part (null: nothing seen) and
/// the rest.
fn state_fields(name: &str) -> Vec<FieldRef> {
    vec![
        Field::new(format_state_name(name, "sum_whole"), WHOLE, true).into(),
        Field::new(format_state_name(name, "sum_rest"), DataType::Float64, true).into(),
    ]
}

/// `parts` as the state's two columns.
fn state_of(parts: &[Part]) -> Result<Vec<ArrayRef>> {
    let whole = Decimal128Array::from_iter(parts.iter().map(|p| p.seen.then_some(p.whole)))
        .with_precision_and_scale(WHOLE_PRECISION, 0)?;
    let rest = Float64Array::from_iter_values(parts.iter().map(|p| p.rest));
    Ok(vec![Arc::new(whole), Arc::new(rest)])
}

/// The state columns of a merge, checked.
fn state_columns(values: &[ArrayRef]) -> Result<(&Decimal128Array, &Float64Array)> {
    match values {
        [whole, rest] => Ok((
            whole
                .as_primitive_opt()
                .ok_or_else(|| internal_datafusion_err!("sum: whole state"))?,
            rest.as_primitive_opt::<Float64Type>()
                .ok_or_else(|| internal_datafusion_err!("sum: rest state"))?,
        )),
        _ => Err(internal_datafusion_err!(
            "sum: {} state columns",
            values.len()
        )),
    }
}

/// The one input column, DOUBLE as the signature coerces it.
fn floats(values: &[ArrayRef]) -> Result<&Float64Array> {
    values
        .first()
        .and_then(|v| v.as_primitive_opt::<Float64Type>())
        .ok_or_else(|| internal_datafusion_err!("sum: the input is not one DOUBLE column"))
}

/// Adds the partial sums of a merge's state to their groups.
fn merge(sums: &mut Sums, states: &[ArrayRef], group: impl Fn(usize) -> usize) -> Result<()> {
    let (whole, rest) = state_columns(states)?;
    for i in 0..whole.len() {
        if whole.is_valid(i) {
            sums.merge(group(i), whole.value(i), rest.value(i));
        }
    }
    Ok(())
}

/// The sum of one group (no GROUP BY), and its group indices (zeros).
#[derive(Debug)]
struct One(Sums, Vec<usize>);

impl One {
    fn new() -> Self {
        let mut sums = Sums::default();
        sums.resize(1);
        One(sums, Vec::new())
    }

    fn part(&mut self) -> Part {
        self.0.part(0)
    }
}

impl Accumulator for One {
    fn update_batch(&mut self, values: &[ArrayRef]) -> Result<()> {
        let values = floats(values)?;
        self.1.resize(values.len(), 0);
        self.0.add(&self.1, values, None);
        Ok(())
    }

    fn merge_batch(&mut self, states: &[ArrayRef]) -> Result<()> {
        merge(&mut self.0, states, |_| 0)
    }

    fn state(&mut self) -> Result<Vec<ScalarValue>> {
        let p = self.part();
        Ok(vec![
            ScalarValue::Decimal128(p.seen.then_some(p.whole), WHOLE_PRECISION, 0),
            ScalarValue::Float64(Some(p.rest)),
        ])
    }

    fn evaluate(&mut self) -> Result<ScalarValue> {
        Ok(ScalarValue::Float64(self.part().value()))
    }

    fn size(&self) -> usize {
        size_of_val(self) + self.0.size()
    }
}

/// The sums of many groups, by group index.
#[derive(Debug, Default)]
struct Groups(Sums);

impl GroupsAccumulator for Groups {
    fn update_batch(
        &mut self,
        values: &[ArrayRef],
        group_indices: &[usize],
        opt_filter: Option<&BooleanArray>,
        total_num_groups: usize,
    ) -> Result<()> {
        self.0.resize(total_num_groups);
        let values = floats(values)?;
        self.0.add(group_indices, values, opt_filter);
        Ok(())
    }

    fn evaluate(&mut self, emit_to: EmitTo) -> Result<ArrayRef> {
        let parts = self.0.take(emit_to);
        let sums: Float64Array = parts.iter().map(Part::value).collect();
        Ok(Arc::new(sums))
    }

    fn state(&mut self, emit_to: EmitTo) -> Result<Vec<ArrayRef>> {
        state_of(&self.0.take(emit_to))
    }

    fn merge_batch(
        &mut self,
        values: &[ArrayRef],
        group_indices: &[usize],
        total_num_groups: usize,
    ) -> Result<()> {
        self.0.resize(total_num_groups);
        merge(&mut self.0, values, |i| group_indices[i])
    }

    fn convert_to_state(
        &self,
        values: &[ArrayRef],
        opt_filter: Option<&BooleanArray>,
    ) -> Result<Vec<ArrayRef>> {
        let values = floats(values)?;
        let mut sums = Sums::default();
        sums.resize(values.len());
        let own: Vec<usize> = (0..values.len()).collect();
        sums.add(&own, values, opt_filter);
        state_of(&sums.take(EmitTo::All))
    }

    fn size(&self) -> usize {
        self.0.size()
    }
}

impl AggregateUDFImpl for Sum {
    fn name(&self) -> &str {
        self.builtin.name()
    }

    fn signature(&self) -> &Signature {
        self.builtin.signature()
    }

    fn return_type(&self, arg_types: &[DataType]) -> Result<DataType> {
        self.builtin.return_type(arg_types)
    }

    fn accumulator(&self, args: AccumulatorArgs) -> Result<Box<dyn Accumulator>> {
        match !args.is_distinct && is_float(args.return_field.data_type()) {
            true => Ok(Box::new(One::new())),
            false => self.builtin.accumulator(args),
        }
    }

    fn state_fields(&self, args: StateFieldsArgs) -> Result<Vec<FieldRef>> {
        match !args.is_distinct && is_float(args.return_type()) {
            true => Ok(state_fields(args.name)),
            false => self.builtin.state_fields(args),
        }
    }

    fn groups_accumulator_supported(&self, args: AccumulatorArgs) -> bool {
        self.builtin.groups_accumulator_supported(args)
    }

    fn create_groups_accumulator(
        &self,
        args: AccumulatorArgs,
    ) -> Result<Box<dyn GroupsAccumulator>> {
        match is_float(args.return_field.data_type()) {
            true => Ok(Box::new(Groups::default())),
            false => self.builtin.create_groups_accumulator(args),
        }
    }

    fn create_sliding_accumulator(&self, args: AccumulatorArgs) -> Result<Box<dyn Accumulator>> {
        self.builtin.create_sliding_accumulator(args)
    }

    fn reverse_expr(&self) -> ReversedUDAF {
        self.builtin.reverse_expr()
    }

    fn order_sensitivity(&self) -> AggregateOrderSensitivity {
        self.builtin.order_sensitivity()
    }

    fn documentation(&self) -> Option<&Documentation> {
        self.builtin.documentation()
    }

    fn set_monotonicity(&self, data_type: &DataType) -> SetMonotonicity {
        self.builtin.set_monotonicity(data_type)
    }

    fn simplify_expr_op_literal(
        &self,
        agg_function: &AggregateFunction,
        arg: &Expr,
        op: Operator,
        lit: &Expr,
        arg_is_left: bool,
    ) -> Result<Option<Expr>> {
        self.builtin
            .simplify_expr_op_literal(agg_function, arg, op, lit, arg_is_left)
    }

    fn value_from_stats(&self, statistics_args: &StatisticsArgs) -> Option<ScalarValue> {
        self.builtin.value_from_stats(statistics_args)
    }
}

#[cfg(test)]
mod tests;
