//! `partir-inline-calls`: JAX's lowering calls private functions (`@_where`, `@relu`, flax
//! `__call__`s, a nested `jax.jit` called twice): every call site gets its own copy of the
//! callee, so that propagation sees one program and a function called with two different
//! shardings is partitioned twice, each copy as its call site needs. The C++ glue
//! (`inline_calls` in src/cxx/Glue.cpp) clones a one-block callee before its call, and leaves
//! others to upstream's `inlineCall`, for registered and unregistered dialects alike; what the
//! caller does not read of a callee's results is then dead and erased
//! ([`super::dead_code`]). `partir-schedule`, `partir-auto`, `partir partition` and
//! `partir auto` run it first.
//!
//! ```text
//! %2 = "func.call"(%1) <{callee = @relu}> : (tensor<16x4xf32>) -> tensor<16x4xf32>
//! becomes
//! %c = "stablehlo.constant"() ...   // loc(callsite("relu" at "step"))
//! %b = "stablehlo.broadcast_in_dim"(%c) ...
//! %2 = "stablehlo.maximum"(%1, %b) ...
//! ```

use super::{names::INLINE_CALLS as PASS, PassResult};
use crate::{
    ffi::{self, Severity},
    ir::{func::is_call, names::functions},
};
use melior::ir::{operation::OperationLike, OperationRef};

pub fn run<'c>(module: OperationRef<'c, '_>) -> PassResult<'c> {
    let inlined = ffi::inline_calls(module);
    if inlined > 0 {
        for func in functions(module) {
            super::dead_code::erase(func);
        }
    }
    let bodies: Vec<String> = functions(module)
        .iter()
        .filter_map(|func| {
            func.attribute("sym_name")
                .ok()
                .and_then(ffi::string_attribute)
        })
        .collect();
    // What is left: calls to declarations, to functions of another module, or recursive ones.
    ffi::walk(module, |op| {
        if !is_call(op) {
            return;
        }
        let callee = op
            .attribute("callee")
            .map(|attr| attr.to_string())
            .unwrap_or_default();
        let reason = if bodies.iter().any(|name| callee == format!("@{name}")) {
            "it calls itself (recursion)"
        } else {
            "its callee has no body in this module"
        };
        ffi::emit(
            op.location(),
            Severity::Warning,
            &format!(
                "{PASS}: call to {callee} not inlined: {reason}; nothing is partitioned through it"
            ),
        );
    });
    if inlined > 0 {
        ffi::emit(
            module.location(),
            Severity::Remark,
            &format!("{PASS}: {inlined} calls inlined"),
        );
    }
    Ok(())
}
