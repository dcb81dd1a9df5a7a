//! `stablehlo` (and `chlo`'s elementwise ops), by op name and attributes, so that one set of
//! entries serves a stock mlir-opt, where the dialect is unregistered (JAX's generic form, read
//! with `--allow-unregistered-dialect`), and a build that registers it. Builtin attributes
//! (`dimensions = array<i64: 1>`) are read as such; StableHLO's own structured attributes are
//! opaque there, so they are read from their printed form, which is the same in both builds:
//! `#stablehlo.dot<lhs_batching_dimensions = [0], rhs_batching_dimensions = [0],
//! lhs_contracting_dimensions = [2], rhs_contracting_dimensions = [1]>`.

use super::{result_shape, set_dense, Cost, Entries, OpView};
use crate::tmr::{infer_reassociation, FactorKind, ReductionKind, Rule, TensorDims};
use melior::ir::{operation::OperationLike, BlockLike, RegionLike, ValueLike};

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
    register_costs(rules);
    rules.add("stablehlo.constant", |op| {
        Ok(Rule::source(op.result(0)?, 0))
    });
    rules.add_retype("stablehlo.constant", super::resplat_value);
    // Sizes in attributes: a tiled dim is read whole (see the rules), so its limit or size is
    // the new local size.
    rules.add_retype("stablehlo.slice", |context, op, before| {
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
            if old.get(d) == Some(&size) {
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
        let groups = infer_reassociation(src, dst).ok_or_else(|| {
            format!("stablehlo.reshape {src:?} -> {dst:?} is not a pure merge or split of dims")
        })?;
        Rule::reshape(src, dst, &groups)
    });
    rules.add("stablehlo.reduce", reduce);
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
            "Sharding" | "SPMDFullToShardShape" | "SPMDShardToFullShape"
                if op.operands.len() == 1 =>
            {
                Ok(Rule::elementwise(op.result(0)?, 1, 1))
            }
            other => Err(format!("custom call '{other}' is opaque")),
        }
    });
    rules.add("sdy.sharding_constraint", |op| {
        Ok(Rule::elementwise(op.result(0)?, 1, 1))
    });
    rules.add("stablehlo.scatter", scatter);
    rules.add_retype("stablehlo.gather", |context, op, before| {
        // Offset dims read whole keep reading the whole (now local) dim.
        let view = OpView::new(op);
        let mut sizes = view.dense("slice_sizes");
        let (Some(old), Some(new)) = (before.operands.first(), super::operand_shape(op, 0)) else {
            return;
        };
        for (d, size) in sizes.iter_mut().enumerate() {
            if old.get(d) == Some(size) && new.get(d) != old.get(d) {
                *size = new[d];
            }
        }
        set_dense(context, op, "slice_sizes", &sizes);
    });
    rules.add("stablehlo.concatenate", |op| {
        let rank = op.operand(0)?.len();
        let dim: Vec<i64> = op.integer("dimension").into_iter().collect();
        match op.dims_in(&dim, rank)?[..] {
            [d] => Rule::concat(&op.operands, d),
            _ => Err("stablehlo.concatenate needs one dimension".into()),
        }
    });
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
        Rule::extract_slice(op.operand(0)?, &start, &sizes, &strides, op.result(0)?)
    });
    rules.add("stablehlo.pad", |op| {
        let rule = Rule::pad(
            op.operand(0)?,
            &op.dense("edge_padding_low"),
            &op.dense("edge_padding_high"),
        )?;
        let interior = op.dense("interior_padding");
        Ok(must_replicate(rule, 0, &nonzero(&interior)).with_whole_operands(&op.ranks_from(1)))
    });
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

/// How the simulator counts StableHLO ops (elementwise ones: 1 FLOP, above).
fn register_costs(rules: &mut Entries) {
    for name in TRANSCENDENTAL {
        rules.add_cost(name, Cost::Transcendental);
    }
    rules.add_cost("stablehlo.dot_general", Cost::Contraction);
    rules.add_cost("stablehlo.convolution", Cost::Convolution);
    rules.add_cost("stablehlo.reduce", Cost::Flops(1.0));
    rules.add_cost("stablehlo.reshape", Cost::View);
    rules.add_cost("stablehlo.constant", Cost::Free);
    for name in [
        "stablehlo.broadcast_in_dim",
        "stablehlo.transpose",
        "stablehlo.slice",
        "stablehlo.concatenate",
        "stablehlo.pad",
        "stablehlo.dynamic_slice",
        "stablehlo.dynamic_update_slice",
        "stablehlo.iota",
        "stablehlo.convert",
        "stablehlo.gather",
        "stablehlo.scatter",
    ] {
        rules.add_cost(name, Cost::Moves);
    }
}

/// Elementwise ops XLA counts as transcendentals rather than FLOPs.
const TRANSCENDENTAL: &[&str] = &[
    "stablehlo.exponential",
    "stablehlo.exponential_minus_one",
    "stablehlo.log",
    "stablehlo.log_plus_one",
    "stablehlo.logistic",
    "stablehlo.sqrt",
    "stablehlo.rsqrt",
    "stablehlo.cbrt",
    "stablehlo.tanh",
    "stablehlo.sine",
    "stablehlo.cosine",
    "stablehlo.tan",
    "stablehlo.power",
    "stablehlo.atan2",
    "chlo.erf",
    "chlo.erfc",
    "chlo.erf_inv",
    "chlo.lgamma",
    "chlo.digamma",
    "chlo.tan",
];

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
    Ok(Rule::reduce(input, &dims, kind, false)?.with_whole_operands(&[0]))
}

/// The combiner of a reduce body: its one computing op, returned.
fn reduction_kind(op: &OpView) -> Result<ReductionKind, String> {
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

/// `dot_general`: batch dims, then lhs free dims, then rhs free dims; contracting dims sum.
fn dot_general(op: &OpView) -> Result<Rule, String> {
    let (lhs, rhs) = (op.operand(0)?, op.operand(1)?);
    let numbers = op
        .op
        .attribute("dot_dimension_numbers")
        .map(|attr| attr.to_string())
        .map_err(|_| "stablehlo.dot_general without dot_dimension_numbers".to_string())?;
    let list = |key: &str| op.dims_in(&printed_list(&numbers, key), usize::MAX);
    let (lhs_batch, rhs_batch) = (
        list("lhs_batching_dimensions")?,
        list("rhs_batching_dimensions")?,
    );
    let (lhs_contract, rhs_contract) = (
        list("lhs_contracting_dimensions")?,
        list("rhs_contracting_dimensions")?,
    );
    if lhs_batch.len() != rhs_batch.len() || lhs_contract.len() != rhs_contract.len() {
        return Err(format!("stablehlo.dot_general: unpaired dims in {numbers}"));
    }
    let mut rule = Rule::new();
    let mut lhs_dims = TensorDims::unindexed(lhs.len());
    let mut rhs_dims = TensorDims::unindexed(rhs.len());
    let mut out = Vec::new();
    let pair = |l: usize, r: usize, kind, rule: &mut Rule| {
        let size = *lhs.get(l).ok_or("dot_general: lhs dim out of range")?;
        if rhs.get(r) != Some(&size) {
            return Err(format!("dot_general: lhs dim {l} and rhs dim {r} differ"));
        }
        Ok::<_, String>(rule.add_factor(size, kind))
    };
    for (&l, &r) in lhs_batch.iter().zip(&rhs_batch) {
        let factor = pair(l, r, FactorKind::PassThrough, &mut rule)?;
        (lhs_dims.0[l], rhs_dims.0[r]) = (Some(factor), Some(factor));
        out.push(Some(factor));
    }
    for (&l, &r) in lhs_contract.iter().zip(&rhs_contract) {
        let factor = pair(l, r, FactorKind::Reduction(ReductionKind::Sum), &mut rule)?;
        (lhs_dims.0[l], rhs_dims.0[r]) = (Some(factor), Some(factor));
    }
    for (shape, dims) in [(lhs, &mut lhs_dims), (rhs, &mut rhs_dims)] {
        for (d, &size) in shape.iter().enumerate() {
            if dims.0[d].is_none() {
                let factor = rule.add_factor(size, FactorKind::PassThrough);
                dims.0[d] = Some(factor);
                out.push(Some(factor));
            }
        }
    }
    if out.len() != op.result(0)?.len() {
        return Err(format!(
            "stablehlo.dot_general: result rank {} is not {}",
            op.result(0)?.len(),
            out.len()
        ));
    }
    rule.push_operand(lhs_dims);
    rule.push_operand(rhs_dims);
    rule.push_result(TensorDims(out));
    Ok(rule)
}

/// `convolution` with `dimension_numbers = #stablehlo.conv<[b, 0, 1, f]x[0, 1, i, o]->[b, 0,
/// 1, f]>` and group counts 1: the batch passes through, input features (`f` of the input,
/// `i` of the kernel) are summed, output features (`o`, the result's `f`) pass through;
/// spatial dims are windows (halos), used whole.
fn convolution(op: &OpView) -> Result<Rule, String> {
    for count in ["feature_group_count", "batch_group_count"] {
        if op.integer(count).unwrap_or(1) != 1 {
            return Err(format!(
                "stablehlo.convolution with {count} > 1 is not partitioned"
            ));
        }
    }
    let numbers = op
        .op
        .attribute("dimension_numbers")
        .map(|attr| attr.to_string())
        .map_err(|_| "stablehlo.convolution without dimension_numbers".to_string())?;
    let layouts: Vec<Vec<String>> = numbers
        .split('[')
        .skip(1)
        .filter_map(|part| part.split(']').next())
        .map(|list| {
            list.split(',')
                .map(|label| label.trim().to_string())
                .collect()
        })
        .collect();
    let [input, kernel, output] = &layouts[..] else {
        return Err(format!("stablehlo.convolution: cannot read {numbers}"));
    };
    let at = |layout: &[String], label: &str| {
        layout
            .iter()
            .position(|l| l == label)
            .ok_or_else(|| format!("stablehlo.convolution: no '{label}' in {numbers}"))
    };
    let (lhs, rhs, result) = (op.operand(0)?, op.operand(1)?, op.result(0)?);
    if input.len() != lhs.len() || kernel.len() != rhs.len() || output.len() != result.len() {
        return Err(format!(
            "stablehlo.convolution: {numbers} does not match its ranks"
        ));
    }
    let mut rule = Rule::new();
    let (mut lhs_dims, mut rhs_dims, mut out_dims) = (
        TensorDims::unindexed(lhs.len()),
        TensorDims::unindexed(rhs.len()),
        TensorDims::unindexed(result.len()),
    );
    let batch = rule.add_factor(lhs[at(input, "b")?], FactorKind::PassThrough);
    (lhs_dims.0[at(input, "b")?], out_dims.0[at(output, "b")?]) = (Some(batch), Some(batch));
    let features = rule.add_factor(
        lhs[at(input, "f")?],
        FactorKind::Reduction(ReductionKind::Sum),
    );
    (lhs_dims.0[at(input, "f")?], rhs_dims.0[at(kernel, "i")?]) = (Some(features), Some(features));
    let outputs = rule.add_factor(rhs[at(kernel, "o")?], FactorKind::PassThrough);
    (rhs_dims.0[at(kernel, "o")?], out_dims.0[at(output, "f")?]) = (Some(outputs), Some(outputs));
    rule.push_operand(lhs_dims);
    rule.push_operand(rhs_dims);
    rule.push_result(out_dims);
    Ok(rule)
}

/// The dimension numbers of a gather or scatter, from their printed form.
struct IndexedDims {
    text: String,
}

impl IndexedDims {
    fn of(op: &OpView, attribute: &str) -> Result<Self, String> {
        op.op
            .attribute(attribute)
            .map(|attr| Self {
                text: attr.to_string(),
            })
            .map_err(|_| format!("{} without {attribute}", op.name))
    }

    fn list(&self, key: &str) -> Vec<usize> {
        printed_list(&self.text, key)
            .into_iter()
            .filter_map(|d| usize::try_from(d).ok())
            .collect()
    }

    fn index_vector_dim(&self) -> Option<usize> {
        let at = self.text.find("index_vector_dim = ")? + "index_vector_dim = ".len();
        let digits: String = self.text[at..]
            .chars()
            .take_while(char::is_ascii_digit)
            .collect();
        digits.parse().ok()
    }
}

/// `gather` (an embedding lookup, `take_along_axis`): the indices' batch dims pass through to
/// the result's batch dims (and to the operand's batching dims); operand dims read whole
/// pass through to the result's offset dims; indexed and partly read operand dims are used
/// whole.
fn gather(op: &OpView) -> Result<Rule, String> {
    let numbers = IndexedDims::of(op, "dimension_numbers")?;
    let (operand, indices, result) = (op.operand(0)?, op.operand(1)?, op.result(0)?);
    let (offset_dims, collapsed, start_map) = (
        numbers.list("offset_dims"),
        numbers.list("collapsed_slice_dims"),
        numbers.list("start_index_map"),
    );
    let (operand_batching, indices_batching) = (
        numbers.list("operand_batching_dims"),
        numbers.list("start_indices_batching_dims"),
    );
    let vector_dim = numbers.index_vector_dim().unwrap_or(indices.len());
    let slice_sizes = op.dense("slice_sizes");
    let mut rule = Rule::new();
    let mut operand_dims = TensorDims::unindexed(operand.len());
    let mut indices_dims = TensorDims::unindexed(indices.len());
    let mut result_dims = TensorDims::unindexed(result.len());
    let batch_positions: Vec<usize> = (0..result.len())
        .filter(|d| !offset_dims.contains(d))
        .collect();
    let index_batch: Vec<usize> = (0..indices.len()).filter(|&d| d != vector_dim).collect();
    if batch_positions.len() != index_batch.len() {
        return Err(format!(
            "stablehlo.gather: {} batch dims for {} index dims",
            batch_positions.len(),
            index_batch.len()
        ));
    }
    for (&j, &r) in index_batch.iter().zip(&batch_positions) {
        let factor = rule.add_factor(indices[j], FactorKind::PassThrough);
        (indices_dims.0[j], result_dims.0[r]) = (Some(factor), Some(factor));
        if let Some(i) = indices_batching.iter().position(|&b| b == j) {
            let d = *operand_batching
                .get(i)
                .ok_or("stablehlo.gather: unpaired batching dims")?;
            operand_dims.0[d] = Some(factor);
        }
    }
    let windows: Vec<usize> = (0..operand.len())
        .filter(|d| !collapsed.contains(d) && !operand_batching.contains(d))
        .collect();
    if windows.len() != offset_dims.len() {
        return Err(format!(
            "stablehlo.gather: {} offset dims for {} window dims",
            offset_dims.len(),
            windows.len()
        ));
    }
    for (&d, &r) in windows.iter().zip(&offset_dims) {
        if slice_sizes.get(d) == Some(&operand[d]) && !start_map.contains(&d) {
            let factor = rule.add_factor(operand[d], FactorKind::PassThrough);
            (operand_dims.0[d], result_dims.0[r]) = (Some(factor), Some(factor));
        }
    }
    rule.push_operand(operand_dims);
    rule.push_operand(indices_dims);
    rule.push_result(result_dims);
    Ok(rule)
}

/// `scatter` with one input (the gradient of a gather: updates added into a table): operand
/// and result dims are one; the updates' scatter dims (the tokens) are reductions of the
/// body's kind, so a tiled batch gives partial tables combined afterwards; window dims written
/// whole pass through to the updates; indexed dims are used whole. The input is the
/// accumulator (init) of those partial results.
fn scatter(op: &OpView) -> Result<Rule, String> {
    if op.operands.len() != 3 {
        return Err("stablehlo.scatter of several inputs is not partitioned".into());
    }
    let numbers = IndexedDims::of(op, "scatter_dimension_numbers")?;
    let (operand, indices, updates) = (op.operand(0)?, op.operand(1)?, op.operand(2)?);
    let (window_dims, inserted, to_operand) = (
        numbers.list("update_window_dims"),
        numbers.list("inserted_window_dims"),
        numbers.list("scatter_dims_to_operand_dims"),
    );
    let (input_batching, indices_batching) = (
        numbers.list("input_batching_dims"),
        numbers.list("scatter_indices_batching_dims"),
    );
    let vector_dim = numbers.index_vector_dim().unwrap_or(indices.len());
    let kind = reduction_kind(op)?;
    let mut rule = Rule::new();
    let mut operand_dims = TensorDims::unindexed(operand.len());
    let mut indices_dims = TensorDims::unindexed(indices.len());
    let mut updates_dims = TensorDims::unindexed(updates.len());
    let scatter_positions: Vec<usize> = (0..updates.len())
        .filter(|d| !window_dims.contains(d))
        .collect();
    let index_batch: Vec<usize> = (0..indices.len()).filter(|&d| d != vector_dim).collect();
    if scatter_positions.len() != index_batch.len() {
        return Err(format!(
            "stablehlo.scatter: {} scatter dims for {} index dims",
            scatter_positions.len(),
            index_batch.len()
        ));
    }
    for (&j, &u) in index_batch.iter().zip(&scatter_positions) {
        let batching = indices_batching.iter().position(|&b| b == j);
        let factor_kind = if batching.is_some() {
            FactorKind::PassThrough
        } else {
            FactorKind::Reduction(kind)
        };
        let factor = rule.add_factor(indices[j], factor_kind);
        (indices_dims.0[j], updates_dims.0[u]) = (Some(factor), Some(factor));
        if let Some(i) = batching {
            let d = *input_batching
                .get(i)
                .ok_or("stablehlo.scatter: unpaired batching dims")?;
            operand_dims.0[d] = Some(factor);
        }
    }
    let windows: Vec<usize> = (0..operand.len())
        .filter(|d| !inserted.contains(d) && !input_batching.contains(d))
        .collect();
    if windows.len() != window_dims.len() {
        return Err(format!(
            "stablehlo.scatter: {} window dims for {} operand dims",
            window_dims.len(),
            windows.len()
        ));
    }
    for (&d, &u) in windows.iter().zip(&window_dims) {
        if updates.get(u) == Some(&operand[d]) && !to_operand.contains(&d) {
            let factor = rule.add_factor(operand[d], FactorKind::PassThrough);
            (operand_dims.0[d], updates_dims.0[u]) = (Some(factor), Some(factor));
        }
    }
    rule.push_operand(operand_dims.clone());
    rule.push_operand(indices_dims);
    rule.push_operand(updates_dims);
    rule.push_result(operand_dims);
    rule.set_init(0, 0);
    Ok(rule)
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
