//! `partir-print-rules`: each op's Tile Mapping Registry rule, in einsum notation, as a remark.
//! For tests and for users asking "how will partir partition this op?":
//! `partir-print-rules: linalg.matmul: ([i,k],[k,j],[i,j]) -> ([i,j]) reduction={k:sum} sizes={i=32,k=64,j=256}`.

use super::{propagate::view, PassResult};
use crate::{
    ffi::{self, Severity},
    ir::names,
    rules::Rules,
};
use melior::ir::{operation::OperationLike, OperationRef};

pub fn run<'c>(module: OperationRef<'c, '_>) -> PassResult<'c> {
    let rules = Rules::default();
    for func in names::functions(module) {
        for op in view::payloads(func) {
            let name = view::name_of(op);
            let text = match rules.rule_for(op) {
                None => "no rule".to_string(),
                Some(Err(reason)) => format!("rule does not apply: {reason}"),
                Some(Ok(rule)) => format!("{rule:#}"),
            };
            ffi::emit(
                op.location(),
                Severity::Remark,
                &format!("{}: {name}: {text}", super::names::PRINT_RULES),
            );
        }
    }
    Ok(())
}
