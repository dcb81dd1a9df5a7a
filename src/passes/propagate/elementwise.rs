//! Which partitionings split an op elementwise, for tactics that reach elementwise ops only
//! (ZeRO's optimizer-state sharding: `Reach::Elementwise`).

use crate::tmr::{ResultTiling, Rule, TileEffect};
use melior::ir::{operation::OperationLike, OperationRef, Value, ValueLike};

/// True when `effect` splits `op` elementwise: no reduction (but over unit dims), every result tiled on
/// one dim d with one shape, every sliced operand as large as the results (the same elements,
/// possibly permuted: `m = b1 * m + g^T`, a fused momentum update reading the gradient
/// transposed), other operands used whole (a broadcast scalar or bias). Reached forward from
/// operand `driver`, that operand itself must be read as is (`read_as_is`: the same layout up
/// to unit dims), so `transpose(w)` does not partition on a tiled `w`: compute reads the
/// gathered `w`.
pub(super) fn is_elementwise(
    op: OperationRef,
    rule: &Rule,
    effect: &TileEffect,
    driver: Option<usize>,
) -> bool {
    let shape = |value: Value| crate::ir::core::static_shape(value.r#type());
    let Some(result_shape) = op.result(0).ok().and_then(|r| shape(r.into())) else {
        return false;
    };
    let size: i64 = result_shape.iter().product();
    let Some(ResultTiling::Tile(dim)) = effect.results.first().copied() else {
        return false;
    };
    // A block of a stacked weight read or written at the counter's layer: the split dim is
    // taken whole, so each device reads (writes) its share of the block.
    if crate::rules::block_access(op) {
        return rule.reduction_factors().is_empty()
            && effect
                .results
                .iter()
                .all(|tiling| *tiling == ResultTiling::Tile(dim))
            && effect.operands.iter().enumerate().all(|(index, sliced)| {
                sliced.is_none_or(|d| {
                    op.operand(index)
                        .ok()
                        .and_then(shape)
                        .is_some_and(|s| s.get(d) == result_shape.get(dim))
                })
            });
    }
    let same_elements = |index: usize| {
        op.operand(index)
            .ok()
            .and_then(shape)
            .is_some_and(|s| s.iter().product::<i64>() == size)
    };
    // A reduction over unit dims (IREE sums a bias gradient once more over [1, 1, 1, C]) reads
    // one element per result element: still elementwise.
    rule.reduction_factors()
        .into_iter()
        .all(|factor| rule.factor(factor).size == 1)
        && effect
            .results
            .iter()
            .all(|tiling| *tiling == ResultTiling::Tile(dim))
        && op
            .results()
            .all(|r| shape(r.into()).as_ref() == Some(&result_shape))
        && effect
            .operands
            .iter()
            .enumerate()
            .all(|(index, sliced)| sliced.is_none() || same_elements(index))
        && driver.is_none_or(|index| {
            let (Some(Some(sliced)), Some(operand_shape)) = (
                effect.operands.get(index),
                op.operand(index).ok().and_then(shape),
            ) else {
                return false;
            };
            read_as_is(&operand_shape, *sliced, &result_shape, dim)
        })
}

/// True when a value of `from` shape split on `from_dim` is laid out as one of `to` shape split
/// on `to_dim`: the same dims but for unit ones, in the same order, the split one at the same
/// place among them. `[1, 1, 16, 4]` on dim 3 is `[16, 4]` on dim 1 (a unit-dim reshape of an
/// optimizer state); a `64x64` transpose, dim 0 to dim 1, is not.
fn read_as_is(from: &[i64], from_dim: usize, to: &[i64], to_dim: usize) -> bool {
    let significant = |shape: &[i64], dim: usize| {
        let kept: Vec<(usize, i64)> = shape
            .iter()
            .copied()
            .enumerate()
            .filter(|(_, size)| *size != 1)
            .collect();
        let position = kept.iter().position(|(d, _)| *d == dim);
        (
            kept.into_iter().map(|(_, size)| size).collect::<Vec<_>>(),
            position,
        )
    };
    let (from_sizes, from_position) = significant(from, from_dim);
    let (to_sizes, to_position) = significant(to, to_dim);
    from_sizes == to_sizes && from_position.is_some() && from_position == to_position
}
