//! `partir-lower-to-hlo`: Core → device-local PartIR:HLO (docs/design.md#lowering).
//!
//! Every partitioned op sits in its own loop nest (see `propagate::view`); its body already
//! computes on local shapes. Lowering moves each nest's payload out of its loops and feeds it
//! local operands, redistributed with collectives where the sharding a value has differs from
//! the one its consumer's slice chain asks for:
//!
//! ```text
//! %h = loop "batch" [tile<0>] { matmul(slice 0 %x[r], %w) }   %h_local = matmul(%x_local, %w)
//! %d = loop "batch" [sum]     { matmul(slice 1 %a[r], ...) }   %d_local = all_reduce sum (matmul ...) axes ["batch"]
//! %u = sub(%w, %d)   (whole)                                   all_gather of any sharded operand
//! ```
//! Function arguments take the sharding all their consumers agree on (else replicated); seen
//! through a tile-action view, the view's axis nested inside what the view's consumers share
//! (`view_sharding`);
//! results keep the sharding they have. Both carry `partir_hlo.sharding`. Then `optimize`
//! moves the all_reduce sums of an add's (or sub's) operands after it (one reduce of the summed
//! partials), rewrites all_reduce+all_slice into reduce_scatter and drops all_slice∘all_gather.

mod block;
pub mod combine;
mod loop_sums;
mod optimize;
mod permute;
mod remake;
mod reshard;
mod scope;

use super::{
    names::LOWER_TO_HLO as PASS,
    program_location,
    propagate::view::{self, name_of, Consumer},
    require_stage, PassError, PassResult, Stage,
};
use crate::{
    ffi,
    ir::{
        core::{static_shape, LOOP_OP, REPLICATE_OP},
        func::{is_function, is_return},
        func_attrs, names,
        sharding::{Sharding, SHARDING_ATTR},
        Mesh,
    },
};
use block::Handoff;
use melior::{
    ir::{
        attribute::TypeAttribute, block::BlockLike, operation::OperationLike, r#type::FunctionType,
        BlockRef, Identifier, OperationRef, RegionLike, Type, Value, ValueLike,
    },
    Context,
};
use reshard::Emitter;
use scope::Lowering;

pub fn run<'c>(context: &'c Context, module: OperationRef<'c, '_>) -> PassResult<'c> {
    require_stage(
        module,
        PASS,
        Stage::Core,
        "it was lowered already (lower a program once)",
    )?;
    let Some((mesh, _)) = Mesh::find(module) else {
        return Err(PassError::new(
            program_location(module),
            format!("{PASS}: the module declares no partir.mesh"),
        ));
    };
    // What marks a pipeline stage's loop matters to propagation only; the device-local program
    // (and XLA, which reads it) has no use for it.
    crate::ffi::walk(module, |op| {
        crate::ffi::remove_attribute(op, crate::rules::pipeline::STAGE_LOOP_ATTR)
    });
    let emitter = Emitter {
        context,
        mesh: &mesh,
    };
    for func in names::functions(module) {
        lower_function(&emitter, func)?;
    }
    optimize::run(context, module);
    Ok(())
}

fn rank_of(value: Value) -> usize {
    ffi::tensor_shape(value.r#type())
        .map(|shape| shape.len())
        .unwrap_or(0)
}

/// The sharding a slice chain (innermost first, as `operand_source` returns it) asks for.
fn chain_sharding(rank: usize, slices: &[(String, usize)]) -> Sharding {
    slices
        .iter()
        .rev()
        .fold(Sharding::replicated(rank), |sharding, (axis, dim)| {
            sharding.with_axis(*dim, axis)
        })
}

/// The sharding an argument's consumers agree on (replicated when they disagree).
fn argument_sharding(mesh: &Mesh, argument: Value) -> Sharding {
    agreed_sharding(mesh, argument, is_return)
}

/// The sharding `value`'s consumers agree on, but for those `hands_on` says only pass it on
/// (a function's return, a loop body's yield); replicated when they disagree.
fn agreed_sharding(mesh: &Mesh, value: Value, hands_on: impl Fn(OperationRef) -> bool) -> Sharding {
    let rank = rank_of(value);
    let mut agreed: Option<Sharding> = None;
    for consumer in view::consumers(value) {
        let wanted = match consumer {
            Consumer::Payload(user, _) if hands_on(user) => continue,
            Consumer::Payload(user, index) => {
                let mut slices = Vec::new();
                // A permute reads chunks as a slice does: split like it, the same permute.
                if ffi::op_is(user, crate::ir::core::PERMUTE_OP) {
                    if let (Some(axis), Some(dim)) =
                        (crate::ir::core::slice_axis(user), view::slice_dim(user))
                    {
                        slices.push((axis, dim));
                    }
                }
                slices.extend(view::operand_source(user, index).slices);
                chain_sharding(rank, &slices)
            }
            Consumer::View(view_op) => view_sharding(mesh, view_op, rank),
            Consumer::Opaque => Sharding::replicated(rank),
        };
        match &agreed {
            Some(previous) if *previous != wanted => return Sharding::replicated(rank),
            _ => agreed = Some(wanted),
        }
    }
    agreed.unwrap_or_else(|| Sharding::replicated(rank))
}

/// The sharding a tile-action view `loop A [tile<d>] { yield slice d %x[r] }` asks of `%x`:
/// split on `d` along `A`, *nested inside* whatever every consumer of the view already slices
/// it on. The view is an identity, so a source that already has `A` on `d` passes through it
/// unchanged (the view case of `lower_function`), and its consumers reshard from that.
///
/// Worked example (MLP, BP_MP_Z3, mesh batch=4 model=2): MP tiles w2 (256x10) on dim 0 along
/// model, and propagation dissolves that view into w2's consumers, which slice `%w2` on dim 0
/// along model. Z3 then wraps `%w2` in `%v = loop "batch" [tile<0>] { slice 0 %w2 }`, and
/// the consumers slice `%v` instead: the forward matmul `[{model}]`, the transposed copy and
/// the update `[{model, batch}]` (batch propagated inside the model slice). Every consumer
/// has model major on dim 0, so `%w2` arrives `[{"model", "batch"}, {}]`: 32x10 per device,
/// as the schedule asked (model's rows, then batch's share of them), where the view alone
/// (`[{"batch"}, {}]`, 64x10) held twice that and made the model-major consumers re-lay it
/// out. The forward matmul gathers over batch only (32x10 -> 128x10); the others use it as
/// it is. Without a shared prefix (or when the dim does not divide), this is `[d: A]`.
///
/// Fixed here, not in the tile action: the Core program is already right (the view is an
/// identity, and the consumers' slice chains already nest batch inside model); only the layout
/// the argument arrives in ignored what the consumers share. Re-nesting the view inside every
/// consumer's slices in `partir-tile` would rewrite all of them for the same result.
fn view_sharding(mesh: &Mesh, view_op: OperationRef, rank: usize) -> Sharding {
    let Some((source, dim, axis)) = view::identity_view(view_op) else {
        return Sharding::replicated(rank);
    };
    let plain = Sharding::replicated(rank).with_axis(dim, &axis);
    let result = Value::from(view_op.result(0).expect("a view has one result"));
    // The longest prefix (major to minor) of every dim's axes that all consumers share.
    let mut shared: Option<Sharding> = None;
    for consumer in view::consumers(result) {
        let wanted = match consumer {
            Consumer::Payload(user, _) if passes_on(user) => continue,
            Consumer::Payload(user, index) => {
                chain_sharding(rank, &view::operand_source(user, index).slices)
            }
            Consumer::View(inner) => view_sharding(mesh, inner, rank),
            Consumer::Opaque => return plain,
        };
        shared = Some(match shared {
            None => wanted,
            Some(previous) => Sharding(
                previous
                    .0
                    .iter()
                    .zip(&wanted.0)
                    .map(|(a, b)| {
                        a.iter()
                            .zip(b)
                            .take_while(|(x, y)| x == y)
                            .map(|(x, _)| x.clone())
                            .collect()
                    })
                    .collect(),
            ),
        });
    }
    let Some(shared) = shared else {
        return plain;
    };
    let nested = if shared.0[dim].contains(&axis) {
        shared
    } else {
        shared.without_axis(&axis).with_axis(dim, &axis)
    };
    if divides(mesh, source, &nested) {
        nested
    } else {
        plain
    }
}

/// Whether `user` only hands its operands on, so the layout they arrive in is decided elsewhere:
/// a function's return (the result's sharding), or the yield of a loop's carried body (the
/// carry's, `block::carry_sharding`, which the yield reshards to). Counting a body's yield of a
/// view as a reader that wants it whole dropped the view's shared prefix: on the scanned LLaMA
/// with BP on `data` then `fsdp`, the backward scan's saved activations then arrived `[fsdp,
/// data]` while the forward scan yields `[data, fsdp]`, and lowering gathered them whole between
/// the scans (84 all_gathers).
fn passes_on(user: OperationRef) -> bool {
    is_return(user)
        || user
            .parent_operation()
            .and_then(crate::passes::propagate::carried_body)
            .and_then(crate::ir::last_op)
            .is_some_and(|last| ffi::same_operation(last, user))
}

/// True when every dim of `value` splits evenly as `sharding` asks.
fn divides(mesh: &Mesh, value: Value, sharding: &Sharding) -> bool {
    let shape = static_shape(value.r#type()).unwrap_or_default();
    shape.len() == sharding.rank()
        && sharding.0.iter().zip(&shape).all(|(axes, &size)| {
            let parts: i64 = axes
                .iter()
                .map(|a| mesh.axis_size(a).unwrap_or(1))
                .product();
            size % parts == 0
        })
}

/// The per-device type of a value of type `ty` distributed as `sharding`.
pub(super) fn local_type<'c>(
    emitter: &Emitter<'c, '_>,
    ty: Type<'c>,
    sharding: &Sharding,
) -> Type<'c> {
    let Some(shape) = static_shape(ty) else {
        return ty;
    };
    let local = sharding.local_shape(&shape, |axis| emitter.mesh.axis_size(axis).unwrap_or(1));
    local.iter().enumerate().fold(ty, |ty, (dim, &size)| {
        crate::ir::core::with_dim(ty, dim, size)
    })
}

fn lower_function<'c, 'a>(emitter: &Emitter<'c, '_>, func: OperationRef<'c, 'a>) -> PassResult<'c> {
    let context = emitter.context;
    let body: BlockRef<'c, 'a> = func
        .region(0)
        .expect("a body")
        .first_block()
        .expect("an entry block");
    check_nesting(func)?;
    let mut lowering = Lowering::new(emitter);

    // Arguments first: their sharding comes from their consumers, before anything changes.
    let argument_shardings: Vec<Sharding> = (0..body.argument_count())
        .map(|index| {
            argument_sharding(
                emitter.mesh,
                Value::from(body.argument(index).expect("in range")),
            )
        })
        .collect();
    let mut inputs = Vec::new();
    for (index, sharding) in argument_shardings.iter().enumerate() {
        let argument = Value::from(body.argument(index).expect("in range"));
        let ty = local_type(emitter, argument.r#type(), sharding);
        argument.set_type(ty);
        inputs.push(ty);
        lowering.set(argument, argument, sharding.clone());
    }

    let result_shardings = lowering.lower_top(body, Handoff::Keep)?;
    lowering.erase_core()?;
    lowering.erase_superseded();

    // The signature: local types and shardings.
    let results: Vec<Type> = body
        .terminator()
        .map(|terminator| terminator.operands().map(|value| value.r#type()).collect())
        .unwrap_or_default();
    ffi::set_attribute(
        func,
        "function_type",
        TypeAttribute::new(FunctionType::new(context, &inputs, &results).into()).into(),
    );
    set_shardings(context, func, "arg_attrs", &argument_shardings);
    set_shardings(context, func, "res_attrs", &result_shardings);
    Ok(())
}

/// Core ops must sit in the function body, in loop bodies or in a loop op's regions that
/// propagation partitioned inside (a `while`'s: `block::lower_carrying`): a loop inside another
/// op's region (an `scf.for`, after inlining a partitioned helper into one) has no device-local
/// form here.
fn check_nesting<'c>(func: OperationRef<'c, '_>) -> PassResult<'c> {
    let mut misplaced = None;
    ffi::walk(func, |op| {
        let name = name_of(op);
        if misplaced.is_some() || !(name == LOOP_OP || name == REPLICATE_OP) {
            return;
        }
        let parent = op.parent_operation();
        if let Some(parent) = parent.filter(|parent| {
            !is_function(*parent)
                && !ffi::op_is(*parent, LOOP_OP)
                && crate::rules::carried_body(*parent).is_none()
        }) {
            misplaced = Some((op.location(), name, name_of(parent)));
        }
    });
    match misplaced {
        Some((location, name, parent)) => Err(PassError::new(
            location,
            format!("{PASS}: '{name}' inside '{parent}' cannot be lowered: partitioned ops must sit in a function body or in partir.loop bodies"),
        )),
        None => Ok(()),
    }
}

/// Adds `partir_hlo.sharding` to each entry of a function's `arg_attrs` / `res_attrs`.
fn set_shardings<'c>(
    context: &'c Context,
    func: OperationRef<'c, '_>,
    name: &str,
    shardings: &[Sharding],
) {
    let mut entries = func_attrs::entries(func, name, shardings.len());
    for (fields, sharding) in entries.iter_mut().zip(shardings) {
        fields.retain(|field| !func_attrs::is_named(field, SHARDING_ATTR));
        fields.push((
            Identifier::new(context, SHARDING_ATTR),
            sharding.to_attribute(context),
        ));
    }
    func_attrs::set_entries(context, func, name, &entries);
}
