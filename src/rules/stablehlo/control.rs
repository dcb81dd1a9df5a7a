//! Control flow: `while` (`lax.scan`, `fori_loop`, `lax.while_loop`, JAX's threefry hash). A
//! loop carries its operands through its condition and body into its results; which carried
//! dims can be tiled is read off the body ([`crate::rules::regions`]), and a tiled loop's body
//! runs on local shapes. Its cost is its body's times its trip count.
//!
//! ```text
//! lax.scan over 4 stacked layers, carrying x: [8, 16] and the layer index:
//! stablehlo.while: ([],[i,_],[_,_,_]) -> ([],[i,_],[_,_,_]) replicate={...}
//! ```

use crate::rules::{
    branches::{localize_selected, selected_rule},
    regions::{carried_rule, localize},
    OpView, Rules, Shapes,
};
use crate::tmr::Rule;
use melior::ir::{
    block::BlockLike, operation::OperationLike, BlockRef, OperationRef, RegionLike, Value,
    ValueLike,
};

/// The body (region 1) yields the carries; the condition (region 0) yields a predicate.
const BODY: &[usize] = &[1];

pub(super) fn while_rule(op: &OpView) -> Result<Rule, String> {
    carried_rule(op.op, &Rules::default(), op.operands.len(), BODY)
}

pub(super) fn while_retype<'c>(
    context: &'c melior::Context,
    op: OperationRef<'c, '_>,
    before: &Shapes,
) {
    localize(context, op, before, op.operand_count(), BODY);
}

/// `case` / `if` (`lax.cond`, `lax.switch`): one region runs, on values its branches capture
/// (the rule's inputs after the index); each branch's yield i is result i. Dims the branches
/// carry through from captures to results pass through; the index is read whole.
///
/// ```text
/// lax.cond(p, lambda: x * 2.0, lambda: jnp.sin(x)), x: [8, 4] captured:
/// stablehlo.case: ([],[i,j]) -> ([i,j])
/// ```
pub(super) fn case_rule(op: &OpView) -> Result<Rule, String> {
    selected_rule(op.op, &Rules::default())
}

pub(super) fn case_retype<'c>(
    context: &'c melior::Context,
    op: OperationRef<'c, '_>,
    before: &Shapes,
) {
    localize_selected(context, op, before);
}

/// How a `while` counts, when it counts as JAX's loops do: the condition is `i < limit` (a
/// constant), `i` (carry `counter`) starts at a constant and the body adds a constant step.
pub(super) struct Count {
    pub(super) counter: usize,
    pub(super) start: i64,
    pub(super) limit: i64,
    pub(super) step: i64,
}

impl Count {
    pub(super) fn trips(&self) -> i64 {
        ((self.limit - self.start) + self.step - 1)
            .div_euclid(self.step)
            .max(0)
    }
}

pub(super) fn count(op: OperationRef) -> Option<Count> {
    let cond = op.region(0).ok()?.first_block()?;
    let body = op.region(1).ok()?.first_block()?;
    // `terminator()` asks for the terminator trait, which an unregistered op does not have.
    let predicate = last_op(cond)?.operand(0).ok()?;
    let compare = crate::ffi::result_owner(predicate)?;
    if !crate::ffi::op_is(compare, "stablehlo.compare")
        || !compare
            .attribute("comparison_direction")
            .is_ok_and(|attr| attr.to_string().contains("LT"))
    {
        return None;
    }
    let counter = compare.operand(0).ok()?;
    let index = (0..cond.argument_count()).find(|&i| {
        cond.argument(i)
            .is_ok_and(|arg| Value::from(arg) == counter)
    })?;
    let limit = integer_constant(compare.operand(1).ok()?)?;
    let start = integer_constant(op.operand(index).ok()?)?;
    let next = last_op(body)?.operand(index).ok()?;
    let add = crate::ffi::result_owner(next)?;
    if !crate::ffi::op_is(add, "stablehlo.add") {
        return None;
    }
    let argument = Value::from(body.argument(index).ok()?);
    let step = (0..2).find_map(|i| {
        let (this, other) = (add.operand(i).ok()?, add.operand(1 - i).ok()?);
        (this == argument)
            .then(|| integer_constant(other))
            .flatten()
    })?;
    (step > 0).then_some(Count {
        counter: index,
        start,
        limit,
        step,
    })
}

/// How many times a `while` runs its body ([`count`]).
pub(super) fn trip_count(op: OperationRef) -> Option<i64> {
    count(op).map(|count| count.trips())
}

fn last_op<'c, 'a>(block: BlockRef<'c, 'a>) -> Option<OperationRef<'c, 'a>> {
    crate::rules::regions::ops_of(block).pop()
}

/// The value of a scalar integer `stablehlo.constant` (`dense<8> : tensor<i32>`).
pub(super) fn integer_constant(value: Value) -> Option<i64> {
    let op = crate::ffi::result_owner(value)?;
    let scalar = crate::ir::core::static_shape(value.r#type()).is_some_and(|s| s.is_empty());
    if !crate::ffi::op_is(op, "stablehlo.constant") || !scalar {
        return None;
    }
    crate::ffi::scalar_value(op.attribute("value").ok()?).map(|v| v as i64)
}
