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

/// Per tagged op of the partitioned Core `module`, its results' places (None: whole, or a
/// partial max or min).
pub fn plan(module: OperationRef) -> HashMap<i64, Vec<Option<Planned>>> {
    let mut found: HashMap<i64, Vec<Option<Planned>>> = HashMap::new();
    ffi::walk(module, |op| {
        let Some(id) = op_id(op) else { return };
        let shardings: Vec<Option<Planned>> = (0..op.result_count())
            .map(|index| global_sharding(Value::from(op.result(index).expect("in range"))))
            .collect();
        // Several clones (a nest per axis, a body entered): the first split one speaks.
        let entry = found.entry(id).or_insert_with(|| shardings.clone());
        for (kept, new) in entry.iter_mut().zip(shardings) {
            if kept.is_none() {
                *kept = new;
            }
        }
    });
    found
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
            let result = (0..owner.result_count()).find(|&r| {
                owner
                    .result(r)
                    .is_ok_and(|value| Value::from(value) == operand)
            });
            let (Some(owner_id), Some(result)) = (op_id(owner), result) else {
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

/// Annotates the tagged input `module` with `plan` on `mesh`, and @main's arguments and
/// results with `arguments` / `results` (partir's lowering's choices), then drops the tags.
pub fn annotate<'c>(
    context: &'c Context,
    module: OperationRef<'c, '_>,
    mesh: &Mesh,
    plan: &HashMap<i64, Vec<Option<Planned>>>,
    arguments: &[Option<Sharding>],
    results: &[Option<Sharding>],
) {
    let Partials { kept, combining } = combined_partials(module, plan);
    let mut ops = Vec::new();
    ffi::walk(module, |op| {
        if op_id(op).is_some() {
            ops.push(op);
        }
    });
    for op in ops {
        let id = op_id(op).expect("tagged");
        ffi::remove_attribute(op, OP_ID);
        let mut shardings: Vec<Option<Planned>> = plan.get(&id).cloned().unwrap_or_default();
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
            if !kept.contains(&(id, index)) {
                if let Some(place) = planned.as_mut() {
                    place.unreduced.clear();
                }
                if planned
                    .as_ref()
                    .is_some_and(|place| place.sharding.is_replicated())
                {
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
