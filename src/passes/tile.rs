//! `partir-tile{value=SELECTOR dim=D axis=A}`: the tile action of docs/design.md#actions.
//!
//! Every selected value `v` is replaced, in all its uses, by the identity
//! `loop A [#tile<D>] (%r) { yield slice D v[%r] }`, which propagation later pushes into `v`'s
//! users and producer. All selected values are checked before anything is rewritten, so a
//! failing tile leaves the module as it was.

use super::pad_dim;
use super::{
    defining_scope, foreign_region_owner, mesh_axis_size, pinned_along, program_location,
    select_values, sliced_along, PassError, PassResult,
};
use super::{names::TILE as PASS, options::TileOptions};
use crate::{
    ffi,
    ir::core::{self, static_shape},
};
use melior::{
    ir::{OperationRef, ValueLike},
    Context,
};

pub fn run<'c>(
    context: &'c Context,
    module: OperationRef<'c, '_>,
    options: &TileOptions,
) -> PassResult<'c> {
    let TileOptions { value, dim, axis } = options;
    let dim = *dim;
    if dim < 0 {
        return Err(PassError::new(
            program_location(module),
            format!("{PASS}: no dim given (dim=N, N >= 0)"),
        ));
    }
    tile(context, module, PASS, value, dim as usize, axis).map(|_| ())
}

/// Tiles every value `selector` names on `dim` along `axis`; returns how many. `who` prefixes
/// the diagnostics (the pass, or a schedule's tactic).
pub fn tile<'c>(
    context: &'c Context,
    module: OperationRef<'c, '_>,
    who: &str,
    selector: &str,
    dim: usize,
    axis: &str,
) -> Result<usize, PassError<'c>> {
    let axis_size = mesh_axis_size(module, who, axis)?;
    let targets = select_values(module, who, selector)?;

    for (name, target) in &targets {
        let ty = target.value.r#type();
        let error =
            |message: String| PassError::new(target.location(), format!("{who}: {message}"));
        if let Some(owner) = foreign_region_owner(target.value) {
            return Err(error(format!(
                "'{name}' is computed inside a region of '{owner}': partir tiles values of function bodies, not of other ops' regions; tile a value the '{owner}' reads or returns instead"
            )));
        }
        let shape = static_shape(ty).ok_or_else(|| {
            error(format!(
                "'{name}' has type {ty}; only statically shaped tensors can be tiled"
            ))
        })?;
        let Some(&size) = shape.get(dim) else {
            return Err(error(format!(
                "dim {dim} is out of range for '{name}' of type {ty} (rank {})",
                shape.len()
            )));
        };
        // Split along other axes already, the dim needs room for all of them at once.
        let others = split_along(target.value, dim);
        if others.is_empty() && size % axis_size != 0 {
            // Uneven: padded to whole tiles (see `pad_dim`) once every value passed its checks.
            let to = (size + axis_size - 1) / axis_size * axis_size;
            pad_dim::check(target.value, dim, to).map_err(|why| {
                error(format!(
                    "dim {dim} of '{name}' (size {size}) is not divisible by axis '{axis}' (size {axis_size}), and it cannot be padded to {to}: {why}"
                ))
            })?;
        }
        let parts: i64 = others
            .iter()
            .map(|other| mesh_axis_size(module, who, other).unwrap_or(1))
            .product();
        if !others.is_empty()
            && !others.iter().any(|other| other == axis)
            && size % (parts * axis_size) != 0
        {
            let others: Vec<String> = others.iter().map(|other| format!("'{other}'")).collect();
            return Err(error(format!(
                "dim {dim} of '{name}' (size {size}) is already split {parts} ways (along {}); splitting it along '{axis}' (size {axis_size}) too needs a multiple of {} (an uneven split of a dim split already is not supported yet)",
                others.join(", "),
                parts * axis_size
            )));
        }
        if pinned_along(target.value, axis) {
            return Err(error(format!(
                "'{name}' is pinned to stay whole along axis '{axis}' (partir.replicate)"
            )));
        }
        if sliced_along(target.value, axis)
            || core::inside_loop_over(defining_scope(target.value), axis)
        {
            return Err(error(format!(
                "'{name}' is already tiled along axis '{axis}'"
            )));
        }
    }

    let count = targets.len();
    for (name, target) in targets {
        let size = static_shape(target.value.r#type()).map_or(0, |shape| shape[dim]);
        let value = if size % axis_size == 0 {
            target.value
        } else {
            let to = (size + axis_size - 1) / axis_size * axis_size;
            let padded = pad_dim::pad_value(context, target.value, dim, to).map_err(|why| {
                PassError::new(
                    target.location(),
                    format!("{who}: dim {dim} of '{name}' (size {size}) does not divide over axis '{axis}' (size {axis_size}), and padding it failed: {why}"),
                )
            })?;
            ffi::emit(
                target.location(),
                ffi::Severity::Remark,
                &format!(
                    "{who}: dim {dim} of '{name}' (size {size}) padded to {to} to split it {axis_size} ways along '{axis}': {} per device, {} of padding (+{:.1}%) on {} values",
                    to / axis_size,
                    to - size,
                    100.0 * (to - size) as f64 / size as f64,
                    padded.values,
                ),
            );
            padded.value
        };
        core::view_in_place(context, value, dim, axis, axis_size, target.location());
    }
    Ok(count)
}

/// The axes along which `value`'s dim `dim` is already split: by tile-action views of it on
/// that dim, and by the slice chains its consumers read it through.
pub(crate) fn split_along(value: melior::ir::Value, dim: usize) -> Vec<String> {
    use super::propagate::view::{self, Consumer};
    let mut axes = Vec::new();
    for consumer in view::consumers(value) {
        let found = match consumer {
            Consumer::View(view_op) => match view::identity_view(view_op) {
                Some((_, view_dim, view_axis)) => {
                    let mut found = if view_dim == dim {
                        vec![view_axis]
                    } else {
                        Vec::new()
                    };
                    let result =
                        melior::ir::Value::from(view_op.result(0).expect("a view has a result"));
                    found.extend(split_along(result, dim));
                    found
                }
                None => Vec::new(),
            },
            Consumer::Payload(user, index) => view::operand_source(user, index)
                .slices
                .into_iter()
                .filter(|(_, slice_dim)| *slice_dim == dim)
                .map(|(slice_axis, _)| slice_axis)
                .collect(),
            Consumer::Opaque => Vec::new(),
        };
        for axis in found {
            if !axes.contains(&axis) {
                axes.push(axis);
            }
        }
    }
    axes
}
