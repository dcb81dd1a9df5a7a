//! Linalg: every op implementing the `LinalgOp` interface (named ops, `linalg.generic`,
//! `fill`, `transpose`, `broadcast`, `reduce`, ...) gets its rule from what the interface says:
//! indexing maps (one factor per loop dim), iterator types, and the combiner the C++ glue finds
//! in its region (`linalg.yield (arith.addf %in, %out)` is a sum).
//!
//! Example: `linalg.matmul` on 4x8 · 8x16 is `([i,k],[k,j],[i,j]) -> ([i,j]) reduction={k:sum}`.

use super::{Entries, Fill, OpView};
use crate::{
    ffi,
    ir::attrs::reduction_of_code,
    tmr::{
        loop_sizes_from_shapes, AffineExprLite, AffineMapLite, FactorId, FactorKind, IteratorType,
        ReductionKind, Rule,
    },
};
use melior::ir::{block::BlockLike, operation::OperationLike, OperationRef, RegionLike, ValueLike};

/// Linalg's model beyond its rules (which come from the interface, not from entries).
pub(super) fn register(rules: &mut Entries) {
    rules.add_linear("linalg.generic", adds_its_inputs);
    // Destination passing: an init is an operand, so a fresh one can take its place.
    rules.add_fresh_accumulators("linalg");
    rules.add_fill("linalg.fill", |_| Some(Fill::Operand(0)));
    rules.add_fill("linalg.generic", generic_fill);
    rules.add_scalar_broadcast("linalg.fill", scalar_broadcast);
    rules.add_scalar_broadcast("linalg.generic", scalar_broadcast);
}

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

/// A `linalg.generic` that adds (or subtracts) its two inputs elementwise and does not read its
/// init: linear jointly in operands 0 and 1 (the lowering's add-of-sums peephole asks).
pub(super) fn adds_its_inputs(op: OperationRef) -> Option<super::Linear> {
    if op.result_count() != 1 || op.operand_count() != 3 {
        return None;
    }
    let info = ffi::linalg_info(op)?;
    let identity = |map: &AffineMapLite| {
        map.results.len() == map.num_dims
            && map
                .results
                .iter()
                .enumerate()
                .all(|(dim, expr)| matches!(expr, AffineExprLite::Dim(d) if *d == dim))
    };
    let elementwise = info.num_inputs == 2
        && info.indexed_dims.is_empty()
        && info
            .iterator_types
            .iter()
            .all(|iterator| matches!(iterator, IteratorType::Parallel))
        && info.indexing_maps.iter().all(identity);
    if !elementwise {
        return None;
    }
    let body = op.region(0).ok()?.first_block()?;
    let (combine, terminator) = (body.first_operation()?, body.terminator()?);
    let ptr = |value: melior::ir::Value| value.to_raw().ptr;
    let argument = |index: usize| body.argument(index).ok().map(|arg| arg.to_raw().ptr);
    let adds = (ffi::op_is(combine, "arith.addf") || ffi::op_is(combine, "arith.subf"))
        && body.argument_count() == 3
        && combine.operand_count() == 2
        && combine.operand(0).ok().map(ptr) == argument(0)
        && combine.operand(1).ok().map(ptr) == argument(1)
        && combine
            .next_in_block()
            .is_some_and(|next| next.to_raw().ptr == terminator.to_raw().ptr)
        && terminator.operand_count() == 1
        && terminator.operand(0).ok().map(ptr) == combine.result(0).ok().map(|r| r.to_raw().ptr);
    adds.then_some(super::Linear::Operands(&[0, 1]))
}

/// A `linalg.generic` that fills: without inputs, yielding a constant (defined in the body or
/// above); or a generalised `linalg.fill`, yielding its one scalar input (mapped to `()`).
fn generic_fill(op: OperationRef) -> Option<Fill> {
    let info = ffi::linalg_info(op)?;
    let body = op.region(0).ok()?.first_block()?;
    let terminator = body.terminator()?;
    let first = body.first_operation()?;
    // `^bb0(%out): linalg.yield %c` with %c a constant, or `^bb0(%in, %out): linalg.yield %in`.
    let yielded = terminator.operand(0).ok()?;
    let only_yield = ffi::same_operation(first, terminator)
        || (ffi::result_owner(yielded).is_some_and(|op| ffi::same_operation(op, first))
            && first
                .next_in_block()
                .is_some_and(|next| ffi::same_operation(next, terminator)));
    if op.result_count() != 1 || !only_yield {
        return None;
    }
    let first_argument = body.argument(0).ok().map(|a| a.to_raw().ptr);
    match info.num_inputs {
        0 => ffi::result_owner(yielded)
            .and_then(super::fill)
            .filter(|fill| matches!(fill, Fill::Scalar(_))),
        1 if first_argument == Some(yielded.to_raw().ptr)
            && info
                .indexing_maps
                .first()
                .is_some_and(|map| map.results.is_empty()) =>
        {
            Some(Fill::Operand(0))
        }
        _ => None,
    }
}

/// A fill, or a generic whose inputs are scalars (or rank 0) and whose body does not read
/// `linalg.index` (an iota depends on where its chunk is), all loops parallel, one init: its
/// init, the operand after its inputs.
fn scalar_broadcast(op: OperationRef) -> Option<super::Remake> {
    let info = ffi::linalg_info(op)?;
    let rank = |value: melior::ir::Value| ffi::tensor_shape(value.r#type()).map_or(0, |s| s.len());
    let broadcast = info.indexed_dims.is_empty()
        && info.num_inputs + 1 == op.operand_count()
        && (0..info.num_inputs)
            .all(|index| op.operand(index).is_ok_and(|operand| rank(operand) == 0))
        && info
            .iterator_types
            .iter()
            .all(|iterator| matches!(iterator, IteratorType::Parallel));
    broadcast.then_some(super::Remake::Into(info.num_inputs))
}
