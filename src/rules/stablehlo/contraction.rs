//! `dot_general` and `convolution`: their dimension numbers, read from the printed attributes.

use super::printed_list;
use crate::{
    rules::OpView,
    tmr::{FactorKind, ReductionKind, Rule, TensorDims},
};
use melior::ir::operation::OperationLike;

/// `dot_general`: batch dims, then lhs free dims, then rhs free dims; contracting dims sum.
pub(super) fn dot_general(op: &OpView) -> Result<Rule, String> {
    let (lhs, rhs) = (op.operand(0)?, op.operand(1)?);
    let numbers = op
        .op
        .attribute("dot_dimension_numbers")
        .map(|attr| attr.to_string())
        .map_err(|_| "stablehlo.dot_general without dot_dimension_numbers".to_string())?;
    let list = |key: &str| op.dims_in(&printed_list(&numbers, key), usize::MAX);
    let (lhs_batch, rhs_batch) = (
        list("lhs_batching_dimensions")?,
        list("rhs_batching_dimensions")?,
    );
    let (lhs_contract, rhs_contract) = (
        list("lhs_contracting_dimensions")?,
        list("rhs_contracting_dimensions")?,
    );
    if lhs_batch.len() != rhs_batch.len() || lhs_contract.len() != rhs_contract.len() {
        return Err(format!("stablehlo.dot_general: unpaired dims in {numbers}"));
    }
    let mut rule = Rule::new();
    let mut lhs_dims = TensorDims::unindexed(lhs.len());
    let mut rhs_dims = TensorDims::unindexed(rhs.len());
    let mut out = Vec::new();
    let pair = |l: usize, r: usize, kind, rule: &mut Rule| {
        let size = *lhs.get(l).ok_or("dot_general: lhs dim out of range")?;
        if rhs.get(r) != Some(&size) {
            return Err(format!("dot_general: lhs dim {l} and rhs dim {r} differ"));
        }
        Ok::<_, String>(rule.add_factor(size, kind))
    };
    for (&l, &r) in lhs_batch.iter().zip(&rhs_batch) {
        let factor = pair(l, r, FactorKind::PassThrough, &mut rule)?;
        (lhs_dims.0[l], rhs_dims.0[r]) = (Some(factor), Some(factor));
        out.push(Some(factor));
    }
    for (&l, &r) in lhs_contract.iter().zip(&rhs_contract) {
        let factor = pair(l, r, FactorKind::Reduction(ReductionKind::Sum), &mut rule)?;
        (lhs_dims.0[l], rhs_dims.0[r]) = (Some(factor), Some(factor));
    }
    for (shape, dims) in [(lhs, &mut lhs_dims), (rhs, &mut rhs_dims)] {
        for (d, &size) in shape.iter().enumerate() {
            if dims.0[d].is_none() {
                let factor = rule.add_factor(size, FactorKind::PassThrough);
                dims.0[d] = Some(factor);
                out.push(Some(factor));
            }
        }
    }
    if out.len() != op.result(0)?.len() {
        return Err(format!(
            "stablehlo.dot_general: result rank {} is not {}",
            op.result(0)?.len(),
            out.len()
        ));
    }
    rule.push_operand(lhs_dims);
    rule.push_operand(rhs_dims);
    rule.push_result(TensorDims(out));
    Ok(rule)
}

/// `convolution` with `dimension_numbers = #stablehlo.conv<[b, 0, 1, f]x[0, 1, i, o]->[b, 0,
/// 1, f]>`: the batch passes through, input features (`f` of the input, `i` of the kernel) are
/// summed, output features (`o`, the result's `f`) pass through; spatial dims are windows
/// (halos), used whole. With `feature_group_count = G > 1` (grouped, depthwise) the input
/// features are G groups of `i`: they pass through to the output features when each group
/// holds one of each (depthwise with multiplier 1: `f = o = G`; a chunk of several groups'
/// features maps to whole groups only then), else they are used whole. With
/// `batch_group_count = G > 1` (a grouped conv's kernel gradient) the input batch is G groups
/// matched to the output features: the same, when each group holds one of each. The batch of a gradient conv (`f`, summed) is
/// unaffected either way, so a batch-split step partitions.
pub(super) fn convolution(op: &OpView) -> Result<Rule, String> {
    let feature_groups = op.integer("feature_group_count").unwrap_or(1);
    let batch_groups = op.integer("batch_group_count").unwrap_or(1);
    let numbers = op
        .op
        .attribute("dimension_numbers")
        .map(|attr| attr.to_string())
        .map_err(|_| "stablehlo.convolution without dimension_numbers".to_string())?;
    let layouts: Vec<Vec<String>> = numbers
        .split('[')
        .skip(1)
        .filter_map(|part| part.split(']').next())
        .map(|list| {
            list.split(',')
                .map(|label| label.trim().to_string())
                .collect()
        })
        .collect();
    let [input, kernel, output] = &layouts[..] else {
        return Err(format!("stablehlo.convolution: cannot read {numbers}"));
    };
    let at = |layout: &[String], label: &str| {
        layout
            .iter()
            .position(|l| l == label)
            .ok_or_else(|| format!("stablehlo.convolution: no '{label}' in {numbers}"))
    };
    let (lhs, rhs, result) = (op.operand(0)?, op.operand(1)?, op.result(0)?);
    if input.len() != lhs.len() || kernel.len() != rhs.len() || output.len() != result.len() {
        return Err(format!(
            "stablehlo.convolution: {numbers} does not match its ranks"
        ));
    }
    let mut rule = Rule::new();
    let (mut lhs_dims, mut rhs_dims, mut out_dims) = (
        TensorDims::unindexed(lhs.len()),
        TensorDims::unindexed(rhs.len()),
        TensorDims::unindexed(result.len()),
    );
    let (b, f, i, o, out_b, out_f) = (
        at(input, "b")?,
        at(input, "f")?,
        at(kernel, "i")?,
        at(kernel, "o")?,
        at(output, "b")?,
        at(output, "f")?,
    );
    if batch_groups == 1 {
        let batch = rule.add_factor(lhs[b], FactorKind::PassThrough);
        (lhs_dims.0[b], out_dims.0[out_b]) = (Some(batch), Some(batch));
    }
    if feature_groups == 1 {
        let features = rule.add_factor(lhs[f], FactorKind::Reduction(ReductionKind::Sum));
        (lhs_dims.0[f], rhs_dims.0[i]) = (Some(features), Some(features));
    }
    let outputs = rule.add_factor(rhs[o], FactorKind::PassThrough);
    (rhs_dims.0[o], out_dims.0[out_f]) = (Some(outputs), Some(outputs));
    if batch_groups > 1 && lhs[b] == batch_groups && rhs[o] == batch_groups {
        lhs_dims.0[b] = Some(outputs);
    }
    if feature_groups > 1 && lhs[f] == feature_groups && rhs[o] == feature_groups {
        lhs_dims.0[f] = Some(outputs);
    }
    rule.push_operand(lhs_dims);
    rule.push_operand(rhs_dims);
    rule.push_result(out_dims);
    Ok(rule)
}
