//! Values lowering makes again in a device's layout rather than moving them: a chunk of a
//! broadcast of scalars costs no communication, and the whole value it replaces is erased when
//! nothing reads it whole.

use super::scope::{Lowering, Scope};
use crate::{ffi, ir::sharding::Sharding};
use melior::ir::{operation::OperationLike, Value, ValueLike};

impl<'c, 'a> Lowering<'c, 'a, '_, '_> {
    /// A value computed only from replicated scalars (an empty tensor, a fill, a broadcast of a
    /// rank-0 tensor: Adam's bias corrections) is computed again in the layout a consumer needs
    /// instead of being gathered or sliced: the same chunk of a broadcast costs no communication.
    /// `local` is its local value, `logical` the Core value, `wanted` its new sharding.
    pub(super) fn recompute(
        &mut self,
        local: Value<'c, 'a>,
        logical: Value<'c, 'a>,
        wanted: &Sharding,
        scope: &Scope<'c, 'a>,
    ) -> Option<Value<'c, 'a>> {
        let op = ffi::result_owner(local)?;
        if crate::rules::is_empty(op) && op.operand_count() == 0 {
            let ty = super::local_type(self.emitter(), logical.r#type(), wanted);
            return Some(
                crate::ir::builder::Builder::before(self.emitter().context, scope.anchor())
                    .empty(ty),
            );
        }
        if op.result_count() != 1 {
            return None;
        }
        // Inputs: scalars and rank-0 tensors only, the same wherever the chunk is (the op
        // family says): the op writing into a local empty, or retyped.
        let remake = crate::rules::broadcasts_scalars(op)?;
        self.superseded.push(op);
        let ty = super::local_type(self.emitter(), logical.r#type(), wanted);
        let builder = crate::ir::builder::Builder::before(self.emitter().context, scope.anchor());
        let destination = match remake {
            crate::rules::Remake::Into(init) => Some((init, builder.empty(ty))),
            crate::rules::Remake::Retyped => None,
        };
        let clone = builder.insert(ffi::clone_operation(op));
        if let Some((init, empty)) = destination {
            ffi::set_operand(clone, init, empty);
        }
        let result = Value::from(clone.result(0).expect("one result"));
        result.set_type(ty);
        Some(result)
    }

    /// Erases the ops `recompute` superseded that nothing reads any more.
    pub fn erase_superseded(&mut self) {
        let mut seen = std::collections::HashSet::new();
        for op in std::mem::take(&mut self.superseded) {
            if !seen.insert(ffi::operation_id(op)) {
                continue;
            }
            let unused = op
                .results()
                .all(|result| ffi::uses(Value::from(result)).is_empty());
            if unused {
                // SAFETY: `op` is unused and no handle to it is used after this.
                unsafe { ffi::erase(op) };
            }
        }
    }
}
