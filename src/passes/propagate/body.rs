//! Partitioning inside a loop's body, when the loop cannot be tiled whole
//! (docs/design.md, "Loops: rules read off their bodies").
//!
//! A `lax.scan` over stacked layers with Megatron's weights split on `model`: the layer's second
//! matmul leaves a partial sum that a layer norm reads in the same iteration, so the class of
//! the weights' split dim is blocked and the `while` cannot sit in one `partir.loop`. The body
//! is then partitioned as a function body is. The carry gets an identity view at the top of
//! the body, and propagation runs over the body's ops, which it sees through
//! [`super::view::payloads`]:
//!
//! ```text
//! %r:3 = stablehlo.while(%i = %c0, %x = %x0, %w = %W)        // %W tiled on dim 2 along model
//!   ... do {
//!     %wv = partir.loop "model" [#tile<2>] { partir.slice 2 %w[%r] }   // entered
//!     %wi = partir.loop "model" [#tile<2>] { dynamic_slice(partir.slice 2 %w[%r], %i) }
//!     %h  = partir.loop "model" [#tile<1>] { dot(%x, partir.slice 1 %wi[%r]) }
//!     ...  %p = partir.loop "model" [#sum] { ... }; %y = add %x, %p   // all_reduce here
//!     stablehlo.return %i1, %y, %wv
//! }
//! %w_out = partir.loop "model" [#tile<2>] { partir.slice 2 %r#2[%r] }   // exited
//! ```
//!
//! Core stays functional: every carry keeps its global type, and lowering gives each carry one
//! sharding (`lower_to_hlo::scope`). A result whose yielded value is tiled on the carry's dim is
//! seen tiled after the loop too (an identity view of it), so the next scan (the backward one)
//! is entered the same way and the optimizer update after it partitions.

use super::{view, Propagation};
use crate::{ffi, ir::core};
use melior::ir::{
    block::BlockLike, operation::OperationLike, BlockRef, OperationRef, RegionLike, Value,
    ValueLike,
};

/// The body block of a loop op propagation may partition inside.
pub(crate) fn carried_body<'c, 'a>(op: OperationRef<'c, 'a>) -> Option<BlockRef<'c, 'a>> {
    let region = crate::rules::carried_body(op)?;
    op.region(region).ok()?.first_block()
}

/// Whether propagation partitioned inside `op`'s body already (along any axis): then the loop
/// is never wrapped whole, as its body's loops and slices would keep the global types that
/// the wrap's local retype changes around them; it is entered along every later axis too.
pub(super) fn entered(op: OperationRef) -> bool {
    carried_body(op).is_some() && core::holds_core(op)
}

/// Whether some use of `value` (but `except`, a body's yield that only hands it on) reads it
/// whole along `axis`: not through a slice along it. A value all of whose readers slice it
/// (a view of it, or consumers that read through a cancelled one) is seen tiled already.
fn read_whole(value: Value, axis: &str, except: Option<OperationRef>) -> bool {
    ffi::uses(value).into_iter().any(|(user, index)| {
        !slices_along(user, index, axis)
            && except.is_none_or(|except| !ffi::same_operation(user, except))
    })
}

/// Whether `user` reads its operand `index` through a slice along `axis`.
fn slices_along(user: OperationRef, index: usize, axis: &str) -> bool {
    index == 0
        && ffi::op_is(user, core::SLICE_OP)
        && core::slice_axis(user).as_deref() == Some(axis)
}

/// The dims of a loop's body argument that the body steps through: every reader but the
/// yield (`except`) accesses one block of it at run-time offsets (`rules::block_access`: a
/// scan's `dynamic_slice` of one layer, its `dynamic_update_slice` of one step's output) and
/// the block is smaller than the value on the dim. Empty when anything reads it whole.
fn stepped_dims(argument: Value, except: Option<OperationRef>) -> Vec<usize> {
    let Some(shape) = core::static_shape(argument.r#type()) else {
        return Vec::new();
    };
    let mut stepped: Option<Vec<usize>> = None;
    for (user, _) in ffi::uses(argument) {
        if except.is_some_and(|except| ffi::same_operation(user, except)) {
            continue;
        }
        if !crate::rules::block_access(user) {
            return Vec::new();
        }
        // The block: the result of a slice, the update of an update (operand 1).
        let block = [user.result(0).ok().map(Value::from), user.operand(1).ok()]
            .into_iter()
            .flatten()
            .filter_map(|value| core::static_shape(value.r#type()))
            .find(|block| block.len() == shape.len() && block != &shape);
        let Some(block) = block else {
            return Vec::new();
        };
        let here: Vec<usize> = (0..shape.len())
            .filter(|&dim| block[dim] < shape[dim])
            .collect();
        stepped = Some(match stepped {
            None => here,
            Some(before) => before
                .into_iter()
                .filter(|dim| here.contains(dim))
                .collect(),
        });
    }
    stepped.unwrap_or_default()
}

impl<'c> Propagation<'c> {
    /// Enters `op`'s body for each carry whose operand is tiled along `axis` (`tilings`, per
    /// operand): the body's argument gets a view tiled on the same dim. Whether it entered any.
    pub(super) fn enter_body(
        &mut self,
        op: OperationRef<'c, '_>,
        tilings: &[Option<usize>],
        axis: &str,
        axis_size: i64,
    ) -> bool {
        let mut entered = false;
        for (carry, tiling) in tilings.iter().enumerate() {
            if let Some(dim) = *tiling {
                entered |= self.enter_carry(op, carry, dim, axis, axis_size);
            }
        }
        entered
    }

    /// Enters `op`'s body for carry `carry`, tiled on `dim` along `axis` (its operand is, or
    /// what reads its result slices it so): the body's argument gets a view tiled on `dim`.
    /// Whether it did (not when the body does not read it, or sees it tiled already).
    pub(super) fn enter_carry(
        &mut self,
        op: OperationRef<'c, '_>,
        carry: usize,
        dim: usize,
        axis: &str,
        axis_size: i64,
    ) -> bool {
        let Some(body) = carried_body(op) else {
            return false;
        };
        let Ok(argument) = body.argument(carry) else {
            return false;
        };
        let argument = Value::from(argument);
        // Only yielded back (a weight the body does not read), or read through slices along
        // `axis` already: nothing to enter.
        if !read_whole(argument, axis, crate::ir::last_op(body)) {
            return false;
        }
        // Tiled on the dim the body steps through (ZeRO-3 of a stacked weight on its layer
        // dim), the body would gather the whole stack in every step to read one layer: the
        // carry stays whole inside, gathered once before the loop (LLaMA-3 70B on data=16,
        // fsdp=8, model=8 with such a ZeRO-3: 4,211 s per step with 1,923 all_gathers).
        if stepped_dims(argument, crate::ir::last_op(body)).contains(&dim) {
            return false;
        }
        core::view_in_place(self.context, argument, dim, axis, axis_size, op.location());
        true
    }

    /// Enters the carries of `op` that its body reads both through slices along `axis` on one
    /// dim (readers propagation split from below) and whole, when every whole reader but the
    /// yield splits elementwise with them: the carry is then split, and those readers and
    /// what they yield back with it. GPipe's backward ticks read the carried cotangent of the
    /// stage outputs `[S, M, mb, D]` split on `stage` (the state's cotangent) and whole (the
    /// `select` that zeroes the outputs handed on and is yielded back): the carry stayed
    /// whole, and with BP on `batch` after PP its two readers wanted `[stage, batch]` and
    /// `[batch]`, so lowering gathered it over `batch` in every tick. Whether it entered any.
    pub(super) fn enter_split_reads(
        &mut self,
        op: OperationRef<'c, '_>,
        axis: &str,
        axis_size: i64,
    ) -> bool {
        let Some(body) = carried_body(op) else {
            return false;
        };
        let terminator = crate::ir::last_op(body);
        let mut entered = false;
        for carry in 0..body.argument_count() {
            let Ok(argument) = body.argument(carry) else {
                continue;
            };
            let argument = Value::from(argument);
            let (mut sliced, mut whole) = (Vec::new(), Vec::new());
            for (user, index) in ffi::uses(argument) {
                if terminator.is_some_and(|t| ffi::same_operation(user, t)) {
                    continue;
                }
                if slices_along(user, index, axis) {
                    sliced.push(view::slice_dim(user));
                } else {
                    whole.push((user, index));
                }
            }
            let Some(Some(dim)) = sliced.first().copied() else {
                continue;
            };
            if whole.is_empty() || sliced.iter().any(|other| *other != Some(dim)) {
                continue;
            }
            if whole
                .iter()
                .all(|(user, index)| self.splits_elementwise(*user, *index, dim, axis_size))
            {
                entered |= self.enter_carry(op, carry, dim, axis, axis_size);
            }
        }
        entered
    }

    /// Whether `user`, its operand `index` split on `dim`, splits elementwise (its result on
    /// the same elements: a `select`, an `add`), so it can take the split as it is.
    fn splits_elementwise(
        &self,
        user: OperationRef<'c, '_>,
        index: usize,
        dim: usize,
        axis_size: i64,
    ) -> bool {
        if user.region_count() > 0 || ffi::op_is(user, core::LOOP_OP) {
            return false;
        }
        let Some(Ok(rule)) = self.rules.rule_for(user) else {
            return false;
        };
        rule.tile_operand_by(index, dim, axis_size)
            .is_ok_and(|effect| {
                super::elementwise::is_elementwise(user, &rule, &effect, Some(index))
            })
    }

    /// Whether `op` is a loop that carries a value a later tactic of the schedule tiles along
    /// `axis`, on a dim its body sees: it is then entered rather than tiled whole along
    /// `axis`, so that the later split is one too (FSDP on a scan: BP, then ZeRO-3 on the
    /// stacked weights' dim 1; wrapped whole on `data`, the weights would be gathered once,
    /// for all layers, before it). A later split of the dim the scan steps through (the
    /// stacked layers' dim 0) cannot enter a body that reads one layer a step, so it does not
    /// count: entering would only gather the stack in every step.
    pub(super) fn carries_later_split(&self, op: OperationRef, axis: &str) -> bool {
        let Some(later) = self.later.get(axis) else {
            return false;
        };
        let Some(body) = carried_body(op) else {
            return false;
        };
        let stepped = |index: usize| {
            body.argument(index)
                .ok()
                .map(|argument| stepped_dims(Value::from(argument), crate::ir::last_op(body)))
        };
        // A carry already tiled along `axis` on the dim the scan steps through (the stacked
        // layers split over devices) would be gathered whole in every step of an entered
        // body: the loop is better tiled whole, with that carry gathered once before it.
        let steps_through_a_split = (0..op.operand_count()).any(|index| {
            op.operand(index)
                .ok()
                .and_then(|operand| view::tiling(operand, axis))
                .is_some_and(|dim| stepped(index).is_some_and(|stepped| stepped.contains(&dim)))
        });
        if steps_through_a_split {
            return false;
        }
        (0..op.operand_count()).any(|index| {
            let source = view::operand_source(op, index).source;
            let source = ffi::result_owner(source)
                .and_then(view::identity_view)
                .map_or(source, |(viewed, _, _)| viewed);
            let Some(dims) = later.get(&ffi::value_id(source)) else {
                return false;
            };
            let stepped = stepped(index);
            dims.iter().any(|dim| {
                stepped
                    .as_ref()
                    .is_none_or(|stepped| !stepped.contains(dim))
            })
        })
    }

    /// Views the results of an entered `op` tiled as its body yields them along `axis`, so
    /// that what reads them after the loop partitions. Whether it added any.
    pub(super) fn exit_body(
        &mut self,
        op: OperationRef<'c, '_>,
        axis: &str,
        axis_size: i64,
    ) -> bool {
        let Some(terminator) = carried_body(op).and_then(|body| crate::ir::last_op(body)) else {
            return false;
        };
        let mut exited = false;
        for index in 0..op.result_count().min(terminator.operand_count()) {
            let (Ok(yielded), Ok(result)) = (terminator.operand(index), op.result(index)) else {
                continue;
            };
            let result = Value::from(result);
            let Some(dim) = view::tiling(yielded, axis) else {
                continue;
            };
            if !read_whole(result, axis, None) {
                continue;
            }
            core::view_in_place(self.context, result, dim, axis, axis_size, op.location());
            exited = true;
        }
        exited
    }
}
