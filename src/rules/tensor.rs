//! `tensor`: empty, reshapes (expand/collapse_shape), slices, concat and pad. Sliced,
//! concatenated and padded dims must replicate; a reshape group maps only its major dim.

use super::{operand_shape, result_shape, set_dense, Cost, Entries, Fill, Fusion, OpView, Padding};
use crate::{ffi, tmr::Rule};
use melior::{
    ir::{
        attribute::ArrayAttribute, block::BlockLike, operation::OperationLike, OperationRef,
        RegionLike, ValueLike,
    },
    Context,
};

pub(super) fn register(rules: &mut Entries) {
    register_retypes(rules);
    register_model(rules);
    rules.add("tensor.empty", |op| {
        Ok(Rule::source(op.result(0)?, op.operands.len()))
    });
    for name in ["tensor.expand_shape", "tensor.collapse_shape"] {
        rules.add(name, |op| {
            let rule = Rule::reshape(op.operand(0)?, op.result(0)?, &reassociation(op))?;
            Ok(rule.with_whole_operands(&op.ranks_from(1)))
        });
    }
    rules.add("tensor.extract_slice", |op| {
        let rule = Rule::extract_slice(
            op.operand(0)?,
            &op.dense("static_offsets"),
            &op.dense("static_sizes"),
            &op.dense("static_strides"),
            op.result(0)?,
        )?;
        Ok(rule.with_whole_operands(&op.ranks_from(1)))
    });
    rules.add("tensor.insert_slice", |op| {
        let rule = Rule::insert_slice(
            op.operand(0)?,
            op.operand(1)?,
            &op.dense("static_offsets"),
            &op.dense("static_sizes"),
            &op.dense("static_strides"),
        )?;
        Ok(rule.with_whole_operands(&op.ranks_from(2)))
    });
    rules.add("tensor.concat", |op| {
        let rank = op.operand(0)?.len();
        let dims: Vec<i64> = op.integer("dim").into_iter().collect();
        match op.dims_in(&dims, rank)?[..] {
            [d] => Rule::concat(&op.operands, d),
            _ => Err("tensor.concat needs one dim".into()),
        }
    });
    rules.add("tensor.pad", |op| {
        let rule = Rule::pad(
            op.operand(0)?,
            &op.dense("static_low"),
            &op.dense("static_high"),
        )?;
        Ok(rule.with_whole_operands(&op.ranks_from(1)))
    });
}

/// The `reassociation` groups of an expand/collapse_shape: `[[0, 1], [2]]`.
fn reassociation(op: &OpView) -> Vec<Vec<usize>> {
    let Some(groups) = op
        .op
        .attribute("reassociation")
        .ok()
        .and_then(|attr| ArrayAttribute::try_from(attr).ok())
    else {
        return Vec::new();
    };
    (0..groups.len())
        .filter_map(|index| groups.element(index).ok())
        .filter_map(|group| ArrayAttribute::try_from(group).ok())
        .map(|group| {
            (0..group.len())
                .filter_map(|index| group.element(index).ok())
                .filter_map(|dim| melior::ir::attribute::IntegerAttribute::try_from(dim).ok())
                .map(|dim| dim.value() as usize)
                .collect()
        })
        .collect()
}

/// What tensor ops are beyond their rules: they move data (reshapes are views, an empty
/// tensor is a destination not written yet), a reshape passes a fill on and is a layout op,
/// and a pad may pad with zeros.
fn register_model(rules: &mut Entries) {
    rules.add_dialect_cost("tensor", Cost::Moves);
    for name in [
        "tensor.collapse_shape",
        "tensor.expand_shape",
        "tensor.cast",
        "tensor.bitcast",
        "tensor.reshape",
    ] {
        rules.add_cost(name, Cost::View);
    }
    rules.add_cost("tensor.empty", Cost::Empty);
    // Writing a block into a destination happens in place, in a kernel of its own.
    for name in ["tensor.insert_slice", "tensor.parallel_insert_slice"] {
        rules.add_fusion(name, Fusion::Alone);
    }
    rules.add_fill("tensor.expand_shape", |_| Some(Fill::Operand(0)));
    rules.add_fill("tensor.collapse_shape", |_| Some(Fill::Operand(0)));
    rules.add_layout(
        "tensor.expand_shape",
        Some(|op, dim| unit_source_dim(op, dim, false)),
    );
    rules.add_layout(
        "tensor.collapse_shape",
        Some(|op, dim| unit_source_dim(op, dim, true)),
    );
    rules.add_zero_padding("tensor.pad", zero_padding);
}

/// For an expand (or a `collapse`) and a dim `dim` of its result: the dim of its source that
/// carries all of it, the other dims of its reassociation group being unit.
/// `collapse [[0, 1, 2], [3]] : 1x1x16x1 -> 16x1`, dim 1 is source dim 3; dim 0 is dim 2.
fn unit_source_dim(op: OperationRef, dim: usize, collapse: bool) -> Option<usize> {
    let groups = reassociation(&OpView::new(op));
    // The groups index the side with more dims: the source of a collapse, the result of an
    // expand.
    let wide = if collapse {
        ffi::tensor_shape(op.operand(0).ok()?.r#type())?
    } else {
        ffi::tensor_shape(op.result(0).ok()?.r#type())?
    };
    for (index, dims) in groups.iter().enumerate() {
        let non_unit: Vec<usize> = dims
            .iter()
            .copied()
            .filter(|&d| wide.get(d).copied().flatten() != Some(1))
            .collect();
        let carried = match non_unit[..] {
            [one] => one,
            [] => *dims.first()?,
            _ => continue,
        };
        if collapse && index == dim {
            return Some(carried);
        }
        if !collapse && dims.contains(&dim) {
            return (carried == dim).then_some(index);
        }
    }
    None
}

/// A `tensor.pad` whose region yields a constant 0.0: its low and high padding and source
/// shape.
fn zero_padding(pad: OperationRef) -> Option<Padding> {
    let yielded = pad
        .region(0)
        .ok()?
        .first_block()?
        .terminator()?
        .operand(0)
        .ok()?;
    let zero = ffi::result_owner(yielded)
        .and_then(super::fill)
        .is_some_and(|fill| fill == Fill::Scalar(0.0));
    if !zero {
        return None;
    }
    let view = OpView::new(pad);
    let dense = |name: &str| pad.attribute(name).is_ok().then(|| view.dense(name));
    Some(Padding {
        low: dense("static_low")?,
        high: dense("static_high")?,
        source: ffi::shaped_dims(pad.operand(0).ok()?.r#type())?,
    })
}

/// Sizes in attributes, after propagation made the types local.
fn register_retypes(rules: &mut Entries) {
    rules.add_retype("tensor.expand_shape", |context, op, _| {
        if let Some(shape) = result_shape(op, 0) {
            set_dense(context, op, "static_output_shape", &shape);
        }
    });
    rules.add_retype("tensor.extract_slice", |context, op, before| {
        if let (Some(shape), Some(old)) = (result_shape(op, 0), before.results.first()) {
            retype_sizes(context, op, old, &shape);
        }
    });
    rules.add_retype("tensor.insert_slice", |context, op, before| {
        if let (Some(shape), Some(old)) = (operand_shape(op, 0), before.operands.first()) {
            retype_sizes(context, op, old, &shape);
        }
    });
}

/// extract/insert_slice sizes: the dims the slice keeps follow the slice's new shape (`old`
/// before tiling, `new` after; a rank-reducing slice drops unit dims, which are never tiled).
/// `sizes [1, 16, 4]` of a slice `16x4 -> 8x4` become `[1, 8, 4]`.
fn retype_sizes<'c>(context: &'c Context, op: OperationRef<'c, '_>, old: &[i64], new: &[i64]) {
    let view = OpView::new(op);
    let (offsets, mut sizes, strides) = (
        view.dense("static_offsets"),
        view.dense("static_sizes"),
        view.dense("static_strides"),
    );
    let Ok(kept) = crate::tmr::kept_dims(sizes.len(), &offsets, &sizes, &strides, old) else {
        return;
    };
    if kept.len() != new.len() {
        return;
    }
    for (dim, &size) in kept.iter().zip(new) {
        sizes[*dim] = size;
    }
    set_dense(context, op, "static_sizes", &sizes);
}
