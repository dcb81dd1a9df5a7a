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
        regions::{blocks, classes, localize, ops_of},
        sums::partials,
        Rules, Shapes,
    },
};
use melior::{
    ir::{
        block::BlockLike, operation::OperationLike, Attribute, Module, OperationRef, RegionLike,
        Value, ValueLike,
    },
    Context,
};
use std::fmt::Write;

/// The body region of a while (region 0 is its condition).
const BODY: &[usize] = &[1];

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Carry {
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
    let (counter, start, limit) =
        counted(op).ok_or("its trip count is not `i < N` from a constant, step 1")?;
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
        zeros: op.operands().map(|v| filled_with(v) == Some(0.0)).collect(),
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

/// `(counter carry, start, limit)` of a loop counting `i < limit` by 1 from a constant.
fn counted(op: OperationRef) -> Option<(usize, i64, i64)> {
    let cond = op.region(0).ok()?.first_block()?;
    let compare = ffi::result_owner(ops_of(cond).pop()?.operand(0).ok()?)?;
    let counter = compare.operand(0).ok()?;
    let index = (0..cond.argument_count())
        .find(|&i| cond.argument(i).is_ok_and(|a| Value::from(a) == counter))?;
    let trips = super::control::trip_count(op)?;
    let start = integer(op.operand(index).ok()?)?;
    Some((index, start, start + trips))
}

/// The scalar every element of `value` holds, as its producer's family says.
fn filled_with(value: Value) -> Option<f64> {
    let producer = ffi::result_owner(value)?;
    match crate::rules::fill(producer)? {
        crate::rules::Fill::Scalar(scalar) => Some(scalar),
        crate::rules::Fill::Operand(index) => filled_with(producer.operand(index).ok()?),
    }
}

fn integer(value: Value) -> Option<i64> {
    let op = ffi::result_owner(value)?;
    if !ffi::op_is(op, "stablehlo.constant") {
        return None;
    }
    ffi::scalar_value(op.attribute("value").ok()?).map(|v| v as i64)
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
        "stablehlo.constant" => integer(value)?,
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

fn module_of<'c, 'a>(op: OperationRef<'c, 'a>) -> Option<OperationRef<'c, 'a>> {
    let mut at = op.parent_operation();
    while let Some(parent) = at {
        if ffi::op_is(parent, "builtin.module") {
            return Some(parent);
        }
        at = parent.parent_operation();
    }
    None
}

/// Builds the per-stage function's body: a copy of the loop on its arguments (one
/// microbatch, one stage's layers), retyped to them.
fn fill_stage<'c>(
    context: &'c Context,
    module: OperationRef<'c, '_>,
    op: OperationRef<'c, '_>,
    form: &Form,
) -> Result<(), String> {
    let name = form.stage_name();
    let func = ops_of(
        module
            .region(0)
            .ok()
            .and_then(|r| r.first_block())
            .ok_or("an empty module")?,
    )
    .into_iter()
    .find(|f| {
        f.attribute("sym_name")
            .ok()
            .and_then(ffi::string_attribute)
            .is_some_and(|s| s == name)
    })
    .ok_or("the stage function was not added")?;
    let entry = func
        .region(0)
        .ok()
        .and_then(|r| r.first_block())
        .ok_or("an empty stage function")?;
    let ret = ops_of(entry).pop().ok_or("no return")?;
    let before = Shapes::of(op);
    let copy = entry.insert_operation_before(ret, ffi::clone_operation(op));
    for i in 0..copy.operand_count() {
        let argument = Value::from(entry.argument(i).map_err(|e| e.to_string())?);
        ffi::set_operand(copy, i, argument);
        copy.result(i)
            .map_err(|e| e.to_string())?
            .set_type(argument.r#type());
        ffi::set_operand(ret, i, copy.result(i).map_err(|e| e.to_string())?.into());
    }
    localize(context, copy, &before, copy.operand_count(), BODY);
    // An update of a stack keeps the stack's (now one stage's) type.
    for block in blocks(copy) {
        for inner in ops_of(block) {
            if ffi::op_is(inner, "stablehlo.dynamic_update_slice") {
                let ty = inner.operand(0).map_err(|e| e.to_string())?.r#type();
                inner.result(0).map_err(|e| e.to_string())?.set_type(ty);
            }
        }
    }
    // A forward loop counts to its stage's layers; a reversed one reads `L - 1 - i` and counts
    // from `L - Ls` to L.
    if !form.reversed {
        let cond = copy
            .region(0)
            .ok()
            .and_then(|r| r.first_block())
            .ok_or("no condition")?;
        let compare = ffi::result_owner(
            ops_of(cond)
                .pop()
                .and_then(|r| r.operand(0).ok())
                .ok_or("no predicate")?,
        )
        .ok_or("no compare")?;
        let limit =
            ffi::result_owner(compare.operand(1).map_err(|e| e.to_string())?).ok_or("no limit")?;
        let ty = limit.result(0).map_err(|e| e.to_string())?.r#type();
        let value = Attribute::parse(context, &format!("dense<{}> : {ty}", form.per_stage()))
            .ok_or("a limit")?;
        ffi::set_attribute(limit, "value", value);
    }
    Ok(())
}

/// Replaces `op` by the one call written in `call` (operands `%a0..`), through a parsed
/// function whose body is that call: the call is moved next to `op`.
fn replace_by_call<'c>(
    context: &'c Context,
    op: OperationRef<'c, '_>,
    call: &str,
    types: &[String],
) -> Result<(), String> {
    let n = types.len();
    let args: Vec<String> = (0..n).map(|i| format!("%a{i}: {}", types[i])).collect();
    // The callee declared, so that the call verifies.
    let callee = call
        .split('@')
        .nth(1)
        .and_then(|rest| rest.split('(').next())
        .ok_or("a call names its callee")?;
    let text = format!(
        "func.func private @{callee}({}) -> ({})\nfunc.func private @caller({}) -> ({}) {{\n  {call}\n  return {} : {}\n}}\n",
        types.join(", "),
        types.join(", "),
        args.join(", "),
        types.join(", "),
        (0..n).map(|i| format!("%r#{i}")).collect::<Vec<_>>().join(", "),
        types.join(", ")
    );
    let parsed = Module::parse(context, &text)
        .ok_or_else(|| format!("a call that does not parse:\n{text}"))?;
    let func = ops_of(parsed.body()).pop().ok_or("no function")?;
    let entry = func
        .region(0)
        .ok()
        .and_then(|r| r.first_block())
        .ok_or("no body")?;
    let parsed_call = ops_of(entry).into_iter().next().ok_or("no call")?;
    let block = op.block().ok_or("the loop is in no block")?;
    let new = block.insert_operation_before(op, ffi::clone_operation(parsed_call));
    // The copy reads the parsed function's arguments until it reads the loop's operands: set
    // them before the parsed module (and its arguments' use lists) is destroyed.
    for i in 0..n {
        ffi::set_operand(new, i, op.operand(i).map_err(|e| e.to_string())?);
    }
    drop(parsed);
    for i in 0..n {
        ffi::replace_all_uses(
            op.result(i).map_err(|e| e.to_string())?.into(),
            new.result(i).map_err(|e| e.to_string())?.into(),
        );
    }
    // SAFETY: every use of `op` was replaced and no handle to it is used after this.
    unsafe { ffi::erase(op) };
    Ok(())
}

/// The pipelined form's text: the ticks (`@__partir_pipeline_<id>`) and the per-stage
/// function they call (`@__partir_stage_<id>`, its body filled in by [`fill_stage`]).
struct Form<'p> {
    kinds: &'p [Carry],
    shapes: &'p [Vec<i64>],
    elements: Vec<String>,
    types: Vec<String>,
    /// Which operands are zeros (a gradient's accumulator starts so).
    zeros: Vec<bool>,
    stages: i64,
    micro: i64,
    layers: i64,
    reversed: bool,
    axis: &'p str,
    id: usize,
}

fn tensor(shape: &[i64], element: &str) -> String {
    if shape.is_empty() {
        format!("tensor<{element}>")
    } else {
        let dims: Vec<String> = shape.iter().map(i64::to_string).collect();
        format!("tensor<{}x{element}>", dims.join("x"))
    }
}

fn zero(element: &str) -> &'static str {
    if element == "i1" {
        "false"
    } else if element.starts_with('f') || element.starts_with("bf") {
        "0.000000e+00"
    } else {
        "0"
    }
}

fn i64s(values: impl IntoIterator<Item = i64>) -> String {
    let listed: Vec<String> = values.into_iter().map(|v| v.to_string()).collect();
    if listed.is_empty() {
        return "array<i64>".to_string();
    }
    format!("array<i64: {}>", listed.join(", "))
}

/// Text being written, with fresh SSA names.
struct Text {
    out: String,
    next: usize,
    indent: usize,
}

const I32: &str = "tensor<i32>";
const I1: &str = "tensor<i1>";

impl Text {
    fn line(&mut self, line: &str) {
        let _ = writeln!(self.out, "{}{line}", "  ".repeat(self.indent));
    }

    fn value(&mut self, rhs: &str) -> String {
        self.next += 1;
        let name = format!("%v{}", self.next);
        self.line(&format!("{name} = {rhs}"));
        name
    }

    fn constant(&mut self, literal: impl std::fmt::Display, ty: &str) -> String {
        self.value(&format!(
            "\"stablehlo.constant\"() <{{value = dense<{literal}> : {ty}}}> : () -> {ty}"
        ))
    }

    /// Zeros of `ty`, a broadcast scalar: a device split on any of its dims makes its own
    /// chunk, nothing whole is ever built.
    fn zeros(&mut self, element: &str, ty: &str) -> String {
        let scalar = tensor(&[], element);
        let zero = self.constant(zero(element), &scalar);
        self.broadcast(&zero, &scalar, &[], ty)
    }

    fn binary(&mut self, name: &str, a: &str, b: &str, ty: &str) -> String {
        self.value(&format!(
            "\"stablehlo.{name}\"({a}, {b}) : ({ty}, {ty}) -> {ty}"
        ))
    }

    fn compare(&mut self, direction: &str, a: &str, b: &str, ty: &str, result: &str) -> String {
        self.value(&format!(
            "\"stablehlo.compare\"({a}, {b}) <{{comparison_direction = #stablehlo<comparison_direction {direction}>}}> : ({ty}, {ty}) -> {result}"
        ))
    }

    fn reshape(&mut self, x: &str, from: &str, to: &str) -> String {
        self.value(&format!("\"stablehlo.reshape\"({x}) : ({from}) -> {to}"))
    }

    fn select(&mut self, p: &str, a: &str, b: &str, pty: &str, ty: &str) -> String {
        self.value(&format!(
            "\"stablehlo.select\"({p}, {a}, {b}) : ({pty}, {ty}, {ty}) -> {ty}"
        ))
    }

    fn broadcast(&mut self, x: &str, from: &str, dims: &[i64], to: &str) -> String {
        self.value(&format!(
            "\"stablehlo.broadcast_in_dim\"({x}) <{{broadcast_dimensions = {}}}> : ({from}) -> {to}",
            i64s(dims.iter().copied())
        ))
    }

    /// The block of `sizes` at `offset` on `dim` (0 elsewhere) of `x`: [`shape`].
    fn dynamic_slice(
        &mut self,
        x: &str,
        shape: &[i64],
        element: &str,
        dim: usize,
        offset: &str,
        sizes: &[i64],
    ) -> String {
        let zero = self.constant(0, I32);
        let starts: Vec<&str> = (0..shape.len())
            .map(|d| if d == dim { offset } else { zero.as_str() })
            .collect();
        self.value(&format!(
            "\"stablehlo.dynamic_slice\"({x}, {}) <{{slice_sizes = {}}}> : ({}, {}) -> {}",
            starts.join(", "),
            i64s(sizes.iter().copied()),
            tensor(shape, element),
            vec![I32; shape.len()].join(", "),
            tensor(sizes, element)
        ))
    }
}

impl Text {
    /// Microbatch `index` of `x` (of shape `view`, the batch as [mb, M] at `b`): [`local`].
    fn pick(&mut self, x: &str, view: &[i64], element: &str, b: usize, index: &str) -> String {
        let mut sizes = view.to_vec();
        sizes[b + 1] = 1;
        let block = self.dynamic_slice(x, view, element, b + 1, index, &sizes);
        let mut local = sizes.clone();
        local.remove(b + 1);
        self.reshape(&block, &tensor(&sizes, element), &tensor(&local, element))
    }

    /// `x` (of shape `view`) with microbatch `index` replaced by `update`.
    fn put(
        &mut self,
        x: &str,
        view: &[i64],
        element: &str,
        b: usize,
        index: &str,
        update: &str,
    ) -> String {
        let mut sizes = view.to_vec();
        sizes[b + 1] = 1;
        let mut local = sizes.clone();
        local.remove(b + 1);
        let block = self.reshape(update, &tensor(&local, element), &tensor(&sizes, element));
        let zero = self.constant(0, I32);
        let starts: Vec<&str> = (0..view.len())
            .map(|d| if d == b + 1 { index } else { zero.as_str() })
            .collect();
        let ty = tensor(view, element);
        self.value(&format!(
            "\"stablehlo.dynamic_update_slice\"({x}, {block}, {}) : ({ty}, {}, {}) -> {ty}",
            starts.join(", "),
            tensor(&sizes, element),
            vec![I32; view.len()].join(", ")
        ))
    }
}

fn prepend(first: i64, rest: &[i64]) -> Vec<i64> {
    std::iter::once(first).chain(rest.iter().copied()).collect()
}

impl Form<'_> {
    fn pipeline_name(&self) -> String {
        format!("__partir_pipeline_{}", self.id)
    }

    fn stage_name(&self) -> String {
        format!("__partir_stage_{}", self.id)
    }

    fn per_stage(&self) -> i64 {
        self.layers / self.stages
    }

    fn mb(&self, rows: i64) -> i64 {
        rows / self.micro
    }

    fn batch(&self, i: usize) -> Option<usize> {
        match self.kinds[i] {
            Carry::Activation(b) => Some(b),
            Carry::Stack { batch, .. } | Carry::Constant(batch) => batch,
            Carry::Counter => None,
        }
    }

    /// Carry i's shape with its batch seen as [mb, M]: microbatch m is rows m, M + m,
    /// 2M + m, ..., so that a batch split contiguously over devices (BP) splits every
    /// microbatch alike.
    fn view(&self, i: usize) -> Vec<i64> {
        let mut shape = self.shapes[i].clone();
        if let Some(b) = self.batch(i) {
            shape[b] = self.mb(shape[b]);
            shape.insert(b + 1, self.micro);
        }
        shape
    }

    /// Carry i's shape in one stage on one microbatch (what the stage function takes).
    fn local(&self, i: usize) -> Vec<i64> {
        let mut shape = self.shapes[i].clone();
        if let Some(b) = self.batch(i) {
            shape[b] = self.mb(shape[b]);
        }
        if matches!(self.kinds[i], Carry::Stack { .. }) {
            shape[0] = self.per_stage();
        }
        shape
    }

    fn local_type(&self, i: usize) -> String {
        tensor(&self.local(i), &self.elements[i])
    }

    /// A stack's shape split by stage: [S, Ls, ...] (its batch as in [`Self::view`]).
    fn staged(&self, i: usize) -> Vec<i64> {
        let mut shape = vec![self.stages, self.per_stage()];
        shape.extend_from_slice(&self.view(i)[1..]);
        shape
    }

    fn of(&self, pick: impl Fn(&Carry) -> bool) -> Vec<usize> {
        (0..self.kinds.len())
            .filter(|&i| pick(&self.kinds[i]))
            .collect()
    }

    fn module_text(&self) -> String {
        let mut text = Text {
            out: String::new(),
            next: 0,
            indent: 0,
        };
        text.line(&format!(
            "partir.mesh @mesh [\"{}\"={}]",
            self.axis, self.stages
        ));
        self.stage_function(&mut text);
        self.pipeline_function(&mut text);
        format!("module {{\n{}}}\n", text.out)
    }

    fn stage_function(&self, text: &mut Text) {
        let n = self.kinds.len();
        let types: Vec<String> = (0..n).map(|i| self.local_type(i)).collect();
        let args: Vec<String> = (0..n).map(|i| format!("%s{i}: {}", types[i])).collect();
        text.line(&format!(
            "func.func private @{}({}) -> ({}) {{",
            self.stage_name(),
            args.join(", "),
            types.join(", ")
        ));
        text.line(&format!(
            "  return {} : {}",
            (0..n)
                .map(|i| format!("%s{i}"))
                .collect::<Vec<_>>()
                .join(", "),
            types.join(", ")
        ));
        text.line("}");
    }

    fn pipeline_function(&self, text: &mut Text) {
        let n = self.kinds.len();
        let (s, m) = (self.stages, self.micro);
        let acts = self.of(|k| matches!(k, Carry::Activation(_)));
        let ys = self.of(|k| matches!(k, Carry::Stack { written: true, .. }));
        let xs = self.of(|k| matches!(k, Carry::Stack { written: false, .. }));
        let consts = self.of(|k| matches!(k, Carry::Constant(_)));
        let args: Vec<String> = (0..n)
            .map(|i| format!("%a{i}: {}", self.types[i]))
            .collect();
        text.line(&format!(
            "func.func private @{}({}) -> ({}) {{",
            self.pipeline_name(),
            args.join(", "),
            self.types.join(", ")
        ));
        text.indent = 1;
        // The ticks' carries: the tick, per activation its state [S, local] and outputs
        // [S, whole], the written stacks [S, Ls, ...], then what passes through: the read
        // stacks [S, Ls, ...], the activations' inputs and the constants.
        let mut inits: Vec<(String, String)> = Vec::new();
        let t0 = text.constant(0, I32);
        inits.push((t0, I32.to_string()));
        let state_type = |i: usize| tensor(&prepend(s, &self.local(i)), &self.elements[i]);
        let out_type = |i: usize| tensor(&prepend(s, &self.view(i)), &self.elements[i]);
        let view_type = |i: usize| tensor(&self.view(i), &self.elements[i]);
        let staged_type = |i: usize| tensor(&self.staged(i), &self.elements[i]);
        for &i in &acts {
            let ty = state_type(i);
            let zeros = text.zeros(&self.elements[i], &ty);
            inits.push((zeros, ty));
        }
        for &i in &acts {
            let ty = out_type(i);
            let zeros = text.zeros(&self.elements[i], &ty);
            inits.push((zeros, ty));
        }
        for &i in ys.iter().chain(&xs) {
            // Zeros made in place, which every device can make its own chunk of, and from
            // which a sum left partial by another axis is reduced once after the ticks.
            let staged = if self.zeros[i] {
                text.zeros(&self.elements[i], &staged_type(i))
            } else {
                text.reshape(&format!("%a{i}"), &self.types[i], &staged_type(i))
            };
            inits.push((staged, staged_type(i)));
        }
        for &i in acts.iter().chain(&consts) {
            let viewed = match self.batch(i) {
                Some(_) => text.reshape(&format!("%a{i}"), &self.types[i], &view_type(i)),
                None => format!("%a{i}"),
            };
            inits.push((viewed, view_type(i)));
        }
        let k = inits.len();
        let names: Vec<&str> = inits.iter().map(|(v, _)| v.as_str()).collect();
        let types: Vec<&str> = inits.iter().map(|(_, t)| t.as_str()).collect();
        let block_args: Vec<String> = (0..k).map(|j| format!("%b{j}: {}", types[j])).collect();
        let ticks = m + s - 1;
        let w = format!("%w{}", self.id);
        text.line(&format!(
            "{w}:{k} = \"stablehlo.while\"({}) ({{",
            names.join(", ")
        ));
        text.line(&format!("^bb0({}):", block_args.join(", ")));
        text.indent = 2;
        let limit = text.constant(ticks, I32);
        let go = text.compare("LT", "%b0", &limit, I32, I1);
        text.line(&format!("\"stablehlo.return\"({go}) : ({I1}) -> ()"));
        text.indent = 1;
        text.line("}, {");
        text.line(&format!("^bb0({}):", block_args.join(", ")));
        text.indent = 2;
        // Block argument positions.
        let a = acts.len();
        let state_at = |j: usize| 1 + j;
        let out_at = |j: usize| 1 + a + j;
        let ys_at = |j: usize| 1 + 2 * a + j;
        let xs_at = |j: usize| 1 + 2 * a + ys.len() + j;
        let in_at = |j: usize| 1 + 2 * a + ys.len() + xs.len() + j;
        let const_at = |j: usize| 1 + 3 * a + ys.len() + xs.len() + j;
        let vec_s = tensor(&[s], "i32");
        let iota = text.value(&format!(
            "\"stablehlo.iota\"() <{{iota_dimension = 0 : i64}}> : () -> {vec_s}"
        ));
        let t_s = text.broadcast("%b0", I32, &[], &vec_s);
        // Stage s works on microbatch t - s (t - (S-1-s) when the stages run last to first).
        let microbatch = if self.reversed {
            let last = text.constant(s - 1, &vec_s);
            let shifted = text.binary("subtract", &t_s, &last, &vec_s);
            text.binary("add", &shifted, &iota, &vec_s)
        } else {
            text.binary("subtract", &t_s, &iota, &vec_s)
        };
        let first_stage = if self.reversed { s - 1 } else { 0 };
        let first_s = text.constant(first_stage, &vec_s);
        let first = text.compare("EQ", &iota, &first_s, &vec_s, &tensor(&[s], "i1"));
        let last_micro = text.constant(m - 1, I32);
        let fed = text.binary("minimum", "%b0", &last_micro, I32);
        let all_micro = text.constant(m, I32);
        let feeding = text.compare("LT", "%b0", &all_micro, I32, I1);
        let mut states_in = Vec::new();
        for (j, &i) in acts.iter().enumerate() {
            let Carry::Activation(b) = self.kinds[i] else {
                unreachable!()
            };
            let local = self.local(i);
            let element = &self.elements[i];
            let picked = text.pick(&format!("%b{}", in_at(j)), &self.view(i), element, b, &fed);
            // Zeros once every microbatch is in: the bubble's ticks compute on zeros.
            let zeros = text.zeros(element, &self.local_type(i));
            let fresh = text.select(&feeding, &picked, &zeros, I1, &self.local_type(i));
            let st = state_type(i);
            let dims: Vec<i64> = (1..=local.len() as i64).collect();
            let fed_all = text.broadcast(&fresh, &self.local_type(i), &dims, &st);
            // Rotate the states one stage on: forward, stage s takes stage s-1's.
            let state = format!("%b{}", state_at(j));
            let (head, tail) = if self.reversed {
                ((1, s), (0, 1))
            } else {
                ((s - 1, s), (0, s - 1))
            };
            let part = |text: &mut Text, (lo, hi): (i64, i64)| {
                let mut start = vec![0; local.len() + 1];
                let mut limit = prepend(s, &local);
                start[0] = lo;
                limit[0] = hi;
                let ty = tensor(&prepend(hi - lo, &local), element);
                text.value(&format!(
                    "\"stablehlo.slice\"({state}) <{{start_indices = {}, limit_indices = {}, strides = {}}}> : ({st}) -> {ty}",
                    i64s(start),
                    i64s(limit),
                    i64s(vec![1; local.len() + 1])
                ))
            };
            let (h, t) = (part(text, head), part(text, tail));
            let rotated = text.value(&format!(
                "\"stablehlo.concatenate\"({h}, {t}) <{{dimension = 0 : i64}}> : ({}, {}) -> {st}",
                tensor(&prepend(head.1 - head.0, &local), element),
                tensor(&prepend(tail.1 - tail.0, &local), element)
            ));
            let mask_ty = tensor(&prepend(s, &local), "i1");
            let mask = text.broadcast(&first, &tensor(&[s], "i1"), &[0], &mask_ty);
            states_in.push(text.select(&mask, &fed_all, &rotated, &mask_ty, &st));
        }
        // The stages, each on its own microbatch.
        let mut results: Vec<String> = Vec::new();
        results.extend(acts.iter().map(|&i| state_type(i)));
        results.extend(acts.iter().map(|&i| out_type(i)));
        results.extend(ys.iter().map(|&i| staged_type(i)));
        let tiles = vec!["#partir.tile<0>"; results.len()].join(", ");
        let stage_loop = format!("%p{}", self.id);
        text.line(&format!(
            "{stage_loop}:{} = partir.loop \"{}\" [{tiles}] (%st: !partir.range<{s}>) {{",
            results.len(),
            self.axis
        ));
        text.indent = 3;
        let one = tensor(&[1], "i32");
        let mine = text.value(&format!(
            "partir.slice 0 {microbatch}[%st] : {vec_s} -> {one}"
        ));
        let mb_index = text.reshape(&mine, &one, I32);
        let zero_i = text.constant(0, I32);
        let count = text.constant(m, I32);
        let ge = text.compare("GE", &mb_index, &zero_i, I32, I1);
        let lt = text.compare("LT", &mb_index, &count, I32, I1);
        let valid = text.binary("and", &ge, &lt, I1);
        let last_m = text.constant(m - 1, I32);
        let clamped = text.value(&format!(
            "\"stablehlo.clamp\"({zero_i}, {mb_index}, {last_m}) : ({I32}, {I32}, {I32}) -> {I32}"
        ));
        let chunk = |text: &mut Text, whole: &str, shape: &[i64], element: &str| {
            let from = tensor(shape, element);
            let one_shape = prepend(1, &shape[1..]);
            let piece = text.value(&format!(
                "partir.slice 0 {whole}[%st] : {from} -> {}",
                tensor(&one_shape, element)
            ));
            text.reshape(
                &piece,
                &tensor(&one_shape, element),
                &tensor(&shape[1..], element),
            )
        };
        let mut operands = vec![String::new(); n];
        for (i, operand) in operands.iter_mut().enumerate() {
            let element = &self.elements[i];
            let local = self.local(i);
            *operand = match self.kinds[i] {
                Carry::Counter => {
                    let start = if self.reversed {
                        self.layers - self.per_stage()
                    } else {
                        0
                    };
                    text.constant(start, &self.types[i])
                }
                Carry::Activation(_) => {
                    let j = acts.iter().position(|&x| x == i).expect("an activation");
                    chunk(text, &states_in[j], &prepend(s, &local), element)
                }
                Carry::Stack { written: true, .. } => text.zeros(element, &self.local_type(i)),
                Carry::Stack { batch, .. } => {
                    let j = xs.iter().position(|&x| x == i).expect("a read stack");
                    let mine = chunk(text, &format!("%b{}", xs_at(j)), &self.staged(i), element);
                    match batch {
                        None => mine,
                        Some(b) => text.pick(&mine, &self.staged(i)[1..], element, b, &clamped),
                    }
                }
                Carry::Constant(batch) => {
                    let j = consts.iter().position(|&x| x == i).expect("a constant");
                    let whole = format!("%b{}", const_at(j));
                    match batch {
                        None => whole,
                        Some(b) => text.pick(&whole, &self.view(i), element, b, &clamped),
                    }
                }
            };
        }
        let local_types: Vec<String> = (0..n).map(|i| self.local_type(i)).collect();
        let call = format!("%c{}", self.id);
        text.line(&format!(
            "{call}:{n} = func.call @{}({}) : ({}) -> ({})",
            self.stage_name(),
            operands.join(", "),
            local_types.join(", "),
            local_types.join(", ")
        ));
        let mut yields: Vec<String> = Vec::new();
        let mut yield_types: Vec<String> = Vec::new();
        for &i in &acts {
            let local = self.local(i);
            let one_ty = tensor(&prepend(1, &local), &self.elements[i]);
            yields.push(text.reshape(&format!("{call}#{i}"), &self.local_type(i), &one_ty));
            yield_types.push(one_ty);
        }
        for (j, &i) in acts.iter().enumerate() {
            let Carry::Activation(b) = self.kinds[i] else {
                unreachable!()
            };
            let element = &self.elements[i];
            let view = self.view(i);
            let outs = chunk(
                text,
                &format!("%b{}", out_at(j)),
                &prepend(s, &view),
                element,
            );
            let old = text.pick(&outs, &view, element, b, &clamped);
            let kept = text.select(
                &valid,
                &format!("{call}#{i}"),
                &old,
                I1,
                &self.local_type(i),
            );
            let written = text.put(&outs, &view, element, b, &clamped, &kept);
            let one_ty = tensor(&prepend(1, &view), element);
            yields.push(text.reshape(&written, &view_type(i), &one_ty));
            yield_types.push(one_ty);
        }
        for (j, &i) in ys.iter().enumerate() {
            let Carry::Stack { batch, summed, .. } = self.kinds[i] else {
                unreachable!()
            };
            let element = &self.elements[i];
            let staged = self.staged(i);
            let whole = &staged[1..];
            let whole_ty = tensor(whole, element);
            let result = format!("{call}#{i}");
            // A gradient is not summed here: the stage yields its share and the tick adds it to
            // the whole accumulator, where a sum split on another axis (BP) stays partial and is
            // reduced once after the ticks (lower_to_hlo/loop_sums.rs).
            let mut mine = || chunk(text, &format!("%b{}", ys_at(j)), &staged, element);
            let written = match batch {
                Some(b) => {
                    let mine = mine();
                    let old = text.pick(&mine, whole, element, b, &clamped);
                    let kept = text.select(&valid, &result, &old, I1, &self.local_type(i));
                    text.put(&mine, whole, element, b, &clamped, &kept)
                }
                // A reversed loop is JAX's transpose: its gradients are linear in the
                // cotangent it hands on, which is zero in the bubble's ticks (fed zeros), so
                // they need no mask, and the reduce of a sum split on another axis reaches the
                // accumulator through layout ops alone.
                None if summed && self.reversed => result.clone(),
                None if summed => {
                    let zeros = text.zeros(element, &whole_ty);
                    text.select(&valid, &result, &zeros, I1, &whole_ty)
                }
                None => {
                    let mine = mine();
                    text.select(&valid, &result, &mine, I1, &whole_ty)
                }
            };
            let staged_one = tensor(&prepend(1, whole), element);
            yields.push(text.reshape(&written, &whole_ty, &staged_one));
            yield_types.push(staged_one);
        }
        text.line(&format!(
            "partir.yield {} : {}",
            yields.join(", "),
            yield_types.join(", ")
        ));
        text.indent = 2;
        text.line(&format!("}} : {}", results.join(", ")));
        let step = text.constant(1, I32);
        let next = text.binary("add", "%b0", &step, I32);
        let mut carried = vec![next];
        for r in 0..results.len() {
            let stage_result = format!("{stage_loop}#{r}");
            carried.push(match r.checked_sub(2 * a).map(|j| (j, ys[j])) {
                Some((j, i)) if matches!(self.kinds[i], Carry::Stack { summed: true, .. }) => text
                    .binary(
                        "add",
                        &format!("%b{}", ys_at(j)),
                        &stage_result,
                        &staged_type(i),
                    ),
                _ => stage_result,
            });
        }
        carried.extend((1 + results.len()..k).map(|j| format!("%b{j}")));
        text.line(&format!(
            "\"stablehlo.return\"({}) : ({}) -> ()",
            carried.join(", "),
            types.join(", ")
        ));
        text.indent = 1;
        text.line(&format!(
            "}}) : ({}) -> ({})",
            types.join(", "),
            types.join(", ")
        ));
        // The activations as the last stage left them; the stacks unstaged.
        let mut returned = vec![String::new(); n];
        let iota = text.value(&format!(
            "\"stablehlo.iota\"() <{{iota_dimension = 0 : i64}}> : () -> {vec_s}"
        ));
        let last_stage = text.constant(if self.reversed { 0 } else { s - 1 }, &vec_s);
        let last = text.compare("EQ", &iota, &last_stage, &vec_s, &tensor(&[s], "i1"));
        for (j, &i) in acts.iter().enumerate() {
            let element = &self.elements[i];
            let hot = text.value(&format!(
                "\"stablehlo.convert\"({last}) : ({}) -> {}",
                tensor(&[s], "i1"),
                tensor(&[s], element)
            ));
            let last = text.value(&format!(
                "\"stablehlo.dot_general\"({hot}, {w}#{}) <{{dot_dimension_numbers = #stablehlo.dot<lhs_contracting_dimensions = [0], rhs_contracting_dimensions = [0]>}}> : ({}, {}) -> {}",
                out_at(j),
                tensor(&[s], element),
                out_type(i),
                view_type(i)
            ));
            returned[i] = text.reshape(&last, &view_type(i), &self.types[i]);
        }
        for (j, &i) in ys.iter().enumerate() {
            returned[i] = text.reshape(
                &format!("{w}#{}", ys_at(j)),
                &staged_type(i),
                &self.types[i],
            );
        }
        for (i, slot) in returned.iter_mut().enumerate() {
            if slot.is_empty() {
                *slot = match self.kinds[i] {
                    Carry::Counter => text.constant(self.layers, &self.types[i]),
                    _ => format!("%a{i}"),
                };
            }
        }
        text.line(&format!(
            "return {} : {}",
            returned.join(", "),
            self.types.join(", ")
        ));
        text.indent = 0;
        text.line("}");
    }
}
