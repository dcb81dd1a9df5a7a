//! Editing what an op takes and a block receives, where melior has no safe call: all of an
//! op's operands at once, and the removal of a block argument nothing uses.

use melior::ir::{block::BlockLike, BlockRef, OperationRef, Value, ValueLike};

/// Sets `op`'s operands to `values` (their count may change: a `func.return` that returns
/// fewer results).
pub fn set_operands<'c, 'a>(op: OperationRef<'c, 'a>, values: &[Value<'c, 'a>]) {
    let raw: Vec<_> = values.iter().map(|value| value.to_raw()).collect();
    // SAFETY: `op` and the values are live; MLIR copies the list during the call.
    unsafe { mlir_sys::mlirOperationSetOperands(op.to_raw(), raw.len() as isize, raw.as_ptr()) }
}

/// Erases argument `index` of `block` when nothing uses it; false (and nothing changes)
/// when something does or there is no such argument.
pub fn erase_unused_argument(block: BlockRef, index: usize) -> bool {
    let Ok(argument) = block.argument(index) else {
        return false;
    };
    if !super::uses(Value::from(argument)).is_empty() {
        return false;
    }
    // SAFETY: the argument exists and has no uses, and no handle to it survives this call
    // (the caller holds none: it has just been looked up by index).
    unsafe { block.erase_argument(index) };
    true
}
