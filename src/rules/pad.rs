//! Padding one dim of an op's values, as `partir-tile` does to a dim its axes do not divide
//! (docs/design.md#uneven-dims): a batch of 6 on 4 devices is a batch of 8 whose last 2 rows
//! are padding. An op runs on the padded values when its rule says the padded dim is a
//! pass-through factor (each position computed on its own, so padding only makes padding) or
//! a reduction (the padded positions of its operands are first set to the reduction's
//! identity, so they add nothing); any other op reads the value sliced back.
//!
//! ```text
//! %y = dot_general %x, %w  [6,64] x [64,32] -> [6,32]     (x's dim 0 padded to 8)
//! %y = dot_general %x, %w  [8,64] x [64,32] -> [8,32]     rows 6 and 7: padding
//! %s = reduce %y dims=[0]  [8,32] -> [32]                 reads select(row < 6, y, 0)
//! ```

use super::{
    expand::Port,
    model::{registered_grow, registered_padder},
    Rules,
};
use crate::tmr::{FactorKind, ReductionKind};
use melior::ir::{operation::OperationLike, OperationRef, Value, ValueLike};

/// What padding one of an op's values on `dim` implies for the op.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct PadPlan {
    /// Each value padded with it, and on which dim (the given one included).
    pub ports: Vec<(Port, usize)>,
    /// Operands whose padded positions must hold the identity of this reduction first.
    pub masked: Vec<(usize, usize, ReductionKind)>,
}

/// Builds, in front of an anchor op, `value` with dim `dim` resized to a size: grown with
/// zeros at the end ([`Padder::pad`]) or cut to its first positions ([`Padder::slice`]).
pub type Resize = for<'c, 'a> fn(
    &'c melior::Context,
    OperationRef<'c, 'a>,
    Value<'c, 'a>,
    usize,
    i64,
) -> Option<Value<'c, 'a>>;

/// Builds, in front of an anchor op, `value` seen with another shape of as many elements
/// (row-major): a dim of `c·n` as `[c, n]` and back.
pub type Reshape = for<'c, 'a> fn(
    &'c melior::Context,
    OperationRef<'c, 'a>,
    Value<'c, 'a>,
    &[i64],
) -> Option<Value<'c, 'a>>;

/// How a family pads, slices back and neutralises values: built in front of `anchor`.
#[derive(Clone, Copy)]
pub struct Padder {
    /// Seeing a dim as its chunks, so that a value holding several padded tiles (a dim split
    /// already, each tile padded at its end) pads, slices back and masks chunk by chunk. None:
    /// the family only pads values of one chunk.
    pub reshape: Option<Reshape>,
    /// `value` with dim `dim` grown to `to`, the new positions zero.
    pub pad: Resize,
    /// The first `size` positions of `value` along `dim`.
    pub slice: Resize,
    /// `value` with its positions at or past `size` along `dim` set to `kind`'s identity.
    pub mask: for<'c, 'a> fn(
        &'c melior::Context,
        OperationRef<'c, 'a>,
        Value<'c, 'a>,
        usize,
        i64,
        ReductionKind,
    ) -> Option<Value<'c, 'a>>,
}

/// The family's padder of `op` (None: its dialect cannot pad).
pub fn padder(op: OperationRef) -> Option<Padder> {
    registered_padder(op)
}

/// The plan of padding `port`'s dim `dim` (of size `from`) on `op`, read off its rule: the
/// factor indexing that dim, wherever it indexes one dim of size `from`. None when `op` cannot
/// run padded: no rule, the factor moves or reads positions (a slice's cut, an iota's count,
/// a gather's indices), its local rewrite cannot remake it, or it has regions of its own
/// beyond a scalar body.
pub fn plan(rules: &Rules, op: OperationRef, port: Port, dim: usize, from: i64) -> Option<PadPlan> {
    // Ops that read or write where their operands say (a gather, a scatter, a block at run-time
    // offsets) run padded only on a factor their rule passes through (batch dims: each padded
    // row reads or writes its own padded row, a gather's indices clamped in range) or reduces
    // (a scatter-add's updates, masked to zeros). A dim they index is neither: it reads the
    // value sliced back.
    if super::carried_body(op).is_some()
        || super::takes_captures(op)
        || super::tileable(op).is_err()
        || padder(op).is_none()
    {
        return None;
    }
    let rule = rules.rule_for(op)?.ok()?;
    let (kind, ports) = super::expand::factor_ports(&rule, op, port, dim, from)?;
    if !matches!(kind, FactorKind::PassThrough | FactorKind::Reduction(_)) {
        return None;
    }
    let mut plan = PadPlan::default();
    for (at, d) in ports {
        plan.ports.push((at, d));
        if let (FactorKind::Reduction(reduction), Port::Operand(i)) = (kind, at) {
            plan.masked.push((i, d, reduction));
        }
    }
    // A reduction's result must not be padded (it has no such dim): the factor is in operands
    // only. A pass-through factor in no result would drop the padding silently.
    let in_result = plan
        .ports
        .iter()
        .any(|(at, _)| matches!(at, Port::Result(_)));
    if matches!(kind, FactorKind::PassThrough) && !in_result && op.result_count() > 0 {
        return None;
    }
    plan.ports.contains(&(port, dim)).then_some(plan)
}

/// `op`'s result 0 with dim `dim` grown to `to` positions, built in front of `op` by its
/// family (see [`super::model::Grow`]): a slice of a split dim whose result the axis does not
/// divide reads on past its end rather than being padded after it, so that it stays one op
/// whose rows move with a halo. None when the family cannot grow it.
pub fn grown<'c, 'a>(
    context: &'c melior::Context,
    op: OperationRef<'c, 'a>,
    dim: usize,
    to: i64,
) -> Option<Value<'c, 'a>> {
    registered_grow(op)?(context, op, dim, to)
}

/// Whether `op`'s family can grow its result (see [`grown`]).
pub fn grows(op: OperationRef) -> bool {
    registered_grow(op).is_some()
}

/// The shape of `value` (None for a value that is not a static tensor).
pub fn shape_of(value: Value) -> Option<Vec<i64>> {
    crate::ir::core::static_shape(value.r#type())
}
