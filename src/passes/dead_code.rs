//! Ops nothing reads, dropped as XLA's dead code elimination drops them. JAX's private helpers
//! return residuals their caller may not read (`@_where_0` returns a zero broadcast of the
//! attention scores' shape, 32 GiB on the Mixtral 8x7B step): once inlined they are dead, and
//! propagation leaves others behind (a broadcast its partitioned readers now make chunk by
//! chunk). Upstream's `dead code` folding does not know unregistered StableHLO ops are pure;
//! the op family does ([`crate::rules::is_pure`]).

use crate::{ffi, rules};
use melior::ir::{block::BlockLike, operation::OperationLike, OperationRef, RegionLike, Value};

/// Erases the ops of `func`'s body that nothing reads and that only compute their results,
/// last first so that a dead chain goes in one sweep; how many.
///
/// ```text
/// %z = broadcast_in_dim %c : tensor<64x32x2048x2048xf32>   // no reader: erased
/// ```
pub fn erase(func: OperationRef) -> usize {
    let Some(body) = func.region(0).ok().and_then(|region| region.first_block()) else {
        return 0;
    };
    let mut ops = Vec::new();
    let mut next = body.first_operation();
    while let Some(op) = next {
        next = op.next_in_block();
        ops.push(op);
    }
    let mut erased = 0;
    for op in ops.into_iter().rev() {
        let unused = op
            .results()
            .all(|result| ffi::uses(Value::from(result)).is_empty());
        if unused && rules::is_pure(op) {
            // SAFETY: `op` is unused and no handle to it is used after this.
            unsafe { ffi::erase(op) };
            erased += 1;
        }
    }
    erased
}
