//! The `func` dialect's structure: which op is a function, its return, or a call. Passes walk
//! functions and stop at their returns whatever the payload dialect, so these live in `ir/`
//! (below `rules/`, which registers `func.return`'s rule by [`RETURN_OP`]) and are the one place
//! outside `rules/` that spells a `func` op name.

use melior::ir::OperationRef;

/// A function: one body, arguments and results.
pub const FUNC_OP: &str = "func.func";
/// A function's terminator: what it returns.
pub const RETURN_OP: &str = "func.return";
/// A call of a function of the module (JAX's private helpers).
pub const CALL_OP: &str = "func.call";

/// Whether `op` is a function.
pub fn is_function(op: OperationRef) -> bool {
    crate::ffi::op_is(op, FUNC_OP)
}

/// Whether `op` is a function's return.
pub fn is_return(op: OperationRef) -> bool {
    crate::ffi::op_is(op, RETURN_OP)
}

/// Whether `op` calls a function of the module.
pub fn is_call(op: OperationRef) -> bool {
    crate::ffi::op_is(op, CALL_OP)
}
