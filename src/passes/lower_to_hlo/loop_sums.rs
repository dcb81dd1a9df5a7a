//! Sums a loop accumulates, reduced once after it (XLA's while-loop all-reduce code motion):
//! a carry that starts from zeros and adds a reduced partial sum in every step adds the partial
//! sums instead, and is reduced after the loop. A backward scan split on the batch, or GPipe's
//! backward ticks, accumulating a weight's gradient:
//!
//! ```text
//! %g = while (%acc = zeros) {                    %p = while (%acc = zeros) {
//!   %r = all_reduce sum %x axes ["batch"]   →      %a = add %acc, (transpose %x)
//!   %a = add %acc, (transpose %r)                  yield %a }
//!   yield %a }                                   %g = all_reduce sum %p axes ["batch"]
//! ```
//!
//! Σᵢ reduce(xᵢ) = reduce(Σᵢ xᵢ) for a sum; starting from zeros, no device's start is counted
//! more than once. The accumulator must be the add's operand 0 (`acc + r`, `acc - r`), read by
//! nothing else in the loop, and yielded only; the reduce reached through layout ops only
//! ([`super::optimize::reduced_operand`]). A scan's stacked gradients, written one layer a step
//! by `dynamic_update_slice`, would move alike (linear jointly in the buffer and the update, at
//! indices the same on every device), but no zoo or published program reduces them in its loop
//! (its stacked weights' gradients are sliced or scattered), so that form is not built.

use super::optimize::{is_linear_binary, reduce_in_place, reduced_operand};
use crate::{ffi, rules::filled_with};
use melior::{
    ir::{block::BlockLike, operation::OperationLike, OperationRef, RegionLike, Value},
    Context,
};

/// Moves every such reduce of every loop in `module` after its loop; inner loops first, so
/// that a reduce moved out of an inner loop may move out of the outer one too.
pub(super) fn reduce_after_loops<'c>(context: &'c Context, module: OperationRef<'c, '_>) {
    let mut loops = Vec::new();
    ffi::walk(module, |op| {
        if crate::rules::carried_body(op).is_some() {
            loops.push(op);
        }
    });
    for op in loops.into_iter().rev() {
        for carry in 0..op.result_count() {
            reduce_after(context, op, carry);
        }
    }
}

/// Carry `carry` of `op` reduced once after the loop, when it accumulates reduced sums from
/// zeros (see the module comment). Whether it did.
fn reduce_after<'c>(context: &'c Context, op: OperationRef<'c, '_>, carry: usize) -> bool {
    let Some(body_index) = crate::rules::carried_body(op) else {
        return false;
    };
    let Some(body) = op
        .region(body_index)
        .ok()
        .and_then(|region| region.first_block())
    else {
        return false;
    };
    let (Some(terminator), Ok(argument)) = (crate::ir::last_op(body), body.argument(carry)) else {
        return false;
    };
    let argument = Value::from(argument);
    let Ok(yielded) = terminator.operand(carry) else {
        return false;
    };
    let Some(add) = ffi::result_owner(yielded) else {
        return false;
    };
    let accumulates = is_linear_binary(add)
        && ffi::uses(yielded).len() == 1
        && ffi::uses(argument).len() == 1
        && add.operand(0).is_ok_and(|first| first == argument);
    if !accumulates {
        return false;
    }
    // The other regions (a while's condition) do not read the accumulator.
    let read_elsewhere = (0..op.region_count())
        .filter(|&index| index != body_index)
        .any(|index| {
            op.region(index)
                .ok()
                .and_then(|region| region.first_block())
                .and_then(|block| block.argument(carry).ok())
                .is_some_and(|argument| !ffi::uses(argument.into()).is_empty())
        });
    if read_elsewhere {
        return false;
    }
    let Some((reduce, user, position)) = reduced_operand(add, 1) else {
        return false;
    };
    let in_body = reduce
        .block()
        .is_some_and(|block| block.to_raw().ptr == body.to_raw().ptr);
    let zeros = op.operand(carry).ok().and_then(filled_with) == Some(0.0);
    let Ok(result) = op.result(carry) else {
        return false;
    };
    if !in_body || !zeros {
        return false;
    }
    ffi::set_operand(user, position, reduce.operand(0).expect("one operand"));
    reduce_in_place(context, reduce, result.into(), op);
    // SAFETY: `reduce` is unused now and no handle to it is used after this.
    unsafe { ffi::erase(reduce) };
    true
}
