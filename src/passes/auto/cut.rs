//! Cutting layers out of a program, for folded pricing (see [`super::fold`] for the shape a
//! cut keeps): the dropped layers' results and their arguments go, the program is reconnected
//! around them, and whatever only they used is erased.

use super::{
    fold::{Layers, Placed},
    seams,
};
use crate::{
    ffi,
    ir::{self, func_attrs},
    passes::simulate,
};
use melior::{
    ir::{
        attribute::TypeAttribute, block::BlockLike, operation::OperationLike, r#type::FunctionType,
        Attribute, BlockRef, Identifier, Module, OperationRef, RegionLike, Type, Value, ValueLike,
    },
    Context,
};
use std::collections::HashMap;

/// How a program says which layer an op is in.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Form {
    /// Its ops' locations name their layer (JAX's name stack): a cut keeps layers `0..keep`.
    Located,
    /// Only its arguments do: the layers meet where [`seams`] finds them, and a cut keeps
    /// layers `0..keep` and the last one (which the dataflow cannot tell from the head).
    Structural,
}

impl Form {
    /// Where the layers a cut drops end, of `count`: a cut keeping `keep` drops `keep..end`.
    pub fn dropped_end(self, count: usize) -> usize {
        match self {
            Form::Located => count,
            Form::Structural => count - 1,
        }
    }

    /// How many of `count` layers the cut keeping `keep` holds.
    pub fn held(self, keep: usize, count: usize) -> usize {
        keep + count - self.dropped_end(count)
    }
}

/// A copy of `module` that keeps layers `0..keep` (and the last, in [`Form::Structural`]; see
/// the module docs).
pub fn cut<'c>(
    context: &'c Context,
    module: OperationRef<'c, '_>,
    layers: &Layers,
    keep: usize,
    form: Form,
) -> Result<Module<'c>, String> {
    let copy =
        Module::from_operation(ffi::clone_operation(module)).expect("a module's clone is a module");
    let func = simulate::entry_function(copy.as_operation()).ok_or("no entry function")?;
    let body = entry_block(func);
    let terminator = body
        .terminator()
        .ok_or("the entry function has no return")?;
    let end = form.dropped_end(layers.count);
    let in_cut = |fields: &Vec<(Identifier, Attribute)>| {
        func_attrs::name(fields)
            .and_then(|name| layers.of_name(&name))
            .is_none_or(|layer| layer < keep || layer >= end)
    };
    // Found on the whole copy: what an op reaches changes once results go.
    let seams = match form {
        Form::Structural => Some(seams::find(func, body, layers, keep)?),
        Form::Located => None,
    };
    // The dropped layers' results go, and with them their optimizer updates.
    let results = func_attrs::entries(func, "res_attrs", terminator.operand_count());
    let returned: Vec<Value> = terminator.operands().collect();
    let kept_results: Vec<usize> = (0..results.len())
        .filter(|&index| in_cut(&results[index]))
        .collect();
    ffi::set_operands(
        terminator,
        &kept_results
            .iter()
            .map(|&index| returned[index])
            .collect::<Vec<_>>(),
    );
    match seams {
        Some(seams) => {
            ffi::replace_all_uses(seams.y, seams.x);
            ffi::replace_all_uses(seams.dx, seams.dy);
            erase_dead(body);
        }
        None => {
            erase_dead(body);
            rewire(body, layers, keep)?;
            erase_dead(body);
            let left = Program::scan(body, layers);
            let remaining = (0..left.ops.len())
                .filter(|&index| left.dropped(index, keep))
                .count();
            if remaining > 0 {
                return Err(format!(
                    "{remaining} ops of layers {keep}.. are still used once the layers are cut"
                ));
            }
        }
    }
    // Then their arguments.
    let arguments = func_attrs::entries(func, "arg_attrs", body.argument_count());
    let mut kept_arguments = Vec::new();
    for index in (0..arguments.len()).rev() {
        if in_cut(&arguments[index]) {
            kept_arguments.push(index);
        } else if !ffi::erase_unused_argument(body, index) {
            return Err(format!(
                "argument '{}' is still used once the layers are cut",
                func_attrs::name(&arguments[index]).unwrap_or_default()
            ));
        }
    }
    kept_arguments.reverse();
    let inputs: Vec<Type> = (0..body.argument_count())
        .map(|index| body.argument(index).expect("in range").r#type())
        .collect();
    let outputs: Vec<Type> = terminator.operands().map(|value| value.r#type()).collect();
    ffi::set_attribute(
        func,
        "function_type",
        TypeAttribute::new(FunctionType::new(context, &inputs, &outputs).into()).into(),
    );
    let keep_entries = |entries: Vec<Vec<(Identifier<'c>, Attribute<'c>)>>, kept: &[usize]| {
        kept.iter()
            .map(|&index| entries[index].clone())
            .collect::<Vec<_>>()
    };
    func_attrs::set_entries(
        context,
        func,
        "arg_attrs",
        &keep_entries(arguments, &kept_arguments),
    );
    func_attrs::set_entries(
        context,
        func,
        "res_attrs",
        &keep_entries(results, &kept_results),
    );
    Ok(copy)
}

/// Reconnects the program around layers `keep..`: what read the last dropped layer's output
/// reads the last kept layer's, and the kept layers' backward reads the cotangent the
/// dropped layers took (see the module docs).
fn rewire(body: BlockRef, layers: &Layers, keep: usize) -> Result<(), String> {
    let program = Program::scan(body, layers);
    let dropped: Vec<usize> = (0..program.ops.len())
        .filter(|&index| program.dropped(index, keep))
        .collect();
    if dropped.is_empty() {
        return Err(format!("no op is located in layer {keep} or after"));
    }
    // Values crossing the dropped layers' border, by who is on the other side.
    let mut out_to_kept = Vec::new();
    let mut out_to_outside = Vec::new();
    let mut in_from_kept = Vec::new();
    let mut in_from_outside = Vec::new();
    for &index in &dropped {
        let op = program.ops[index];
        for result in op.results() {
            let value = Value::from(result);
            for (user, _) in ffi::uses(value) {
                let Some(user) = program.top_level(user) else {
                    continue;
                };
                if program.dropped(user, keep) {
                    continue;
                }
                let side = if program.layer[user].is_some() {
                    &mut out_to_kept
                } else {
                    &mut out_to_outside
                };
                push_value(side, value);
            }
        }
        for &producer in &program.producers[index] {
            if program.dropped(producer, keep) || !program.depends[producer] {
                continue;
            }
            let side = if program.layer[producer].is_some() {
                &mut in_from_kept
            } else {
                &mut in_from_outside
            };
            for result in program.ops[producer].results() {
                let value = Value::from(result);
                if ffi::uses(value)
                    .into_iter()
                    .any(|(user, _)| program.top_level(user) == Some(index))
                {
                    push_value(side, value);
                }
            }
        }
    }
    let shape = |what: &str, values: &[Value]| {
        format!(
            "layers {keep}.. of '{}' {what} {} values, not one",
            layers.key,
            values.len()
        )
    };
    // y: the last dropped layer's output (the head reads it); dx: the cotangent the first
    // dropped layer hands back to the kept ones.
    let [y] = out_to_outside[..] else {
        return Err(shape("hand the rest of the program", &out_to_outside));
    };
    let [dx] = out_to_kept[..] else {
        return Err(shape("hand the kept layers", &out_to_kept));
    };
    let [x] = of_type(&in_from_kept, y)[..] else {
        return Err(shape("take from the kept layers", &in_from_kept));
    };
    let [dy] = of_type(&in_from_outside, dx)[..] else {
        return Err(shape("take from the rest of the program", &in_from_outside));
    };
    ffi::replace_all_uses(y, x);
    ffi::replace_all_uses(dx, dy);
    Ok(())
}

/// The values of `like`'s type.
fn of_type<'c, 'a>(values: &[Value<'c, 'a>], like: Value) -> Vec<Value<'c, 'a>> {
    values
        .iter()
        .copied()
        .filter(|value| value.r#type() == like.r#type())
        .collect()
}

fn push_value<'c, 'a>(values: &mut Vec<Value<'c, 'a>>, value: Value<'c, 'a>) {
    if !values.contains(&value) {
        values.push(value);
    }
}

pub(super) fn entry_block<'c, 'a>(func: OperationRef<'c, 'a>) -> BlockRef<'c, 'a> {
    func.region(0)
        .ok()
        .and_then(|region| region.first_block())
        .expect("an entry function has a body")
}

/// Erases the block's ops whose results are all unused, last first (so that what only they
/// used goes too). Ops without results (the terminator) stay.
fn erase_dead(body: BlockRef) {
    for op in ir::block_ops(body).into_iter().rev() {
        let dead = op.result_count() > 0
            && op
                .results()
                .all(|result| ffi::uses(Value::from(result)).is_empty());
        if dead {
            // SAFETY: `op` has no uses, and no handle to it is used after this.
            unsafe { ffi::erase(op) };
        }
    }
}

/// The entry block's ops, each placed in a layer or not.
struct Program<'c, 'a> {
    ops: Vec<OperationRef<'c, 'a>>,
    by_id: HashMap<usize, usize>,
    /// Per op: the layer it belongs to (its location's, else its operands' when it has no
    /// name and they agree).
    layer: Vec<Option<usize>>,
    /// Per op: computed from an argument (constants and what only they feed are shared by
    /// every layer: CSE merges them, so they belong to none).
    depends: Vec<bool>,
    /// Per op: the other top-level ops whose results it (or an op nested in it) reads.
    producers: Vec<Vec<usize>>,
}

impl<'c, 'a> Program<'c, 'a> {
    fn scan(body: BlockRef<'c, 'a>, layers: &Layers) -> Self {
        let ops = ir::block_ops(body);
        let by_id: HashMap<usize, usize> = ops
            .iter()
            .enumerate()
            .map(|(index, op)| (ffi::operation_id(*op), index))
            .collect();
        let mut program = Program {
            layer: Vec::with_capacity(ops.len()),
            depends: Vec::with_capacity(ops.len()),
            producers: Vec::with_capacity(ops.len()),
            ops,
            by_id,
        };
        for index in 0..program.ops.len() {
            let op = program.ops[index];
            let mut producers = Vec::new();
            let mut reads_argument = false;
            let mut placed = Placed::Nowhere;
            ffi::walk(op, |inner| {
                if placed == Placed::Nowhere {
                    placed = layers.of_location(inner.location());
                }
                for operand in inner.operands() {
                    if let Some(owner) = ffi::result_owner(operand) {
                        match program.by_id.get(&ffi::operation_id(owner)) {
                            Some(&producer)
                                if producer != index && !producers.contains(&producer) =>
                            {
                                producers.push(producer)
                            }
                            _ => {}
                        }
                    } else if ffi::argument_owner(operand) == Some(body) {
                        reads_argument = true;
                    }
                }
            });
            let depends =
                reads_argument || producers.iter().any(|&producer| program.depends[producer]);
            let layer = match placed {
                Placed::Layer(layer) => Some(layer),
                Placed::Outside => None,
                Placed::Nowhere => {
                    let mut found = producers
                        .iter()
                        .filter(|&&producer| program.depends[producer])
                        .map(|&producer| program.layer[producer]);
                    match found.next() {
                        Some(first) if found.all(|other| other == first) => first,
                        _ => None,
                    }
                }
            };
            program.layer.push(layer);
            program.depends.push(depends);
            program.producers.push(producers);
        }
        program
    }

    /// Whether op `index` goes with the cut keeping layers `0..keep`.
    fn dropped(&self, index: usize, keep: usize) -> bool {
        self.depends[index] && self.layer[index].is_some_and(|layer| layer >= keep)
    }

    /// The top-level op `op` is or is nested in.
    fn top_level(&self, op: OperationRef) -> Option<usize> {
        let mut current = Some(op);
        while let Some(op) = current {
            if let Some(&index) = self.by_id.get(&ffi::operation_id(op)) {
                return Some(index);
            }
            current = op.parent_operation();
        }
        None
    }
}
