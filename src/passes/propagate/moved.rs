//! The bytes a partitioning moves: propagation's tie-break between partitionings that most
//! operands agree with (`forward` in `mod.rs`). Worked example (GShard's dispatch, 8 experts):
//! the tokens `[E, G, C, D]` tiled by group and read by expert move 1/8 of their bytes (one
//! all_to_all); read whole they would move all of them (an all_gather).

use crate::tmr::{ResultTiling, TileEffect};
use melior::ir::{operation::OperationLike, OperationRef, Value, ValueLike};

/// What taking `effect` at `op` moves along an axis of `axis_size` devices, in bytes (the
/// tie-break between partitionings most operands agree with): an operand tiled otherwise and
/// read whole is gathered, all of it; one read tiled on another dim is moved there by an
/// all_to_all, 1/n of it (GShard's dispatch: the tokens `[E, G, C, D]` split by group, read by
/// expert); a partial result is reduced, all of it.
pub(super) fn moved_bytes(
    op: OperationRef,
    effect: &TileEffect,
    tilings: &[Option<usize>],
    axis_size: i64,
) -> f64 {
    let bytes = |value: Value| crate::ir::types::tensor_bytes(value.r#type());
    let operands: f64 = effect
        .operands
        .iter()
        .zip(tilings)
        .enumerate()
        .filter(|(_, (wanted, tiled))| tiled.is_some() && wanted != tiled)
        .filter_map(|(index, (wanted, _))| {
            let whole = bytes(op.operand(index).ok()?);
            Some(if wanted.is_some() {
                whole / axis_size as f64
            } else {
                whole
            })
        })
        .sum();
    let partial: f64 = effect
        .results
        .iter()
        .enumerate()
        .filter(|(_, tiling)| matches!(tiling, ResultTiling::Sum(_)))
        .filter_map(|(index, _)| op.result(index).ok())
        .map(|result| bytes(result.into()))
        .sum();
    operands + partial
}
