//! What partir does first to a program as a framework emits it (`jax.jit(step).lower(...)`):
//! its calls inlined, one copy per call site ([`super::inline_calls`]), and its arguments and
//! results named by the pytree paths JAX left in it ([`crate::ir::names::adopt_jax_names`]),
//! repeated pure ops merged ([`super::pure_cse`]: JAX's per-projection casts), barriers over
//! several values split into one per value ([`super::per_value`]), and ops rewritten into
//! equal forms their rules partition better ([`crate::rules::canonicalize`]: a gather indexed by
//! an iota uses batching dims).
//! `partir-schedule`, `partir-auto`, `partir partition` and `partir auto` start with it; on a
//! program that has neither calls nor JAX's names it changes nothing.

use super::PassResult;
use melior::{
    ir::{operation::OperationLike, OperationRef},
    Context,
};

pub fn run<'c>(context: &'c Context, module: OperationRef<'c, '_>) -> PassResult<'c> {
    super::inline_calls::run(module)?;
    let merged: usize = crate::ir::names::functions(module)
        .into_iter()
        .map(super::pure_cse::merge)
        .sum();
    if merged > 0 {
        crate::ffi::emit(
            module.location(),
            crate::ffi::Severity::Remark,
            &format!("partir-frontend: {merged} repeated pure ops merged (common subexpressions)"),
        );
    }
    crate::ir::names::adopt_jax_names(context, module);
    super::per_value::split(context, module);
    crate::rules::canonicalize(context, module);
    Ok(())
}
