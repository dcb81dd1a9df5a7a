//! `partir-tile{value=SELECTOR dim=D axis=A}`: the tile action of docs/design.md#actions.
//!
//! Every selected value `v` is replaced, in all its uses, by the identity
//! `loop A [#tile<D>] (%r) { yield slice D v[%r] }`, which propagation later pushes into `v`'s
//! users and producer. All selected values are checked before anything is rewritten, so a
//! failing tile leaves the module as it was.

use super::pad_dim::{self, Padding};
pub(crate) use super::propagate::view::split_along;
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
    let named = crate::ir::names::named_values(module);
    tile(context, module, &named, PASS, value, dim as usize, axis).map(|_| ())
}

/// Tiles every value `selector` names on `dim` along `axis`; returns how many. `who` prefixes
/// the diagnostics (the pass, or a schedule's tactic); `named` is the module's
/// [`crate::ir::names::named_values`].
pub fn tile<'c, 'a>(
    context: &'c Context,
    module: OperationRef<'c, 'a>,
    named: &[(String, crate::ir::NamedValue<'c, 'a>)],
    who: &str,
    selector: &str,
    dim: usize,
    axis: &str,
) -> Result<usize, PassError<'c>> {
    let axis_size = mesh_axis_size(module, who, axis)?;
    let targets = select_values(module, named, who, selector)?;

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
        if let Some(padding) = padding(module, who, target.value, dim, axis, axis_size)? {
            let Padding {
                chunks, from, to, ..
            } = padding;
            pad_dim::check(target.value, padding).map_err(|why| {
                error(if chunks == 1 {
                    format!(
                        "dim {dim} of '{name}' (size {size}) is not divisible by axis '{axis}' (size {axis_size}), and it cannot be padded to {to}: {why}"
                    )
                } else {
                    format!(
                        "dim {dim} of '{name}' (size {size}) is already split {chunks} ways (along {}); splitting each tile of {from} along '{axis}' (size {axis_size}) too needs it padded to {to} (the dim to {}), which cannot be done: {why}",
                        quoted(&split_along(target.value, dim)),
                        chunks * to,
                    )
                })
            })?;
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
        let value = match padding(module, who, target.value, dim, axis, axis_size)? {
            None => target.value,
            Some(padding) => {
                let padded = pad_dim::pad_value(context, target.value, padding).map_err(|why| {
                    PassError::new(
                        target.location(),
                        format!("{who}: dim {dim} of '{name}' (size {size}) does not divide over axis '{axis}' (size {axis_size}), and padding it failed: {why}"),
                    )
                })?;
                let Padding {
                    chunks, from, to, ..
                } = padding;
                let added = chunks * (to - from);
                let tiles = if chunks == 1 {
                    String::new()
                } else {
                    format!(
                        " (each of its {chunks} tiles along {} padded from {from} to {to})",
                        quoted(&split_along(padded.value, dim))
                    )
                };
                ffi::emit(
                    target.location(),
                    ffi::Severity::Remark,
                    &format!(
                        "{who}: dim {dim} of '{name}' (size {size}) padded to {} to split it {} ways along '{axis}'{tiles}: {} per device, {added} of padding (+{:.1}%) on {} values",
                        size + added,
                        chunks * axis_size,
                        to / axis_size,
                        100.0 * added as f64 / size as f64,
                        padded.values,
                    ),
                );
                padded.value
            }
        };
        core::view_in_place(context, value, dim, axis, axis_size, target.location());
    }
    Ok(count)
}

/// How `value`'s dim `dim` pads to split it along `axis` too (None: it divides). Split along
/// other axes already, each of their tiles pads at its end (docs/design.md#uneven-dims).
fn padding<'c>(
    module: OperationRef<'c, '_>,
    who: &str,
    value: melior::ir::Value,
    dim: usize,
    axis: &str,
    axis_size: i64,
) -> Result<Option<Padding>, PassError<'c>> {
    let Some(size) = static_shape(value.r#type()).and_then(|shape| shape.get(dim).copied()) else {
        return Ok(None);
    };
    let others = split_along(value, dim);
    if others.iter().any(|other| other == axis) {
        return Ok(None);
    }
    let chunks: i64 = others
        .iter()
        .map(|other| mesh_axis_size(module, who, other))
        .product::<Result<i64, _>>()?;
    if chunks == 0 || size % chunks != 0 {
        return Err(PassError::new(
            super::program_location(module),
            format!(
                "{who}: dim {dim} (size {size}) is split {chunks} ways along {}, which do not divide it",
                quoted(&others)
            ),
        ));
    }
    let from = size / chunks;
    Ok((from % axis_size != 0).then(|| Padding {
        dim,
        chunks,
        from,
        to: (from + axis_size - 1) / axis_size * axis_size,
    }))
}

fn quoted(axes: &[String]) -> String {
    let axes: Vec<String> = axes.iter().map(|axis| format!("'{axis}'")).collect();
    axes.join(", ")
}
