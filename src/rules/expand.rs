//! Expanding one dim of an op's values into several, as `partir-expand-dim` does to a fused
//! projection: GPT-2's `c_attn` kernel `[3·H·D, d]` seen as `[3, H, D, d]`, so that Megatron
//! can split it by heads with contiguous tiles (docs/design.md#fused-projections). Each family
//! says which of an op's values expand with a given one (its *plan*; by default read off its
//! rule: every dim its factor indexes) and rewrites the attributes that name dims or sizes.
//!
//! ```text
//! %y = dot_general %x, %w  [8,16,64] x [64,192] -> [8,16,192]    (w's dim 1 as [3, 2, 32])
//! %y = dot_general %x, %w  [8,16,64] x [64,3,2,32] -> [8,16,3,2,32]
//! ```

use super::{model::registered_expansion, Rules, Shapes};
use crate::tmr::FactorKind;
use melior::ir::{operation::OperationLike, OperationRef, ValueLike};
use std::ops::Range;

/// The reshape `partir-expand-dim` puts between an expanded value and an op that reads the
/// original shape (and back): the families that expand are StableHLO's.
pub const RESHAPE: &str = "stablehlo.reshape";

/// One of an op's values: operand `i` or result `i`.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Port {
    Operand(usize),
    Result(usize),
}

/// Dim `dim` of a value seen as `sizes`, major to minor (their product is the dim's size).
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub struct DimSplit {
    pub dim: usize,
    pub sizes: Vec<i64>,
}

impl DimSplit {
    /// The dims dim `old` of the value becomes: `dim` becomes `sizes.len()` dims, later dims
    /// move up.
    pub fn new_dims(&self, old: usize) -> Range<usize> {
        let extra = self.sizes.len() - 1;
        match old.cmp(&self.dim) {
            std::cmp::Ordering::Less => old..old + 1,
            std::cmp::Ordering::Equal => old..old + 1 + extra,
            std::cmp::Ordering::Greater => old + extra..old + extra + 1,
        }
    }

    /// `shape` with the split dim expanded.
    pub fn expand(&self, shape: &[i64]) -> Vec<i64> {
        let mut out = shape[..self.dim].to_vec();
        out.extend(&self.sizes);
        out.extend(&shape[self.dim + 1..]);
        out
    }

    /// The elements of one step of the leading size: `[3, 2, 32]` → 64.
    pub fn stride(&self) -> i64 {
        self.sizes[1..].iter().product()
    }

    /// The same split with a leading size that makes `size`, if `size` is whole steps.
    pub fn with_size(&self, dim: usize, size: i64) -> Option<DimSplit> {
        let stride = self.stride();
        (size > 0 && size % stride == 0).then(|| {
            let mut sizes = self.sizes.clone();
            sizes[0] = size / stride;
            DimSplit { dim, sizes }
        })
    }
}

/// The splits of an op's values that expand together (each port at most once).
pub type Splits = Vec<(Port, DimSplit)>;

/// A family's plan: given one value's split, the splits of all the op's values it implies
/// (that one included), or None when the op cannot run on the expanded value.
pub type ExpandPlan = fn(&Rules, OperationRef, Port, &DimSplit) -> Option<Splits>;

/// A family's rewrite of the attributes that name dims or sizes, once the op's values have
/// their expanded types (`before`: the shapes they had).
pub type ExpandRewrite =
    for<'c, 'a> fn(&'c melior::Context, OperationRef<'c, 'a>, &Splits, &Shapes);

/// The splits that expanding `port`'s `split` implies on `op` (None: `op` cannot take it and
/// keeps the value's original shape, through a reshape).
pub fn expansion(rules: &Rules, op: OperationRef, port: Port, split: &DimSplit) -> Option<Splits> {
    let (plan, _) = registered_expansion(op)?;
    let splits = plan.unwrap_or(by_rule)(rules, op, port, split)?;
    splits.contains(&(port, split.clone())).then_some(splits)
}

/// Rewrites `op`'s attributes for `splits` (its values already retyped).
pub fn expand_attributes<'c>(
    context: &'c melior::Context,
    op: OperationRef<'c, '_>,
    splits: &Splits,
    before: &Shapes,
) {
    if let Some((_, rewrite)) = registered_expansion(op) {
        rewrite(context, op, splits, before);
    }
}

/// The split of `port` among `splits`.
pub fn split_of(splits: &Splits, port: Port) -> Option<&DimSplit> {
    splits
        .iter()
        .find(|(at, _)| *at == port)
        .map(|(_, split)| split)
}

/// The dims dim `old` of `port` becomes under `splits`.
pub fn new_dims(splits: &Splits, port: Port, old: usize) -> Range<usize> {
    split_of(splits, port).map_or(old..old + 1, |split| split.new_dims(old))
}

/// The shape of `port` of `op` as it is now.
pub fn port_shape(op: OperationRef, port: Port) -> Option<Vec<i64>> {
    let ty = match port {
        Port::Operand(i) => op.operand(i).ok()?.r#type(),
        Port::Result(i) => op.result(i).ok()?.r#type(),
    };
    crate::ir::core::static_shape(ty)
}

/// The kind of the factor of `rule` indexing dim `dim` of `port`, and every value it indexes:
/// (port, its dim), each of size `size`. None when a value holds the factor on several dims or on a dim
/// of another size. What expanding and padding a dim both flow along.
pub fn factor_ports(
    rule: &crate::tmr::Rule,
    op: OperationRef,
    port: Port,
    dim: usize,
    size: i64,
) -> Option<(FactorKind, Vec<(Port, usize)>)> {
    let dims = match port {
        Port::Operand(i) => rule.operands().get(i)?,
        Port::Result(i) => rule.results().get(i)?,
    };
    let factor = dims.get(dim)?;
    let ports = (rule
        .operands()
        .iter()
        .enumerate()
        .map(|(i, d)| (Port::Operand(i), d)))
    .chain(
        rule.results()
            .iter()
            .enumerate()
            .map(|(i, d)| (Port::Result(i), d)),
    );
    let mut found = Vec::new();
    for (at, dims) in ports {
        let indexed = dims.dims_of(factor);
        if indexed.len() > 1 {
            return None;
        }
        for d in indexed {
            if port_shape(op, at)?.get(d) != Some(&size) {
                return None;
            }
            found.push((at, d));
        }
    }
    Some((rule.factor(factor).kind, found))
}

/// The default plan, read off the op's rule: the factor indexing the split dim, everywhere it
/// indexes a dim of the same size. A factor that must replicate (a slice's sliced dim) reads
/// positions, so it does not expand by default.
pub fn by_rule(rules: &Rules, op: OperationRef, port: Port, split: &DimSplit) -> Option<Splits> {
    let rule = rules.rule_for(op)?.ok()?;
    let size: i64 = split.sizes.iter().product();
    let (kind, ports) = factor_ports(&rule, op, port, split.dim, size)?;
    if kind == FactorKind::MustReplicate {
        return None;
    }
    let splits = ports
        .into_iter()
        .map(|(at, dim)| {
            let sizes = split.sizes.clone();
            (at, DimSplit { dim, sizes })
        })
        .collect();
    Some(splits)
}
