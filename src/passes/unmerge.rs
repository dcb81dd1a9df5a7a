//! `partir-unmerge-batch-dims`: folds the `tensor.collapse_shape`s that merge batch dims (e.g.
//! [batch, heads] of attention) in front of a batched linalg op into the op, so that each dim
//! can be tiled on its own axis. The rewrite is upstream's reshape-by-expansion, driven from the
//! C++ glue (`unmerge_batch_dims` in src/cxx/Glue.cpp).

use super::{names::UNMERGE_BATCH_DIMS as PASS, PassError, PassResult};
use crate::{ffi, ir::core::LOOP_OP};
use melior::ir::{operation::OperationLike, OperationRef};

pub fn run<'c>(module: OperationRef<'c, '_>) -> PassResult<'c> {
    let mut partitioned = None;
    ffi::walk(module, |op| {
        if partitioned.is_none() && crate::ffi::op_is(op, LOOP_OP) {
            partitioned = Some(op.location());
        }
    });
    if let Some(location) = partitioned {
        return Err(PassError::new(
            location,
            format!("{PASS}: expects a program before partitioning, but this one has 'partir.loop'; run it before partir-schedule"),
        ));
    }
    let expanded = ffi::unmerge_batch_dims(module);
    if expanded > 0 {
        // At the module, not the function: a remark quotes its line, and a function's line is
        // its whole signature.
        ffi::emit(
            module.location(),
            ffi::Severity::Remark,
            &format!("{PASS}: {expanded} batched ops now run over their separate batch dims"),
        );
    }
    Ok(())
}
