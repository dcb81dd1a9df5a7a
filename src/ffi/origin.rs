//! Where a value comes from: the block owning an argument, the op defining a result and which
//! of its results it is, with the lifetime of the IR rather than of the value's handle.

use melior::ir::{BlockRef, OperationRef, Value, ValueLike};

/// The block that owns a block argument, with the lifetime of the IR rather than of the
/// argument handle (melior ties it to a borrow of the handle).
pub fn argument_owner<'c, 'a>(value: Value<'c, 'a>) -> Option<BlockRef<'c, 'a>> {
    if !value.is_block_argument() {
        return None;
    }
    // SAFETY: `value` is a block argument, so the owner is a live block of the same IR.
    unsafe { BlockRef::from_option_raw(mlir_sys::mlirBlockArgumentGetOwner(value.to_raw())) }
}

/// Which result of its defining op an op result is (None for a block argument).
pub fn result_number(value: Value) -> Option<usize> {
    // SAFETY: `value` is an op result when MLIR is asked its number.
    value
        .is_operation_result()
        .then(|| unsafe { mlir_sys::mlirOpResultGetResultNumber(value.to_raw()) } as usize)
}

/// The operation defining an op result, with the lifetime of the IR.
pub fn result_owner<'c, 'a>(value: Value<'c, 'a>) -> Option<OperationRef<'c, 'a>> {
    if !value.is_operation_result() {
        return None;
    }
    // SAFETY: `value` is an op result, so its owner is a live operation of the same IR.
    unsafe { OperationRef::from_option_raw(mlir_sys::mlirOpResultGetOwner(value.to_raw())) }
}
