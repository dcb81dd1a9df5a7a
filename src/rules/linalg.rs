//! Linalg: every op implementing the `LinalgOp` interface (named ops, `linalg.generic`,
//! `fill`, `transpose`, `broadcast`, `reduce`, ...) gets its rule from what the interface says:
//! indexing maps (one factor per loop dim), iterator types, and the combiner the C++ glue finds
//! in its region (`linalg.yield (arith.addf %in, %out)` is a sum).
//!
//! Example: `linalg.matmul` on 4x8 · 8x16 is `([i,k],[k,j],[i,j]) -> ([i,j]) reduction={k:sum}`.

use super::OpView;
use crate::{
    ffi,
    ir::attrs::reduction_of_code,
    tmr::{loop_sizes_from_shapes, FactorId, FactorKind, ReductionKind, Rule},
};
use melior::ir::OperationRef;

/// The rule of a linalg structured op, from its facts (`info`).
pub(super) fn rule_of(op: OperationRef, info: &ffi::LinalgInfo) -> Result<Rule, String> {
    let view = OpView::new(op);
    let combiner = info
        .combiner
        .and_then(reduction_of_code)
        .unwrap_or_else(|| default_combiner(&view.name));
    let rule = loop_sizes_from_shapes(
        &info.indexing_maps,
        info.iterator_types.len(),
        &view.operands,
    )
    .and_then(|sizes| {
        Rule::from_indexing_maps(
            &info.indexing_maps,
            &info.iterator_types,
            &sizes,
            view.results.len(),
            combiner,
        )
    });
    // A loop dim the body reads with linalg.index (e.g. an iota building a one-hot) cannot be
    // split: each device would count from 0. Factor d is loop dim d.
    rule.map(|mut rule| {
        for &dim in &info.indexed_dims {
            if dim < rule.factors().len() {
                rule.set_kind(FactorId(dim), FactorKind::MustReplicate);
            }
        }
        rule
    })
}

/// When the region's combiner is not recognised: `linalg.generic` reduces with an unknown
/// combiner (never split), a named op with `_max` / `_min` in its name with max / min, any
/// other named op sums.
fn default_combiner(name: &str) -> ReductionKind {
    match name {
        "linalg.generic" => ReductionKind::Other,
        n if n.contains("_max") => ReductionKind::Max,
        n if n.contains("_min") => ReductionKind::Min,
        _ => ReductionKind::Sum,
    }
}
