//! Windowed ops: `reduce_window` (cumsum, max and average pooling) and `select_and_scatter`
//! (max pooling's gradient). A dim the window does not reach across (size 1, stride 1, no
//! dilation, no padding: the batch and the channels of a pool) passes through; a dim the
//! window slides along would need a halo from the neighbouring device, so it is used whole.
//!
//! ```text
//! reduce_window [8,16,4] window [1,3,1] strides [1,2,1]   ([i,j,k], [], ) -> ([i,l,k]) replicate={j,l}
//! ```

use crate::{
    rules::OpView,
    tmr::{FactorKind, Rule, TensorDims},
};
use melior::ir::operation::OperationLike;

/// Per dim, whether the window of `op` leaves it alone (see the module's docs).
fn untouched(op: &OpView, rank: usize) -> Vec<bool> {
    let ones = |name: &str| {
        let values = op.dense(name);
        move |d: usize| values.get(d).is_none_or(|&v| v == 1)
    };
    let (window, strides, base, dilation) = (
        op.dense("window_dimensions"),
        ones("window_strides"),
        ones("base_dilations"),
        ones("window_dilations"),
    );
    let padding = padding(op);
    (0..rank)
        .map(|d| {
            window.get(d) == Some(&1)
                && strides(d)
                && base(d)
                && dilation(d)
                && padding
                    .get(d)
                    .is_none_or(|&(low, high)| low == 0 && high == 0)
        })
        .collect()
}

/// The `padding` attribute (`dense<[[0, 0], [2, 0]]> : tensor<2x2xi64>`, or a splat) as
/// (low, high) per dim; empty when absent.
fn padding(op: &OpView) -> Vec<(i64, i64)> {
    let Ok(attr) = op.op.attribute("padding") else {
        return Vec::new();
    };
    let text = attr.to_string();
    let Some(body) = text
        .strip_prefix("dense<")
        .and_then(|rest| rest.split('>').next())
    else {
        return Vec::new();
    };
    let values: Vec<i64> = body
        .split(|c: char| !(c.is_ascii_digit() || c == '-'))
        .filter_map(|item| item.parse().ok())
        .collect();
    if let [splat] = values[..] {
        let rank = op.operands.first().map_or(0, Vec::len);
        return vec![(splat, splat); rank];
    }
    values.chunks(2).map(|pair| (pair[0], pair[1])).collect()
}

/// `reduce_window(inputs..., inits...)`: every input and result shares the untouched dims'
/// factors; the others are used whole (inputs) or computed whole (results).
pub(super) fn reduce_window(op: &OpView) -> Result<Rule, String> {
    let inputs = op.operands.len() / 2;
    if inputs == 0 || op.results.len() != inputs {
        return Err(format!(
            "stablehlo.reduce_window with {} operands and {} results",
            op.operands.len(),
            op.results.len()
        ));
    }
    let (input, result) = (op.operand(0)?, op.result(0)?);
    let passing = untouched(op, input.len());
    let mut rule = Rule::new();
    let mut in_dims = TensorDims::unindexed(input.len());
    let mut out_dims = TensorDims::unindexed(result.len());
    for d in 0..input.len().min(result.len()) {
        if passing[d] {
            let factor = rule.add_factor(input[d], FactorKind::PassThrough);
            (in_dims.0[d], out_dims.0[d]) = (Some(factor), Some(factor));
        } else {
            in_dims.0[d] = Some(rule.add_factor(input[d], FactorKind::MustReplicate));
            out_dims.0[d] = Some(rule.add_factor(result[d], FactorKind::MustReplicate));
        }
    }
    for _ in 0..inputs {
        rule.push_operand(in_dims.clone());
    }
    for _ in 0..inputs {
        rule.push_result(out_dims.clone());
    }
    // The inits (scalars) are used whole.
    Ok(rule.with_whole_operands(&op.ranks_from(inputs)))
}

/// `select_and_scatter(operand, source, init)`: the operand, the result (its shape) and the
/// source (the windowed shape) share the untouched dims' factors.
pub(super) fn select_and_scatter(op: &OpView) -> Result<Rule, String> {
    let (input, source) = (op.operand(0)?, op.operand(1)?);
    let passing = untouched(op, input.len());
    let mut rule = Rule::new();
    let mut in_dims = TensorDims::unindexed(input.len());
    let mut source_dims = TensorDims::unindexed(source.len());
    for d in 0..input.len().min(source.len()) {
        if passing[d] {
            let factor = rule.add_factor(input[d], FactorKind::PassThrough);
            (in_dims.0[d], source_dims.0[d]) = (Some(factor), Some(factor));
        } else {
            in_dims.0[d] = Some(rule.add_factor(input[d], FactorKind::MustReplicate));
            source_dims.0[d] = Some(rule.add_factor(source[d], FactorKind::MustReplicate));
        }
    }
    rule.push_operand(in_dims.clone());
    rule.push_operand(source_dims);
    rule.push_operand(TensorDims::unindexed(op.operand(2)?.len()));
    rule.push_result(in_dims);
    Ok(rule)
}
