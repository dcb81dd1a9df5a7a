//! `partir-export-shard`: PartIR:HLO → upstream MLIR's `shard` dialect (docs/design.md#export-to-upstream-shard).
//!
//! ```text
//! partir.mesh @mesh ["batch"=4, "model"=2]
//!     shard.grid @mesh(shape = 4x2) {shard.axis_names = ["batch", "model"], sym_visibility = "private"}
//! partir_hlo.all_gather %x dim 0 axes ["model", "batch"]
//!     shard.all_gather %x on @mesh grid_axes = [1, 0] gather_axis = 0
//! partir_hlo.all_reduce max %x axes ["batch"]
//!     shard.all_reduce %x on @mesh grid_axes = [0] reduction = max
//! partir_hlo.reduce_scatter sum %x dim 1 axes [..]   shard.reduce_scatter .. scatter_axis = 1
//! partir_hlo.all_slice %x dim 1 axes [..]            shard.all_slice .. slice_axis = 1
//! partir_hlo.all_to_all %x split 1 concat 0 axes [..]
//!     shard.all_to_all .. split_axis = 1 concat_axis = 0
//! {partir_hlo.sharding = #partir_hlo.sharding<[{"batch", "model"}, {}]>}
//!     {shard.split_axes = #shard<axisarray[[0, 1], []]>}
//! ```
//!
//! Grid axes are indices, so the names live on in the grid's `shard.axis_names`; a collective's
//! `grid_axes` keep its axes' order (major to minor, as the in-group index is formed). The grid
//! is private, so `symbol-dce` removes it once `convert-shard-to-mpi` has used it up.
//!
//! The program stays in SPMD form: tensors have their local shapes, as after upstream's
//! `shard-partition`. Argument and result shardings therefore cannot be `shard.shard`
//! annotations (those describe the global program, and `convert-shard-to-mpi` refuses them);
//! they become `shard.split_axes` argument/result attributes, in the `split_axes` notation of
//! `shard.sharding` (`[[]]` for a rank-0 value, which is always replicated). `partir.name`
//! attributes (debug names) are dropped. Any other partir op, attribute or type is an error.

use super::{names::EXPORT_SHARD as PASS, program_location, PassError, PassResult};
use crate::{
    ffi,
    ir::{
        builder::Builder, hlo, mesh::MESH_OP, names::NAME_ATTR, sharding::SHARDING_ATTR, Mesh,
        Sharding,
    },
    tmr::ReductionKind,
};
use melior::{
    ir::{
        attribute::{
            ArrayAttribute, DenseI64ArrayAttribute, DictionaryAttribute, FlatSymbolRefAttribute,
            IntegerAttribute, StringAttribute,
        },
        block::BlockLike,
        operation::{OperationLike, OperationMutLike, WalkOrder, WalkResult},
        Attribute, Identifier, OperationRef, RegionLike, Type, Value, ValueLike,
    },
    Context,
};

/// Argument/result attribute carrying the sharding, in grid-axis indices.
const SPLIT_AXES_ATTR: &str = "shard.split_axes";
/// Discardable attribute of the grid carrying the mesh's axis names.
const AXIS_NAMES_ATTR: &str = "shard.axis_names";

pub fn run<'c>(context: &'c Context, module: OperationRef<'c, '_>) -> PassResult<'c> {
    let Some((mesh, _)) = Mesh::find(module) else {
        return Err(PassError::new(
            program_location(module),
            format!(
                "{PASS}: the module declares no partir.mesh; export a partir-lower-to-hlo program"
            ),
        ));
    };
    let collectives = collectives(module, PASS)?;
    // shard.all_reduce takes one operand: a combined all_reduce is exported as one per operand.
    for op in collectives {
        for single in super::lower_to_hlo::combine::split(context, op) {
            export_collective(context, &mesh, single)?;
        }
    }
    for func in crate::ir::names::functions(module) {
        export_shardings(context, &mesh, func)?;
    }
    replace_mesh(context, &mesh, module);
    drop_names(module);
    super::padding_share::drop_all(module);
    check_no_partir_left(module, PASS, &[])
}

/// The `partir_hlo` collectives of the module; an error for any other partir op (Core ops
/// mean the program was not lowered).
pub(super) fn collectives<'c, 'a>(
    module: OperationRef<'c, 'a>,
    pass: &str,
) -> Result<Vec<OperationRef<'c, 'a>>, PassError<'c>> {
    let mut found = Vec::new();
    let mut error = None;
    ffi::walk(module, |op| {
        let name = op_name(op);
        if error.is_some() || name == MESH_OP {
            return;
        }
        if name.starts_with("partir_hlo.") {
            found.push(op);
        } else if name.starts_with("partir.") {
            error = Some(PassError::new(
                op.location(),
                format!(
                    "{pass}: cannot export PartIR:Core op '{name}'; run partir-lower-to-hlo first"
                ),
            ));
        }
    });
    match error {
        Some(error) => Err(error),
        None => Ok(found),
    }
}

fn op_name(op: OperationRef) -> String {
    op.name().as_string_ref().as_str().unwrap_or("").to_string()
}

/// The grid index of each axis, or the error naming the first axis not in the mesh.
pub(super) fn grid_axes(mesh: &Mesh, axes: &[String]) -> Result<Vec<usize>, String> {
    axes.iter()
        .map(|axis| {
            mesh.axes
                .iter()
                .position(|candidate| &candidate.name == axis)
                .ok_or_else(|| format!("axis '{axis}' is not in mesh {mesh}"))
        })
        .collect()
}

/// `array<i16: 0, 1>`, the type of `grid_axes`.
fn grid_axes_attribute<'c>(context: &'c Context, indices: &[usize]) -> Attribute<'c> {
    let text = if indices.is_empty() {
        "array<i16>".to_string()
    } else {
        let list: Vec<String> = indices.iter().map(usize::to_string).collect();
        format!("array<i16: {}>", list.join(", "))
    };
    Attribute::parse(context, &text).expect("a dense i16 array")
}

/// The shard reduction for a `partir::ReductionKind` (0 sum, 1 max, 2 min, 3 mul).
fn reduction(context: &Context, kind: ReductionKind) -> Option<Attribute<'_>> {
    let name = match kind {
        ReductionKind::Sum => "sum",
        ReductionKind::Max => "max",
        ReductionKind::Min => "min",
        ReductionKind::Mul => "product",
        ReductionKind::Other => return None,
    };
    Attribute::parse(context, &format!("#shard<partial {name}>"))
}

fn export_collective<'c, 'a>(
    context: &'c Context,
    mesh: &Mesh,
    op: OperationRef<'c, 'a>,
) -> PassResult<'c> {
    let name = op_name(op);
    let fail = |message: String| PassError::new(op.location(), format!("{PASS}: {message}"));
    let axes = op
        .attribute("axes")
        .ok()
        .and_then(hlo::string_array)
        .ok_or_else(|| fail(format!("'{name}' has no axes")))?;
    let indices = grid_axes(mesh, &axes).map_err(fail)?;
    let operand = op
        .operand(0)
        .map_err(|_| fail(format!("'{name}' has no operand")))?;
    let result_type = op
        .result(0)
        .map_err(|_| fail(format!("'{name}' has no result")))?
        .r#type();
    let rank = ffi::tensor_shape(operand.r#type()).map_or(0, |shape| shape.len()) as i64;
    let dim =
        |attribute: &str, shard_name: &str| -> Result<(String, Attribute<'c>), PassError<'c>> {
            let value = hlo::integer_attribute(op, attribute)
                .ok_or_else(|| fail(format!("'{name}' has no {attribute}")))?;
            if value < 0 || value >= rank {
                return Err(fail(format!(
                    "'{name}' {attribute} {value} is not a dim of its rank-{rank} operand"
                )));
            }
            Ok((
                shard_name.to_string(),
                IntegerAttribute::new(Type::index(context), value).into(),
            ))
        };
    let kind = || -> Result<(String, Attribute<'c>), PassError<'c>> {
        let kind =
            hlo::reduction(op).ok_or_else(|| fail(format!("'{name}' has no reduction kind")))?;
        let attribute = reduction(context, kind).ok_or_else(|| {
            fail(format!(
                "'{name}' has reduction kind {kind}, which shard lacks"
            ))
        })?;
        Ok(("reduction".to_string(), attribute))
    };
    let (shard_op, specific) = match name.as_str() {
        "partir_hlo.all_gather" => ("shard.all_gather", vec![dim("dim", "gather_axis")?]),
        "partir_hlo.all_reduce" => ("shard.all_reduce", vec![kind()?]),
        "partir_hlo.reduce_scatter" => (
            "shard.reduce_scatter",
            vec![kind()?, dim("dim", "scatter_axis")?],
        ),
        "partir_hlo.all_slice" => ("shard.all_slice", vec![dim("dim", "slice_axis")?]),
        "partir_hlo.all_to_all" => (
            "shard.all_to_all",
            vec![
                dim("split_dim", "split_axis")?,
                dim("concat_dim", "concat_axis")?,
            ],
        ),
        other => return Err(fail(format!("'{other}' has no shard counterpart"))),
    };
    let mut attributes: Vec<(String, Attribute<'c>)> = vec![
        (
            "grid".to_string(),
            FlatSymbolRefAttribute::new(context, &mesh.symbol).into(),
        ),
        (
            "grid_axes".to_string(),
            grid_axes_attribute(context, &indices),
        ),
    ];
    attributes.extend(specific);
    let attributes: Vec<(&str, Attribute<'c>)> = attributes
        .iter()
        .map(|(key, value)| (key.as_str(), *value))
        .collect();
    let builder = Builder::before(context, op);
    let exported = builder.op(shard_op, &[operand], &attributes, &[result_type]);
    let exported: Value = Value::from(exported.result(0).expect("one result"));
    ffi::replace_all_uses(Value::from(op.result(0).expect("one result")), exported);
    // SAFETY: `op` is unused and no handle to it is used after this.
    unsafe { ffi::erase(op) };
    Ok(())
}

/// `#shard<axisarray[[0, 1], []]>` for the sharding's dims (`[[]]` at rank 0).
fn split_axes_attribute<'c>(
    context: &'c Context,
    mesh: &Mesh,
    dims: &[Vec<String>],
) -> Result<Attribute<'c>, String> {
    let mut groups = Vec::new();
    for axes in dims {
        let indices: Vec<String> = grid_axes(mesh, axes)?
            .iter()
            .map(usize::to_string)
            .collect();
        groups.push(format!("[{}]", indices.join(", ")));
    }
    if groups.is_empty() {
        groups.push("[]".into());
    }
    let text = format!("#shard<axisarray[{}]>", groups.join(", "));
    Attribute::parse(context, &text).ok_or_else(|| format!("'{text}' does not parse"))
}

/// Rewrites `partir_hlo.sharding` argument/result attributes into `shard.split_axes` and drops
/// `partir.name`.
fn export_shardings<'c>(
    context: &'c Context,
    mesh: &Mesh,
    func: OperationRef<'c, '_>,
) -> PassResult<'c> {
    for name in ["arg_attrs", "res_attrs"] {
        let Some(array) = func
            .attribute(name)
            .ok()
            .and_then(|attr| ArrayAttribute::try_from(attr).ok())
        else {
            continue;
        };
        let mut entries: Vec<Attribute> = Vec::new();
        for index in 0..array.len() {
            let dict = array
                .element(index)
                .ok()
                .and_then(|dict| DictionaryAttribute::try_from(dict).ok());
            let mut fields: Vec<(Identifier, Attribute)> = Vec::new();
            for field in dict
                .map(|dict| {
                    (0..dict.len())
                        .filter_map(|field| dict.element(field).ok())
                        .collect()
                })
                .unwrap_or_else(Vec::new)
            {
                let (key, value) = field;
                match key.as_string_ref().as_str().unwrap_or("") {
                    NAME_ATTR => {}
                    SHARDING_ATTR => {
                        let text = value.to_string();
                        let what = if name == "arg_attrs" {
                            "argument"
                        } else {
                            "result"
                        };
                        let dims = Sharding::from_attribute(value).ok_or_else(|| {
                            PassError::new(
                                func.location(),
                                format!("{PASS}: {what} {index} has a malformed sharding {text}"),
                            )
                        })?;
                        let converted =
                            split_axes_attribute(context, mesh, &dims.0).map_err(|message| {
                                PassError::new(
                                    func.location(),
                                    format!("{PASS}: {what} {index} sharding {text}: {message}"),
                                )
                            })?;
                        fields.push((Identifier::new(context, SPLIT_AXES_ATTR), converted));
                    }
                    _ => fields.push((key, value)),
                }
            }
            entries.push(DictionaryAttribute::new(context, &fields).into());
        }
        ffi::set_attribute(func, name, ArrayAttribute::new(context, &entries).into());
    }
    Ok(())
}

/// `partir.mesh` → a private `shard.grid` of the same name and shape, with the axis names.
fn replace_mesh<'c>(context: &'c Context, mesh: &Mesh, module: OperationRef<'c, '_>) {
    let mut meshes = Vec::new();
    ffi::walk(module, |op| {
        if op_name(op) == MESH_OP {
            meshes.push(op);
        }
    });
    let names: Vec<Attribute> = mesh
        .axes
        .iter()
        .map(|axis| StringAttribute::new(context, &axis.name).into())
        .collect();
    let shape: Vec<i64> = mesh.axes.iter().map(|axis| axis.size).collect();
    if let Some(first) = meshes.first() {
        Builder::before(context, *first).op(
            "shard.grid",
            &[],
            &[
                (
                    "sym_name",
                    StringAttribute::new(context, &mesh.symbol).into(),
                ),
                ("shape", DenseI64ArrayAttribute::new(context, &shape).into()),
                (
                    "sym_visibility",
                    StringAttribute::new(context, "private").into(),
                ),
                (AXIS_NAMES_ATTR, ArrayAttribute::new(context, &names).into()),
            ],
            &[],
        );
    }
    for op in meshes {
        // SAFETY: declarative, unused: nothing refers to it or into it.
        unsafe { ffi::erase(op) };
    }
}

/// Drops the `partir.name` debug names of ops.
fn drop_names(module: OperationRef) {
    let Some(body) = module
        .region(0)
        .ok()
        .and_then(|region| region.first_block())
    else {
        return;
    };
    let mut next = body.first_operation_mut();
    while let Some(mut top) = next {
        top.walk_mut(WalkOrder::PreOrder, |mut op| {
            if op.has_attribute(NAME_ATTR) {
                let _ = op.remove_discardable_attribute(NAME_ATTR);
            }
            WalkResult::Advance
        });
        next = top.next_in_block_mut();
    }
}

/// The export promises a module stock `mlir-opt` reads: no partir op, attribute or type left
/// (but the attributes named in `allowed`, plain strings the export writes for a runtime).
pub(super) fn check_no_partir_left<'c>(
    module: OperationRef<'c, '_>,
    pass: &str,
    allowed: &[&str],
) -> PassResult<'c> {
    let mut error = None;
    ffi::walk(module, |op| {
        if error.is_some() {
            return;
        }
        // A partir attribute or type prints as `#partir.…`/`!partir_hlo.…`; discardable
        // attributes of the dialects are named `partir.…`/`partir_hlo.…`.
        let mentions = |text: &str| text.contains("#partir") || text.contains("!partir");
        let named = |key: &str| {
            (key.starts_with("partir.") || key.starts_with("partir_hlo."))
                && !allowed.contains(&key)
        };
        let what = op
            .attributes()
            .find(|(key, value)| {
                named(key.as_string_ref().as_str().unwrap_or("")) || mentions(&value.to_string())
            })
            .map(|(key, value)| {
                format!(
                    "attribute '{}' = {value}",
                    key.as_string_ref().as_str().unwrap_or("")
                )
            })
            .or_else(|| {
                op.results()
                    .map(|result| result.r#type().to_string())
                    .chain(
                        op.regions()
                            .flat_map(crate::ir::region_blocks)
                            .flat_map(|block| {
                                (0..block.argument_count())
                                    .filter_map(|index| block.argument(index).ok())
                                    .map(|argument| argument.r#type().to_string())
                                    .collect::<Vec<_>>()
                            }),
                    )
                    .find(|text| mentions(text))
                    .map(|text| format!("type {text}"))
            });
        if let Some(what) = what {
            error = Some(PassError::new(
                op.location(),
                format!(
                    "{pass}: cannot express {what} of '{}' in upstream MLIR",
                    op_name(op)
                ),
            ));
        }
    });
    match error {
        Some(error) => Err(error),
        None => Ok(()),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn grid_axes_are_mesh_indices_in_the_given_order() {
        let mesh = Mesh {
            symbol: "mesh".into(),
            axes: Mesh::parse_axes(&["batch=4", "model=2"]).unwrap(),
        };
        assert_eq!(
            grid_axes(&mesh, &["model".into(), "batch".into()]),
            Ok(vec![1, 0])
        );
        assert!(grid_axes(&mesh, &["x".into()])
            .unwrap_err()
            .contains("not in mesh @mesh"));
    }
}
