//! A plan as Shardy annotations: the *input* program (calls inlined, as partir read it) with
//! `sdy.mesh`, `sdy.sharding` on @main's arguments and results, and an
//! `sdy.sharding_constraint` on every value partir's plan splits, so that XLA's own
//! partitioner (Shardy) runs partir's plan on an unmodified XLA build.
//!
//! ```text
//! %y = stablehlo.dot_general %x, %w ...          (Core: in loop "batch" [tile<0>])
//! ==>
//! sdy.mesh @mesh = <["batch"=4, "model"=2]>
//! %y = stablehlo.dot_general %x, %w ...
//! %c = sdy.sharding_constraint %y <@mesh, [{"batch"}, {}]>      (every use reads %c)
//! ```
//!
//! Ops are matched between the input and the partitioned Core program by an id each input op
//! carries (`partir.op_id`, [`tag`]): propagation clones ops into loop bodies with their
//! attributes. A value's sharding is read off the loops that yield it ([`plan`]): a
//! `#tile<d>` loop over A puts A on dim d (outer loops major), a `#sum` loop over A leaves the
//! value a partial sum over A. Partial sums that an add combines before one all-reduce (as
//! partir's lowering does: Megatron's dQ·wqᵀ + dK·wkᵀ + dV·wvᵀ) are marked *unreduced*
//! (`unreduced={"A"}`) up to the add's result ([`combined_partials`]); any other partial is
//! left to Shardy, which reduces it where it is made, as partir does.

use crate::{
    ffi,
    ir::{attrs::Action, core, sharding::Sharding, Mesh},
};
use melior::{
    ir::{
        attribute::{IntegerAttribute, StringAttribute},
        block::BlockLike,
        operation::OperationLike,
        r#type::IntegerType,
        Attribute, Identifier, OperationRef, RegionLike, Value, ValueLike,
    },
    Context,
};
use std::collections::{HashMap, HashSet};

/// The attribute [`tag`] puts on every input op.
pub const OP_ID: &str = "partir.op_id";

/// Whether `module` is annotated for XLA's partitioner ([`annotate`]): it names partir's mesh
/// and spans several *partitions* (partir's own export spans replicas, one partition).
pub fn is_annotated(module: OperationRef) -> bool {
    let partitions = module
        .attribute("mhlo.num_partitions")
        .ok()
        .and_then(|attr| IntegerAttribute::try_from(attr).ok())
        .map_or(1, |count| count.value());
    partitions > 1 && module.has_attribute(super::export_stablehlo::MESH_STRING_ATTR)
}

/// Gives every op under `module`'s functions (not the functions themselves) an id.
pub fn tag(context: &Context, module: OperationRef) {
    let i64_type = IntegerType::new(context, 64).into();
    let mut next = 0;
    for func in crate::ir::names::functions(module) {
        ffi::walk(func, |op| {
            if !ffi::same_operation(op, func) {
                ffi::set_attribute(op, OP_ID, IntegerAttribute::new(i64_type, next).into());
                next += 1;
            }
        });
    }
}

fn op_id(op: OperationRef) -> Option<i64> {
    IntegerAttribute::try_from(op.attribute(OP_ID).ok()?)
        .ok()
        .map(|id| id.value())
}

/// A value's place in the plan: split as `sharding`, and a partial sum over `unreduced`.
#[derive(Clone, Debug, PartialEq)]
pub struct Planned {
    pub sharding: Sharding,
    pub unreduced: Vec<String>,
}

/// Per tagged op of the partitioned Core `module`, its results' places (None: whole and free,
/// or a partial max or min).
///
/// A whole value that a split consumer slices locally (`partir.slice` of it: ZeRO's update of
/// a split optimizer state from a whole gradient) is placed whole, explicitly: left free, Shardy
/// propagates the consumer's split back into its producer (a gradient's dot), splitting the
/// backward pass and all-gathering activations that partir never moves (the MLP's Z2: 2
/// all-gathers, 64 KiB, against none).
pub fn plan(module: OperationRef) -> Plan {
    let mut found: HashMap<i64, Vec<Option<Planned>>> = HashMap::new();
    let mut gathered: HashMap<(i64, usize), Vec<String>> = HashMap::new();
    ffi::walk(module, |op| {
        let Some(id) = op_id(op) else { return };
        for index in 0..op.operand_count() {
            let axes = gathered_axes(op.operand(index).expect("in range"));
            if !axes.is_empty() {
                let entry = gathered.entry((id, index)).or_default();
                for axis in axes {
                    if !entry.contains(&axis) {
                        entry.push(axis);
                    }
                }
            }
        }
        let shardings: Vec<Option<Planned>> = (0..op.result_count())
            .map(|index| {
                let value = Value::from(op.result(index).expect("in range"));
                global_sharding(value).or_else(|| kept_whole(op, value))
            })
            .collect();
        // Several clones (a nest per axis, a body entered): the first split one speaks.
        let entry = found.entry(id).or_insert_with(|| shardings.clone());
        for (kept, new) in entry.iter_mut().zip(shardings) {
            let whole = |place: &Option<Planned>| {
                place
                    .as_ref()
                    .is_none_or(|p| p.sharding.is_replicated() && p.unreduced.is_empty())
            };
            if kept.is_none() || (whole(kept) && !whole(&new)) {
                *kept = new;
            }
        }
    });
    Plan {
        results: found,
        gathered,
    }
}

/// A plan read off the partitioned Core program ([`plan`]).
pub struct Plan {
    /// Per tagged op, its results' places (None: whole and free, or a partial max or min).
    pub results: HashMap<i64, Vec<Option<Planned>>>,
    /// (op id, operand index) -> the axes along which the op reads a split value whole:
    /// partir all-gathers it there (ZeRO-3's parameters before their use). Left free, Shardy
    /// splits the reader instead (a dot on a split contraction dim: partial sums and
    /// all-to-alls that partir does not have); constrained, it gathers where partir does.
    pub gathered: HashMap<(i64, usize), Vec<String>>,
}

/// The axes along which `value` is a tiled value put back together (a `#tile` loop's result,
/// and the tiled loops whose results that loop yields, outer first): read outside those
/// loops, it is gathered.
fn gathered_axes(value: Value) -> Vec<String> {
    let mut axes = Vec::new();
    let mut current = value;
    while let Some(loop_op) = ffi::result_owner(current).filter(|op| ffi::op_is(*op, core::LOOP_OP))
    {
        let Some(index) = ffi::result_number(current) else {
            break;
        };
        let (Some(axis), Some(Action::Tile(_))) = (
            core::axis_of(loop_op),
            core::actions(loop_op).get(index).cloned(),
        ) else {
            break;
        };
        axes.push(axis);
        let Some(yielded) = loop_op
            .region(0)
            .ok()
            .and_then(|region| region.first_block())
            .and_then(|block| block.terminator())
            .and_then(|terminator| terminator.operand(index).ok())
        else {
            break;
        };
        current = yielded;
    }
    axes
}

/// Whole, placed so, when `value` (a result of `op`, which is computed from operands: sources
/// such as constants are made in chunks as Shardy pleases) is sliced locally by a consumer.
fn kept_whole(op: OperationRef, value: Value) -> Option<Planned> {
    let rank = core::static_shape(value.r#type())?.len();
    let sliced = ffi::uses(value)
        .into_iter()
        .any(|(user, _)| ffi::op_is(user, core::SLICE_OP));
    (rank > 0 && op.operand_count() > 0 && sliced).then(|| Planned {
        sharding: Sharding::replicated(rank),
        unreduced: Vec::new(),
    })
}

/// The place of `value` after the loops that yield it: outer loops' axes first on a dim.
fn global_sharding(value: Value) -> Option<Planned> {
    let rank = core::static_shape(value.r#type())?.len();
    let mut sharding = Sharding::replicated(rank);
    let mut unreduced = Vec::new();
    let mut current = value;
    while let Some((yield_op, index)) = ffi::uses(current)
        .into_iter()
        .find(|(user, _)| ffi::op_is(*user, core::YIELD_OP))
    {
        let loop_op = yield_op.parent_operation()?;
        let axis = core::axis_of(loop_op)?;
        match core::actions(loop_op).get(index)? {
            Action::Tile(dim) => sharding.0[*dim].insert(0, axis),
            Action::Sum(crate::tmr::ReductionKind::Sum) => unreduced.insert(0, axis),
            Action::Sum(_) => return None,
            Action::Any => {}
        }
        current = Value::from(loop_op.result(index).ok()?);
    }
    (!sharding.is_replicated() || !unreduced.is_empty()).then_some(Planned {
        sharding,
        unreduced,
    })
}

/// `#sdy.sharding<@mesh, [{"batch"}, {}]>` (`, unreduced={"model"}` for a partial sum):
/// every dim closed (the plan says exactly).
fn sdy_sharding<'c>(
    context: &'c Context,
    mesh: &Mesh,
    sharding: &Sharding,
    unreduced: &[String],
) -> Attribute<'c> {
    let quote = |axes: &[String]| {
        let quoted: Vec<String> = axes.iter().map(|axis| format!("{axis:?}")).collect();
        format!("{{{}}}", quoted.join(", "))
    };
    let dims: Vec<String> = sharding.0.iter().map(|axes| quote(axes)).collect();
    let partial = if unreduced.is_empty() {
        String::new()
    } else {
        format!(", unreduced={}", quote(unreduced))
    };
    let text = format!(
        "#sdy.sharding<@{}, [{}]{partial}>",
        mesh.symbol,
        dims.join(", ")
    );
    Attribute::parse(context, &text).expect("an sdy sharding parses (unregistered dialects)")
}

/// The results (op id, result index) that stay partial sums, and the places of the linear ops
/// (adds, subtracts) combining them: each operand a single-use partial sum over the same
/// axes, so the op's result is one too, reduced once after it. Program order, so that a chain
/// of adds stays partial to its end.
fn combined_partials(module: OperationRef, plan: &HashMap<i64, Vec<Option<Planned>>>) -> Partials {
    let mut partial: HashMap<(i64, usize), Planned> = HashMap::new();
    for (&id, results) in plan {
        for (index, planned) in results.iter().enumerate() {
            if let Some(planned) = planned.as_ref().filter(|p| !p.unreduced.is_empty()) {
                partial.insert((id, index), planned.clone());
            }
        }
    }
    let (mut kept, mut combining) = (HashSet::new(), HashMap::new());
    ffi::walk(module, |op| {
        let Some(id) = op_id(op) else { return };
        if op.operand_count() < 2
            || op.result_count() != 1
            || crate::rules::linear(op) != Some(crate::rules::Linear::All)
        {
            return;
        }
        let mut operands = Vec::new();
        for index in 0..op.operand_count() {
            let operand = op.operand(index).expect("in range");
            let Some(owner) = ffi::result_owner(operand) else {
                return;
            };
            let (Some(owner_id), Some(result)) = (op_id(owner), ffi::result_number(operand)) else {
                return;
            };
            let Some(planned) = partial.get(&(owner_id, result)) else {
                return;
            };
            if ffi::uses(operand).len() != 1 {
                return;
            }
            operands.push(((owner_id, result), planned.clone()));
        }
        for ((owner_id, _), _) in &operands {
            if let Some(inner) = combining.get_mut(owner_id) {
                // Combined again: the chain's end reduces, not this link.
                let inner: &mut Combined = inner;
                inner.last = false;
            }
        }
        let unreduced = &operands[0].1.unreduced;
        if operands
            .iter()
            .any(|(_, planned)| planned.unreduced != *unreduced)
        {
            return;
        }
        let sharding = plan
            .get(&id)
            .and_then(|results| results.first().cloned().flatten())
            .map_or_else(
                || operands[0].1.sharding.clone(),
                |planned| planned.sharding,
            );
        let planned = Planned {
            sharding,
            unreduced: unreduced.clone(),
        };
        kept.extend(operands.iter().map(|(key, _)| *key));
        kept.insert((id, 0));
        partial.insert((id, 0), planned.clone());
        combining.insert(
            id,
            Combined {
                planned,
                last: true,
            },
        );
    });
    Partials { kept, combining }
}

/// What [`combined_partials`] found: the partial sums kept unreduced and the ops combining
/// them.
///
/// A ZeRO gradient (a partial sum whose consumer splits it along the axis it is partial over,
/// which partir reduce-scatters) is not marked: with `unreduced` on it and the split after it,
/// this XLA's Shardy moved more (all-to-alls and collective-permutes; the transformer's
/// BP_MP_Z3 went from 45 collectives to 71), and without, it all-reduces and slices.
struct Partials {
    kept: HashSet<(i64, usize)>,
    combining: HashMap<i64, Combined>,
}

/// A linear op combining partial sums ([`combined_partials`]): its place, and whether it ends
/// the chain (its result is then reduced right after it).
struct Combined {
    planned: Planned,
    last: bool,
}

/// Constrains each operand `op` (tagged `id`, its results placed as `results`) reads whole
/// along axes it is split on ([`Plan::gathered`]) to its sharding without those axes.
fn constrain_gathered<'c>(
    context: &'c Context,
    mesh: &Mesh,
    plan: &Plan,
    arguments: &[Option<Sharding>],
    op: OperationRef<'c, '_>,
    id: i64,
    results: &[Option<Planned>],
) {
    for index in 0..op.operand_count() {
        let Some(axes) = plan.gathered.get(&(id, index)) else {
            continue;
        };
        // An axis the op's own results are split or partial on is not gathered for it.
        let own = |axis: &String| {
            results.iter().flatten().any(|place| {
                place.unreduced.contains(axis)
                    || place.sharding.0.iter().flatten().any(|a| a == axis)
            })
        };
        let axes: Vec<&String> = axes.iter().filter(|axis| !own(axis)).collect();
        let operand = op.operand(index).expect("in range");
        let sharding = match ffi::result_owner(operand) {
            Some(owner) => op_id(owner).and_then(|owner_id| {
                let result = ffi::result_number(operand)?;
                plan.results
                    .get(&owner_id)?
                    .get(result)?
                    .as_ref()
                    .map(|p| p.sharding.clone())
            }),
            None => melior::ir::block::BlockArgument::try_from(operand)
                .ok()
                .and_then(|argument| arguments.get(argument.argument_number()).cloned().flatten()),
        };
        let Some(mut sharding) = sharding else {
            continue;
        };
        if axes.is_empty() || !sharding.0.iter().flatten().any(|a| axes.contains(&a)) {
            continue;
        }
        for dim in &mut sharding.0 {
            dim.retain(|axis| !axes.contains(&axis));
        }
        let gathered = crate::ir::builder::Builder::before(context, op).value_of(
            "sdy.sharding_constraint",
            &[operand],
            &[("sharding", sdy_sharding(context, mesh, &sharding, &[]))],
            operand.r#type(),
        );
        ffi::set_operand(op, index, gathered);
    }
}

/// Annotates the tagged input `module` with `plan` on `mesh`, and @main's arguments and
/// results with `arguments` / `results` (partir's lowering's choices), then drops the tags.
pub fn annotate<'c>(
    context: &'c Context,
    module: OperationRef<'c, '_>,
    mesh: &Mesh,
    plan: &Plan,
    arguments: &[Option<Sharding>],
    results: &[Option<Sharding>],
) {
    let Partials { kept, combining } = combined_partials(module, &plan.results);
    let mut ops = Vec::new();
    ffi::walk(module, |op| {
        if op_id(op).is_some() {
            ops.push(op);
        }
    });
    for op in ops {
        let id = op_id(op).expect("tagged");
        ffi::remove_attribute(op, OP_ID);
        let mut shardings: Vec<Option<Planned>> =
            plan.results.get(&id).cloned().unwrap_or_default();
        constrain_gathered(context, mesh, plan, arguments, op, id, &shardings);
        let mut reduced_after: Vec<Option<Sharding>> = vec![None; op.result_count()];
        if let Some(combined) = combining.get(&id) {
            shardings = vec![Some(combined.planned.clone())];
            // The end of a chain of adds: one all-reduce here, where partir's lowering has it
            // (Shardy needs the reduced sharding said, not only the unreduced one before it).
            if combined.last {
                reduced_after = vec![Some(combined.planned.sharding.clone())];
            }
        }
        // A partial sum nothing combines is reduced where it is made: Shardy does that itself.
        for (index, planned) in shardings.iter_mut().enumerate() {
            if kept.contains(&(id, index)) {
                continue;
            }
            if let Some(place) = planned.as_mut().filter(|place| !place.unreduced.is_empty()) {
                place.unreduced.clear();
                if place.sharding.is_replicated() {
                    *planned = None;
                }
            }
        }
        let Some(next) = op.next_in_block() else {
            continue;
        };
        let at = crate::ir::builder::Builder::before(context, next);
        for (index, sharding) in shardings.iter().enumerate() {
            let (Some(planned), Ok(result)) = (sharding, op.result(index)) else {
                continue;
            };
            let result = Value::from(result);
            let sharding = sdy_sharding(context, mesh, &planned.sharding, &planned.unreduced);
            let constrained = at.value_of(
                "sdy.sharding_constraint",
                &[result],
                &[("sharding", sharding)],
                result.r#type(),
            );
            let constraint = ffi::result_owner(constrained).expect("just built");
            ffi::replace_all_uses_except(result, constrained, constraint);
            if let Some(sharding) = reduced_after.get(index).cloned().flatten() {
                let reduced = at.value_of(
                    "sdy.sharding_constraint",
                    &[constrained],
                    &[("sharding", sdy_sharding(context, mesh, &sharding, &[]))],
                    result.r#type(),
                );
                let reduction = ffi::result_owner(reduced).expect("just built");
                ffi::replace_all_uses_except(constrained, reduced, reduction);
            }
        }
    }
    for func in crate::ir::names::entry_functions(module) {
        for (list, shardings) in [("arg_attrs", arguments), ("res_attrs", results)] {
            let mut entries = crate::ir::func_attrs::entries(func, list, shardings.len());
            for (fields, sharding) in entries.iter_mut().zip(shardings) {
                let Some(sharding) = sharding else { continue };
                fields.push((
                    Identifier::new(context, crate::rules::SHARDY_SHARDING_ATTR),
                    sdy_sharding(context, mesh, sharding, &[]),
                ));
                // As the XLA export writes it: a runtime scatters and assembles by it.
                fields.push((
                    Identifier::new(context, super::export_stablehlo::SHARDING_STRING_ATTR),
                    StringAttribute::new(context, &sharding.to_string()).into(),
                ));
            }
            crate::ir::func_attrs::set_entries(context, func, list, &entries);
        }
    }
    // One program partitioned over the mesh's devices (SPMD partitions, not replicas).
    super::export_stablehlo::set_devices(context, module, mesh, 1, mesh.devices());
    // The mesh, first in the module.
    let mesh_attribute = Attribute::parse(
        context,
        &format!(
            "#sdy.mesh<[{}]>",
            mesh.axes
                .iter()
                .map(|axis| format!("{:?}={}", axis.name, axis.size))
                .collect::<Vec<_>>()
                .join(", ")
        ),
    )
    .expect("an sdy mesh parses (unregistered dialects)");
    let body = module
        .region(0)
        .expect("a module has a body")
        .first_block()
        .expect("a module body has a block");
    let Some(first) = body.first_operation() else {
        return;
    };
    crate::ir::builder::Builder::before(context, first).op(
        "sdy.mesh",
        &[],
        &[
            (
                "sym_name",
                StringAttribute::new(context, &mesh.symbol).into(),
            ),
            ("mesh", mesh_attribute),
        ],
        &[],
    );
}
