//! `partir-export-stablehlo`: PartIR:HLO → a StableHLO SPMD module that XLA compiles with one
//! replica per device (`mhlo.num_replicas = N`, `mhlo.num_partitions = 1`). Replica r holds
//! the mesh coordinates of r in row-major order, first axis major: on batch=4 × model=2,
//! r = b·2 + m. Ops are written in generic form, so the output reads in a stock mlir-opt
//! (`--allow-unregistered-dialect`) and in any StableHLO consumer.
//!
//! ```text
//! partir_hlo.all_reduce sum %x axes ["batch"] : tensor<64xf32>
//!     "stablehlo.all_reduce"(%x) <{replica_groups = dense<[[0, 2, 4, 6], [1, 3, 5, 7]]>
//!        : tensor<2x4xi64>}> ({ ^bb0(%a: tensor<f32>, %b: tensor<f32>):
//!        %s = "stablehlo.add"(%a, %b) ... "stablehlo.return"(%s) })
//! partir_hlo.all_gather %x dim 0 axes ["batch"]     "stablehlo.all_gather" all_gather_dim = 0
//! partir_hlo.reduce_scatter sum %x dim 1 axes [..]  "stablehlo.reduce_scatter" scatter_dimension = 1
//! partir_hlo.all_to_all %x split 1 concat 0 axes [..]
//!     "stablehlo.all_to_all" split_dimension = 1, concat_dimension = 0, split_count = n
//! partir_hlo.all_slice %x dim 1 axes ["model"]      replica_id → this device's index along the
//!     axes → "stablehlo.dynamic_slice" at index · chunk (no communication)
//! {partir_hlo.sharding = #partir_hlo.sharding<[{"batch"}, {}]>}
//!     {partir.sharding = "[{\"batch\"}, {}]"}        the module: partir.mesh = "batch=4,model=2"
//! ```
//!
//! Groups list their devices in the order of the in-group index, formed from the op's axes
//! major to minor: that is the order in which XLA concatenates an all_gather.

mod packed;

use super::{
    export_shard::{check_no_partir_left, collectives, grid_axes},
    names::EXPORT_STABLEHLO as PASS,
    program_location, require_no_loops, PassError, PassResult,
};
use crate::{
    ffi,
    ir::{
        builder::Builder, func_attrs, hlo, mesh::MESH_OP, sharding::SHARDING_ATTR, Mesh, Sharding,
    },
    tmr::ReductionKind,
};
use melior::{
    ir::{
        attribute::{IntegerAttribute, StringAttribute},
        block::BlockLike,
        operation::{OperationBuilder, OperationLike},
        r#type::IntegerType,
        Attribute, Block, Identifier, OperationRef, Region, RegionLike, Type, Value, ValueLike,
    },
    Context,
};

/// The string attributes that carry shardings and the mesh for the runtime.
pub const SHARDING_STRING_ATTR: &str = "partir.sharding";
pub const MESH_STRING_ATTR: &str = "partir.mesh";

pub fn run<'c>(context: &'c Context, module: OperationRef<'c, '_>) -> PassResult<'c> {
    require_no_loops(module, PASS)?;
    let Some((mesh, _)) = Mesh::find(module) else {
        return Err(PassError::new(
            program_location(module),
            format!(
                "{PASS}: the module declares no partir.mesh; export a partir-lower-to-hlo program"
            ),
        ));
    };
    for op in collectives(module, PASS)? {
        export_collective(context, &mesh, op)?;
    }
    for func in crate::ir::names::functions(module) {
        shardings_to_strings(context, func)?;
    }
    let mut meshes = Vec::new();
    ffi::walk(module, |op| {
        if crate::ffi::op_is(op, MESH_OP) {
            meshes.push(op);
        }
    });
    for op in meshes {
        // SAFETY: declarative, unused: nothing refers to it or into it.
        unsafe { ffi::erase(op) };
    }
    set_devices(context, module, &mesh, mesh.devices(), 1);
    super::padding_share::drop_all(module);
    check_no_partir_left(
        module,
        PASS,
        &[
            SHARDING_STRING_ATTR,
            MESH_STRING_ATTR,
            crate::ir::names::NAME_ATTR,
            super::expand_dim::VIEW_OF_ATTR,
            super::pad_dim::PADDED_FROM_ATTR,
            super::pad_dim::PADDING_ATTR,
        ],
    )
}

/// The replica groups of a collective over `axes` (mesh axis indices, major to minor): one
/// group per combination of the other axes' coordinates, its devices in in-group order.
/// `replica_groups([4, 2], [0])` is `[[0, 2, 4, 6], [1, 3, 5, 7]]`.
pub fn replica_groups(sizes: &[i64], axes: &[usize]) -> Vec<Vec<i64>> {
    let devices: i64 = sizes.iter().product();
    // (coordinates on the other axes, [(in-group index, device)])
    type Group = (Vec<i64>, Vec<(i64, i64)>);
    let mut groups: Vec<Group> = Vec::new();
    for device in 0..devices {
        let coords = crate::ir::Mesh::unravel(device, sizes);
        let key: Vec<i64> = (0..sizes.len())
            .filter(|axis| !axes.contains(axis))
            .map(|axis| coords[axis])
            .collect();
        let index = axes
            .iter()
            .fold(0, |index, &axis| index * sizes[axis] + coords[axis]);
        match groups.iter_mut().find(|(k, _)| *k == key) {
            Some((_, members)) => members.push((index, device)),
            None => groups.push((key, vec![(index, device)])),
        }
    }
    groups
        .into_iter()
        .map(|(_, mut members)| {
            members.sort();
            members.into_iter().map(|(_, device)| device).collect()
        })
        .collect()
}

fn groups_attribute<'c>(context: &'c Context, groups: &[Vec<i64>]) -> Attribute<'c> {
    let rows: Vec<String> = groups
        .iter()
        .map(|group| {
            let ids: Vec<String> = group.iter().map(i64::to_string).collect();
            format!("[{}]", ids.join(", "))
        })
        .collect();
    let text = format!(
        "dense<[{}]> : tensor<{}x{}xi64>",
        rows.join(", "),
        groups.len(),
        groups.first().map_or(0, Vec::len)
    );
    Attribute::parse(context, &text).expect("a dense i64 matrix")
}

fn export_collective<'c, 'a>(
    context: &'c Context,
    mesh: &Mesh,
    op: OperationRef<'c, 'a>,
) -> PassResult<'c> {
    let name = op.name().as_string_ref().as_str().unwrap_or("").to_string();
    let location = op.location();
    let fail = |message: String| PassError::new(location, format!("{PASS}: {message}"));
    let axes = op
        .attribute("axes")
        .ok()
        .and_then(hlo::string_array)
        .ok_or_else(|| fail(format!("'{name}' has no axes")))?;
    let indices = grid_axes(mesh, &axes).map_err(fail)?;
    let sizes: Vec<i64> = mesh.axes.iter().map(|axis| axis.size).collect();
    let group_size: i64 = indices.iter().map(|&axis| sizes[axis]).product();
    let groups = groups_attribute(context, &replica_groups(&sizes, &indices));
    let operand = op
        .operand(0)
        .map_err(|_| fail(format!("'{name}' has no operand")))?;
    let result_type = op
        .result(0)
        .map_err(|_| fail(format!("'{name}' has no result")))?
        .r#type();
    // A combined all_reduce stays one: stablehlo.all_reduce is variadic.
    let operands: Vec<Value> = (0..op.operand_count())
        .filter_map(|index| op.operand(index).ok())
        .collect();
    let result_types: Vec<Type> = (0..op.result_count())
        .filter_map(|index| op.result(index).ok())
        .map(|result| result.r#type())
        .collect();
    let i64_attr = |value: i64| -> Attribute<'c> {
        IntegerAttribute::new(Type::parse(context, "i64").expect("i64"), value).into()
    };
    let integer = |attribute: &str| {
        hlo::integer_attribute(op, attribute)
            .ok_or_else(|| fail(format!("'{name}' has no {attribute}")))
    };
    let combiner = || {
        let kind =
            hlo::reduction(op).ok_or_else(|| fail(format!("'{name}' has no reduction kind")))?;
        combiner_region(
            context,
            kind,
            crate::ir::builder::element_type(result_type),
            location,
        )
        .ok_or_else(|| {
            fail(format!(
                "'{name}' reduces with {kind}, which has no StableHLO combiner"
            ))
        })
    };
    let builder = Builder::before(context, op);
    let exported: Value = match name.as_str() {
        "partir_hlo.all_reduce" => {
            let reduced = generic_variadic(
                &builder,
                "stablehlo.all_reduce",
                &operands,
                &result_types,
                &[("replica_groups", groups)],
                Some(combiner()?),
            );
            for (index, value) in reduced.into_iter().enumerate() {
                ffi::replace_all_uses(Value::from(op.result(index).expect("in range")), value);
            }
            // SAFETY: `op` is unused and no handle to it is used after this.
            unsafe { ffi::erase(op) };
            return Ok(());
        }
        "partir_hlo.all_gather" => generic(
            &builder,
            "stablehlo.all_gather",
            operand,
            result_type,
            &[
                ("all_gather_dim", i64_attr(integer("dim")?)),
                ("replica_groups", groups),
            ],
            None,
        ),
        "partir_hlo.reduce_scatter" if operands.len() > 1 => {
            let dim = usize::try_from(integer("dim")?)
                .map_err(|_| fail(format!("'{name}' has a negative dim")))?;
            let scattered = packed::packed_reduce_scatter(
                &builder,
                &operands,
                &result_types,
                dim,
                group_size,
                groups,
                combiner()?,
            );
            for (index, value) in scattered.into_iter().enumerate() {
                ffi::replace_all_uses(Value::from(op.result(index).expect("in range")), value);
            }
            // SAFETY: `op` is unused and no handle to it is used after this.
            unsafe { ffi::erase(op) };
            return Ok(());
        }
        "partir_hlo.reduce_scatter" => generic(
            &builder,
            "stablehlo.reduce_scatter",
            operand,
            result_type,
            &[
                ("scatter_dimension", i64_attr(integer("dim")?)),
                ("replica_groups", groups),
            ],
            Some(combiner()?),
        ),
        "partir_hlo.all_to_all" => generic(
            &builder,
            "stablehlo.all_to_all",
            operand,
            result_type,
            &[
                ("split_dimension", i64_attr(integer("split_dim")?)),
                ("concat_dimension", i64_attr(integer("concat_dim")?)),
                ("split_count", i64_attr(group_size)),
                ("replica_groups", groups),
            ],
            None,
        ),
        "partir_hlo.collective_permute" => {
            let sources = crate::ir::core::permute_sources(op)
                .ok_or_else(|| fail(format!("'{name}' has no sources")))?;
            let pairs: Vec<Vec<i64>> = replica_groups(&sizes, &indices)
                .iter()
                .flat_map(|group| {
                    sources
                        .iter()
                        .enumerate()
                        .filter(|&(_, &source)| source >= 0)
                        .map(|(target, &source)| vec![group[source as usize], group[target]])
                        .collect::<Vec<_>>()
                })
                .collect();
            if pairs.is_empty() {
                // Nobody sends: every device receives zeros.
                let zero = Attribute::parse(context, &format!("dense<0.0> : {result_type}"))
                    .or_else(|| Attribute::parse(context, &format!("dense<0> : {result_type}")))
                    .ok_or_else(|| fail(format!("'{name}' of {result_type} has no zero")))?;
                Value::from(
                    builder
                        .op(
                            "stablehlo.constant",
                            &[],
                            &[("value", zero)],
                            &[result_type],
                        )
                        .result(0)
                        .expect("one result"),
                )
            } else {
                generic(
                    &builder,
                    "stablehlo.collective_permute",
                    operand,
                    result_type,
                    &[("source_target_pairs", groups_attribute(context, &pairs))],
                    None,
                )
            }
        }
        "partir_hlo.all_slice" => {
            let dim = usize::try_from(integer("dim")?)
                .map_err(|_| fail(format!("'{name}' has a negative dim")))?;
            local_slice(&builder, mesh, &indices, operand, result_type, dim)
        }
        other => return Err(fail(format!("'{other}' has no StableHLO counterpart"))),
    };
    ffi::replace_all_uses(Value::from(op.result(0).expect("one result")), exported);
    // SAFETY: `op` is unused and no handle to it is used after this.
    unsafe { ffi::erase(op) };
    Ok(())
}

/// The module attributes a runtime reads: `replicas` x `partitions` devices
/// (`mhlo.num_replicas`, `mhlo.num_partitions`) and partir's mesh as a string
/// (`partir.mesh = "batch=4,model=2"`).
pub fn set_devices(
    context: &Context,
    module: OperationRef,
    mesh: &Mesh,
    replicas: i64,
    partitions: i64,
) {
    let i32 = IntegerType::new(context, 32).into();
    for (name, count) in [
        ("mhlo.num_replicas", replicas),
        ("mhlo.num_partitions", partitions),
    ] {
        ffi::set_attribute(module, name, IntegerAttribute::new(i32, count).into());
    }
    let axes: Vec<String> = mesh
        .axes
        .iter()
        .map(|axis| format!("{}={}", axis.name, axis.size))
        .collect();
    ffi::set_attribute(
        module,
        MESH_STRING_ATTR,
        StringAttribute::new(context, &axes.join(",")).into(),
    );
}

/// A generic `name(operand) {attributes} ({region})` with one result.
fn generic<'c, 'a>(
    builder: &Builder<'c, 'a>,
    name: &str,
    operand: Value<'c, 'a>,
    result: Type<'c>,
    attributes: &[(&str, Attribute<'c>)],
    region: Option<Region<'c>>,
) -> Value<'c, 'a> {
    generic_variadic(builder, name, &[operand], &[result], attributes, region)[0]
}

/// A generic `name(operands...) {attributes} ({region})`; its results.
fn generic_variadic<'c, 'a>(
    builder: &Builder<'c, 'a>,
    name: &str,
    operands: &[Value<'c, 'a>],
    results: &[Type<'c>],
    attributes: &[(&str, Attribute<'c>)],
    region: Option<Region<'c>>,
) -> Vec<Value<'c, 'a>> {
    let attributes: Vec<(Identifier, Attribute)> = attributes
        .iter()
        .map(|(key, value)| (Identifier::new(builder.context(), key), *value))
        .collect();
    let mut op = OperationBuilder::new(name, builder.location())
        .add_operands(operands)
        .add_attributes(&attributes)
        .add_results(results);
    if let Some(region) = region {
        op = op.add_regions([region]);
    }
    let op = op
        .build()
        .unwrap_or_else(|error| panic!("{name} is well formed: {error}"));
    let op = builder.insert(op);
    (0..op.result_count())
        .map(|index| Value::from(op.result(index).expect("in range")))
        .collect()
}

/// `^bb0(%a: tensor<f32>, %b: tensor<f32>): %c = stablehlo.add %a, %b; stablehlo.return %c`.
fn combiner_region<'c>(
    context: &'c Context,
    kind: ReductionKind,
    element: Type<'c>,
    location: melior::ir::Location<'c>,
) -> Option<Region<'c>> {
    let name = match kind {
        ReductionKind::Sum => "stablehlo.add",
        ReductionKind::Max => "stablehlo.maximum",
        ReductionKind::Min => "stablehlo.minimum",
        ReductionKind::Mul => "stablehlo.multiply",
        ReductionKind::Other => return None,
    };
    let scalar = Type::parse(context, &format!("tensor<{element}>"))?;
    let block = Block::new(&[(scalar, location), (scalar, location)]);
    let (a, b): (Value, Value) = (
        block.argument(0).ok()?.into(),
        block.argument(1).ok()?.into(),
    );
    let combined = block.append_operation(
        OperationBuilder::new(name, location)
            .add_operands(&[a, b])
            .add_results(&[scalar])
            .build()
            .ok()?,
    );
    let combined: Value = combined.result(0).ok()?.into();
    block.append_operation(
        OperationBuilder::new("stablehlo.return", location)
            .add_operands(&[combined])
            .build()
            .ok()?,
    );
    let region = Region::new();
    region.append_block(block);
    Some(region)
}

/// This device's chunk of `operand` on `dim` along `axes`: the in-group index computed from
/// `stablehlo.replica_id` (row-major mesh coordinates), times the chunk size, as the offset of
/// a `stablehlo.dynamic_slice`.
fn local_slice<'c, 'a>(
    builder: &Builder<'c, 'a>,
    mesh: &Mesh,
    axes: &[usize],
    operand: Value<'c, '_>,
    result: Type<'c>,
    dim: usize,
) -> Value<'c, 'a> {
    let context = builder.context();
    let scalar =
        |ty: &str| Type::parse(context, &format!("tensor<{ty}>")).expect("a scalar tensor type");
    let (u32_t, i32_t) = (scalar("ui32"), scalar("i32"));
    let constant = |value: i64| {
        let attribute = Attribute::parse(context, &format!("dense<{value}> : tensor<i32>"))
            .expect("an i32 splat");
        builder.value(
            OperationBuilder::new("stablehlo.constant", builder.location())
                .add_attributes(&[(Identifier::new(context, "value"), attribute)])
                .add_results(&[i32_t])
                .build()
                .expect("a constant"),
        )
    };
    let binary = |name: &str, a: Value<'c, 'a>, b: Value<'c, 'a>| {
        builder.value(
            OperationBuilder::new(name, builder.location())
                .add_operands(&[a, b])
                .add_results(&[i32_t])
                .build()
                .expect("a binary op"),
        )
    };
    let replica = builder.value(
        OperationBuilder::new("stablehlo.replica_id", builder.location())
            .add_results(&[u32_t])
            .build()
            .expect("replica_id"),
    );
    let replica = builder.value(
        OperationBuilder::new("stablehlo.convert", builder.location())
            .add_operands(&[replica])
            .add_results(&[i32_t])
            .build()
            .expect("convert"),
    );
    let sizes: Vec<i64> = mesh.axes.iter().map(|axis| axis.size).collect();
    let mut index = constant(0);
    for &axis in axes {
        let stride: i64 = sizes[axis + 1..].iter().product();
        let coordinate = binary("stablehlo.divide", replica, constant(stride));
        let coordinate = binary("stablehlo.remainder", coordinate, constant(sizes[axis]));
        index = binary("stablehlo.multiply", index, constant(sizes[axis]));
        index = binary("stablehlo.add", index, coordinate);
    }
    let chunk = ffi::tensor_shape(result)
        .and_then(|shape| shape.get(dim).copied().flatten())
        .unwrap_or(0);
    let offset = binary("stablehlo.multiply", index, constant(chunk));
    let rank = ffi::tensor_shape(operand.r#type()).map_or(0, |shape| shape.len());
    let mut operands = vec![operand];
    for d in 0..rank {
        operands.push(if d == dim { offset } else { constant(0) });
    }
    let sizes: Vec<i64> = ffi::tensor_shape(result)
        .map(|shape| shape.into_iter().map(|size| size.unwrap_or(0)).collect())
        .unwrap_or_default();
    builder.value(
        OperationBuilder::new("stablehlo.dynamic_slice", builder.location())
            .add_operands(&operands)
            .add_attributes(&[(
                Identifier::new(context, "slice_sizes"),
                melior::ir::attribute::DenseI64ArrayAttribute::new(context, &sizes).into(),
            )])
            .add_results(&[result])
            .build()
            .expect("a dynamic_slice"),
    )
}

/// `{partir_hlo.sharding = #partir_hlo.sharding<[{"batch"}, {}]>}` → `{partir.sharding =
/// "[{\"batch\"}, {}]"}` on each argument and result (the runtime scatters and assembles by it).
fn shardings_to_strings<'c>(context: &'c Context, func: OperationRef<'c, '_>) -> PassResult<'c> {
    for list in ["arg_attrs", "res_attrs"] {
        let count = func_attrs::listed(func, list);
        let mut entries = func_attrs::entries(func, list, count);
        for (index, fields) in entries.iter_mut().enumerate() {
            for field in fields
                .iter_mut()
                .filter(|field| func_attrs::is_named(field, SHARDING_ATTR))
            {
                let sharding = Sharding::from_attribute(field.1).ok_or_else(|| {
                    PassError::new(
                        func.location(),
                        format!(
                            "{PASS}: {list} {index} has a malformed sharding {}",
                            field.1
                        ),
                    )
                })?;
                *field = (
                    Identifier::new(context, SHARDING_STRING_ATTR),
                    StringAttribute::new(context, &sharding.to_string()).into(),
                );
            }
        }
        if count > 0 {
            func_attrs::set_entries(context, func, list, &entries);
        }
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn replica_groups_follow_row_major_mesh_coordinates() {
        // batch=4 x model=2: r = b*2 + m.
        assert_eq!(replica_groups(&[4, 2], &[0]), [[0, 2, 4, 6], [1, 3, 5, 7]]);
        assert_eq!(
            replica_groups(&[4, 2], &[1]),
            [[0, 1], [2, 3], [4, 5], [6, 7]]
        );
        assert_eq!(replica_groups(&[4, 2], &[0, 1]), [[0, 1, 2, 3, 4, 5, 6, 7]]);
        // Minor axis first: the in-group index is m*4 + b.
        assert_eq!(replica_groups(&[4, 2], &[1, 0]), [[0, 2, 4, 6, 1, 3, 5, 7]]);
    }
}
