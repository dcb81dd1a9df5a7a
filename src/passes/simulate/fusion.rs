//! Fusion as the simulator sees it: which ops are kernels of their own, and which values never
//! reach memory. XLA fuses on every backend: an elementwise op, a broadcast, a transpose, a
//! slice or a convert computes inside the kernel of the op that reads it (a loop fusion, or a
//! reduction's input fusion), so its result is neither written nor read back, and it launches
//! nothing. A value fuses when the op making it is a [`Fusion::Producer`] and every op reading
//! it takes fused producers (a producer or a [`Fusion::Root`]) in the same block: read by a
//! contraction, a collective, a loop's regions or the return, it is written.
//!
//! ```text
//! %b = broadcast %bias        fused (read by the add)
//! %s = add %mm, %b            fused (read by the exp)
//! %e = exp %s                 written: the dot reads it; one kernel (add, broadcast, exp):
//!                             reads %mm and %bias, writes %e
//! %d = dot_general %e, %w     a kernel of its own
//! ```

use super::profile::{body_ops, op_name};
use crate::{
    affine::IteratorType,
    ffi,
    ir::func::is_return,
    rules::{fusion, Fusion},
    sim::CollectiveKind,
};
use melior::ir::{operation::OperationLike, OperationRef};
use std::collections::HashSet;

/// How fusion treats `op` (named `name`): as its family says; a linalg op by its iterators
/// and body (a reduction takes fused producers, a contraction is a kernel of its own, a
/// parallel op fuses); collectives, the return and unknown ops are kernels of their own.
pub(super) fn kind(op: OperationRef, name: &str) -> Fusion {
    if CollectiveKind::from_op_name(name).is_some() || is_return(op) {
        return Fusion::Alone;
    }
    if let Some(kind) = fusion(name) {
        return kind;
    }
    match ffi::linalg_info(op) {
        Some(info) if info.iterator_types.contains(&IteratorType::Reduction) => {
            if body_ops(op).2 {
                Fusion::Alone
            } else {
                Fusion::Root
            }
        }
        Some(_) => Fusion::Producer,
        None => Fusion::Alone,
    }
}

/// The values `ops` (one block's, in order) define that fuse into their readers' kernels (by
/// [`ffi::value_id`]).
pub(super) fn fused_values(ops: &[OperationRef]) -> HashSet<usize> {
    let mut made = HashSet::new();
    let mut read = HashSet::new();
    let mut written = HashSet::new();
    for op in ops {
        let name = op_name(*op);
        let kind = kind(*op, &name);
        for operand in op.operands() {
            let id = ffi::value_id(operand);
            read.insert(id);
            if kind == Fusion::Alone {
                written.insert(id);
            }
        }
        // A value read inside an op's regions (a loop body's capture) is read from memory.
        if op.region_count() > 0 {
            let own = ffi::operation_id(*op);
            ffi::walk(*op, |inner| {
                if ffi::operation_id(inner) != own {
                    for operand in inner.operands() {
                        written.insert(ffi::value_id(operand));
                    }
                }
            });
        }
        if kind == Fusion::Producer {
            for result in op.results() {
                made.insert(ffi::value_id(result.into()));
            }
        }
    }
    made.into_iter()
        .filter(|value| read.contains(value) && !written.contains(value))
        .collect()
}
