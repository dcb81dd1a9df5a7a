//! Lowering any PartIR:Core block, scope by scope.
//!
//! A `partir.loop` body is device-local code: device `r` along the loop's axis runs iteration
//! `r`. Lowering moves every op of every body out of its loops, in program order, in front of
//! the outermost loop (the *anchor*), and gives each Core value a device-local form:
//!
//! ```text
//! Core value                                 local form (value, sharding, pending sum)
//! %x  (function argument)                    %x retyped,  its argument sharding
//! partir.slice d %v[%r]   (loop over A)      nothing yet: materialised at its use, as %v
//!                                            resharded so that A splits dim d (outermost)
//! %p = payload op in a body                  the moved op, whole within its scope
//! loop A [#tile<d>] { yield %y }             %y's form with A prepended to dim d
//! loop A [#sum<k>]  { yield %y }             %y's form with a pending k-sum over A
//! ```
//!
//! A value used inside a scope is *relative* to it: within loops over A and B a value is never
//! split along A or B (each device holds its own iteration's value), only along other axes. A
//! payload's operands are materialised whole (relative), the types its Core form expects; a
//! value captured from above (a direct use of an outer value, also inside a payload's own
//! regions, such as a `linalg.generic` body or an `scf.for`) is gathered along the axes the
//! scope binds. A yield keeps whatever form is cheapest, so nests compose without collectives
//! until a consumer needs the whole value.
//!
//! This takes any Core form, one op per nest as propagation builds it, several ops per body
//! (after `linalg-fuse-elementwise-ops`), no op at all (after `cse` merged the body's op with
//! an identical one above), and gives the one-op-per-nest form the same program as before.

use super::{reshard::Emitter, PASS};
use crate::{
    ffi,
    ir::{
        attrs::Action,
        core::{self, axis_of, LOOP_OP, PERMUTE_OP, REPLICATE_OP, SLICE_OP, YIELD_OP},
        sharding::Sharding,
    },
    passes::{propagate::view, PassError},
    tmr::ReductionKind,
};
use melior::ir::{
    block::BlockLike, operation::OperationLike, BlockRef, OperationRef, RegionLike, Value,
    ValueLike,
};
use std::collections::HashMap;

/// Partial results still to be combined across devices.
#[derive(Clone, Debug, PartialEq, Eq)]
pub(super) struct Pending {
    /// The axes to reduce over, outer loop first.
    axes: Vec<String>,
    kind: ReductionKind,
}

/// The device-local form of a Core value.
#[derive(Clone)]
pub(super) struct Local<'c, 'a> {
    pub(super) value: Value<'c, 'a>,
    /// How `value` is split over the axes free in its scope.
    pub(super) sharding: Sharding,
    pub(super) pending: Option<Pending>,
    /// How many loops enclose its definition.
    pub(super) depth: usize,
}

#[derive(Clone)]
pub(super) enum Form<'c, 'a> {
    Local(Local<'c, 'a>),
    /// `slice(... slice(source))`: the (axis, dim) of each slice, outermost first.
    Slice {
        source: Value<'c, 'a>,
        chain: Vec<(String, usize)>,
    },
}

/// The loops around the op being lowered.
#[derive(Clone)]
pub struct Scope<'c, 'a> {
    /// Axes bound by the enclosing loops, outermost first.
    axes: Vec<String>,
    /// Where lowered code goes: in front of the outermost loop (or the top-level op).
    anchor: OperationRef<'c, 'a>,
}

impl<'c, 'a> Scope<'c, 'a> {
    pub fn top(anchor: OperationRef<'c, 'a>) -> Self {
        Self {
            axes: Vec::new(),
            anchor,
        }
    }

    /// Where lowered code goes.
    pub fn anchor(&self) -> OperationRef<'c, 'a> {
        self.anchor
    }

    /// How many loops enclose the scope.
    pub fn depth(&self) -> usize {
        self.axes.len()
    }

    fn inside(&self, axis: String) -> Self {
        let mut axes = self.axes.clone();
        axes.push(axis);
        Self {
            axes,
            anchor: self.anchor,
        }
    }
}

/// The local forms of a function's Core values.
pub struct Lowering<'c, 'a, 'e, 'm> {
    emitter: &'e Emitter<'c, 'm>,
    pub(super) forms: HashMap<usize, Form<'c, 'a>>,
    /// (value, target sharding) → its materialised local value, so that every use of a value
    /// in one layout shares one collective.
    pub(super) materialised: HashMap<(usize, Sharding), Value<'c, 'a>>,
    /// Ops whose chunks `recompute` made again: erased at the end when nothing reads them
    /// whole (a scan's stacked zeros, 1 TiB whole on LLaMA-3 8B, would otherwise stay as dead
    /// code: `cse` keeps unregistered ops).
    pub(super) superseded: Vec<OperationRef<'c, 'a>>,
    /// Core ops lowered, to erase at the end ([`Self::erase_core`]).
    retired: Vec<OperationRef<'c, 'a>>,
    /// The global types of Core values lowering retyped in place (a partitioned loop's results
    /// and its regions' arguments), which the ops reading them still expect.
    core_types: HashMap<usize, melior::ir::Type<'c>>,
}

pub(super) fn rank_of(value: Value) -> usize {
    ffi::tensor_shape(value.r#type())
        .map(|shape| shape.len())
        .unwrap_or(0)
}

fn name_of(op: OperationRef) -> String {
    op.name().as_string_ref().as_str().unwrap_or("").to_string()
}

/// `sharding` with `axis` made the outermost split of `dim`.
fn prepend(mut sharding: Sharding, dim: usize, axis: &str) -> Sharding {
    sharding.0[dim].insert(0, axis.to_string());
    sharding
}

impl<'c, 'a, 'e, 'm> Lowering<'c, 'a, 'e, 'm> {
    pub fn new(emitter: &'e Emitter<'c, 'm>) -> Self {
        Self {
            emitter,
            forms: HashMap::new(),
            materialised: HashMap::new(),
            superseded: Vec::new(),
            retired: Vec::new(),
            core_types: HashMap::new(),
        }
    }

    pub(super) fn emitter(&self) -> &'e Emitter<'c, 'm> {
        self.emitter
    }

    /// Records a top-level value's local form (arguments, views).
    pub fn set(&mut self, logical: Value<'c, 'a>, local: Value<'c, 'a>, sharding: Sharding) {
        self.set_local(
            logical,
            Local {
                value: local,
                sharding,
                pending: None,
                depth: 0,
            },
        );
    }

    pub(super) fn set_local(&mut self, logical: Value<'c, 'a>, local: Local<'c, 'a>) {
        self.forms
            .insert(ffi::value_id(logical), Form::Local(local));
    }

    /// The local form of `value`; a value lowering never saw (defined by an op lowering left
    /// in place) is itself, whole.
    fn form(&self, value: Value<'c, 'a>) -> Form<'c, 'a> {
        self.forms
            .get(&ffi::value_id(value))
            .cloned()
            .unwrap_or_else(|| {
                Form::Local(Local {
                    value,
                    sharding: Sharding::replicated(rank_of(value)),
                    pending: None,
                    depth: 0,
                })
            })
    }

    /// Retypes `value` in place to its local type, remembering the type Core gave it.
    pub(super) fn retype_in_place(&mut self, value: Value<'c, 'a>, local: melior::ir::Type<'c>) {
        self.core_types
            .entry(ffi::value_id(value))
            .or_insert(value.r#type());
        value.set_type(local);
    }

    /// The type Core gave `value` (see [`Self::retype_in_place`]).
    fn core_type(&self, value: Value<'c, 'a>) -> melior::ir::Type<'c> {
        self.core_types
            .get(&ffi::value_id(value))
            .copied()
            .unwrap_or(value.r#type())
    }

    /// A Core op lowered, to erase once the function is.
    pub(super) fn retire(&mut self, op: OperationRef<'c, 'a>) {
        self.retired.push(op);
    }

    pub(super) fn take_retired(&mut self) -> Vec<OperationRef<'c, 'a>> {
        std::mem::take(&mut self.retired)
    }

    /// A top-level value's local value and sharding (for returns and views).
    pub fn top_level(
        &mut self,
        value: Value<'c, 'a>,
        scope: &Scope<'c, 'a>,
    ) -> (Value<'c, 'a>, Sharding) {
        let local = self.combined(value, scope);
        (local.value, local.sharding)
    }

    /// `value`'s local form with any pending reduction done (cached, so one all_reduce serves
    /// every use).
    fn combined(&mut self, value: Value<'c, 'a>, scope: &Scope<'c, 'a>) -> Local<'c, 'a> {
        let local = match self.form(value) {
            Form::Local(local) => local,
            Form::Slice { .. } => {
                let whole = Sharding::replicated(rank_of(value));
                Local {
                    value: self.materialise(value, scope, &whole),
                    sharding: whole,
                    pending: None,
                    depth: scope.axes.len(),
                }
            }
        };
        let Some(pending) = &local.pending else {
            return local;
        };
        let reduced = self.emitter.all_reduce(
            scope.anchor,
            value.location(),
            local.value,
            pending.kind,
            &pending.axes,
        );
        let local = Local {
            value: reduced,
            pending: None,
            ..local
        };
        self.set_local(value, local.clone());
        local
    }

    /// `value` as the local value of sharding `target` (relative to `scope`: over axes the
    /// scope does not bind), with collectives in front of the scope's anchor.
    pub(super) fn materialise(
        &mut self,
        value: Value<'c, 'a>,
        scope: &Scope<'c, 'a>,
        target: &Sharding,
    ) -> Value<'c, 'a> {
        let (source, full) = match self.form(value) {
            // Slicing along A makes A the outermost split of the sliced dim (an outer loop's
            // slice before an inner one's).
            Form::Slice { source, chain } => (
                source,
                chain
                    .iter()
                    .rev()
                    .fold(target.clone(), |sharding, (axis, dim)| {
                        prepend(sharding, *dim, axis)
                    }),
            ),
            Form::Local(_) => (value, target.clone()),
        };
        let key = (ffi::value_id(source), full.clone());
        if let Some(done) = self.materialised.get(&key) {
            return *done;
        }
        let local = self.combined(source, scope);
        let moved = if local.sharding == full {
            local.value
        } else if let Some(recomputed) = self.recompute(local.value, source, &full, scope) {
            recomputed
        } else {
            self.emitter.reshard(
                scope.anchor,
                value.location(),
                local.value,
                &local.sharding,
                &full,
            )
        };
        self.materialised.insert(key, moved);
        moved
    }

    /// What a yield hands to its loop: the value's form, unchanged when it was computed in the
    /// body, else (a slice, or a value captured from above) resharded as little as the scope
    /// needs: no split along an axis the scope binds.
    fn yielded(&mut self, value: Value<'c, 'a>, scope: &Scope<'c, 'a>) -> Local<'c, 'a> {
        let depth = scope.axes.len();
        let bound = |sharding: &Sharding| {
            scope.axes.iter().fold(sharding.clone(), |sharding, axis| {
                sharding.without_axis(axis)
            })
        };
        match self.form(value) {
            Form::Local(local) if local.depth == depth => local,
            Form::Local(local) => {
                let local = if local
                    .pending
                    .as_ref()
                    .is_some_and(|pending| pending.axes.iter().any(|a| scope.axes.contains(a)))
                {
                    self.combined(value, scope)
                } else {
                    local
                };
                let target = bound(&local.sharding);
                let moved = self.emitter.reshard(
                    scope.anchor,
                    value.location(),
                    local.value,
                    &local.sharding,
                    &target,
                );
                Local {
                    value: moved,
                    sharding: target,
                    pending: local.pending,
                    depth,
                }
            }
            Form::Slice { source, chain } => {
                let chained: Vec<&String> = chain.iter().map(|(axis, _)| axis).collect();
                let source_sharding = match self.form(source) {
                    Form::Local(local) => local.sharding,
                    Form::Slice { .. } => Sharding::replicated(rank_of(source)),
                };
                let target = chained
                    .iter()
                    .fold(bound(&source_sharding), |sharding, axis| {
                        sharding.without_axis(axis)
                    });
                Local {
                    value: self.materialise(value, scope, &target),
                    sharding: target,
                    pending: None,
                    depth,
                }
            }
        }
    }

    /// Lowers `loop_op` (in `scope`): its body's ops move in front of the scope's anchor, and
    /// its results get their local forms.
    pub fn lower_loop(
        &mut self,
        loop_op: OperationRef<'c, 'a>,
        scope: &Scope<'c, 'a>,
    ) -> Result<(), PassError<'c>> {
        let axis = axis_of(loop_op).expect("a verified loop has an axis");
        let inner = scope.inside(axis.clone());
        let body = loop_op
            .region(0)
            .expect("a loop has a body")
            .first_block()
            .expect("a loop body has a block");
        self.lower_block(body, &inner)?;
        let actions = core::actions(loop_op);
        let terminator = body.terminator().expect("a loop body ends in partir.yield");
        for index in 0..loop_op.result_count() {
            let yielded = terminator.operand(index).expect("one per result");
            let local = self.yielded(yielded, &inner);
            let local = match actions.get(index).copied() {
                Some(Action::Tile(dim)) => Local {
                    sharding: prepend(local.sharding, dim, &axis),
                    depth: scope.axes.len(),
                    ..local
                },
                Some(Action::Sum(kind)) => {
                    let local = match &local.pending {
                        Some(pending) if pending.kind != kind => self.combined(yielded, &inner),
                        _ => local,
                    };
                    let mut axes = vec![axis.clone()];
                    axes.extend(local.pending.iter().flat_map(|p| p.axes.iter().cloned()));
                    Local {
                        pending: Some(Pending { axes, kind }),
                        depth: scope.axes.len(),
                        ..local
                    }
                }
                // The same on every device along the axis: the value as it is.
                Some(Action::Any) => Local {
                    depth: scope.axes.len(),
                    ..local
                },
                None => {
                    return Err(PassError::new(
                        loop_op.location(),
                        format!("{PASS}: internal error: a loop has no action for result {index}"),
                    ))
                }
            };
            let result = Value::from(loop_op.result(index).expect("in range"));
            self.set_local(result, local);
            if scope.axes.is_empty() {
                // At the top, partial results are combined right away, next to their producer.
                self.combined(result, scope);
            }
        }
        Ok(())
    }

    /// Lowers the ops of a loop body.
    fn lower_block(
        &mut self,
        block: BlockRef<'c, 'a>,
        scope: &Scope<'c, 'a>,
    ) -> Result<(), PassError<'c>> {
        for op in crate::ir::block_ops(block) {
            match name_of(op).as_str() {
                YIELD_OP => {}
                SLICE_OP => self.record_slice(op),
                PERMUTE_OP => self.lower_permute(op, scope),
                LOOP_OP => self.lower_loop(op, scope)?,
                REPLICATE_OP => {
                    // A pin inside a nest: the value, whole within the scope.
                    let operand = op.operand(0).expect("one operand");
                    let whole = Sharding::replicated(rank_of(operand));
                    let local = self.materialise(operand, scope, &whole);
                    self.set_local(
                        Value::from(op.result(0).expect("one result")),
                        Local {
                            value: local,
                            sharding: whole,
                            pending: None,
                            depth: scope.axes.len(),
                        },
                    );
                }
                _ => self.lower_payload(op, scope)?,
            }
        }
        Ok(())
    }

    pub(super) fn record_slice(&mut self, slice: OperationRef<'c, 'a>) {
        let source = slice.operand(0).expect("a slice has a source");
        let axis = crate::ir::core::slice_axis(slice).expect("a verified slice has a loop range");
        let dim = view::slice_dim(slice).expect("a verified slice has a dim");
        let form = match self.form(source) {
            Form::Slice { source, mut chain } => {
                chain.push((axis, dim));
                Form::Slice { source, chain }
            }
            Form::Local(_) => Form::Slice {
                source,
                chain: vec![(axis, dim)],
            },
        };
        self.forms.insert(
            ffi::value_id(Value::from(slice.result(0).expect("one result"))),
            form,
        );
    }

    /// Moves a body op in front of the anchor, on whole (relative) local operands.
    fn lower_payload(
        &mut self,
        op: OperationRef<'c, 'a>,
        scope: &Scope<'c, 'a>,
    ) -> Result<(), PassError<'c>> {
        if crate::rules::carried_body(op).is_some() && crate::ir::core::holds_core(op) {
            return self.lower_carrying(op, scope);
        }
        let location = op.location();
        let mut operands = Vec::new();
        for index in 0..op.operand_count() {
            let operand = op.operand(index).expect("in range");
            let local = self.materialise(operand, scope, &Sharding::replicated(rank_of(operand)));
            if local.r#type() != self.core_type(operand) {
                return Err(PassError::new(
                    location,
                    format!(
                        "{PASS}: internal error: operand {index} of '{}' is {} locally but the op expects {}",
                        name_of(op),
                        local.r#type(),
                        self.core_type(operand)
                    ),
                ));
            }
            operands.push(local);
        }
        self.localise_captures(op, scope)?;
        ffi::move_before(op, scope.anchor);
        for (index, operand) in operands.into_iter().enumerate() {
            ffi::set_operand(op, index, operand);
        }
        for index in 0..op.result_count() {
            let result = Value::from(op.result(index).expect("in range"));
            self.set_local(
                result,
                Local {
                    value: result,
                    sharding: Sharding::replicated(rank_of(result)),
                    pending: None,
                    depth: scope.axes.len(),
                },
            );
        }
        Ok(())
    }

    /// Values used inside `op`'s regions but defined outside `op` (a `tensor.extract` of a
    /// tiled value in a `linalg.generic` body, an `scf.for` body reading one): replaced by
    /// their whole local values, so no use is left on Core values that lowering erases.
    pub fn localise_captures(
        &mut self,
        op: OperationRef<'c, 'a>,
        scope: &Scope<'c, 'a>,
    ) -> Result<(), PassError<'c>> {
        if op.region_count() == 0 {
            return Ok(());
        }
        let mut captured = Vec::new();
        ffi::walk(op, |inner| {
            if ffi::same_operation(inner, op) {
                return;
            }
            for index in 0..inner.operand_count() {
                let value = inner.operand(index).expect("in range");
                if !defined_inside(value, op) {
                    captured.push((inner, index, value));
                }
            }
        });
        for (user, index, value) in captured {
            let local = self.materialise(value, scope, &Sharding::replicated(rank_of(value)));
            if local.r#type() != self.core_type(value) {
                return Err(PassError::new(
                    user.location(),
                    format!(
                        "{PASS}: internal error: a value used inside '{}' is {} locally but {} there",
                        name_of(op),
                        local.r#type(),
                        self.core_type(value)
                    ),
                ));
            }
            if ffi::value_id(local) != ffi::value_id(value) {
                ffi::set_operand(user, index, local);
            }
        }
        Ok(())
    }
}

/// True when `value` is defined by an op nested in `op` or is an argument of a block in it.
fn defined_inside(value: Value, op: OperationRef) -> bool {
    let mut parent = match ffi::argument_owner(value) {
        Some(block) => block.parent_operation(),
        None => ffi::result_owner(value),
    };
    while let Some(candidate) = parent {
        if ffi::same_operation(candidate, op) {
            return true;
        }
        parent = candidate.parent_operation();
    }
    false
}
