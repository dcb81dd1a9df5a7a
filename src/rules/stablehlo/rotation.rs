//! `jnp.roll` in StableHLO, and its transpose (see [`crate::rules::rotation`]).

use super::batching::is_zero;
use crate::{
    ffi,
    ir::core::static_shape,
    rules::{
        model::Entries,
        rotation::{shift_of, Piece, Rotated},
        OpView,
    },
};
use melior::ir::{operation::OperationLike, OperationRef, Value, ValueLike};

pub(super) fn register(rules: &mut Entries) {
    rules.add_rotation("stablehlo.concatenate", concatenated);
    rules.add_rotation("stablehlo.add", summed);
}

/// A stride-1 `stablehlo.slice` that cuts one dim only: (its source, the dim, its first row,
/// its rows, the slice).
fn window<'c, 'a>(
    value: Value<'c, 'a>,
) -> Option<(Value<'c, 'a>, usize, i64, i64, OperationRef<'c, 'a>)> {
    let slice = ffi::result_owner(value)?;
    if !ffi::op_is(slice, "stablehlo.slice") {
        return None;
    }
    let view = OpView::new(slice);
    if view.dense("strides").iter().any(|&stride| stride != 1) {
        return None;
    }
    let source = slice.operand(0).ok()?;
    let shape = static_shape(source.r#type())?;
    let (start, limit) = (view.dense("start_indices"), view.dense("limit_indices"));
    let mut cut = (0..shape.len()).filter(|&d| start[d] != 0 || limit[d] != shape[d]);
    let dim = cut.next()?;
    if cut.next().is_some() {
        return None;
    }
    Some((source, dim, start[dim], limit[dim] - start[dim], slice))
}

/// The rotation the pieces make of one source along one dim, the result shaped as it.
fn rotated<'c, 'a>(
    op: OperationRef<'c, 'a>,
    windows: Vec<(Value<'c, 'a>, usize, Piece, Vec<OperationRef<'c, 'a>>)>,
) -> Option<Rotated<'c, 'a>> {
    let (source, dim, _, _) = windows.first()?.clone();
    let same = windows
        .iter()
        .all(|(other, other_dim, _, _)| *other == source && *other_dim == dim);
    let result = op.result(0).ok()?;
    if !same || result.r#type() != source.r#type() {
        return None;
    }
    let n = static_shape(source.r#type())?[dim];
    let pieces: Vec<Piece> = windows.iter().map(|(_, _, piece, _)| *piece).collect();
    let shift = shift_of(&pieces, n)?;
    let mut parts = vec![op];
    parts.extend(windows.into_iter().flat_map(|(_, _, _, ops)| ops));
    Some(Rotated {
        source,
        dim,
        shift,
        parts,
    })
}

/// `concatenate(slice x [k, n), slice x [0, k))` along the slices' dim: `jnp.roll(x, n - k)`.
fn concatenated<'c, 'a>(op: OperationRef<'c, 'a>) -> Option<Rotated<'c, 'a>> {
    let along = OpView::new(op).integer("dimension")? as usize;
    let mut to = 0;
    let mut windows = Vec::new();
    for operand in op.operands() {
        let (source, dim, from, rows, slice) = window(operand)?;
        if dim != along {
            return None;
        }
        windows.push((source, dim, Piece { from, to, rows }, vec![slice]));
        to += rows;
    }
    rotated(op, windows)
}

/// `add(pad(slice x [1, n), high 1), pad(slice x [0, 1), low 1))`, zeros padded on the
/// slices' dim: the transpose of a concatenation of slices (`jnp.roll(x, -1)`).
fn summed<'c, 'a>(op: OperationRef<'c, 'a>) -> Option<Rotated<'c, 'a>> {
    let mut windows = Vec::new();
    for operand in op.operands() {
        let pad = ffi::result_owner(operand)?;
        if !ffi::op_is(pad, "stablehlo.pad") || !pad.operand(1).is_ok_and(is_zero) {
            return None;
        }
        let view = OpView::new(pad);
        if view.dense("interior_padding").iter().any(|&rows| rows != 0) {
            return None;
        }
        let (source, dim, from, rows, slice) = window(pad.operand(0).ok()?)?;
        let (low, high) = (
            view.dense("edge_padding_low"),
            view.dense("edge_padding_high"),
        );
        let elsewhere = (0..low.len()).any(|d| d != dim && (low[d] != 0 || high[d] != 0));
        if elsewhere {
            return None;
        }
        let to = *low.get(dim)?;
        windows.push((source, dim, Piece { from, to, rows }, vec![pad, slice]));
    }
    rotated(op, windows)
}
