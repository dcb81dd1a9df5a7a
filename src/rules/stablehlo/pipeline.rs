//! A `stablehlo.while` over stacked layers (`lax.scan`, forward or JAX's transpose of it)
//! pipelined as GPipe, in the one-program form GSPMD and MaxText write by hand. With S stages,
//! M microbatches of mb rows and L layers (`Ls = L / S` per stage):
//!
//! ```text
//! scan over L layers, h: [B, ...]          ->  ticks t = 0 .. M+S-1, state: [S, mb, ...]
//!   h = layer(W[i], h); ys[i] = r               state[0] <- microbatch t of h (forward; stage
//!                                               S-1 for a reversed loop), else state rotated
//!                                               by one stage (a collective_permute)
//!                                               partir.loop "stage" (%s) {       // stage s
//!                                                 m = t - s                       // its microbatch
//!                                                 the scan over its Ls layers of W[s] on state[s]
//!                                                 ys[s][.., m] <- r (a weight's gradient: +=)
//!                                               }
//!                                             h = the last stage's outputs, per microbatch
//! ```
//!
//! The loop keeps its interface (operands and results of the same types), so the program
//! around it does not change. Its body is reused as it is: a copy retyped to one microbatch
//! and one stage's layers ([`localize`]) is the per-stage function the ticks call.
//!
//! A carry is: the counter; an *activation* (changed by the body, split on the batch: the
//! hidden state, its cotangent); a *stack* (leading dim L, read or written one layer per
//! iteration: the weights, the residuals, the gradients); or a constant passed through (a mask,
//! split on the batch or not). A stack written without a batch dim that the batch reduces into
//! is summed over microbatches (a weight's gradient).

use crate::{
    ffi,
    ir::core::static_shape,
    rules::{
        pipeline::{PipelinePlan, Pipelined},
        regions::{classes, ops_of},
        sums::partials,
        Rules,
    },
};
use melior::{
    ir::{
        block::BlockLike, operation::OperationLike, Module, OperationRef, RegionLike, Value,
        ValueLike,
    },
    Context,
};

mod form;
mod splice;
mod text;

use form::Form;
use splice::{fill_stage, replace_by_call};

/// The body region of a while (region 0 is its condition).
pub(super) const BODY: &[usize] = &[1];

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(super) enum Carry {
    Counter,
    /// Changed by every layer, split on the batch at this dim.
    Activation(usize),
    /// Leading dim L, one layer per iteration; `written` when the body updates it; `batch`:
    /// its batch dim; `summed`: written without a batch dim, from the batch (a gradient).
    Stack {
        written: bool,
        batch: Option<usize>,
        summed: bool,
    },
    /// Passed through unchanged, split on the batch at this dim or not.
    Constant(Option<usize>),
}

pub(super) fn pipeline_while<'c, 'a>(
    context: &'c Context,
    op: OperationRef<'c, 'a>,
    plan: &PipelinePlan,
    id: usize,
) -> Result<Pipelined, String> {
    let (counter, start, limit) = super::control::count(op)
        .filter(|count| count.step == 1)
        .map(|count| (count.counter, count.start, count.limit))
        .ok_or("its trip count is not `i < N` from a constant, step 1")?;
    let layers = limit - start;
    let (stages, micro) = (plan.stages, plan.microbatches);
    if start != 0 || layers < 1 {
        return Err(format!("it counts from {start} to {limit}, not from 0"));
    }
    if stages < 2 || layers % stages != 0 {
        return Err(format!(
            "its {layers} layers do not split into {stages} stages of equal length"
        ));
    }
    let body = op
        .region(1)
        .ok()
        .and_then(|r| r.first_block())
        .ok_or("no body")?;
    let yielded = ops_of(body).pop().ok_or("an empty body")?;
    let n = op.operand_count();
    let shapes: Vec<Vec<i64>> = op
        .operands()
        .map(|v| static_shape(v.r#type()).unwrap_or_default())
        .collect();
    let argument = |i: usize| Value::from(body.argument(i).expect("one argument per carry"));
    let changed = |i: usize| yielded.operand(i).ok() != Some(argument(i));
    let stacked: Vec<bool> = (0..n)
        .map(|i| i != counter && shapes[i].first() == Some(&layers) && reads_by_layer(argument(i)))
        .collect();
    let reversed = direction(body, counter, &stacked, layers)?;
    // The batch: the class of dim `batch_dim` of the activations.
    let mut classes = classes(op, &Rules::default(), n, BODY);
    let mut root = None;
    for i in (0..n).filter(|&i| i != counter && !stacked[i] && changed(i)) {
        let operand = op.operand(i).map_err(|e| e.to_string())?;
        if shapes[i].len() <= plan.batch_dim {
            return Err(format!(
                "carry {i} ({}) changes every layer but has no dim {} to split into microbatches",
                operand.r#type(),
                plan.batch_dim
            ));
        }
        let node = classes.node(operand, plan.batch_dim);
        let found = classes.find(node);
        if root.is_some_and(|r| r != found) {
            return Err(format!(
                "carry {i} is not split on the same batch as the others"
            ));
        }
        root = Some(found);
    }
    let root = root.ok_or("no carried activation changes from layer to layer")?;
    if classes.blocked[root] {
        return Err("its body does not keep the batch's rows apart (a value is reduced over them or used whole)".into());
    }
    // What the batch leaves partial when split is summed over microbatches; when the analysis
    // cannot say (a bf16 gradient converted to f32 before it is stacked), every stack the batch
    // reaches without keeping a batch dim is (a gradient).
    let exact = partials(op, &mut classes, root, n);
    let mut batch_of = |i: usize| -> Result<Option<usize>, String> {
        let operand = op.operand(i).map_err(|e| e.to_string())?;
        let dims: Vec<usize> = (0..shapes[i].len())
            .filter(|&d| {
                let node = classes.node(operand, d);
                classes.find(node) == root
            })
            .collect();
        match dims.as_slice() {
            [] => Ok(None),
            [d] if shapes[i][*d] % micro == 0 => Ok(Some(*d)),
            [d] => Err(format!(
                "carry {i}'s batch ({} rows) does not split into {micro} microbatches",
                shapes[i][*d]
            )),
            _ => Err(format!("carry {i} holds the batch on two dims")),
        }
    };
    let batched: Vec<usize> = (0..n)
        .filter(|&i| i != counter)
        .filter(|&i| batch_of(i).ok().flatten().is_some())
        .collect();
    let summed = exact.unwrap_or_else(|| {
        let mut found = reached(body, &batched, n);
        found.retain(|&i| stacked[i]);
        found
    });
    let mut kinds = Vec::with_capacity(n);
    for (i, &stack) in stacked.iter().enumerate() {
        let batch = if i == counter { None } else { batch_of(i)? };
        kinds.push(if i == counter {
            Carry::Counter
        } else if stack {
            if batch == Some(0) {
                return Err(format!("stack {i} holds the batch on its layer dim"));
            }
            Carry::Stack {
                written: changed(i),
                batch,
                summed: changed(i) && batch.is_none() && summed.contains(&i),
            }
        } else if changed(i) {
            if summed.contains(&i) {
                return Err(format!(
                    "carry {i} sums over the layers (a shared weight's gradient), which stages would have to add up"
                ));
            }
            Carry::Activation(batch.ok_or("an activation without the batch")?)
        } else {
            Carry::Constant(batch)
        });
    }
    let module = module_of(op).ok_or("the loop is not in a module")?;
    let form = Form {
        kinds: &kinds,
        shapes: &shapes,
        elements: op
            .operands()
            .map(|v| ffi::shaped_element(v.r#type()).to_string())
            .collect(),
        types: op.operands().map(|v| v.r#type().to_string()).collect(),
        zeros: op
            .operands()
            .map(|v| crate::rules::filled_with(v) == Some(0.0))
            .collect(),
        stages,
        micro,
        layers,
        reversed,
        axis: &plan.axis,
        id,
    };
    let text = form.module_text();
    let parsed = Module::parse(context, &text)
        .ok_or_else(|| format!("partir built a pipelined form that does not parse:\n{text}"))?;
    let target = module
        .region(0)
        .ok()
        .and_then(|r| r.first_block())
        .ok_or("an empty module")?;
    for func in ops_of(parsed.body()) {
        if ffi::op_is(func, "func.func") {
            target.append_operation(ffi::clone_operation(func));
        }
    }
    drop(parsed);
    fill_stage(context, module, op, &form)?;
    // The loop becomes a call of its pipelined form; `partir-inline-calls` inlines it.
    let call = format!(
        "%r:{n} = func.call @{}({}) : ({}) -> ({})",
        form.pipeline_name(),
        (0..n)
            .map(|i| format!("%a{i}"))
            .collect::<Vec<_>>()
            .join(", "),
        form.types.join(", "),
        form.types.join(", ")
    );
    replace_by_call(context, op, &call, &form.types)?;
    let count = |f: &dyn Fn(&Carry) -> bool| kinds.iter().filter(|k| f(k)).count();
    Ok(Pipelined {
        layers,
        reversed,
        activations: count(&|k| matches!(k, Carry::Activation(_))),
        stacked_outputs: count(&|k| {
            matches!(
                k,
                Carry::Stack {
                    written: true,
                    summed: false,
                    ..
                }
            )
        }),
        summed_outputs: count(&|k| matches!(k, Carry::Stack { summed: true, .. })),
    })
}

/// The carries whose yielded value the body computes from the carries `sources`.
fn reached(body: melior::ir::BlockRef, sources: &[usize], n: usize) -> Vec<usize> {
    let mut tainted: std::collections::HashSet<usize> = sources
        .iter()
        .filter_map(|&i| body.argument(i).ok())
        .map(|a| ffi::value_id(a.into()))
        .collect();
    let ops = ops_of(body);
    let Some((yielded, inner)) = ops.split_last() else {
        return Vec::new();
    };
    for op in inner {
        let mut reads = false;
        ffi::walk(*op, |nested| {
            reads |= nested
                .operands()
                .any(|v| tainted.contains(&ffi::value_id(v)));
        });
        if reads {
            tainted.extend(op.results().map(|r| ffi::value_id(r.into())));
        }
    }
    (0..n.min(yielded.operand_count()))
        .filter(|&i| {
            yielded
                .operand(i)
                .is_ok_and(|v| tainted.contains(&ffi::value_id(v)))
        })
        .collect()
}

/// Whether the body reads or writes `argument` one layer at a time (its only readers are
/// dynamic slices and updates of it, and the yield).
fn reads_by_layer(argument: Value) -> bool {
    let uses = ffi::uses(argument);
    uses.iter()
        .any(|(user, index)| *index == 0 && is_layer_access(*user))
        && uses.iter().all(|(user, index)| {
            (*index == 0 && is_layer_access(*user)) || user.next_in_block().is_none()
        })
}

fn is_layer_access(op: OperationRef) -> bool {
    ffi::op_is(op, "stablehlo.dynamic_slice") || ffi::op_is(op, "stablehlo.dynamic_update_slice")
}

/// Whether the loop reads its stacks last to first: the layer it reads at the first two
/// iterations (0, 1 in order; L-1, L-2 reversed).
fn direction(
    body: melior::ir::BlockRef,
    counter: usize,
    stacked: &[bool],
    layers: i64,
) -> Result<bool, String> {
    let stack = (0..stacked.len())
        .find(|&i| stacked[i])
        .ok_or("it carries no stack of layers")?;
    let argument = Value::from(body.argument(stack).map_err(|e| e.to_string())?);
    let (access, _) = ffi::uses(argument)
        .into_iter()
        .find(|(user, _)| is_layer_access(*user))
        .ok_or("no layer is read")?;
    let first_index = if ffi::op_is(access, "stablehlo.dynamic_slice") {
        1
    } else {
        2
    };
    let index = access.operand(first_index).map_err(|e| e.to_string())?;
    let counter = Value::from(body.argument(counter).map_err(|e| e.to_string())?);
    let at = |i: i64| evaluate(index, counter, i, 0);
    match (at(0), at(1)) {
        (Some(0), Some(1)) => Ok(false),
        (Some(a), Some(b)) if a == layers - 1 && b == layers - 2 => Ok(true),
        (a, b) => Err(format!(
            "it reads layers {a:?}, {b:?} in its first iterations, neither in order nor reversed"
        )),
    }
}

/// The scalar `value` computes from the counter `counter` = `i`, through the integer ops JAX
/// writes around a scan's index (`L - 1 - i`, the wrap of a negative index).
fn evaluate(value: Value, counter: Value, i: i64, depth: usize) -> Option<i64> {
    if value == counter {
        return Some(i);
    }
    if depth > 16 {
        return None;
    }
    let op = ffi::result_owner(value)?;
    let arg = |k: usize| evaluate(op.operand(k).ok()?, counter, i, depth + 1);
    let name = op.name().as_string_ref().as_str().ok()?.to_string();
    Some(match name.as_str() {
        "stablehlo.constant" => super::control::integer_constant(value)?,
        "stablehlo.add" => arg(0)? + arg(1)?,
        "stablehlo.subtract" => arg(0)? - arg(1)?,
        "stablehlo.multiply" => arg(0)? * arg(1)?,
        "stablehlo.minimum" => arg(0)?.min(arg(1)?),
        "stablehlo.maximum" => arg(0)?.max(arg(1)?),
        "stablehlo.negate" => -arg(0)?,
        "stablehlo.clamp" => arg(1)?.clamp(arg(0)?, arg(2)?),
        "stablehlo.convert" | "stablehlo.reshape" | "stablehlo.broadcast_in_dim" => arg(0)?,
        "stablehlo.select" => {
            if arg(0)? != 0 {
                arg(1)?
            } else {
                arg(2)?
            }
        }
        "stablehlo.compare" => {
            let (a, b) = (arg(0)?, arg(1)?);
            let direction = op.attribute("comparison_direction").ok()?.to_string();
            let holds = if direction.contains("LT") {
                a < b
            } else if direction.contains("LE") {
                a <= b
            } else if direction.contains("GT") {
                a > b
            } else if direction.contains("GE") {
                a >= b
            } else if direction.contains("NE") {
                a != b
            } else {
                a == b
            };
            holds as i64
        }
        _ => return None,
    })
}

pub(super) fn module_of<'c, 'a>(op: OperationRef<'c, 'a>) -> Option<OperationRef<'c, 'a>> {
    let mut at = op.parent_operation();
    while let Some(parent) = at {
        if ffi::op_is(parent, "builtin.module") {
            return Some(parent);
        }
        at = parent.parent_operation();
    }
    None
}
