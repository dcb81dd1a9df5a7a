//! `tensor`: empty, reshapes (expand/collapse_shape), slices, concat and pad. Sliced,
//! concatenated and padded dims must replicate; a reshape group maps only its major dim.

use super::{Entries, OpView};
use crate::tmr::Rule;
use melior::ir::{attribute::ArrayAttribute, operation::OperationLike};

pub(super) fn register(rules: &mut Entries) {
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
