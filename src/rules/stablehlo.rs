//! `stablehlo` (and `chlo`'s elementwise ops), by op name and attributes, so that one set of
//! entries serves a stock mlir-opt, where the dialect is unregistered (JAX's generic form, read
//! with `--allow-unregistered-dialect`), and a build that registers it. Builtin attributes
//! (`dimensions = array<i64: 1>`) are read as such; StableHLO's own structured attributes are
//! opaque there, so they are read from their printed form, which is the same in both builds:
//! `#stablehlo.dot<lhs_batching_dimensions = [0], rhs_batching_dimensions = [0],
//! lhs_contracting_dimensions = [2], rhs_contracting_dimensions = [1]>`.

mod batching;
mod contraction;
mod control;
mod costs;
mod expand;
mod halo;
mod indexing;
mod lookup;
mod ordering;
mod pad;
mod pipeline;
mod rotation;
mod windows;

use super::{result_shape, set_dense, Cost, Entries, Fill, OpView};
use crate::tmr::{infer_reassociation, FactorKind, ReductionKind, Rule, TensorDims};
use batching::{gather as gather_batching, scatter as scatter_batching};
use contraction::{convolution, dot_general};
use control::{case_retype, case_rule, trip_count, while_retype, while_rule};
use indexing::{gather, gather_retype, scatter, scatter_retype};
use melior::ir::{operation::OperationLike, BlockLike, RegionLike, ValueLike};
use ordering::{reduce_any, reverse, sort, top_k};
use windows::{reduce_window, select_and_scatter};

/// Whether `op` is StableHLO's (what MLIR 22's CPU pipeline cannot lower: `verify --ranks`
/// converts such a program to linalg first).
pub fn owns(op: melior::ir::OperationRef) -> bool {
    crate::ffi::op_name_starts_with(op, "stablehlo.")
}

/// Ops that apply one scalar function elementwise (all operands and results of one shape, or
/// scalars for `select`'s predicate and `clamp`'s bounds).
const ELEMENTWISE: &[&str] = &[
    "stablehlo.abs",
    "stablehlo.add",
    "stablehlo.and",
    "stablehlo.atan2",
    "stablehlo.cbrt",
    "stablehlo.ceil",
    "stablehlo.clamp",
    "stablehlo.compare",
    "stablehlo.convert",
    "stablehlo.cosine",
    "stablehlo.count_leading_zeros",
    "stablehlo.divide",
    "stablehlo.exponential",
    "stablehlo.exponential_minus_one",
    "stablehlo.floor",
    "stablehlo.is_finite",
    "stablehlo.log",
    "stablehlo.log_plus_one",
    "stablehlo.logistic",
    "stablehlo.maximum",
    "stablehlo.minimum",
    "stablehlo.multiply",
    "stablehlo.negate",
    "stablehlo.not",
    "stablehlo.or",
    "stablehlo.popcnt",
    "stablehlo.power",
    "stablehlo.remainder",
    "stablehlo.round_nearest_afz",
    "stablehlo.round_nearest_even",
    "stablehlo.rsqrt",
    "stablehlo.select",
    "stablehlo.shift_left",
    "stablehlo.shift_right_arithmetic",
    "stablehlo.shift_right_logical",
    "stablehlo.sign",
    "stablehlo.sine",
    "stablehlo.sqrt",
    "stablehlo.subtract",
    "stablehlo.tan",
    "stablehlo.tanh",
    "stablehlo.xor",
    "chlo.erf",
    "chlo.erfc",
    "chlo.erf_inv",
    "chlo.lgamma",
    "chlo.digamma",
    "chlo.square",
    "chlo.tan",
];

pub(super) fn register(rules: &mut Entries) {
    for name in ELEMENTWISE {
        rules.add(name, |op| {
            Rule::broadcasting_elementwise(&op.operands, &op.results)
        });
        rules.add_cost(name, Cost::Flops(1.0));
    }
    costs::register(rules);
    register_linear(rules);
    rules.add("stablehlo.constant", |op| {
        Ok(Rule::source(op.result(0)?, 0))
    });
    rules.add_retype("stablehlo.constant", super::resplat_value);
    rules.add_tileable("stablehlo.constant", super::splat_only);
    register_fills_and_layouts(rules);
    expand::register(rules);
    pad::register(rules);
    rotation::register(rules);
    // Sizes in attributes: a tiled dim is read whole (see the rules), so its limit or size is
    // the new local size.
    rules.add_retype("stablehlo.slice", |context, op, before| {
        // A cut dim split: its rows come from other devices (`halo.rs`), taken whole.
        let moved = halo::slice(context, op, before);
        let view = OpView::new(op);
        let (start, mut limit, strides) = (
            view.dense("start_indices"),
            view.dense("limit_indices"),
            view.dense("strides"),
        );
        let Some(shape) = result_shape(op, 0) else {
            return;
        };
        let old = before.results.first().cloned().unwrap_or_default();
        for (d, &size) in shape.iter().enumerate() {
            if old.get(d) == Some(&size) || moved == Some(d) {
                continue;
            }
            if let (Some(&s), Some(l)) = (start.get(d), limit.get_mut(d)) {
                *l = s + size * strides.get(d).copied().unwrap_or(1).max(1);
            }
        }
        set_dense(context, op, "limit_indices", &limit);
    });
    rules.add_retype("stablehlo.dynamic_slice", |context, op, _| {
        if let Some(shape) = result_shape(op, 0) {
            set_dense(context, op, "slice_sizes", &shape);
        }
    });
    rules.add("stablehlo.iota", iota);
    rules.add("stablehlo.broadcast_in_dim", broadcast_in_dim);
    rules.add("stablehlo.transpose", |op| {
        let input = op.operand(0)?;
        Rule::transpose(input, &op.dims_in(&op.dense("permutation"), input.len())?)
    });
    rules.add("stablehlo.reshape", |op| {
        let (src, dst) = (op.operand(0)?, op.result(0)?);
        match infer_reassociation(src, dst) {
            Some(groups) => Rule::reshape(src, dst, &groups),
            // Neither a merge nor a split (`[8,4,6] -> [8,2,12]`): dims outside the regrouped
            // run still pass.
            None => Rule::reshape_segments(src, dst),
        }
    });
    rules.add("stablehlo.reduce", reduce_any);
    rules.add("stablehlo.reduce_window", reduce_window);
    rules.add("stablehlo.while", while_rule);
    rules.add_retype("stablehlo.while", while_retype);
    rules.add_cost("stablehlo.while", Cost::Loop);
    rules.add_carried_body("stablehlo.while", 1);
    // Zeros for a scan's stacked outputs: each device makes its own chunk.
    rules.add_scalar_broadcast("stablehlo.broadcast_in_dim", |op| {
        let rank = crate::ffi::tensor_shape(op.operand(0).ok()?.r#type())?.len();
        (rank == 0).then_some(super::Remake::Retyped)
    });
    rules.add_block_access("stablehlo.dynamic_slice");
    rules.add_block_access("stablehlo.dynamic_update_slice");
    for name in ["stablehlo.case", "stablehlo.if"] {
        rules.add(name, case_rule);
        rules.add_retype(name, case_retype);
        rules.add_capturing(name);
    }
    rules.add_trip_count("stablehlo.while", trip_count);
    rules.add_pipeline("stablehlo.while", pipeline::pipeline_while);
    rules.add("stablehlo.select_and_scatter", select_and_scatter);
    rules.add("stablehlo.sort", sort);
    rules.add("chlo.top_k", top_k);
    rules.add("stablehlo.reverse", |op| {
        let mut rule = reverse(op)?;
        let shape = op.operand(0)?;
        for d in op.dims_in(&op.dense("dimensions"), shape.len())? {
            rule = halo::moved(rule, d, &[shape[d]]);
        }
        Ok(rule)
    });
    rules.add_retype("stablehlo.reverse", halo::reverse);
    rules.add("stablehlo.bitcast_convert", bitcast_convert);
    // `jax.checkpoint`'s barrier: each value passes through unchanged.
    rules.add_per_value("stablehlo.optimization_barrier");
    rules.add("stablehlo.optimization_barrier", |op| {
        let mut rule = Rule::identity(&op.operands);
        for index in 0..op.operands.len() {
            let dims = rule.operands()[index].clone();
            rule.push_result(dims);
        }
        Ok(rule)
    });
    // A stateful generator: its bits are drawn whole on every device (the same state gives
    // the same bits), and a device's slice of them is taken locally.
    rules.add("stablehlo.rng_bit_generator", |op| {
        let mut rule = Rule::new();
        let state = op.operand(0)?;
        rule.push_operand(TensorDims::unindexed(state.len()));
        rule.push_result(TensorDims::unindexed(op.result(0)?.len()));
        let bits = op.result(1)?;
        let dims = TensorDims(
            bits.iter()
                .map(|&size| Some(rule.add_factor(size, FactorKind::MustReplicate)))
                .collect(),
        );
        rule.push_result(dims);
        Ok(rule)
    });
    rules.add("stablehlo.dot_general", dot_general);
    rules.add("stablehlo.convolution", convolution);
    rules.add("stablehlo.gather", gather);
    // Sharding annotations JAX leaves in (`with_sharding_constraint`): partir's schedule
    // decides, so they pass values through unchanged.
    rules.add("stablehlo.custom_call", |op| {
        let target = op
            .op
            .attribute("call_target_name")
            .map(|attr| attr.to_string())
            .unwrap_or_default();
        match target.trim_matches('"') {
            target if super::is_sharding_call(target) && op.operands.len() == 1 => {
                Ok(Rule::elementwise(op.result(0)?, 1, 1))
            }
            other => Err(format!(
                "custom call '{other}' has no rule; a schedule's [rules] table can give one (\"{other}\" = \"bij->bij\")"
            )),
        }
    });
    rules.add("sdy.sharding_constraint", |op| {
        Ok(Rule::elementwise(op.result(0)?, 1, 1))
    });
    // An annotation: XLA's partitioner removes it, so it costs nothing, and a partial sum
    // passes through it (`unreduced`, as `--stage sdy` writes it) to the add that combines it.
    rules.add_cost("sdy.sharding_constraint", Cost::View);
    rules.add_linear("sdy.sharding_constraint", |_| Some(super::Linear::All));
    rules.add("stablehlo.scatter", scatter);
    rules.add_canonical("stablehlo.gather", gather_batching);
    rules.add_canonical("stablehlo.scatter", scatter_batching);
    rules.add_retype("stablehlo.gather", gather_retype);
    rules.add_retype("stablehlo.scatter", scatter_retype);
    rules.add("stablehlo.concatenate", |op| {
        let rank = op.operand(0)?.len();
        let dim: Vec<i64> = op.integer("dimension").into_iter().collect();
        match op.dims_in(&dim, rank)?[..] {
            [d] => {
                let sizes: Vec<i64> = op.operands.iter().map(|shape| shape[d]).collect();
                Ok(halo::moved(Rule::concat(&op.operands, d)?, d, &sizes))
            }
            _ => Err("stablehlo.concatenate needs one dimension".into()),
        }
    });
    rules.add_retype("stablehlo.concatenate", halo::concatenate);
    rules.add("stablehlo.slice", |op| {
        let (start, limit, strides) = (
            op.dense("start_indices"),
            op.dense("limit_indices"),
            op.dense("strides"),
        );
        let sizes: Vec<i64> = start
            .iter()
            .zip(&limit)
            .zip(&strides)
            .map(|((&s, &l), &st)| (l - s + st.max(1) - 1) / st.max(1))
            .collect();
        let input = op.operand(0)?;
        let mut rule = Rule::extract_slice(input, &start, &sizes, &strides, op.result(0)?)?;
        // A cut dim of stride 1 tiles with a halo (`halo.rs`).
        for d in 0..input.len() {
            if strides.get(d) == Some(&1) && sizes[d] != input[d] {
                rule = halo::moved(rule, d, &[input[d], sizes[d]]);
            }
        }
        Ok(rule)
    });
    rules.add("stablehlo.pad", |op| {
        let rule = Rule::pad(
            op.operand(0)?,
            &op.dense("edge_padding_low"),
            &op.dense("edge_padding_high"),
        )?;
        let interior = op.dense("interior_padding");
        let (input, low, high) = (
            op.operand(0)?,
            op.dense("edge_padding_low"),
            op.dense("edge_padding_high"),
        );
        let mut rule = rule;
        // An edge-padded dim tiles with a halo (`halo.rs`).
        for d in 0..input.len() {
            let rows = input[d] + low[d] + high[d];
            if interior[d] == 0 && (low[d] != 0 || high[d] != 0) && rows > 0 {
                rule = halo::moved(rule, d, &[input[d], rows]);
            }
        }
        Ok(must_replicate(rule, 0, &nonzero(&interior)).with_whole_operands(&op.ranks_from(1)))
    });
    rules.add_retype("stablehlo.pad", halo::pad);
    rules.add("stablehlo.dynamic_slice", |op| {
        // Dims read whole pass through; the others depend on run-time offsets.
        let (input, result) = (op.operand(0)?, op.result(0)?);
        let sizes = op.dense("slice_sizes");
        let whole: Vec<bool> = input.iter().zip(&sizes).map(|(a, b)| a == b).collect();
        Ok(partly_passing(input, result, &whole).with_whole_operands(&op.ranks_from(1)))
    });
    rules.add("stablehlo.dynamic_update_slice", |op| {
        let (input, update) = (op.operand(0)?, op.operand(1)?);
        let mut rule = Rule::new();
        let mut dims = TensorDims::unindexed(input.len());
        let mut update_dims = TensorDims::unindexed(update.len());
        for (d, (&a, &b)) in input.iter().zip(update).enumerate() {
            let kind = if a == b {
                FactorKind::PassThrough
            } else {
                FactorKind::MustReplicate
            };
            let factor = rule.add_factor(a, kind);
            dims.0[d] = Some(factor);
            if a == b {
                update_dims.0[d] = Some(factor);
            }
        }
        rule.push_operand(dims.clone());
        rule.push_operand(update_dims);
        rule.push_result(dims);
        Ok(rule.with_whole_operands(&op.ranks_from(2)))
    });
}

/// The ops a partial sum flows through (see [`super::Linear`]).
/// What a constant fills, what passes a fill on (an accumulator's identity is read through
/// them), and the layout ops a partial sum may be reduced after.
fn register_fills_and_layouts(rules: &mut Entries) {
    rules.add_fill("stablehlo.constant", super::splat_fill);
    for name in [
        "stablehlo.broadcast_in_dim",
        "stablehlo.reshape",
        "stablehlo.convert",
    ] {
        rules.add_fill(name, |_| Some(Fill::Operand(0)));
    }
    for name in ["stablehlo.reshape", "stablehlo.transpose"] {
        rules.add_layout(name, None);
    }
}

fn register_linear(rules: &mut Entries) {
    use super::Linear::{All, EachAlone, Operands};
    for name in [
        "stablehlo.add",
        "stablehlo.subtract",
        "stablehlo.concatenate",
    ] {
        rules.add_linear(name, |_| Some(All));
    }
    for name in [
        "stablehlo.negate",
        "stablehlo.reshape",
        "stablehlo.transpose",
        "stablehlo.broadcast_in_dim",
        "stablehlo.slice",
        "stablehlo.reverse",
        "stablehlo.dynamic_slice",
        "stablehlo.divide",
        "stablehlo.optimization_barrier",
    ] {
        rules.add_linear(name, |_| Some(Operands(&[0])));
    }
    rules.add_linear("stablehlo.dynamic_update_slice", |_| {
        Some(Operands(&[0, 1]))
    });
    rules.add_linear("stablehlo.select", |_| Some(Operands(&[1, 2])));
    // A float widened (bf16 -> f32: JAX's gradient of its bf16 compute on f32 weights) is the
    // sum of its widened parts, exactly, each summed in the wider type: a loop may carry such a
    // gradient partial and reduce it once after it (in f32), not in bf16 in every iteration.
    // Only there: elsewhere a partial sum is reduced before it is widened, at half the bytes.
    // A narrowing convert rounds each part: never.
    rules.add_loop_sum_linear("stablehlo.convert", |op| {
        let bits = |value: melior::ir::Value| {
            let element = crate::ffi::shaped_element(value.r#type());
            melior::ir::r#type::TypeLike::is_float(&element)
                .then(|| crate::ffi::element_bits(element))
                .flatten()
        };
        let (from, to) = (bits(op.operand(0).ok()?)?, bits(op.result(0).ok()?.into())?);
        (to >= from).then_some(Operands(&[0]))
    });
    for name in ["stablehlo.multiply", "stablehlo.dot_general"] {
        rules.add_linear(name, |_| Some(EachAlone));
    }
    // A sum over other dims of a partial sum is partial (its init, JAX's 0, read whole).
    rules.add_linear("stablehlo.reduce", |op| {
        let view = OpView::new(op);
        (view.operands.len() == 2 && reduction_kind(&view) == Ok(ReductionKind::Sum))
            .then_some(Operands(&[0]))
    });
}

/// `bitcast_convert`: elementwise between types of one width; to a narrower type the result
/// has one more (minor) dim, to a wider one the operand has: the shared dims pass through.
fn bitcast_convert(op: &OpView) -> Result<Rule, String> {
    let (input, result) = (op.operand(0)?, op.result(0)?);
    let shared = input.len().min(result.len());
    let mut rule = Rule::new();
    let mut in_dims = TensorDims::unindexed(input.len());
    let mut out_dims = TensorDims::unindexed(result.len());
    for (d, &size) in input.iter().enumerate().take(shared) {
        let factor = rule.add_factor(size, FactorKind::PassThrough);
        (in_dims.0[d], out_dims.0[d]) = (Some(factor), Some(factor));
    }
    rule.push_operand(in_dims);
    rule.push_result(out_dims);
    Ok(rule)
}

/// `iota {iota_dimension = d}`: a source whose dim d counts from 0, so a chunk of it is not
/// a smaller iota along d (it would have to count from the chunk's offset).
fn iota(op: &OpView) -> Result<Rule, String> {
    let result = op.result(0)?;
    let dim = op.integer("iota_dimension").unwrap_or(0);
    let dims = op.dims_in(&[dim], result.len())?;
    Ok(must_replicate(Rule::source(result, 0), 0, &dims))
}

/// `broadcast_in_dim {broadcast_dimensions = [..]}`: operand dim i is result dim
/// `broadcast_dimensions[i]`; an operand dim of size 1 stretched to more is used whole.
fn broadcast_in_dim(op: &OpView) -> Result<Rule, String> {
    let (input, result) = (op.operand(0)?, op.result(0)?);
    let map = op.dims_in(&op.dense("broadcast_dimensions"), result.len())?;
    if map.len() != input.len() {
        return Err(format!(
            "stablehlo.broadcast_in_dim maps {} dims of a rank-{} operand",
            map.len(),
            input.len()
        ));
    }
    let mut rule = Rule::new();
    let dims = TensorDims(
        result
            .iter()
            .map(|&size| Some(rule.add_factor(size, FactorKind::PassThrough)))
            .collect(),
    );
    let operand = TensorDims(
        map.iter()
            .zip(input)
            .map(|(&d, &size)| (size == result[d]).then_some(dims.0[d]).flatten())
            .collect(),
    );
    rule.push_operand(operand);
    rule.push_result(dims);
    Ok(rule)
}

/// `reduce(inputs..., inits...) {dimensions}`, one input: the reduced dims are reduction
/// factors of the kind the body computes (`stablehlo.add` → sum, `maximum` → max, ...).
fn reduce(op: &OpView) -> Result<Rule, String> {
    if op.operands.len() != 2 {
        return Err(format!(
            "stablehlo.reduce of {} inputs (argmax-style) is not partitioned",
            op.operands.len() / 2
        ));
    }
    let kind = reduction_kind(op)?;
    let input = op.operand(0)?;
    let dims = op.dims_in(&op.dense("dimensions"), input.len())?;
    // The init is the accumulator of a partial result: split on a reduced dim, each device
    // would add it once more, so propagation checks it holds the identity (JAX's 0 does).
    let mut rule = Rule::reduce(input, &dims, kind, false)?.with_whole_operands(&[0]);
    rule.set_init(0, 1);
    Ok(rule)
}

/// The combiner of a reduce body: its one computing op, returned.
pub(super) fn reduction_kind(op: &OpView) -> Result<ReductionKind, String> {
    let body = op
        .op
        .region(0)
        .ok()
        .and_then(|region| region.first_block())
        .ok_or("stablehlo.reduce without a body")?;
    let combiner = body
        .first_operation()
        .map(|first| {
            first
                .name()
                .as_string_ref()
                .as_str()
                .unwrap_or("")
                .to_string()
        })
        .unwrap_or_default();
    let kind = match combiner.as_str() {
        "stablehlo.add" => ReductionKind::Sum,
        "stablehlo.maximum" => ReductionKind::Max,
        "stablehlo.minimum" => ReductionKind::Min,
        "stablehlo.multiply" => ReductionKind::Mul,
        // On booleans (JAX's `all`/`any`, e.g. index bounds checks), and is min and or is max.
        "stablehlo.and" | "stablehlo.or" if boolean(op) => match combiner.as_str() {
            "stablehlo.and" => ReductionKind::Min,
            _ => ReductionKind::Max,
        },
        other => return Err(format!("{} combining with '{other}'", op.name)),
    };
    Ok(kind)
}

/// Whether the op's first operand holds booleans.
fn boolean(op: &OpView) -> bool {
    op.op
        .operand(0)
        .map(|value| crate::ir::builder::element_type(value.r#type()).to_string() == "i1")
        .unwrap_or(false)
}

/// A value whose dims pass through where `whole[d]`, and replicate elsewhere (one operand, one
/// result of the same rank).
fn partly_passing(input: &[i64], result: &[i64], whole: &[bool]) -> Rule {
    let mut rule = Rule::new();
    let mut operand = TensorDims::unindexed(input.len());
    let mut out = TensorDims::unindexed(result.len());
    for (d, &size) in input.iter().enumerate().take(result.len()) {
        if whole.get(d) == Some(&true) {
            let factor = rule.add_factor(size, FactorKind::PassThrough);
            (operand.0[d], out.0[d]) = (Some(factor), Some(factor));
        }
    }
    rule.push_operand(operand);
    rule.push_result(out);
    rule
}

/// `rule` with the factors of `result`'s `dims` made must-replicate.
fn must_replicate(mut rule: Rule, result: usize, dims: &[usize]) -> Rule {
    let factors: Vec<_> = dims
        .iter()
        .filter_map(|&d| rule.results()[result].get(d))
        .collect();
    for factor in factors {
        rule.set_kind(factor, FactorKind::MustReplicate);
    }
    rule
}

/// The dims where `values` is not 0.
fn nonzero(values: &[i64]) -> Vec<usize> {
    (0..values.len()).filter(|&d| values[d] != 0).collect()
}

/// The integers of `key = [1, 2]` in a printed attribute; empty when the key is absent (the
/// printer leaves out empty lists).
/// `printed_list("#stablehlo.dot<lhs_contracting_dimensions = [1, 2]>", "lhs_contracting_dimensions")`
/// is `[1, 2]`.
pub fn printed_list(text: &str, key: &str) -> Vec<i64> {
    let pattern = format!("{key} = [");
    let Some(start) = text.find(&pattern).map(|at| at + pattern.len()) else {
        return Vec::new();
    };
    let end = text[start..].find(']').map_or(text.len(), |at| start + at);
    text[start..end]
        .split(',')
        .filter_map(|item| item.trim().parse().ok())
        .collect()
}
