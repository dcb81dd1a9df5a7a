//! StableHLO ops with a dim of their values expanded (see [`crate::rules::expand`]): the
//! attributes that name dims or sizes, rewritten, and the ops that read positions along the
//! expanded dim (slice, concatenate, pad, reshape), planned by whole steps of its leading size:
//! `[8,16,192][..., 64:128]` with 192 seen as `[3, 2, 32]` is `[8,16,3,2,32][..., 1:2, :, :]`.

use super::{printed_list, ELEMENTWISE};
use crate::{
    ffi,
    rules::{
        expand::{by_rule, new_dims, port_shape, split_of, DimSplit, Port, Splits},
        set_dense, Entries, OpView, Rules, Shapes,
    },
};
use melior::ir::{
    attribute::IntegerAttribute, operation::OperationLike, Attribute, BlockLike, OperationRef,
    ValueLike,
};

pub(super) fn register(rules: &mut Entries) {
    for name in ELEMENTWISE {
        rules.add_expansion(name, None, |_, _, _, _| {});
    }
    // jax.checkpoint's barrier passes each value through as it is.
    rules.add_expansion("stablehlo.optimization_barrier", None, |_, _, _, _| {});
    rules.add_expansion("stablehlo.constant", None, |context, op, _, before| {
        super::super::resplat_value(context, op, before)
    });
    rules.add_expansion(
        "stablehlo.broadcast_in_dim",
        None,
        |context, op, splits, _| {
            let old = OpView::new(op).dense("broadcast_dimensions");
            let mut dims = Vec::new();
            for (i, &d) in old.iter().enumerate() {
                let operand = new_dims(splits, Port::Operand(0), i);
                let result = new_dims(splits, Port::Result(0), d as usize);
                if operand.len() == result.len() {
                    dims.extend(result.map(|d| d as i64));
                } else {
                    // A size-1 dim stretched: it stays one dim (the plan splits only same sizes).
                    dims.push(result.start as i64);
                }
            }
            set_dense(context, op, "broadcast_dimensions", &dims);
        },
    );
    // A list of operand dims: each becomes the dims it expanded into.
    rules.add_expansion("stablehlo.transpose", None, |context, op, splits, _| {
        operand_dims(context, op, splits, "permutation")
    });
    rules.add_expansion("stablehlo.reduce", None, |context, op, splits, _| {
        operand_dims(context, op, splits, "dimensions")
    });
    rules.add_expansion("stablehlo.dot_general", None, dot_general);
    // A scan's carry expands with its region arguments and what its body yields (the pass
    // does those: `rules::carried_body`).
    rules.add_expansion("stablehlo.while", Some(carry_plan), |_, _, _, _| {});
    // A block read or written at run-time offsets: dims it takes whole expand, each new dim
    // starting at 0.
    rules.add_expansion("stablehlo.dynamic_slice", None, |context, op, splits, _| {
        block_offsets(context, op, splits, 1);
        let sizes = OpView::new(op).dense("slice_sizes");
        let expanded = match split_of(splits, Port::Result(0)) {
            Some(split) => split.expand(&sizes),
            None => sizes,
        };
        set_dense(context, op, "slice_sizes", &expanded);
    });
    rules.add_expansion(
        "stablehlo.dynamic_update_slice",
        None,
        |context, op, splits, _| block_offsets(context, op, splits, 2),
    );
    rules.add_expansion("stablehlo.reshape", Some(reshape_plan), |_, _, _, _| {});
    rules.add_expansion("stablehlo.slice", Some(slice_plan), slice);
    rules.add_expansion("stablehlo.pad", Some(pad_plan), pad);
    rules.add_expansion(
        "stablehlo.concatenate",
        Some(concatenate_plan),
        |context, op, splits, _| {
            let Some(dim) = OpView::new(op).integer("dimension") else {
                return;
            };
            let dim = new_dims(splits, Port::Result(0), dim as usize).start as i64;
            let ty = melior::ir::r#type::IntegerType::new(context, 64).into();
            ffi::set_attribute(op, "dimension", IntegerAttribute::new(ty, dim).into());
        },
    );
}

/// `op`'s `name`, a list of operand 0's dims, with each dim replaced by the dims it became.
fn operand_dims<'c>(
    context: &'c melior::Context,
    op: OperationRef<'c, '_>,
    splits: &Splits,
    name: &str,
) {
    let dims: Vec<i64> = OpView::new(op)
        .dense(name)
        .iter()
        .flat_map(|&d| new_dims(splits, Port::Operand(0), d as usize))
        .map(|d| d as i64)
        .collect();
    set_dense(context, op, name, &dims);
}

/// `dot_dimension_numbers` with every listed dim replaced by the dims it became.
fn dot_general<'c>(
    context: &'c melior::Context,
    op: OperationRef<'c, '_>,
    splits: &Splits,
    _: &Shapes,
) {
    let Ok(numbers) = op
        .attribute("dot_dimension_numbers")
        .map(|attr| attr.to_string())
    else {
        return;
    };
    let mut fields = Vec::new();
    for (key, port) in [
        ("lhs_batching_dimensions", Port::Operand(0)),
        ("rhs_batching_dimensions", Port::Operand(1)),
        ("lhs_contracting_dimensions", Port::Operand(0)),
        ("rhs_contracting_dimensions", Port::Operand(1)),
    ] {
        let dims: Vec<String> = printed_list(&numbers, key)
            .iter()
            .flat_map(|&d| new_dims(splits, port, d as usize))
            .map(|d| d.to_string())
            .collect();
        if !dims.is_empty() {
            fields.push(format!("{key} = [{}]", dims.join(", ")));
        }
    }
    let text = format!("#stablehlo.dot<{}>", fields.join(", "));
    if let Some(attribute) = Attribute::parse(context, &text) {
        ffi::set_attribute(op, "dot_dimension_numbers", attribute);
    }
}

/// A reshape takes an expanded operand as it is (it re-lays out any shape); its result is
/// expanded too when the split dim comes out of it whole, at the same offset.
fn reshape_plan(_: &Rules, op: OperationRef, port: Port, split: &DimSplit) -> Option<Splits> {
    let (source, target) = (
        port_shape(op, Port::Operand(0))?,
        port_shape(op, Port::Result(0))?,
    );
    let (from, to) = match port {
        Port::Operand(_) => (&source, &target),
        Port::Result(_) => (&target, &source),
    };
    let before: i64 = from[..split.dim].iter().product();
    let mut splits = vec![(port, split.clone())];
    let mut offset = 1;
    for (d, &size) in to.iter().enumerate() {
        if offset == before && size == from[split.dim] {
            let other = match port {
                Port::Operand(_) => Port::Result(0),
                Port::Result(_) => Port::Operand(0),
            };
            splits.push((
                other,
                DimSplit {
                    dim: d,
                    sizes: split.sizes.clone(),
                },
            ));
            break;
        }
        offset *= size;
    }
    Some(splits)
}

/// The dims a slice or pad reads positions along: where its arrays move or skip elements.
fn moved(values: &[&[i64]], sizes: &[i64], dim: usize) -> bool {
    values[0].get(dim) != Some(&0)
        || values[1].get(dim) != Some(&sizes[dim])
        || values[2].get(dim) != Some(&1)
}

/// Slicing the split dim by whole steps of its leading size keeps the split; other dims
/// expand by the rule.
fn slice_plan(rules: &Rules, op: OperationRef, port: Port, split: &DimSplit) -> Option<Splits> {
    let view = OpView::new(op);
    let (start, limit, strides) = (
        view.dense("start_indices"),
        view.dense("limit_indices"),
        view.dense("strides"),
    );
    let source = port_shape(op, Port::Operand(0))?;
    if !moved(&[&start, &limit, &strides], &source, split.dim) {
        return by_rule(rules, op, port, split);
    }
    let (d, step) = (split.dim, split.stride());
    if strides[d] != 1 || start[d] % step != 0 || limit[d] % step != 0 {
        return None;
    }
    Some(vec![
        (Port::Operand(0), split.with_size(d, source[d])?),
        (Port::Result(0), split.with_size(d, limit[d] - start[d])?),
    ])
}

fn slice<'c>(context: &'c melior::Context, op: OperationRef<'c, '_>, splits: &Splits, _: &Shapes) {
    let view = OpView::new(op);
    let arrays = [
        view.dense("start_indices"),
        view.dense("limit_indices"),
        view.dense("strides"),
    ];
    let Some(split) = split_of(splits, Port::Result(0)) else {
        return;
    };
    let step = split.stride();
    let names = ["start_indices", "limit_indices", "strides"];
    for (which, (name, old)) in names.iter().zip(&arrays).enumerate() {
        let mut new = old[..split.dim].to_vec();
        let (start, limit) = (arrays[0][split.dim], arrays[1][split.dim]);
        let moved = start != 0 || split.sizes[0] * step != limit;
        let leading = match which {
            0 => start / step,
            1 if moved => limit / step,
            1 => split.sizes[0],
            _ => 1,
        };
        new.push(leading);
        new.extend(split.sizes[1..].iter().map(|&size| match which {
            0 => 0,
            1 => size,
            _ => 1,
        }));
        new.extend(&old[split.dim + 1..]);
        set_dense(context, op, name, &new);
    }
}

/// Padding the split dim by whole steps (no interior padding) keeps the split.
fn pad_plan(rules: &Rules, op: OperationRef, port: Port, split: &DimSplit) -> Option<Splits> {
    let view = OpView::new(op);
    let (low, high, interior) = (
        view.dense("edge_padding_low"),
        view.dense("edge_padding_high"),
        view.dense("interior_padding"),
    );
    let d = split.dim;
    if low.get(d) == Some(&0) && high.get(d) == Some(&0) && interior.get(d) == Some(&0) {
        return by_rule(rules, op, port, split);
    }
    let step = split.stride();
    if interior[d] != 0 || low[d] < 0 || high[d] < 0 || low[d] % step != 0 || high[d] % step != 0 {
        return None;
    }
    let (source, result) = (
        port_shape(op, Port::Operand(0))?,
        port_shape(op, Port::Result(0))?,
    );
    Some(vec![
        (Port::Operand(0), split.with_size(d, source[d])?),
        (Port::Result(0), split.with_size(d, result[d])?),
    ])
}

fn pad<'c>(context: &'c melior::Context, op: OperationRef<'c, '_>, splits: &Splits, _: &Shapes) {
    let Some(split) = split_of(splits, Port::Result(0)) else {
        return;
    };
    let view = OpView::new(op);
    let step = split.stride();
    for name in ["edge_padding_low", "edge_padding_high", "interior_padding"] {
        let old = view.dense(name);
        let mut new = old[..split.dim].to_vec();
        new.push(old[split.dim] / step);
        new.extend(std::iter::repeat_n(0, split.sizes.len() - 1));
        new.extend(&old[split.dim + 1..]);
        set_dense(context, op, name, &new);
    }
}

/// Concatenating along the split dim by whole steps keeps the split; along another dim, every
/// operand expands alike.
fn concatenate_plan(
    rules: &Rules,
    op: OperationRef,
    port: Port,
    split: &DimSplit,
) -> Option<Splits> {
    let dim = OpView::new(op).integer("dimension")? as usize;
    if dim != split.dim {
        return by_rule(rules, op, port, split);
    }
    let mut splits = Vec::new();
    for i in 0..op.operand_count() {
        let shape = port_shape(op, Port::Operand(i))?;
        splits.push((Port::Operand(i), split.with_size(dim, shape[dim])?));
    }
    let shape = port_shape(op, Port::Result(0))?;
    splits.push((Port::Result(0), split.with_size(dim, shape[dim])?));
    Some(splits)
}

/// A loop's carry `i`: its operand and its result.
fn carry_plan(_: &Rules, op: OperationRef, port: Port, split: &DimSplit) -> Option<Splits> {
    let i = match port {
        Port::Operand(i) | Port::Result(i) => i,
    };
    let (operand, result) = (
        port_shape(op, Port::Operand(i))?,
        port_shape(op, Port::Result(i))?,
    );
    (operand == result).then(|| {
        vec![
            (Port::Operand(i), split.clone()),
            (Port::Result(i), split.clone()),
        ]
    })
}

/// The start offsets of a `dynamic_slice` (from operand `first`) or `dynamic_update_slice`
/// whose operand 0 expanded: the split dim's offset, then a zero per new dim (a dim taken
/// whole starts at 0).
fn block_offsets<'c>(
    context: &'c melior::Context,
    op: OperationRef<'c, '_>,
    splits: &Splits,
    first: usize,
) {
    let Some(split) = split_of(splits, Port::Operand(0)) else {
        return;
    };
    let operands: Vec<melior::ir::Value> = op.operands().collect();
    let Some(offset) = operands.get(first + split.dim).copied() else {
        return;
    };
    let ty = offset.r#type();
    let Some(zero) = Attribute::parse(context, &format!("dense<0> : {ty}")) else {
        return;
    };
    let Some(block) = op.block() else {
        return;
    };
    let constant =
        melior::ir::operation::OperationBuilder::new("stablehlo.constant", op.location())
            .add_attributes(&[(melior::ir::Identifier::new(context, "value"), zero)])
            .add_results(&[ty])
            .build()
            .expect("a constant builds");
    let zero: melior::ir::Value = block
        .insert_operation_before(op, constant)
        .result(0)
        .expect("one result")
        .into();
    let mut values = operands[..=first + split.dim].to_vec();
    values.extend(std::iter::repeat_n(zero, split.sizes.len() - 1));
    values.extend(&operands[first + split.dim + 1..]);
    ffi::set_operands(op, &values);
}
