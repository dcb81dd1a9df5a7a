//! Ops that run one of their regions (`stablehlo.case`, `if`: `lax.cond`, `lax.switch`) on
//! values the regions capture from above (`case` has no operands for them): the captures are
//! the rule's inputs after the op's operands, each region's yield i is result i, and the dims
//! the branches carry from captures to results are the rule's pass-through factors, read off
//! the branches with the same union-find as a loop's ([`super::regions`]). A class the
//! branches sum over is one too when every branch yields the same results as partial sums of
//! it ([`super::sums::branch_partials`]): those results are `#partir.sum`.

use super::{
    regions::{
        blocks, defined_under, divide_regions, factor_dims, join_by_rule, ops_of, rank, shape_of,
        values_under, Classes,
    },
    Rules, Shapes,
};
use crate::{
    ffi,
    tmr::{Rule, TensorDims},
};
use melior::ir::{operation::OperationLike, OperationRef, Value};
use std::collections::HashMap;

/// The values `op`'s regions read from outside it, each once, in order of first use: what a
/// `lax.cond`'s branches take from the enclosing function (`stablehlo.case` has no operands
/// for them).
pub fn captures<'c, 'a>(op: OperationRef<'c, 'a>) -> Vec<Value<'c, 'a>> {
    let mut found: Vec<Value<'c, 'a>> = Vec::new();
    for block in blocks(op) {
        for inner in ops_of(block) {
            ffi::walk(inner, |deep| {
                for value in deep.operands() {
                    if !defined_under(value, op) && !found.contains(&value) {
                        found.push(value);
                    }
                }
            });
        }
    }
    found
}

/// The classes of an op that runs one of its regions (`stablehlo.case`, `if`): each region's
/// yield i is result i, the captures are its inputs; its operands (the branch index) are read
/// whole.
fn selected_classes(op: OperationRef, rules: &Rules, captures: &[Value]) -> Classes {
    let mut classes = Classes::new();
    // Captures are read as inputs, not blocked as values from outside.
    let mut inside = values_under(op);
    inside.extend(captures.iter().map(|&v| ffi::value_id(v)));
    for block in blocks(op) {
        for inner in ops_of(block) {
            if inner.next_in_block().is_some() {
                join_by_rule(&mut classes, inner, rules, &inside);
                continue;
            }
            for (i, yielded) in inner.operands().enumerate() {
                if let Ok(result) = op.result(i) {
                    classes.tie(yielded, result.into());
                }
            }
        }
    }
    classes
}

/// Which results each class a reduction touches leaves partial sums when tiled (see
/// [`super::sums::branch_partials`]); a class whose partial sums cannot leave the branches is
/// blocked.
fn branch_sums(op: OperationRef, classes: &mut Classes) -> HashMap<usize, Vec<usize>> {
    let reduced: Vec<usize> = classes
        .reductions
        .values()
        .flatten()
        .map(|&(_, n)| n)
        .collect();
    let mut partial_of = HashMap::new();
    for node in reduced {
        let root = classes.find(node);
        if classes.blocked[root] || partial_of.contains_key(&root) {
            continue;
        }
        match super::sums::branch_partials(op, classes, root) {
            Some(results) => {
                partial_of.insert(root, results);
            }
            None => classes.block(node),
        }
    }
    partial_of
}

/// The rule of an op that runs one of its regions on values it captures: its operands (the
/// branch index) whole, then one input per capture (in [`captures`]' order), one pass-through
/// factor per unblocked class of dims, the other dims whole.
pub fn selected_rule(op: OperationRef, rules: &Rules) -> Result<Rule, String> {
    let captures = captures(op);
    let mut classes = selected_classes(op, rules, &captures);
    let partial_of = branch_sums(op, &mut classes);
    let results: Vec<Value> = op.results().map(Value::from).collect();
    let mut rule = Rule::new();
    let mut factor_of: HashMap<usize, crate::tmr::FactorId> = HashMap::new();
    for operand in op.operands() {
        rule.push_operand(TensorDims::unindexed(rank(operand)));
    }
    for &capture in &captures {
        let dims = factor_dims(&mut classes, capture, &mut rule, &mut factor_of);
        rule.push_operand(dims);
    }
    for &result in &results {
        let dims = factor_dims(&mut classes, result, &mut rule, &mut factor_of);
        rule.push_result(dims);
    }
    for (root, factor) in factor_of {
        for &result in partial_of.get(&root).into_iter().flatten() {
            rule = rule.with_partial_result(factor, result, crate::tmr::ReductionKind::Sum);
        }
    }
    Ok(rule)
}

/// After propagation gave a region-selecting op its local results (`before`: the shapes they
/// had), divides the tiled classes inside its regions. It runs before the op's captures are
/// replaced by their local slices, so that every op inside still has its global types and its
/// rule ties the same dims as when the op's rule was read.
pub fn localize_selected<'c>(
    context: &'c melior::Context,
    op: OperationRef<'c, '_>,
    before: &Shapes,
) {
    let rules = Rules::default();
    let captures = captures(op);
    let mut classes = selected_classes(op, &rules, &captures);
    branch_sums(op, &mut classes);
    // The results' local shapes, and the captures' (a class only a capture and a partial
    // result reach is divided too).
    let mut inputs: Vec<(Value, Vec<i64>, &Vec<i64>)> = op
        .results()
        .map(Value::from)
        .zip(&before.results)
        .map(|(result, old)| (result, shape_of(result), old))
        .collect();
    for (index, &capture) in captures.iter().enumerate() {
        let input = op.operand_count() + index;
        let (Some(old), Some(local)) = (before.operands.get(input), before.local_inputs.get(input))
        else {
            continue;
        };
        inputs.push((capture, local.clone(), old));
    }
    divide_regions(context, op, &mut classes, &inputs);
}
