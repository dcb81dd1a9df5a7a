//! `tosa`: elementwise ops (numpy broadcasting of unit dims; extra rank-1 operands such as
//! zero points are used whole), matmul, transpose, reshape and the reductions.

use super::{Cost, Entries, Fusion};
use crate::tmr::{infer_reassociation, ReductionKind, Rule};

const ELEMENTWISE: &[&str] = &[
    "tosa.add",
    "tosa.sub",
    "tosa.mul",
    "tosa.maximum",
    "tosa.minimum",
    "tosa.pow",
    "tosa.exp",
    "tosa.log",
    "tosa.tanh",
    "tosa.sigmoid",
    "tosa.abs",
    "tosa.negate",
    "tosa.reciprocal",
    "tosa.rsqrt",
    "tosa.clamp",
    "tosa.cast",
    "tosa.select",
    "tosa.equal",
    "tosa.greater",
    "tosa.greater_equal",
    "tosa.logical_and",
    "tosa.logical_or",
    "tosa.logical_xor",
    "tosa.logical_not",
    "tosa.bitwise_and",
    "tosa.bitwise_or",
    "tosa.bitwise_xor",
    "tosa.bitwise_not",
    "tosa.floor",
    "tosa.ceil",
    "tosa.erf",
    "tosa.sin",
    "tosa.cos",
    "tosa.int_div",
    "tosa.logical_left_shift",
    "tosa.logical_right_shift",
    "tosa.arithmetic_right_shift",
];

pub(super) fn register(rules: &mut Entries) {
    for name in ["tosa.add", "tosa.sub"] {
        rules.add_linear(name, |_| Some(super::Linear::All));
    }
    for name in ELEMENTWISE {
        rules.add(name, |op| {
            Rule::broadcasting_elementwise(&op.operands, &op.results)
        });
        rules.add_cost(name, Cost::Flops(1.0));
    }
    for name in [
        "tosa.reduce_sum",
        "tosa.reduce_max",
        "tosa.reduce_min",
        "tosa.reduce_prod",
    ] {
        rules.add_cost(name, Cost::Flops(1.0));
        rules.add_fusion(name, Fusion::Root);
    }
    rules.add_cost("tosa.matmul", Cost::Contraction);
    rules.add_cost("tosa.reshape", Cost::View);
    for name in [
        "tosa.const",
        "tosa.transpose",
        "tosa.slice",
        "tosa.concat",
        "tosa.pad",
        "tosa.tile",
        "tosa.gather",
        "tosa.cast",
        "tosa.identity",
    ] {
        rules.add_cost(name, Cost::Moves);
    }
    rules.add("tosa.matmul", |op| {
        let (a, b) = (op.operand(0)?.to_vec(), op.operand(1)?.to_vec());
        Ok(Rule::einsum_shapes("bik,bkj->bij", &[a, b], &op.results)?
            .reduction('k', ReductionKind::Sum)
            .with_whole_operands(&op.ranks_from(2)))
    });
    rules.add("tosa.transpose", |op| {
        let input = op.operand(0)?;
        let perm = op.dims_in(&op.dense("perms"), input.len())?;
        Ok(Rule::transpose(input, &perm)?.with_whole_operands(&op.ranks_from(1)))
    });
    rules.add("tosa.reshape", |op| {
        let (src, dst) = (op.operand(0)?, op.result(0)?);
        let groups = infer_reassociation(src, dst).ok_or_else(|| {
            format!("tosa.reshape {src:?} -> {dst:?} is not a pure merge or split of dims")
        })?;
        Ok(Rule::reshape(src, dst, &groups)?.with_whole_operands(&op.ranks_from(1)))
    });
    rules.add("tosa.reduce_sum", |op| reduce(op, ReductionKind::Sum));
    rules.add("tosa.reduce_max", |op| reduce(op, ReductionKind::Max));
    rules.add("tosa.reduce_min", |op| reduce(op, ReductionKind::Min));
    rules.add("tosa.reduce_prod", |op| reduce(op, ReductionKind::Mul));
}

/// `tosa.reduce_* {axis = d}`: the reduced dim stays as a unit dim.
fn reduce(op: &super::OpView, kind: ReductionKind) -> Result<Rule, String> {
    let input = op.operand(0)?;
    let axis: Vec<i64> = op.integer("axis").into_iter().collect();
    let dims = op.dims_in(&axis, input.len())?;
    if dims.is_empty() {
        return Err(format!("{} without an axis", op.name));
    }
    Rule::reduce(input, &dims, kind, true)
}
