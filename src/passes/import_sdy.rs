//! A program's own sharding annotations read as tactics, applied before the schedule's: what a
//! user wrote with `jax.jit(in_shardings=...)` or `with_sharding_constraint` (Shardy's
//! `sdy.sharding` on @main's arguments and results, `sdy.sharding_constraint` ops) is a tile
//! of that value along each axis that splits a dim, and a pin along each axis a fully
//! replicated constraint keeps whole.
//!
//! ```text
//! %arg0: tensor<32x64xf32> {sdy.sharding = #sdy.sharding<@mesh, [{"batch"}, {}]>}
//! %h = stablehlo.dot_general ...
//! %c = sdy.sharding_constraint %h <@mesh, [{"batch"}, {"model"}]>
//! ==>  %h = stablehlo.dot_general ... {partir.name = "sdy/1"}   (uses of %c read %h)
//!      tactic "sdy/batch" on batch: tile arg0 dim 0, tile sdy/1 dim 0
//!      tactic "sdy/model" on model: tile sdy/1 dim 1
//! ```
//!
//! Results' `sdy.sharding` (`out_shardings`) are not read: the plan decides them. The
//! annotations read are removed (partir's own shardings replace them).
//!
//! A dim split by several axes (`{"batch", "model"}`) is tiled along each, major first: the
//! tactics follow the mesh's axis order. A constraint's operand is what is tiled (its
//! producer named `sdy/<n>` when it has no `partir.name`, so that a tactic can select it), and
//! the constraint is removed. Open dims (`{?}`) and sub-axes say nothing.
//!
//! GSPMD's `mhlo.sharding` strings (on arguments, and on `Sharding` custom calls: what JAX
//! writes with Shardy off, and older exported programs) are read the same way, their device
//! lists turned into the mesh's axes ([`hlo_sharding`]); one that no axes of the mesh express
//! (`maximal`, a device order of another mesh) is not read, with a warning.

mod hlo_sharding;

use super::PassError;
use crate::{
    ffi,
    ir::{func_attrs, names::NAME_ATTR, Mesh},
    schedule::{Reach, Tactic},
};
use melior::{
    ir::{
        attribute::StringAttribute, operation::OperationLike, Attribute, BlockLike, Location,
        OperationRef, RegionLike,
    },
    Context,
};

use crate::rules::{HLO_SHARDING_ATTR as HLO_SHARDING, SHARDY_SHARDING_ATTR as SDY_SHARDING};
use hlo_sharding::HloSharding;

/// The per-dim axes of a printed `#sdy.sharding<@mesh, [{"a"}, {}, {"b", "c"}]>` (closed dims
/// only; an open dim `{?}` or `{"a", ?}` reads as its closed axes). None when it is not one.
pub fn dims_of(text: &str) -> Option<Vec<Vec<String>>> {
    let body = text.trim().strip_prefix("#sdy.sharding<")?;
    let list = &body[body.find('[')? + 1..];
    let mut dims = Vec::new();
    let mut rest = list;
    loop {
        rest = rest.trim_start_matches([' ', ',']);
        if rest.starts_with(']') {
            return Some(dims);
        }
        let inner = rest.strip_prefix('{')?;
        let end = inner.find('}')?;
        let axes = inner[..end]
            .split(',')
            .map(str::trim)
            .filter(|axis| axis.starts_with('"'))
            .map(|axis| axis.trim_matches('"').to_string())
            .collect();
        dims.push(axes);
        rest = &inner[end + 1..];
    }
}

/// The axes splitting each dim of a printed Shardy or GSPMD sharding; None for text that is
/// neither; an error saying why a GSPMD sharding is not read on `mesh`.
fn read(text: &str, mesh: &Mesh) -> Result<Option<Vec<Vec<String>>>, String> {
    if text.trim_start().starts_with("#sdy.sharding") {
        return Ok(dims_of(text));
    }
    let axes: Vec<(String, i64)> = mesh
        .axes
        .iter()
        .map(|axis| (axis.name.clone(), axis.size))
        .collect();
    HloSharding::parse(text)
        .and_then(|sharding| sharding.axes(&axes))
        .map(Some)
}

/// [`read`], warning at `location` about a sharding that is not read.
fn read_or_warn(
    location: Location,
    what: &str,
    text: &str,
    mesh: &Mesh,
) -> Option<Vec<Vec<String>>> {
    read(text, mesh).unwrap_or_else(|reason| {
        ffi::emit(
            location,
            ffi::Severity::Warning,
            &format!(
                "partir-schedule: {what}'s sharding {text} is not read on mesh {mesh}: {reason}"
            ),
        );
        None
    })
}

/// One tactic per mesh axis the annotations of `module` name (in mesh order, before the
/// schedule's), with their tiles and pins; an error for an axis the mesh does not declare.
pub fn tactics<'c>(
    context: &'c Context,
    module: OperationRef<'c, '_>,
    mesh: &Mesh,
) -> Result<Vec<Tactic>, PassError<'c>> {
    let mut tiles: Vec<(String, String, usize)> = Vec::new(); // (axis, selector, dim)
    let mut pins: Vec<(String, String)> = Vec::new(); // (axis, selector)
    let check = |location: Location<'c>, what: &str, dims: &[Vec<String>]| {
        for axis in dims.iter().flatten() {
            if mesh.axis_size(axis).is_none() {
                return Err(PassError::new(
                    location,
                    format!(
                        "partir-schedule: {what} splits along '{axis}', which mesh {mesh} does not declare"
                    ),
                ));
            }
        }
        Ok(())
    };
    let mut count = 0;
    let (mut constraints, mut meshes) = (Vec::new(), Vec::new());
    ffi::walk(module, |op| {
        if let Some(text) = crate::rules::annotation_sharding(op) {
            constraints.push((op, text));
        } else if crate::rules::is_sharding_mesh(op) {
            meshes.push(op);
        }
    });
    // Shardy's mesh must be partir's (names and sizes); partir's `partir.mesh` replaces it
    // (both would be the symbol @mesh).
    for op in meshes {
        let text = op
            .attribute("mesh")
            .map(|attr| attr.to_string())
            .unwrap_or_default();
        let axes: Vec<String> = mesh
            .axes
            .iter()
            .map(|axis| format!("{:?}={}", axis.name, axis.size))
            .collect();
        if text != format!("#sdy.mesh<[{}]>", axes.join(", ")) {
            return Err(PassError::new(
                op.location(),
                format!("partir-schedule: the program's Shardy mesh {text} is not the schedule's mesh {mesh}"),
            ));
        }
        // SAFETY: declarative; the annotations name it only inside opaque attributes.
        unsafe { ffi::erase(op) };
    }
    let entry_arguments: Vec<(melior::ir::Value, String)> =
        crate::ir::names::entry_functions(module)
            .into_iter()
            .flat_map(|func| {
                let names = crate::ir::names::arguments(func);
                let block = func.region(0).ok().and_then(|region| region.first_block());
                names
                    .into_iter()
                    .enumerate()
                    .filter_map(move |(index, name)| {
                        Some((melior::ir::Value::from(block?.argument(index).ok()?), name))
                    })
            })
            .collect();
    for (op, text) in constraints {
        let Some(dims) = read_or_warn(op.location(), "a sharding constraint", &text, mesh) else {
            continue;
        };
        check(op.location(), "a sharding constraint", &dims)?;
        count += 1;
        // The constrained value itself is tiled, and the constraint goes: partir's tiles say
        // it now, and an identity left between a partial sum and the add that combines it
        // would keep the sums apart.
        let Ok(operand) = op.operand(0) else { continue };
        let selector = if let Some(producer) = ffi::result_owner(operand) {
            let index = ffi::result_number(operand).unwrap_or(0);
            let name = match producer
                .attribute(NAME_ATTR)
                .ok()
                .and_then(ffi::string_attribute)
            {
                Some(name) => name,
                None => {
                    let name = format!("sdy/{count}");
                    ffi::set_attribute(
                        producer,
                        NAME_ATTR,
                        StringAttribute::new(context, &name).into(),
                    );
                    name
                }
            };
            Some(if index == 0 {
                name
            } else {
                format!("{name}#{index}")
            })
        } else {
            entry_arguments
                .iter()
                .find(|(argument, _)| *argument == operand)
                .map(|(_, name)| name.clone())
        };
        ffi::replace_all_uses(
            melior::ir::Value::from(op.result(0).expect("one result")),
            operand,
        );
        // SAFETY: unused now; no handle to it is used after this.
        unsafe { ffi::erase(op) };
        // A value in a region's block (a loop body's argument) has no selector: only its
        // constraint goes.
        let Some(selector) = selector else { continue };
        if dims.iter().all(Vec::is_empty) {
            // Kept whole on purpose (`with_sharding_constraint(x, P())`): pinned on every axis.
            pins.extend(
                mesh.axes
                    .iter()
                    .map(|axis| (axis.name.clone(), selector.clone())),
            );
        }
        for (dim, axes) in dims.iter().enumerate() {
            tiles.extend(
                axes.iter()
                    .map(|axis| (axis.clone(), selector.clone(), dim)),
            );
        }
    }
    for func in crate::ir::names::entry_functions(module) {
        let arguments = crate::ir::names::arguments(func);
        let count = func_attrs::listed(func, "arg_attrs");
        for (index, fields) in func_attrs::entries(func, "arg_attrs", count)
            .iter()
            .enumerate()
        {
            let Some(text) = fields
                .iter()
                .find(|field| {
                    func_attrs::is_named(field, SDY_SHARDING)
                        || func_attrs::is_named(field, HLO_SHARDING)
                })
                .map(|field: &(_, Attribute)| {
                    ffi::string_attribute(field.1).unwrap_or_else(|| field.1.to_string())
                })
            else {
                continue;
            };
            let Some(selector) = arguments.get(index) else {
                continue;
            };
            let what = format!("argument '{selector}'");
            let Some(dims) = read_or_warn(func.location(), &what, &text, mesh) else {
                continue;
            };
            check(func.location(), &what, &dims)?;
            for (dim, axes) in dims.iter().enumerate() {
                tiles.extend(
                    axes.iter()
                        .map(|axis| (axis.clone(), selector.clone(), dim)),
                );
            }
        }
        // Read: partir's own shardings replace them (they name the Shardy mesh, now gone).
        for list in ["arg_attrs", "res_attrs"] {
            let count = func_attrs::listed(func, list);
            let mut entries = func_attrs::entries(func, list, count);
            let before: usize = entries.iter().map(Vec::len).sum();
            for fields in &mut entries {
                fields.retain(|field| {
                    !func_attrs::is_named(field, SDY_SHARDING)
                        && !func_attrs::is_named(field, HLO_SHARDING)
                });
            }
            if entries.iter().map(Vec::len).sum::<usize>() != before {
                func_attrs::set_entries(context, func, list, &entries);
            }
        }
    }
    // One value constrained twice (a partial sum, then its reduction) is tiled once.
    let mut seen = std::collections::HashSet::new();
    tiles.retain(|tile| seen.insert(tile.clone()));
    let mut seen = std::collections::HashSet::new();
    pins.retain(|pin| seen.insert(pin.clone()));
    Ok(mesh
        .axes
        .iter()
        .filter_map(|axis| {
            let tile: Vec<(String, usize)> = tiles
                .iter()
                .filter(|(on, _, _)| *on == axis.name)
                .map(|(_, selector, dim)| (selector.clone(), *dim))
                .collect();
            let replicate: Vec<String> = pins
                .iter()
                .filter(|(on, _)| *on == axis.name)
                .map(|(_, selector)| selector.clone())
                .collect();
            (!tile.is_empty() || !replicate.is_empty()).then(|| Tactic {
                name: format!("sdy/{}", axis.name),
                axis: axis.name.clone(),
                tile,
                replicate,
                reach: Reach::All,
                auto: None,
                pipeline: None,
                comment: vec!["the program's own sharding annotations".into()],
                line: 0,
            })
        })
        .collect())
}

#[cfg(test)]
mod tests {
    use super::dims_of;

    #[test]
    fn reads_the_axes_of_each_dim_of_a_printed_sharding() {
        let dims = |text: &str| dims_of(text).expect("a sharding");
        assert_eq!(
            dims(r#"#sdy.sharding<@mesh, [{"batch"}, {}]>"#),
            [vec!["batch".to_string()], vec![]]
        );
        assert_eq!(
            dims(r#"#sdy.sharding<@mesh, [{"batch", "model"}, {?}, {"x", ?}], replicated={"y"}>"#),
            [
                vec!["batch".to_string(), "model".to_string()],
                vec![],
                vec!["x".to_string()]
            ]
        );
        assert_eq!(dims("#sdy.sharding<@mesh, []>"), Vec::<Vec<String>>::new());
        assert!(dims_of("#stablehlo<precision DEFAULT>").is_none());
    }
}
