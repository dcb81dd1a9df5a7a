//! Lowering the ops at the top of a block: a function's body, or the body of a loop op that
//! propagation partitioned inside (`propagate::body`: a `while` whose Megatron weights are split
//! inside the scanned layer).
//!
//! A loop op's carries keep one layout for the whole loop, so its regions are lowered like
//! function bodies: each carry's *carry sharding* is what the body's reads of it agree on (as a
//! function argument's), and the loop's operand, its regions' arguments, the body's yield and
//! the loop's result all have it:
//!
//! ```text
//! %W: [L, d, f] split on dim 2 along model       (carry sharding [{}, {}, {model}])
//! while (%w = %W_local : [L, d, f/2], %x = %x0 : [B, d]) {
//!   %p = dot(dot(%x, ds(%w, %i)), ...)            (the layer, on local shards)
//!   %y = add %x, all_reduce(%p)                    (the partial sum reduced in the body,
//!   return %w, %y                                   once per iteration)
//! }
//! ```

use super::{
    agreed_sharding, divides, local_type,
    scope::{Form, Local, Lowering, Scope},
    view, PASS,
};
use crate::{
    ffi,
    ir::{
        core::{LOOP_OP, REPLICATE_OP},
        func::is_return,
        sharding::Sharding,
    },
    passes::PassError,
};
use melior::ir::{
    block::BlockLike, operation::OperationLike, BlockRef, OperationRef, Value, ValueLike,
};
use std::collections::HashMap;

/// The local forms known at some point of the lowering ([`Lowering::snapshot`]).
pub(super) struct Known<'c, 'a> {
    forms: HashMap<usize, Form<'c, 'a>>,
    materialised: HashMap<(usize, Sharding), Value<'c, 'a>>,
}

/// What a block's terminator hands on.
pub enum Handoff {
    /// Whatever layout its operands have (a function's results).
    Keep,
    /// These layouts, one per operand (a loop's carries, a condition's whole predicate).
    Reshard(Vec<Sharding>),
}

impl<'c, 'a> Lowering<'c, 'a, '_, '_> {
    /// The local forms known so far (see [`Self::restore`]).
    pub(super) fn snapshot(&self) -> Known<'c, 'a> {
        Known {
            forms: self.forms.clone(),
            materialised: self.materialised.clone(),
        }
    }

    /// Forgets the local forms made since `known` was taken: they are defined in a region
    /// (a loop's body) that code after it cannot read.
    pub(super) fn restore(&mut self, known: Known<'c, 'a>) {
        self.forms = known.forms;
        self.materialised = known.materialised;
    }

    /// Lowers the ops at the top of `block`, in place; the shardings of what its terminator
    /// hands on. Its Core ops are erased once the whole function is lowered
    /// ([`Self::erase_core`], in the order met, nested blocks' in place): the lowering's caches
    /// key values by address, which an erased value's successor may take.
    pub fn lower_top(
        &mut self,
        block: BlockRef<'c, 'a>,
        handoff: Handoff,
    ) -> Result<Vec<Sharding>, PassError<'c>> {
        let emitter = self.emitter();
        let mut handed = Vec::new();
        for op in crate::ir::block_ops(block) {
            let location = op.location();
            let scope = Scope::top(op);
            let name = view::name_of(op);
            if op.next_in_block().is_none()
                && (is_return(op) || matches!(handoff, Handoff::Reshard(_)))
            {
                for index in 0..op.operand_count() {
                    let (local, sharding) =
                        self.top_level(op.operand(index).expect("in range"), &scope);
                    let sharding = match &handoff {
                        Handoff::Keep => sharding,
                        Handoff::Reshard(targets) => {
                            let target = targets
                                .get(index)
                                .cloned()
                                .unwrap_or_else(|| Sharding::replicated(sharding.rank()));
                            let moved = emitter.reshard(op, location, local, &sharding, &target);
                            ffi::set_operand(op, index, moved);
                            handed.push(target);
                            continue;
                        }
                    };
                    ffi::set_operand(op, index, local);
                    handed.push(sharding);
                }
            } else if name == LOOP_OP {
                self.retire(op);
                if let Some((source, dim, axis)) = view::identity_view(op) {
                    // A tile action's view: the value itself, split on `dim` along `axis`
                    // inside whatever it is split on already (see `view_sharding`).
                    let (local, sharding) = self.top_level(source, &scope);
                    let nested = sharding.clone().without_axis(&axis).with_axis(dim, &axis);
                    let wanted = if sharding.0[dim].contains(&axis) {
                        sharding.clone()
                    } else if divides(emitter.mesh, source, &nested) {
                        nested
                    } else {
                        Sharding::replicated(sharding.rank()).with_axis(dim, &axis)
                    };
                    let local = emitter.reshard(op, location, local, &sharding, &wanted);
                    self.set(
                        Value::from(op.result(0).expect("one result")),
                        local,
                        wanted,
                    );
                    continue;
                }
                self.lower_loop(op, &scope)?;
            } else if name == REPLICATE_OP {
                self.retire(op);
                let operand = op.operand(0).expect("one operand");
                let (local, sharding) = self.top_level(operand, &scope);
                let whole = Sharding::replicated(sharding.rank());
                let local = emitter.reshard(op, location, local, &sharding, &whole);
                self.set(Value::from(op.result(0).expect("one result")), local, whole);
            } else if crate::rules::carried_body(op).is_some() && crate::ir::core::holds_core(op) {
                self.lower_carrying(op, &scope)?;
            } else if name != crate::ir::mesh::MESH_OP {
                // An op outside any loop computes on whole values.
                for index in 0..op.operand_count() {
                    let (local, sharding) =
                        self.top_level(op.operand(index).expect("in range"), &scope);
                    let whole = Sharding::replicated(sharding.rank());
                    ffi::set_operand(
                        op,
                        index,
                        emitter.reshard(op, location, local, &sharding, &whole),
                    );
                }
                self.localise_captures(op, &scope)?;
            }
        }
        Ok(handed)
    }

    /// Erases the Core ops of every block lowered, last first: later nests read earlier ones
    /// (through slices in their bodies). A Core op still used by something left in place would
    /// dangle: refuse instead.
    pub fn erase_core(&mut self) -> Result<(), PassError<'c>> {
        for op in self.take_retired().into_iter().rev() {
            let used = (0..op.result_count()).find_map(|index| {
                ffi::uses(Value::from(op.result(index).expect("in range")))
                    .first()
                    .map(|(user, _)| view::name_of(*user))
            });
            if let Some(user) = used {
                return Err(PassError::new(
                    op.location(),
                    format!(
                        "{PASS}: internal error: '{}' is still used by '{user}' after lowering",
                        view::name_of(op)
                    ),
                ));
            }
            // SAFETY: `op` is unused and no handle to it is used after this.
            unsafe { ffi::erase(op) };
        }
        Ok(())
    }

    /// Lowers a loop op whose body propagation partitioned (in `scope`): each carry gets the
    /// sharding its regions' reads agree on; its operand is resharded to it in front of the
    /// scope's anchor, its regions are lowered as function bodies (the body's yield resharded
    /// back to it, once per iteration), and its result has it.
    pub fn lower_carrying(
        &mut self,
        op: OperationRef<'c, 'a>,
        scope: &Scope<'c, 'a>,
    ) -> Result<(), PassError<'c>> {
        let emitter = self.emitter();
        let body = crate::rules::carried_body(op);
        let blocks = crate::rules::regions::blocks(op);
        let shardings: Vec<Sharding> = (0..op.operand_count())
            .map(|carry| carry_sharding(emitter.mesh, &blocks, carry, op))
            .collect();
        let mut operands = Vec::new();
        for (index, sharding) in shardings.iter().enumerate() {
            let operand = op.operand(index).expect("in range");
            operands.push(self.materialise(operand, scope, sharding));
        }
        if !ffi::same_operation(op, scope.anchor()) {
            ffi::move_before(op, scope.anchor());
        }
        for (index, operand) in operands.into_iter().enumerate() {
            ffi::set_operand(op, index, operand);
        }
        for (region, block) in blocks.iter().enumerate() {
            for (carry, sharding) in shardings.iter().enumerate() {
                let Ok(argument) = block.argument(carry) else {
                    continue;
                };
                let argument = Value::from(argument);
                self.retype_in_place(argument, local_type(emitter, argument.r#type(), sharding));
                self.set(argument, argument, sharding.clone());
            }
            let handoff = if Some(region) == body {
                Handoff::Reshard(shardings.clone())
            } else {
                // A condition's predicate, whole.
                Handoff::Reshard(Vec::new())
            };
            // What the region materialises (a captured value resharded, a partial sum reduced)
            // is defined in it: code after the loop makes its own.
            let outside = self.snapshot();
            self.lower_top(*block, handoff)?;
            self.restore(outside);
        }
        for (index, sharding) in shardings.iter().enumerate() {
            let Ok(result) = op.result(index) else {
                continue;
            };
            let result = Value::from(result);
            self.retype_in_place(result, local_type(emitter, result.r#type(), sharding));
            self.set_local(
                result,
                Local {
                    value: result,
                    sharding: sharding.clone(),
                    pending: None,
                    depth: scope.depth(),
                },
            );
        }
        Ok(())
    }
}

/// The sharding carry `carry` of `op` keeps through the loop: what its reads in every region
/// agree on (the regions' yields only pass it on), whole when they disagree or it would not
/// divide.
fn carry_sharding(
    mesh: &crate::ir::Mesh,
    blocks: &[BlockRef],
    carry: usize,
    op: OperationRef,
) -> Sharding {
    let Ok(operand) = op.operand(carry) else {
        return Sharding::replicated(0);
    };
    let whole = Sharding::replicated(super::rank_of(operand));
    let mut agreed: Option<Sharding> = None;
    for block in blocks {
        let Ok(argument) = block.argument(carry) else {
            continue;
        };
        let terminator = crate::ir::last_op(*block);
        let argument = Value::from(argument);
        if ffi::uses(argument)
            .iter()
            .all(|(user, _)| terminator.is_some_and(|t| ffi::same_operation(*user, t)))
        {
            continue;
        }
        let wanted = agreed_sharding(mesh, argument, |user| {
            terminator.is_some_and(|t| ffi::same_operation(user, t))
        });
        match &agreed {
            Some(previous) if *previous != wanted => return whole,
            _ => agreed = Some(wanted),
        }
    }
    match agreed {
        Some(sharding) if divides(mesh, operand, &sharding) => sharding,
        _ => whole,
    }
}
