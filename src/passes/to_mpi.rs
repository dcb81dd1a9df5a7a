//! `partir-to-mpi`: PartIR:HLO collectives → MLIR's `mpi` dialect on per-axis communicators,
//! filling MLIR 22's gaps (docs/design.md#mlir-22-gaps: only MPI allreduce lowers to LLVM, on rank-1 buffers).
//!
//! Rank `r` of `prod(sizes)` sits at mesh coordinates `coord(a) = (r / stride(a)) % size(a)`
//! (axes major to minor). A collective over axes S runs on `comm_split(world, color, key)`,
//! `color` numbering the coordinates off S and `key` those on S (in the collective's order),
//! so `key` is also the device's position in the group:
//! - `all_reduce`: `mpi.allreduce` of a flattened buffer; a combined one packs its operands
//!   into one buffer first (one MPI call);
//! - `all_gather`: allreduce-sum of a zero buffer holding the local chunk at `key * chunk`;
//! - `all_slice`: the local `tensor.extract_slice` at `key * chunk` (no communication);
//! - `reduce_scatter` = all_reduce then all_slice; `all_to_all` = all_gather then all_slice;
//! - `collective_permute` = all_gather then the source's chunk (MLIR 22 lowers no
//!   point-to-point MPI op; this checks the semantics, not the speed).
//!
//! The mesh and sharding attributes are dropped, and the module gets the `dlti.map` the MPI
//! lowering needs (MPICH's ABI).

use super::{names::TO_MPI as PASS, program_location, require_no_loops, PassError, PassResult};
use crate::{
    ffi,
    ir::{
        builder::{scaled, Builder},
        core::static_shape,
        func_attrs, hlo,
        mesh::MESH_OP,
        names, Mesh,
    },
    tmr::ReductionKind,
};
use melior::{
    ir::{
        attribute::{ArrayAttribute, IntegerAttribute},
        block::BlockLike,
        operation::OperationLike,
        r#type::IntegerType,
        Attribute, OperationRef, RegionLike, Type, Value, ValueLike,
    },
    Context,
};
use std::collections::HashMap;

pub fn run<'c>(context: &'c Context, module: OperationRef<'c, '_>) -> PassResult<'c> {
    require_no_loops(module, PASS)?;
    let Some((mesh, mesh_location)) = Mesh::find(module) else {
        return Err(PassError::new(
            program_location(module),
            format!("{PASS}: the module declares no partir.mesh"),
        ));
    };
    let _ = mesh_location;
    for func in names::functions(module) {
        lower_function(context, &mesh, func)?;
        strip_shardings(context, func);
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
    let dlti = Attribute::parse(context, r#"#dlti.map<"MPI:Implementation" = "MPICH">"#)
        .expect("dlti is registered");
    ffi::set_attribute(module, "dlti.map", dlti);
    Ok(())
}

/// A communicator over some axes and this device's position in it.
#[derive(Clone, Copy)]
struct Group<'c, 'a> {
    comm: Value<'c, 'a>,
    /// Position in the group, as an index.
    position: Value<'c, 'a>,
    size: i64,
}

fn collective_axes(op: OperationRef) -> Vec<String> {
    hlo::collective_axes(op).expect("verified collective")
}

fn integer_attribute(op: OperationRef, name: &str) -> i64 {
    hlo::integer_attribute(op, name).expect("verified collective")
}

/// The harness's `MPI_Init`: communicators are set up after it.
const MPI_INIT: &str = "mpi.init";

fn lower_function<'c, 'a>(
    context: &'c Context,
    mesh: &Mesh,
    func: OperationRef<'c, 'a>,
) -> PassResult<'c> {
    let mut collectives = Vec::new();
    let mut init = None;
    ffi::walk(func, |op| {
        let name = op.name().as_string_ref().as_str().unwrap_or("").to_string();
        if name.starts_with("partir_hlo.") {
            collectives.push(op);
        } else if ffi::op_is(op, MPI_INIT) && init.is_none() {
            init = Some(op);
        }
    });
    if collectives.is_empty() {
        return Ok(());
    }
    // Communicators are set up once, at the top of the function (after MPI_Init if it is here).
    let body = func
        .region(0)
        .expect("a body")
        .first_block()
        .expect("an entry block");
    let setup_anchor = match init {
        Some(init) => init
            .next_in_block()
            .expect("mpi.init is followed by more ops"),
        None => body.first_operation().expect("a non-empty body"),
    };
    let setup = Builder::before(context, setup_anchor);
    let comm_type = Type::parse(context, "!mpi.comm").expect("the mpi dialect is loaded");
    let i32_type: Type = IntegerType::new(context, 32).into();
    let world = Value::from(
        setup
            .op("mpi.comm_world", &[], &[], &[comm_type])
            .result(0)
            .expect("one result"),
    );
    let rank = Value::from(
        setup
            .op("mpi.comm_rank", &[world], &[], &[i32_type])
            .result(0)
            .expect("one result"),
    );
    let mut groups: HashMap<Vec<String>, Group> = HashMap::new();
    // Every communicator is created before any collective is erased: the setup anchor may be
    // a collective itself (a function starting with one and without mpi.init), and building
    // before an erased op crashed.
    for &op in &collectives {
        let axes = collective_axes(op);
        groups
            .entry(axes)
            .or_insert_with_key(|axes| group_for(&setup, mesh, world, rank, axes));
    }

    for op in collectives {
        let name = op.name().as_string_ref().as_str().unwrap_or("").to_string();
        let axes = collective_axes(op);
        let group = groups[&axes];
        let builder = Builder::before(context, op);
        let combined = matches!(
            name.as_str(),
            "partir_hlo.all_reduce" | "partir_hlo.reduce_scatter"
        );
        if combined && op.operand_count() > 1 {
            let operands: Vec<Value> = (0..op.operand_count())
                .map(|index| op.operand(index).expect("in range"))
                .collect();
            let mut reduced = packed_allreduce(&builder, &operands, reduction_of(op), group);
            // A combined reduce_scatter: one packed MPI_Allreduce, then each device's chunks.
            if name == "partir_hlo.reduce_scatter" {
                let dim = integer_attribute(op, "dim") as usize;
                reduced = reduced
                    .into_iter()
                    .enumerate()
                    .map(|(index, value)| {
                        let result_type = op.result(index).expect("in range").r#type();
                        local_chunk(&builder, value, dim, result_type, group)
                    })
                    .collect();
            }
            for (index, value) in reduced.into_iter().enumerate() {
                ffi::replace_all_uses(Value::from(op.result(index).expect("in range")), value);
            }
            // SAFETY: `op` is unused and no handle to it is used after this.
            unsafe { ffi::erase(op) };
            continue;
        }
        let operand = op.operand(0).expect("one operand");
        let result_type = op.result(0).expect("one result").r#type();
        let lowered = match name.as_str() {
            "partir_hlo.all_reduce" => allreduce(&builder, operand, reduction_of(op), group),
            "partir_hlo.all_gather" => all_gather(
                &builder,
                operand,
                integer_attribute(op, "dim") as usize,
                group,
            ),
            "partir_hlo.all_slice" => local_chunk(
                &builder,
                operand,
                integer_attribute(op, "dim") as usize,
                result_type,
                group,
            ),
            "partir_hlo.reduce_scatter" => {
                let reduced = allreduce(&builder, operand, reduction_of(op), group);
                local_chunk(
                    &builder,
                    reduced,
                    integer_attribute(op, "dim") as usize,
                    result_type,
                    group,
                )
            }
            "partir_hlo.all_to_all" => {
                let gathered = all_gather(
                    &builder,
                    operand,
                    integer_attribute(op, "concat_dim") as usize,
                    group,
                );
                local_chunk(
                    &builder,
                    gathered,
                    integer_attribute(op, "split_dim") as usize,
                    result_type,
                    group,
                )
            }
            "partir_hlo.collective_permute" => {
                // MLIR 22 lowers no point-to-point MPI op: the group's chunks gathered, and the
                // source's kept.
                let gathered = all_gather(&builder, operand, 0, group);
                let sources =
                    crate::ir::core::permute_sources(op).expect("a verified collective_permute");
                builder.chunk_from(gathered, 0, &sources, group.position, result_type)
            }
            other => {
                return Err(PassError::new(
                    op.location(),
                    format!("{PASS}: cannot lower '{other}' to MPI"),
                ))
            }
        };
        ffi::replace_all_uses(Value::from(op.result(0).expect("one result")), lowered);
        // SAFETY: `op` is unused and no handle to it is used after this.
        unsafe { ffi::erase(op) };
    }
    Ok(())
}

/// The communicator of the devices that share this device's coordinates off `axes`.
fn group_for<'c, 'a>(
    setup: &Builder<'c, 'a>,
    mesh: &Mesh,
    world: Value<'c, 'a>,
    rank: Value<'c, 'a>,
    axes: &[String],
) -> Group<'c, 'a> {
    let coordinate = |axis: &str| -> Value<'c, 'a> {
        let position = mesh
            .axes
            .iter()
            .position(|candidate| candidate.name == axis)
            .expect("verified axis");
        let stride: i64 = mesh.axes[position + 1..]
            .iter()
            .map(|later| later.size)
            .product();
        let divided = setup.binary("arith.divsi", rank, setup.i32(stride));
        setup.binary("arith.remsi", divided, setup.i32(mesh.axes[position].size))
    };
    let linear = |names: &[&str]| -> Value<'c, 'a> {
        let mut total = setup.i32(0);
        for name in names {
            let size = mesh.axis_size(name).expect("verified axis");
            total = setup.binary("arith.muli", total, setup.i32(size));
            total = setup.binary("arith.addi", total, coordinate(name));
        }
        total
    };
    let on: Vec<&str> = axes.iter().map(String::as_str).collect();
    let off: Vec<&str> = mesh
        .axes
        .iter()
        .map(|axis| axis.name.as_str())
        .filter(|name| !on.contains(name))
        .collect();
    let key = linear(&on);
    let color = linear(&off);
    let comm_type = world.r#type();
    let comm = Value::from(
        setup
            .op("mpi.comm_split", &[world, color, key], &[], &[comm_type])
            .result(0)
            .expect("one result"),
    );
    let size = on
        .iter()
        .map(|name| mesh.axis_size(name).expect("verified axis"))
        .product();
    Group {
        comm,
        position: setup.index_cast(key),
        size,
    }
}

/// `MPI_Allreduce` of `value` over the group.
fn allreduce<'c, 'a>(
    builder: &Builder<'c, 'a>,
    value: Value<'c, 'a>,
    kind: ReductionKind,
    group: Group<'c, 'a>,
) -> Value<'c, 'a> {
    // The `mpi.allreduce` op attribute (mlir/Dialect/MPI's MPI_ReductionOpEnum).
    let mpi_op = match kind {
        ReductionKind::Max => 1,
        ReductionKind::Min => 2,
        ReductionKind::Mul => 4,
        ReductionKind::Sum | ReductionKind::Other => 3,
    };
    let tensor_type = value.r#type();
    let buffer = builder.to_buffer(value);
    let shape = static_shape(tensor_type).expect("static");
    let flat = if shape.len() == 1 {
        buffer
    } else {
        builder.flatten(buffer)
    };
    let output = builder.alloc(flat.r#type());
    let op_attribute =
        IntegerAttribute::new(IntegerType::new(builder.context, 32).into(), mpi_op).into();
    builder.op(
        "mpi.allreduce",
        &[flat, output, group.comm],
        &[("op", op_attribute)],
        &[],
    );
    let shaped = if shape.len() == 1 {
        output
    } else {
        unflatten(builder, output, &shape)
    };
    builder.to_tensor(shaped, tensor_type)
}

/// One `MPI_Allreduce` for a combined all_reduce: the operands flattened and packed end to end
/// in one rank-1 buffer, reduced, and unpacked (`[4x2, 3]` → one 11-element buffer).
fn packed_allreduce<'c, 'a>(
    builder: &Builder<'c, 'a>,
    values: &[Value<'c, 'a>],
    kind: ReductionKind,
    group: Group<'c, 'a>,
) -> Vec<Value<'c, 'a>> {
    let element = crate::ir::builder::element_type(values[0].r#type());
    let rank1 = |length: i64| -> Type<'c> {
        melior::ir::r#type::RankedTensorType::new(&[length as u64], element, None).into()
    };
    let shapes: Vec<Vec<i64>> = values
        .iter()
        .map(|value| static_shape(value.r#type()).expect("static"))
        .collect();
    let lengths: Vec<i64> = shapes.iter().map(|shape| shape.iter().product()).collect();
    let mut packed = builder.empty(rank1(lengths.iter().sum()));
    let mut offset = 0;
    for (value, &length) in values.iter().zip(&lengths) {
        let flat = builder.to_tensor(builder.flatten(builder.to_buffer(*value)), rank1(length));
        packed = builder.insert_slice(flat, packed, 0, builder.index(offset));
        offset += length;
    }
    let reduced = allreduce(builder, packed, kind, group);
    let mut offset = 0;
    let mut pieces = Vec::new();
    for ((value, shape), &length) in values.iter().zip(&shapes).zip(&lengths) {
        let piece = builder.extract_slice(reduced, 0, builder.index(offset), rank1(length));
        let buffer = unflatten(builder, builder.to_buffer(piece), shape);
        pieces.push(builder.to_tensor(buffer, value.r#type()));
        offset += length;
    }
    pieces
}

/// The inverse of `Builder::flatten`.
fn unflatten<'c, 'a>(
    builder: &Builder<'c, 'a>,
    flat: Value<'c, 'a>,
    shape: &[i64],
) -> Value<'c, 'a> {
    let element = ffi::shaped_element(flat.r#type());
    let memref: Type = melior::ir::r#type::MemRefType::new(element, shape, None, None).into();
    let groups = if shape.is_empty() {
        "[]".to_string()
    } else {
        format!(
            "[[{}]]",
            (0..shape.len())
                .map(|dim| format!("{dim} : i64"))
                .collect::<Vec<_>>()
                .join(", ")
        )
    };
    let reassociation = Attribute::parse(builder.context, &groups).expect("reassociation");
    let op = if shape.is_empty() {
        builder.op(
            "memref.collapse_shape",
            &[flat],
            &[("reassociation", reassociation)],
            &[memref],
        )
    } else {
        let output_shape =
            melior::ir::attribute::DenseI64ArrayAttribute::new(builder.context, shape).into();
        builder.op(
            "memref.expand_shape",
            &[flat],
            &[
                ("reassociation", reassociation),
                ("static_output_shape", output_shape),
            ],
            &[memref],
        )
    };
    Value::from(op.result(0).expect("one result"))
}

/// Gathers `value` along `dim` over the group: sum of zero buffers holding each chunk.
fn all_gather<'c, 'a>(
    builder: &Builder<'c, 'a>,
    value: Value<'c, 'a>,
    dim: usize,
    group: Group<'c, 'a>,
) -> Value<'c, 'a> {
    let chunk = static_shape(value.r#type()).expect("static")[dim];
    let whole = builder.filled(scaled(value.r#type(), dim, group.size), 0.0);
    let offset = builder.binary("arith.muli", group.position, builder.index(chunk));
    let placed = builder.insert_slice(value, whole, dim, offset);
    allreduce(builder, placed, ReductionKind::Sum, group)
}

/// This device's chunk of `value` along `dim`.
fn local_chunk<'c, 'a>(
    builder: &Builder<'c, 'a>,
    value: Value<'c, 'a>,
    dim: usize,
    chunk_type: Type<'c>,
    group: Group<'c, 'a>,
) -> Value<'c, 'a> {
    let chunk = static_shape(chunk_type).expect("static")[dim];
    let offset = builder.binary("arith.muli", group.position, builder.index(chunk));
    builder.extract_slice(value, dim, offset, chunk_type)
}

/// Drops `partir_hlo.sharding` from argument and result attributes (the harness used them).
fn strip_shardings<'c>(context: &'c Context, func: OperationRef<'c, '_>) {
    for name in ["arg_attrs", "res_attrs"] {
        let Some(count) = func
            .attribute(name)
            .ok()
            .and_then(|attr| ArrayAttribute::try_from(attr).ok())
            .map(|array| array.len())
        else {
            continue;
        };
        let mut entries = func_attrs::entries(func, name, count);
        for fields in &mut entries {
            fields.retain(|field| !func_attrs::is_named(field, crate::ir::sharding::SHARDING_ATTR));
        }
        func_attrs::set_entries(context, func, name, &entries);
    }
}

/// The reduction kind of an all_reduce or reduce_scatter (verified: always present).
fn reduction_of(op: OperationRef) -> ReductionKind {
    crate::ir::hlo::reduction(op).unwrap_or(ReductionKind::Sum)
}
