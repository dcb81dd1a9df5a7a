//! Partial sums carried by a loop: with a class of dims tiled, an op of the body that sums over
//! it leaves each device its part of the sum; when those parts reach the body's yield through
//! linear ops only ([`crate::rules::linear`]), the carries they reach come out partial and are
//! combined once, after the loop. JAX's backward scan:
//!
//! ```text
//! dW_acc' = dynamic_update_slice(dW_acc, xᵀ·dy, i)     (x, dy split on the batch)
//! ```
//!
//! `xᵀ·dy` sums over the batch: partial; the dynamic_update_slice is linear in the accumulator
//! and the update together, so `dW_acc` is a partial carry (and must start from zeros).

use super::regions::{blocks, ops_of, rank, Classes};
use crate::{ffi, tmr::ReductionKind};
use melior::ir::{block::BlockLike, operation::OperationLike, OperationRef, RegionLike, Value};
use std::collections::HashSet;

/// With the class `root` tiled, which carries come out partial sums: those a sum over the
/// class reaches through linear ops only ([`crate::rules::linear`]) into the body's yield.
/// None when a partial value is used otherwise (squared, compared, read by the condition,
/// added to a whole value), so the class cannot be tiled.
pub(super) fn partials(
    op: OperationRef,
    classes: &mut Classes,
    root: usize,
    carries: usize,
) -> Option<Vec<usize>> {
    use crate::rules::Linear;
    let regions = blocks(op);
    let [cond, body] = regions[..] else {
        return None;
    };
    let mut carried: Vec<usize> = Vec::new();
    for _ in 0..=2 * carries {
        let mut partial: HashSet<usize> = HashSet::new();
        for &i in &carried {
            for block in [cond, body] {
                if let Ok(argument) = block.argument(i) {
                    partial.insert(ffi::value_id(argument.into()));
                }
            }
        }
        // The condition reads no partial value.
        for inner in ops_of(cond) {
            if inner
                .operands()
                .any(|v| partial.contains(&ffi::value_id(v)))
            {
                return None;
            }
        }
        let mut yielded = Vec::new();
        let mut restart: Vec<usize> = Vec::new();
        for inner in ops_of(body) {
            let is_partial = |v: &Value| partial.contains(&ffi::value_id(*v));
            let operands: Vec<Value> = inner.operands().collect();
            if inner.next_in_block().is_none() {
                yielded = (0..operands.len().min(carries))
                    .filter(|&i| is_partial(&operands[i]))
                    .collect();
                break;
            }
            if read_in_regions(inner, &partial) {
                return None;
            }
            let partial_at: Vec<usize> = (0..operands.len())
                .filter(|&i| is_partial(&operands[i]))
                .collect();
            // A linear op joining a partial value with a carry not yet known to be partial
            // (`acc + xᵀ·dy`, a dynamic_update_slice into the accumulator) makes that carry a
            // partial candidate: start again with it.
            let carry_of = |v: &Value| {
                (0..carries).find(|&j| body.argument(j).is_ok_and(|a| Value::from(a) == *v))
            };
            let group: Vec<usize> = match linear_here(op, inner) {
                Some(Linear::All) => (0..operands.len()).collect(),
                Some(Linear::Operands(group)) => group.to_vec(),
                _ => Vec::new(),
            };
            if !partial_at.is_empty() && !group.is_empty() {
                let promoted: Vec<usize> = group
                    .iter()
                    .filter(|i| !partial_at.contains(i))
                    .filter_map(|&i| operands.get(i).and_then(carry_of))
                    .filter(|j| !carried.contains(j))
                    .collect();
                if !promoted.is_empty() {
                    restart.extend(promoted);
                    break;
                }
            }
            let makes_partial = makes_partial(op, classes, root, inner, &partial_at)?;
            if makes_partial {
                for result in inner.results() {
                    partial.insert(ffi::value_id(result.into()));
                }
            }
        }
        let mut next = carried.clone();
        for i in yielded.into_iter().chain(restart) {
            if !next.contains(&i) {
                next.push(i);
            }
        }
        next.sort_unstable();
        if next == carried {
            // A carry partial on entry must be yielded partial: every carried one is.
            return Some(carried);
        }
        carried = next;
    }
    None
}

/// How `inner`, in the body of `loop_op`, is linear for the sums the loop carries: a pipeline
/// stage's loop also widens them ([`crate::rules::pipeline::STAGE_LOOP_ATTR`]).
fn linear_here(loop_op: OperationRef, inner: OperationRef) -> Option<crate::rules::Linear> {
    if loop_op
        .attribute(crate::rules::pipeline::STAGE_LOOP_ATTR)
        .is_ok()
    {
        crate::rules::linear_in_loop_sums(inner)
    } else {
        crate::rules::linear(inner)
    }
}

/// With the class `root` tiled and operands `partial_at` of `inner` partial sums: whether its
/// results are partial (a sum over the class; a linear op of partial operands, its others
/// whole), or None when a partial value would be used otherwise (the class cannot be tiled).
fn makes_partial(
    loop_op: OperationRef,
    classes: &mut Classes,
    root: usize,
    inner: OperationRef,
    partial_at: &[usize],
) -> Option<bool> {
    use crate::rules::Linear;
    let operands: Vec<Value> = inner.operands().collect();
    let reduces: Vec<ReductionKind> = classes
        .reductions
        .get(&ffi::operation_id(inner))
        .cloned()
        .unwrap_or_default()
        .into_iter()
        .filter(|&(_, node)| classes.find(node) == root)
        .map(|(kind, _)| kind)
        .collect();
    let tiled = |classes: &mut Classes, v: Value| {
        (0..rank(v)).any(|dim| {
            let node = classes.node(v, dim);
            classes.find(node) == root
        })
    };
    if !reduces.is_empty() {
        // A sum over the tiled class: its results are partial (other kinds are not carried:
        // a partial max is not a sum).
        if reduces.iter().any(|&kind| kind != ReductionKind::Sum) || !partial_at.is_empty() {
            return None;
        }
        return Some(true);
    }
    if partial_at.is_empty() {
        return Some(false);
    }
    let whole_others = operands
        .iter()
        .enumerate()
        .filter(|(i, _)| !partial_at.contains(i))
        .all(|(_, &v)| !tiled(classes, v));
    let fits = match linear_here(loop_op, inner) {
        Some(Linear::All) => partial_at.len() == operands.len(),
        Some(Linear::Operands(group)) => {
            partial_at.iter().all(|i| group.contains(i))
                && group.iter().all(|i| partial_at.contains(i))
        }
        Some(Linear::EachAlone) => partial_at.len() == 1,
        None => false,
    };
    (fits && whole_others).then_some(true)
}

/// With the class `root` tiled, which results of an op that runs one of its regions (`case`,
/// `if`) come out partial sums: in every branch, a sum over the class reaches them through
/// linear ops only, and every branch yields the same results partial (a branch yielding a
/// whole value where another yields a partial one would be summed n times). None when that
/// does not hold: the class cannot be tiled. `lax.cond(p, lambda: x.sum(0), lambda: (2 * x).sum(0))`
/// with `x` split on dim 0: the result is partial, one all_reduce after the case.
pub(super) fn branch_partials(
    op: OperationRef,
    classes: &mut Classes,
    root: usize,
) -> Option<Vec<usize>> {
    let mut agreed: Option<Vec<usize>> = None;
    for block in blocks(op) {
        let mut partial: HashSet<usize> = HashSet::new();
        let mut yielded = Vec::new();
        for inner in ops_of(block) {
            let operands: Vec<Value> = inner.operands().collect();
            let partial_at: Vec<usize> = (0..operands.len())
                .filter(|&i| partial.contains(&ffi::value_id(operands[i])))
                .collect();
            if inner.next_in_block().is_none() {
                yielded = partial_at;
                break;
            }
            if read_in_regions(inner, &partial) {
                return None;
            }
            if makes_partial(op, classes, root, inner, &partial_at)? {
                partial.extend(inner.results().map(|r| ffi::value_id(r.into())));
            }
        }
        match &agreed {
            Some(previous) if *previous != yielded => return None,
            _ => agreed = Some(yielded),
        }
    }
    agreed
}

/// Whether a value of `partial` is read inside `op`'s own regions.
fn read_in_regions(op: OperationRef, partial: &HashSet<usize>) -> bool {
    let mut read = false;
    for region in op.regions() {
        if let Some(block) = region.first_block() {
            for nested in ops_of(block) {
                ffi::walk(nested, |deep| {
                    read |= deep.operands().any(|v| partial.contains(&ffi::value_id(v)));
                });
            }
        }
    }
    read
}
