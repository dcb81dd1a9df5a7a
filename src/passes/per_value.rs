//! Ops that pass several values through unchanged ([`crate::rules::per_value`]: JAX's
//! `optimization_barrier` of a `jax.checkpoint`) become one op per value, so that each value
//! is partitioned as its own uses need: a loop's results are all tiled or summed, and one
//! barrier over a batch-split activation and a whole weight would stop propagation.
//!
//! ```text
//! %b:2 = "stablehlo.optimization_barrier"(%x, %w)
//! becomes
//! %b0 = "stablehlo.optimization_barrier"(%x)
//! %b1 = "stablehlo.optimization_barrier"(%w)
//! ```
//!
//! Each value still goes through a barrier, which is what rematerialisation needs: the
//! recomputation reads the barrier's result, so it is not merged with the forward pass.

use crate::{ffi, ir::builder::Builder, rules};
use melior::{
    ir::{operation::OperationLike, OperationRef, Value, ValueLike},
    Context,
};

/// Splits every per-value op of more than one operand under `module`; how many were split.
pub fn split<'c>(context: &'c Context, module: OperationRef<'c, '_>) -> usize {
    let mut found = Vec::new();
    ffi::walk(module, |op| {
        if op.operand_count() > 1 && op.operand_count() == op.result_count() && rules::per_value(op)
        {
            found.push(op);
        }
    });
    for &op in &found {
        let builder = Builder::before(context, op);
        let name = op.name().as_string_ref().as_str().unwrap_or("").to_string();
        for index in 0..op.operand_count() {
            let (Ok(operand), Ok(result)) = (op.operand(index), op.result(index)) else {
                continue;
            };
            let single = builder.op(&name, &[operand], &[], &[result.r#type()]);
            let value = Value::from(single.result(0).expect("one result"));
            ffi::replace_all_uses(result.into(), value);
        }
        // SAFETY: every use of `op`'s results was replaced; no handle to it is kept.
        unsafe { ffi::erase(op) };
    }
    found.len()
}
