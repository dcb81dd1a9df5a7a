//! Ops that order or select along one dim: `sort` (and argsort: several operands sorted
//! together), `chlo.top_k`, `reverse`, and a `reduce` of several inputs (argmax: a value and
//! its index reduced together by a comparison). Every other dim passes through; the dim they
//! order along is used whole (a device would need its neighbours' elements).
//!
//! ```text
//! sort [8,16] along 1, two operands   ([i,j],[i,j]) -> ([i,j],[i,j]) replicate={j}
//! top_k [8,16] k=4                    ([i,j]) -> ([i,k],[i,k]) replicate={j,k}
//! ```

use super::reduce;
use crate::{
    rules::OpView,
    tmr::{FactorKind, Rule, TensorDims},
};

/// Factors for a shape: pass-through but where `whole[d]` (must replicate).
fn dims_of(rule: &mut Rule, shape: &[i64], whole: impl Fn(usize) -> bool) -> TensorDims {
    TensorDims(
        shape
            .iter()
            .enumerate()
            .map(|(d, &size)| {
                let kind = if whole(d) {
                    FactorKind::MustReplicate
                } else {
                    FactorKind::PassThrough
                };
                Some(rule.add_factor(size, kind))
            })
            .collect(),
    )
}

/// `sort(operands...) {dimension}`: all operands and results share their dims.
pub(super) fn sort(op: &OpView) -> Result<Rule, String> {
    let shape = op.operand(0)?;
    let dim = op.dims_in(&[op.integer("dimension").unwrap_or(-1)], shape.len())?[0];
    if op.operands.iter().chain(&op.results).any(|s| s != shape) {
        return Err("stablehlo.sort of operands of different shapes".into());
    }
    let mut rule = Rule::new();
    let dims = dims_of(&mut rule, shape, |d| d == dim);
    for _ in &op.operands {
        rule.push_operand(dims.clone());
    }
    for _ in &op.results {
        rule.push_result(dims.clone());
    }
    Ok(rule)
}

/// `chlo.top_k(x) {k}`: values and indices of the k largest along the last dim.
pub(super) fn top_k(op: &OpView) -> Result<Rule, String> {
    let shape = op.operand(0)?;
    let last = shape.len().checked_sub(1).ok_or("chlo.top_k of a scalar")?;
    let mut rule = Rule::new();
    let input = dims_of(&mut rule, shape, |d| d == last);
    let mut output = input.clone();
    let k = op.result(0)?.get(last).copied().unwrap_or(1);
    output.0[last] = Some(rule.add_factor(k, FactorKind::MustReplicate));
    rule.push_operand(input);
    for _ in &op.results {
        rule.push_result(output.clone());
    }
    Ok(rule)
}

/// `reverse(x) {dimensions}`: the reversed dims are used whole (chunk r of the result is
/// chunk n-1-r of the input, not a tile of it).
pub(super) fn reverse(op: &OpView) -> Result<Rule, String> {
    let shape = op.operand(0)?;
    let reversed = op.dims_in(&op.dense("dimensions"), shape.len())?;
    let mut rule = Rule::new();
    let dims = dims_of(&mut rule, shape, |d| reversed.contains(&d));
    rule.push_operand(dims.clone());
    rule.push_result(dims);
    Ok(rule)
}

/// `reduce(inputs..., inits...) {dimensions}`: one input is a reduction of the kind its body
/// computes ([`reduce`]); several (argmax, argmin: a value and an index reduced together)
/// share their kept dims and are reduced whole along the others.
pub(super) fn reduce_any(op: &OpView) -> Result<Rule, String> {
    let inputs = op.operands.len() / 2;
    if inputs <= 1 {
        return reduce(op);
    }
    let shape = op.operand(0)?;
    let reduced = op.dims_in(&op.dense("dimensions"), shape.len())?;
    if op.operands[..inputs].iter().any(|s| s != shape) {
        return Err("stablehlo.reduce of inputs of different shapes".into());
    }
    let mut rule = Rule::new();
    let dims = dims_of(&mut rule, shape, |d| reduced.contains(&d));
    let kept = TensorDims(
        (0..shape.len())
            .filter(|d| !reduced.contains(d))
            .map(|d| dims.0[d])
            .collect(),
    );
    for _ in 0..inputs {
        rule.push_operand(dims.clone());
    }
    for _ in 0..inputs {
        rule.push_result(kept.clone());
    }
    Ok(rule.with_whole_operands(&op.ranks_from(inputs)))
}
