//! How propagation reads Core IR. Propagation keeps every partitioned op in its own *nest*:
//!
//! ```mlir
//! %h = partir.loop "batch" [#partir.tile<0>] (%rb: !partir.range<4>) {   // nest over batch
//!   %h2 = partir.loop "model" [#partir.tile<1>] (%rm: !partir.range<2>) { // ... and model
//!     %x0 = partir.slice 0 %x[%rb]           // slice chain of operand 0: (batch, 0)
//!     %w0 = partir.slice 1 %w[%rm]           // slice chain of operand 1: (model, 1)
//!     %m = linalg.matmul ins(%x0, %w0 ...)   // the payload
//!     partir.yield %m
//!   } : tensor<8x256xf32>
//!   partir.yield %h2
//! } : tensor<32x256xf32>
//! ```
//! The *logical* operands of the payload are `%x` and `%w` (the sources of its slice chains),
//! its logical result is `%h` (what the rest of the program uses), and `%h` is tiled on dim 0
//! along batch and dim 1 along model. An identity loop `loop A [tile<d>] { yield slice d %x }`
//! (the tile action) is a *view*: `%x` seen tiled on dim d along A.

use crate::{
    ffi,
    ir::{
        attrs::Action,
        core::{self, axis_of, slice_axis, LOOP_OP, REPLICATE_OP, SLICE_OP, YIELD_OP},
    },
};
use melior::ir::{
    attribute::IntegerAttribute, block::BlockLike, operation::OperationLike, OperationRef,
    RegionLike, Value, ValueLike,
};

pub fn name_of(op: OperationRef) -> String {
    op.name().as_string_ref().as_str().unwrap_or("").to_string()
}

fn is(op: OperationRef, name: &str) -> bool {
    ffi::op_is(op, name)
}

/// The ops that compute something (not loops, slices or yields), in program order, looking
/// into partir.loop bodies and loop ops' carried bodies (a `while`'s), not into other ops'
/// regions.
pub fn payloads<'c, 'a>(func: OperationRef<'c, 'a>) -> Vec<OperationRef<'c, 'a>> {
    let mut found = Vec::new();
    let body = func.region(0).ok().and_then(|region| region.first_block());
    if let Some(body) = body {
        collect_payloads(body, &mut found);
    }
    found
}

fn collect_payloads<'c, 'a>(
    block: melior::ir::BlockRef<'c, 'a>,
    found: &mut Vec<OperationRef<'c, 'a>>,
) {
    let mut next = block.first_operation();
    while let Some(op) = next {
        if is(op, LOOP_OP) {
            if identity_view(op).is_none() {
                if let Some(inner) = op.region(0).ok().and_then(|region| region.first_block()) {
                    collect_payloads(inner, found);
                }
            }
        } else if !is(op, SLICE_OP) && !is(op, YIELD_OP) {
            found.push(op);
            // A loop's body is partitioned inside when the loop cannot be as a whole
            // (`propagate::body`): its ops are payloads too.
            if let Some(body) = super::body::carried_body(op) {
                collect_payloads(body, found);
            }
        }
        next = op.next_in_block();
    }
}

/// True when `op` is partitioned along `axis` (it sits in a loop over it, possibly in the body
/// of a loop op propagation looks into: a `while` tiled whole along `axis`).
pub fn nested_over(op: OperationRef, axis: &str) -> bool {
    let mut parent = op.parent_operation();
    while let Some(candidate) = parent.filter(|candidate| {
        is(*candidate, LOOP_OP) || super::body::carried_body(*candidate).is_some()
    }) {
        if core::is_loop_over(candidate, axis) {
            return true;
        }
        parent = candidate.parent_operation();
    }
    false
}

/// The action of result `index` of a partir.loop: Some(dim) for `#tile<dim>`, None for sum and any.
fn tile_action(loop_op: OperationRef, index: usize) -> Option<usize> {
    match core::actions(loop_op).get(index)? {
        Action::Tile(dim) => Some(*dim),
        Action::Sum(_) | Action::Any => None,
    }
}

/// The value the body of `loop_op` yields for its result `index`.
pub fn yielded<'c, 'a>(loop_op: OperationRef<'c, 'a>, index: usize) -> Option<Value<'c, 'a>> {
    let body = loop_op.region(0).ok()?.first_block()?;
    let terminator = body.terminator()?;
    terminator.operand(index).ok()
}

/// For an identity loop `loop A [tile<d>] (%r) { %s = slice d %x[%r]; yield %s }`: (x, d, A).
pub fn identity_view<'c, 'a>(
    loop_op: OperationRef<'c, 'a>,
) -> Option<(Value<'c, 'a>, usize, String)> {
    // Check the name first: melior's `region(0)` on an op without regions prints the whole
    // module into its error (see `ffi`), which made every walk over all ops quadratic.
    if !is(loop_op, LOOP_OP) {
        return None;
    }
    let body = loop_op.region(0).ok()?.first_block()?;
    let slice = body.first_operation()?;
    let terminator = body.terminator()?;
    if !is(slice, SLICE_OP) || loop_op.result_count() != 1 || terminator.operand_count() != 1 {
        return None;
    }
    let yields_slice =
        terminator.operand(0).ok()?.to_raw().ptr == slice.result(0).ok()?.to_raw().ptr;
    let next_is_yield = slice.next_in_block().is_some_and(|next| is(next, YIELD_OP));
    let dim = slice_dim(slice)?;
    if !(yields_slice && next_is_yield && tile_action(loop_op, 0) == Some(dim)) {
        return None;
    }
    Some((slice.operand(0).ok()?, dim, axis_of(loop_op)?))
}

pub fn slice_dim(slice: OperationRef) -> Option<usize> {
    IntegerAttribute::try_from(slice.attribute("dim").ok()?)
        .ok()
        .map(|dim| dim.value() as usize)
}

/// Operand `index` of a payload, seen through its slice chain inside the payload's nest.
#[derive(Clone, Debug)]
pub struct OperandSource<'c, 'a> {
    /// The value outside the nest that the chain starts from.
    pub source: Value<'c, 'a>,
    /// (axis, dim) of each slice, innermost first.
    pub slices: Vec<(String, usize)>,
}

impl OperandSource<'_, '_> {
    /// The dim sliced along `axis`, if the chain slices along it.
    pub fn sliced_dim(&self, axis: &str) -> Option<usize> {
        self.slices
            .iter()
            .find(|(slice_axis, _)| slice_axis == axis)
            .map(|(_, dim)| *dim)
    }
}

/// Input `index` of a payload (an operand, or a value its regions capture: see
/// [`crate::rules::inputs`]), seen through its slice chain.
pub fn operand_source<'c, 'a>(op: OperationRef<'c, 'a>, index: usize) -> OperandSource<'c, 'a> {
    let mut value = match op.operand(index) {
        Ok(operand) => operand,
        Err(_) => crate::rules::inputs(op)[index],
    };
    let mut slices = Vec::new();
    while let Some(producer) = ffi::result_owner(value) {
        if !is(producer, SLICE_OP) {
            break;
        }
        let (Some(axis), Some(dim)) = (slice_axis(producer), slice_dim(producer)) else {
            break;
        };
        slices.push((axis, dim));
        value = producer.operand(0).expect("a slice has a source");
    }
    OperandSource {
        source: value,
        slices,
    }
}

/// The value the rest of the program uses for result `index` of a payload: the result
/// itself, or the result of the outermost loop of its nest that yields it.
pub fn logical_result<'c, 'a>(op: OperationRef<'c, 'a>, index: usize) -> Value<'c, 'a> {
    let mut value = Value::from(op.result(index).expect("result index in range"));
    loop {
        let uses = ffi::uses(value);
        let [(user, position)] = uses[..] else {
            return value;
        };
        if !is(user, YIELD_OP) {
            return value;
        }
        let Some(loop_op) = user.parent_operation() else {
            return value;
        };
        if !is(loop_op, LOOP_OP) {
            return value;
        }
        value = Value::from(
            loop_op
                .result(position)
                .expect("one result per yielded value"),
        );
    }
}

/// The dim along which `value` is tiled on `axis`: for a loop result, its `#tile<d>` action
/// (or that of the loop nested inside it); None when it is whole along `axis`. A view along
/// another axis of a value tiled on the same dim along `axis` is tiled so too: the batch split
/// a third time (`data`, `fsdp`, then `expert`) is `view_fsdp(view_expert(tokens))` once the
/// third tile action has replaced the uses of `tokens`, and reading it as whole along `expert`
/// partitioned nothing and gathered the tokens.
pub fn tiling(value: Value, axis: &str) -> Option<usize> {
    let producer = ffi::result_owner(value)?;
    if !is(producer, LOOP_OP) {
        return None;
    }
    let index = ffi::result_number(value)?;
    if core::is_loop_over(producer, axis) {
        return tile_action(producer, index);
    }
    if let Some((viewed, dim, _)) = identity_view(producer) {
        return tiling(viewed, axis).filter(|&below| below == dim);
    }
    tiling(yielded(producer, index)?, axis)
}

/// [`tiling`] of a loop's carry, looking through views along other axes: a stacked weight
/// that Megatron views on `model` and ZeRO-3 then splits on `data` is carried tiled on `data`,
/// so the loop is entered on `data` and each layer's weights are gathered in its body, not
/// all layers before it; a scan's saved activations split twice on one dim (BP on `data`,
/// then on `fsdp`) are carried split along both; and the saved layer inputs that sequence
/// parallelism splits on `model` are carried split on it through the view on `data` that
/// FSDP's entered scan puts on them, so the backward scan reads each layer's input split on
/// the sequence and gathers it at its tensor-parallel region (Megatron-SP's pattern), where
/// before views of computed values were not looked through and the whole stack was gathered
/// on `model` before the loop (LLaMA-3 70B on `data=128,model=8`: 80 layers' inputs, 21 GiB a
/// device).
pub fn carried_tiling(value: Value, axis: &str) -> Option<usize> {
    let mut source = value;
    while let Some((viewed, _, view_axis)) = ffi::result_owner(source).and_then(identity_view) {
        if view_axis == axis {
            break;
        }
        source = viewed;
    }
    tiling(source, axis)
}

/// Who consumes a logical value.
#[derive(Clone, Copy, Debug)]
pub enum Consumer<'c, 'a> {
    /// Operand `index` of a payload op (possibly through a slice chain).
    Payload(OperationRef<'c, 'a>, usize),
    /// A tile-action view over it.
    View(OperationRef<'c, 'a>),
    /// Anything propagation does not understand (a loop body yielding it directly, ...).
    Opaque,
}

pub fn consumers<'c, 'a>(value: Value<'c, 'a>) -> Vec<Consumer<'c, 'a>> {
    let mut found = Vec::new();
    for (user, index) in ffi::uses(value) {
        // A use inside the regions of an op that takes its captures as inputs (a
        // `lax.cond` branch reading `x`) is that op's input.
        if let Some((capturing, input)) = capturing_input(user, value) {
            found.push(Consumer::Payload(capturing, input));
            continue;
        }
        if is(user, SLICE_OP) {
            let inner = Value::from(user.result(0).expect("a slice has a result"));
            let parent = user.parent_operation();
            if let Some(view) = parent.filter(|loop_op| identity_view(*loop_op).is_some()) {
                found.push(Consumer::View(view));
            } else {
                found.extend(consumers(inner));
            }
        } else if is(user, YIELD_OP) || is(user, LOOP_OP) {
            found.push(Consumer::Opaque);
        } else {
            found.push(Consumer::Payload(user, index));
        }
    }
    found
}

/// The op whose regions hold `user` and capture `value` as one of its rule's inputs, with the
/// input's index (see [`crate::rules::inputs`]); the outermost such op below `value`'s block.
fn capturing_input<'c, 'a>(
    user: OperationRef<'c, 'a>,
    value: Value<'c, 'a>,
) -> Option<(OperationRef<'c, 'a>, usize)> {
    let mut found = None;
    let mut at = user.parent_operation();
    while let Some(parent) = at {
        if is(parent, LOOP_OP) || crate::rules::regions::defined_under(value, parent) {
            break;
        }
        if crate::rules::takes_captures(parent) {
            found = Some(parent);
        }
        at = parent.parent_operation();
    }
    let op = found?;
    let index = crate::rules::inputs(op)
        .iter()
        .skip(op.operand_count())
        .position(|&captured| captured == value)?;
    Some((op, op.operand_count() + index))
}

/// The payload that computes a logical value, and which of its results it is.
pub fn producer<'c, 'a>(value: Value<'c, 'a>) -> Option<(OperationRef<'c, 'a>, usize)> {
    let op = ffi::result_owner(value)?;
    let index = ffi::result_number(value)?;
    if !is(op, LOOP_OP) {
        return Some((op, index));
    }
    if identity_view(op).is_some() {
        return None;
    }
    producer(yielded(op, index)?)
}

/// True for a `partir.replicate` pin along `axis`.
pub fn pins(op: OperationRef, axis: &str) -> bool {
    is(op, REPLICATE_OP) && axis_of(op).as_deref() == Some(axis)
}

/// A value read inside `op`'s regions, defined outside `op`, and tiled along `axis` (with
/// the dim), if any.
pub fn captured_tiling<'c, 'a>(
    op: OperationRef<'c, 'a>,
    axis: &str,
) -> Option<(Value<'c, 'a>, usize)> {
    if op.region_count() == 0 {
        return None;
    }
    let mut found = None;
    for block in crate::rules::regions::blocks(op) {
        for inner in crate::rules::regions::ops_of(block) {
            ffi::walk(inner, |deep| {
                for value in deep.operands() {
                    if found.is_some() || crate::rules::regions::defined_under(value, op) {
                        continue;
                    }
                    if let Some(dim) = tiling(value, axis) {
                        found = Some((value, dim));
                    }
                }
            });
        }
    }
    found
}

/// The axes along which `value`'s dim `dim` is already split: by tile-action views of it on
/// that dim, and by the slice chains its consumers read it through.
pub fn split_along(value: melior::ir::Value, dim: usize) -> Vec<String> {
    let mut axes = Vec::new();
    for consumer in consumers(value) {
        let found = match consumer {
            Consumer::View(view_op) => match identity_view(view_op) {
                Some((_, view_dim, view_axis)) => {
                    let mut found = if view_dim == dim {
                        vec![view_axis]
                    } else {
                        Vec::new()
                    };
                    let result =
                        melior::ir::Value::from(view_op.result(0).expect("a view has a result"));
                    found.extend(split_along(result, dim));
                    found
                }
                None => Vec::new(),
            },
            Consumer::Payload(user, index) => operand_source(user, index)
                .slices
                .into_iter()
                .filter(|(_, slice_dim)| *slice_dim == dim)
                .map(|(slice_axis, _)| slice_axis)
                .collect(),
            Consumer::Opaque => Vec::new(),
        };
        for axis in found {
            if !axes.contains(&axis) {
                axes.push(axis);
            }
        }
    }
    axes
}
