//! Where C and C++ call into Rust: the pass entry points behind `src/cxx/Passes.cpp` (a cxx
//! bridge, [`passes`]), the `mlir-opt` plugin entry points ([`plugin`]) and the C API of
//! `include/partir-c/Partir.h` ([`capi`]). The top of the one-way flow
//! entry → passes → ir / tmr → ffi: nothing in partir imports this module.
//!
//! Nothing may unwind into C++: every entry runs its Rust under [`guarded`], which turns a
//! panic into an error diagnostic on the operation and a pass failure.

pub mod capi;
mod passes;
pub mod plugin;

use crate::ffi::{self, glue, Severity};
use melior::{
    ir::{operation::OperationLike, OperationRef},
    Context,
};
use std::panic::{catch_unwind, AssertUnwindSafe};

/// Naming a pass in this variable makes it panic on entry, to test the guard below.
const INJECT_PANIC_ENV: &str = "PARTIR_INJECT_PANIC";

/// Runs pass `name` on the operation C++ hands over; false after a diagnostic (the pass's own
/// error, or `partir internal error: ...` for a panic). Never unwinds.
fn guarded(
    name: &str,
    op: glue::Operation,
    pass: impl for<'c> FnOnce(&'c Context, OperationRef<'c, '_>) -> bool,
) -> bool {
    let outcome = catch_unwind(AssertUnwindSafe(|| {
        // SAFETY: C++ hands over the live operation the pass runs on, for the whole call.
        unsafe {
            ffi::with_operation(op, |context, module| {
                // Fault injection for the boundary's own test (test/Tools/panic-guard.mlir).
                if std::env::var(INJECT_PANIC_ENV).is_ok_and(|pass| pass == name) {
                    panic!("injected panic in {name} ({INJECT_PANIC_ENV})");
                }
                pass(context, module)
            })
        }
    }));
    outcome.unwrap_or_else(|payload| {
        let message = payload
            .downcast_ref::<&str>()
            .map(|text| text.to_string())
            .or_else(|| payload.downcast_ref::<String>().cloned())
            .unwrap_or_else(|| "unknown panic".into());
        // SAFETY: the operation is still alive; a diagnostic does not touch the IR.
        unsafe {
            ffi::with_operation(op, |_, module| {
                ffi::emit(
                    module.location(),
                    Severity::Error,
                    &format!("partir internal error: {message}"),
                )
            })
        };
        false
    })
}
