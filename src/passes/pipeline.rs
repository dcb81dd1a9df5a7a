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

use super::{program_location, select_values, PassError};
use crate::{
    ffi::{self, Severity},
    ir::{core::static_shape, names},
    rules::{
        self,
        pipeline::{PipelinePlan, Pipelined},
    },
    schedule::PipelineSettings,
};
use melior::{
    ir::{operation::OperationLike, OperationRef, Value, ValueLike},
    Context,
};

/// Pipelines the loops over `settings.layers` along `axis` (`stages` devices); how many.
pub fn pipeline<'c>(
    context: &'c Context,
    module: OperationRef<'c, '_>,
    named: &[(String, crate::ir::NamedValue<'c, '_>)],
    who: &str,
    settings: &PipelineSettings,
    axis: &str,
    stages: i64,
) -> Result<usize, PassError<'c>> {
    let selected = select_values(module, named, who, &settings.layers)?;
    let stacks: Vec<Value> = selected.iter().map(|(_, v)| v.value).collect();
    let layers: Vec<i64> = stacks
        .iter()
        .filter_map(|v| static_shape(v.r#type()).and_then(|s| s.first().copied()))
        .collect();
    let Some(&count) = layers.first() else {
        return Err(PassError::new(
            program_location(module),
            format!(
                "{who}: pipeline: '{}' selects no stacked layers (tensors with a layer dim 0)",
                settings.layers
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
            program_location(module),
            format!("{who}: pipeline: no loop runs over the {count} layers of '{}' (pipelining needs the layers scanned: `lax.scan`, flax `nn.scan`)", settings.layers),
        ));
    }
    let plan = PipelinePlan {
        axis: axis.to_string(),
        stages,
        microbatches: settings.microbatches,
        batch_dim: settings.batch_dim,
    };
    let mut done: Vec<Pipelined> = Vec::new();
    let first_id = next_id(module);
    for (k, op) in loops.iter().enumerate() {
        let location = op.location();
        match rules::pipeline_loop(context, *op, &plan, first_id + k) {
            Some(Ok(pipelined)) => done.push(pipelined),
            Some(Err(why)) => {
                return Err(PassError::new(
                    location,
                    format!("{who}: pipeline: this loop over {count} layers cannot be pipelined on {stages} stages of '{axis}' with {} microbatches: {why}", settings.microbatches),
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
    let (m, s) = (settings.microbatches, stages);
    let ticks = m + s - 1;
    ffi::emit(
        program_location(module),
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
