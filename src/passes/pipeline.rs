//! A pipeline tactic's rewrite: every loop over the selected stacked layers (`lax.scan` over
//! the layers, and JAX's transpose of it, the backward pass) becomes a GPipe pipeline along the
//! tactic's axis, built by the loop's op family ([`crate::rules::pipeline_loop`]) and inlined;
//! the tactic's tiles (the stacks on their layer dim) and propagation then split it by stage.
//!
//! ```text
//! pipeline = { layers = "params/layers/*", microbatches = 4 }, axis "stage" of 2 devices:
//! remark: tactic 'PP': 2 loops over 4 layers pipelined on 2 stages of 2 layers, 4 microbatches
//!         (GPipe: 5 ticks, bubble 20.0%)
//! ```

use super::{select_values, PassError};
use crate::{
    ffi::{self, Severity},
    ir::{core::static_shape, names},
    rules::{
        self,
        pipeline::{PipelinePlan, Pipelined},
    },
};
use melior::{
    ir::{operation::OperationLike, OperationRef, Value, ValueLike},
    Context,
};

/// Pipelines the loops over the stacks `layers` selects as `plan` says; how many. `location`:
/// the tactic's, where its remark points.
pub fn pipeline<'c>(
    context: &'c Context,
    module: OperationRef<'c, '_>,
    named: &[(String, crate::ir::NamedValue<'c, '_>)],
    who: &str,
    layers: &str,
    plan: &PipelinePlan,
    location: melior::ir::Location<'c>,
) -> Result<usize, PassError<'c>> {
    let selected = select_values(module, named, who, layers)?;
    let stacks: Vec<Value> = selected.iter().map(|(_, v)| v.value).collect();
    let counts: Vec<i64> = stacks
        .iter()
        .filter_map(|v| static_shape(v.r#type()).and_then(|s| s.first().copied()))
        .collect();
    let Some(&count) = counts.first() else {
        return Err(PassError::new(
            location,
            format!(
                "{who}: pipeline: '{}' selects no stacked layers (tensors with a layer dim 0)",
                layers
            ),
        ));
    };
    if let Some((name, v)) = selected.iter().find(|(_, v)| {
        static_shape(v.value.r#type()).and_then(|s| s.first().copied()) != Some(count)
    }) {
        return Err(PassError::new(
            v.location(),
            format!(
                "{who}: pipeline: '{name}' is not a stack of {count} layers like the others ({})",
                v.value.r#type()
            ),
        ));
    }
    let mut loops = Vec::new();
    for func in names::functions(module) {
        ffi::walk(func, |op| {
            if rules::trip_count(op) == Some(count)
                && op
                    .operands()
                    .any(|operand| stacks.iter().any(|s| reaches(operand, *s)))
            {
                loops.push(op);
            }
        });
    }
    if loops.is_empty() {
        return Err(PassError::new(
            location,
            format!("{who}: pipeline: no loop runs over the {count} layers of '{}' (pipelining needs the layers scanned: `lax.scan`, flax `nn.scan`)", layers),
        ));
    }
    let (axis, stages) = (plan.axis.as_str(), plan.stages);
    let mut done: Vec<Pipelined> = Vec::new();
    let first_id = next_id(module);
    for (k, op) in loops.iter().enumerate() {
        let location = op.location();
        match rules::pipeline_loop(context, *op, plan, first_id + k) {
            Some(Ok(pipelined)) => done.push(pipelined),
            Some(Err(why)) => {
                return Err(PassError::new(
                    location,
                    format!("{who}: pipeline: this loop over {count} layers cannot be pipelined on {stages} stages of '{axis}' with {} microbatches: {why}", plan.microbatches),
                ))
            }
            None => {
                return Err(PassError::new(
                    location,
                    format!("{who}: pipeline: partir does not know how to pipeline this loop"),
                ))
            }
        }
    }
    super::inline_calls::run(module)?;
    let (m, s) = (plan.microbatches, stages);
    let ticks = m + s - 1;
    ffi::emit(
        location,
        Severity::Remark,
        &format!(
            "{who}: {} loops over {count} layers pipelined on {s} stages of {} layers, {m} microbatches (GPipe: {ticks} ticks, bubble {:.1}%): {} forward, {} reversed; {} activations handed on, {} stacked outputs, {} summed over microbatches",
            done.len(),
            count / s,
            100.0 * (s - 1) as f64 / ticks as f64,
            done.iter().filter(|p| !p.reversed).count(),
            done.iter().filter(|p| p.reversed).count(),
            done.iter().map(|p| p.activations).sum::<usize>(),
            done.iter().map(|p| p.stacked_outputs).sum::<usize>(),
            done.iter().map(|p| p.summed_outputs).sum::<usize>(),
        ),
    );
    Ok(done.len())
}

/// Whether `value` is `stack` or made from it by one-operand ops (a convert to bf16).
fn reaches(value: Value, stack: Value) -> bool {
    let mut at = value;
    for _ in 0..8 {
        if at == stack {
            return true;
        }
        match ffi::result_owner(at) {
            Some(op) if op.operand_count() == 1 && op.region_count() == 0 => {
                at = op.operand(0).expect("one operand");
            }
            _ => return false,
        }
    }
    false
}

/// A helper-function number no function of the module uses yet.
fn next_id(module: OperationRef) -> usize {
    let names: Vec<String> = names::functions(module)
        .iter()
        .filter_map(|f| f.attribute("sym_name").ok().and_then(ffi::string_attribute))
        .collect();
    (0..)
        .find(|id| {
            !names
                .iter()
                .any(|n| n == &format!("__partir_pipeline_{id}"))
        })
        .expect("a free number")
}

/// What a pipeline could split in `module`: a selector that matches exactly the arguments the
/// loops over the layers carry (dim 0 the layer: flax `nn.scan`'s stacked parameters), with the
/// layer count. None when no loop runs over stacked arguments, or no selector picks them alone.
///
/// ```text
/// params/model/layers/blocks/mlp/down_proj/kernel: [80, 28672, 8192], ... carried by a
/// while of 80 trips  ->  ("params/model/layers/blocks/*", 80)
/// ```
pub fn stacked_layers(module: OperationRef) -> Option<(String, i64)> {
    let named = names::named_values(module);
    let mut by_count: Vec<(i64, Vec<String>)> = Vec::new();
    for func in names::functions(module) {
        ffi::walk(func, |op| {
            let Some(count) = rules::trip_count(op).filter(|&n| n > 1) else {
                return;
            };
            for (name, value) in &named {
                let stacked = static_shape(value.value.r#type())
                    .is_some_and(|shape| shape.first() == Some(&count));
                if stacked && op.operands().any(|o| reaches(o, value.value)) {
                    match by_count.iter_mut().find(|(n, _)| *n == count) {
                        Some((_, names)) if !names.contains(name) => names.push(name.clone()),
                        Some(_) => {}
                        None => by_count.push((count, vec![name.clone()])),
                    }
                }
            }
        });
    }
    let (count, stacks) = by_count.into_iter().max_by_key(|(_, names)| names.len())?;
    let first = stacks.first()?;
    let common = stacks.iter().fold(first.len(), |len, name| {
        first
            .bytes()
            .zip(name.bytes())
            .take(len)
            .take_while(|(a, b)| a == b)
            .count()
    });
    let prefix = &first[..first[..common].rfind('/')? + 1];
    let selector = format!("{prefix}*");
    let pattern = crate::ir::Selector::new(&selector).ok()?;
    let exact = named
        .iter()
        .filter(|(name, _)| pattern.matches(name))
        .all(|(_, v)| {
            static_shape(v.value.r#type()).is_some_and(|shape| shape.first() == Some(&count))
        });
    exact.then_some((selector, count))
}
