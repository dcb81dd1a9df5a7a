//! Ops that carry values through regions (`stablehlo.while`: `lax.scan`, `fori_loop`, JAX's
//! threefry): which dims of the carried values can be tiled, and the body made device-local
//! once they are.
//!
//! The analysis joins, for every op in the regions, the dims its rule's pass-through factors
//! index (union-find over (value, dim)), and ties each carry's dims together across the op's
//! operand, the regions' arguments, the body's yield and the op's result. A class of dims is
//! *blocked* when any of its dims is reduced, must stay whole, is used whole, or belongs to a
//! value the regions read from outside. Every unblocked class of carry dims is one pass-through
//! factor of the op's rule; every other carry dim must replicate. Example, `lax.scan` carrying
//! `x: [8, 4]` through `tanh(x @ w)` with `w: [4, 4]` carried too:
//!
//! ```text
//! x dim 0 ~ dot lhs dim 0 ~ dot result dim 0 ~ tanh ~ yield 0 ~ x dim 0      -> a batch factor
//! x dim 1 ~ dot lhs dim 1 (contracted: blocked)                              -> whole
//! while: ([i,_],[_,_],..) -> ([i,_],[_,_],..) replicate={...}
//! ```
//!
//! When propagation tiles the op, [`localize`] divides every dim of the tiled class inside the
//! regions and lets each op fix its size attributes ([`super::retype`]).

use super::{Rules, Shapes};
use crate::{
    ffi,
    ir::core::{static_shape, with_dim},
    tmr::{FactorKind, ReductionKind, Rule, TensorDims},
};
use melior::ir::{
    block::BlockLike, operation::OperationLike, BlockRef, OperationRef, RegionLike, Value,
    ValueLike,
};
use std::collections::{HashMap, HashSet};

use super::sums::partials;

/// Union-find over (value, dim) of the values in and around a region op.
pub(crate) struct Classes {
    parent: Vec<usize>,
    pub(crate) blocked: Vec<bool>,
    /// The gcd of the factor sizes joined in a class (every one must divide by the parts).
    pub(super) divides: Vec<i64>,
    node_of: HashMap<(usize, usize), usize>,
    /// Per op in the regions (by id), the nodes of its operands that a reduction factor of
    /// its rule sums (or otherwise reduces) over, with the kind: tiling their class leaves
    /// the op's results partial.
    pub(crate) reductions: HashMap<usize, Vec<(ReductionKind, usize)>>,
}

impl Classes {
    pub(super) fn new() -> Self {
        Self {
            parent: Vec::new(),
            blocked: Vec::new(),
            divides: Vec::new(),
            node_of: HashMap::new(),
            reductions: HashMap::new(),
        }
    }

    pub(crate) fn node(&mut self, value: Value, dim: usize) -> usize {
        let key = (ffi::value_id(value), dim);
        if let Some(&node) = self.node_of.get(&key) {
            return node;
        }
        let node = self.parent.len();
        self.parent.push(node);
        self.blocked.push(false);
        let size = static_shape(value.r#type())
            .and_then(|shape| shape.get(dim).copied())
            .unwrap_or(0);
        self.divides.push(size);
        self.node_of.insert(key, node);
        node
    }

    pub(crate) fn find(&mut self, node: usize) -> usize {
        let mut root = node;
        while self.parent[root] != root {
            root = self.parent[root];
        }
        let mut at = node;
        while self.parent[at] != root {
            let next = self.parent[at];
            self.parent[at] = root;
            at = next;
        }
        root
    }

    pub(super) fn join(&mut self, a: usize, b: usize) {
        let (a, b) = (self.find(a), self.find(b));
        if a != b {
            self.parent[b] = a;
            self.blocked[a] |= self.blocked[b];
            self.divides[a] = gcd(self.divides[a], self.divides[b]);
        }
    }

    pub(super) fn block(&mut self, node: usize) {
        let root = self.find(node);
        self.blocked[root] = true;
    }

    fn limit(&mut self, node: usize, size: i64) {
        let root = self.find(node);
        self.divides[root] = gcd(self.divides[root], size);
    }

    pub(super) fn block_value(&mut self, value: Value) {
        for dim in 0..rank(value) {
            let node = self.node(value, dim);
            self.block(node);
        }
    }

    /// Ties every dim of `yielded` to the same dim of `to` (a region's yield and the value it
    /// becomes); a yield of another rank is used whole.
    pub(super) fn tie(&mut self, yielded: Value, to: Value) {
        if rank(yielded) != rank(to) {
            self.block_value(yielded);
            return;
        }
        for dim in 0..rank(yielded) {
            let (a, b) = (self.node(yielded, dim), self.node(to, dim));
            self.join(a, b);
        }
    }
}

fn gcd(a: i64, b: i64) -> i64 {
    if b == 0 {
        a.abs()
    } else {
        gcd(b, a % b)
    }
}

pub(crate) fn rank(value: Value) -> usize {
    static_shape(value.r#type()).map_or(0, |shape| shape.len())
}

/// The entry blocks of `op`'s regions.
pub(crate) fn blocks<'c, 'a>(op: OperationRef<'c, 'a>) -> Vec<BlockRef<'c, 'a>> {
    op.regions()
        .filter_map(|region| region.first_block())
        .collect()
}

pub(crate) fn ops_of<'c, 'a>(block: BlockRef<'c, 'a>) -> Vec<OperationRef<'c, 'a>> {
    let mut ops = Vec::new();
    let mut next = block.first_operation();
    while let Some(op) = next {
        ops.push(op);
        next = op.next_in_block();
    }
    ops
}

/// The classes of dims of a carrying op (`carries` values: operand i, each region's argument
/// i, the yielded i of the regions in `yielding` and result i are one value carried around).
pub(crate) fn classes(
    op: OperationRef,
    rules: &Rules,
    carries: usize,
    yielding: &[usize],
) -> Classes {
    let mut classes = Classes::new();
    let inside = values_under(op);
    for i in 0..carries {
        let (Ok(operand), Ok(result)) = (op.operand(i), op.result(i)) else {
            continue;
        };
        for dim in 0..rank(operand) {
            let (a, b) = (classes.node(operand, dim), classes.node(result.into(), dim));
            classes.join(a, b);
        }
    }
    for (region, block) in blocks(op).into_iter().enumerate() {
        for i in 0..carries.min(block.argument_count()) {
            let (Ok(argument), Ok(operand)) = (block.argument(i), op.operand(i)) else {
                continue;
            };
            for dim in 0..rank(argument.into()) {
                let (a, b) = (
                    classes.node(argument.into(), dim),
                    classes.node(operand, dim),
                );
                classes.join(a, b);
            }
        }
        for inner in ops_of(block) {
            if inner.next_in_block().is_none() {
                if !yielding.contains(&region) {
                    // A condition's predicate: whatever it reads is used whole.
                    for value in inner.operands() {
                        classes.block_value(value);
                    }
                    continue;
                }
                for i in 0..inner.operand_count().min(carries) {
                    if let (Ok(yielded), Ok(operand)) = (inner.operand(i), op.operand(i)) {
                        classes.tie(yielded, operand);
                    }
                }
                continue;
            }
            join_by_rule(&mut classes, inner, rules, &inside);
        }
    }
    classes
}

/// The ids of the values defined in `op`'s regions (its own results too): results of the ops
/// nested in it and arguments of their blocks.
pub(super) fn values_under(op: OperationRef) -> HashSet<usize> {
    let mut inside = HashSet::new();
    ffi::walk(op, |inner| {
        for result in inner.results() {
            inside.insert(ffi::value_id(result.into()));
        }
        for block in inner.regions().flat_map(crate::ir::region_blocks) {
            for index in 0..block.argument_count() {
                if let Ok(argument) = block.argument(index) {
                    inside.insert(ffi::value_id(argument.into()));
                }
            }
        }
    });
    inside
}

/// Joins the dims `op`'s rule ties together, and blocks what it reduces, keeps whole or reads
/// from outside the carrying op.
pub(super) fn join_by_rule(
    classes: &mut Classes,
    op: OperationRef,
    rules: &Rules,
    inside: &HashSet<usize>,
) {
    let operands: Vec<Value> = op.operands().collect();
    let results: Vec<Value> = op.results().map(Value::from).collect();
    for &operand in &operands {
        if !inside.contains(&ffi::value_id(operand)) {
            classes.block_value(operand);
        }
    }
    // Values read inside the op's own regions (a nested case's branches) are used whole.
    for region in op.regions() {
        if let Some(block) = region.first_block() {
            for nested in ops_of(block) {
                ffi::walk(nested, |deep| {
                    for value in deep.operands() {
                        if inside.contains(&ffi::value_id(value)) && !defined_under(value, op) {
                            classes.block_value(value);
                        }
                    }
                });
            }
        }
    }
    // No rule, or a nested loop that leaves some of its results partial (which this analysis
    // does not follow through a second loop): everything it touches is used whole.
    let rule = match rules.rule_for(op) {
        Some(Ok(rule)) if rule.partial_results.is_empty() => rule,
        _ => {
            for value in operands.iter().chain(&results) {
                classes.block_value(*value);
            }
            return;
        }
    };
    let tensors = rule
        .operands()
        .iter()
        .zip(&operands)
        .chain(rule.results().iter().zip(&results));
    let mut by_factor: HashMap<usize, Vec<usize>> = HashMap::new();
    for (dims, &value) in tensors {
        for dim in 0..rank(value) {
            let node = classes.node(value, dim);
            match dims.get(dim) {
                Some(factor) => by_factor.entry(factor.0).or_default().push(node),
                None if size_of(value, dim) != 1 => classes.block(node),
                None => {}
            }
        }
    }
    for (factor, nodes) in by_factor {
        let factor = &rule.factors()[factor];
        for &node in &nodes {
            classes.limit(node, factor.size);
            match factor.kind {
                FactorKind::PassThrough => {}
                // Whether the partial results it leaves can be carried is decided per class
                // ([`partials`]).
                FactorKind::Reduction(kind) => classes
                    .reductions
                    .entry(ffi::operation_id(op))
                    .or_default()
                    .push((kind, node)),
                // A loop body's halo would need a permute per iteration: kept whole.
                FactorKind::MustReplicate | FactorKind::Moved => classes.block(node),
            }
            classes.join(nodes[0], node);
        }
    }
}

pub(super) fn size_of(value: Value, dim: usize) -> i64 {
    static_shape(value.r#type())
        .and_then(|shape| shape.get(dim).copied())
        .unwrap_or(0)
}

/// Whether `value` is defined inside `op` (a result of an op nested in it, or an argument of
/// one of its blocks).
pub fn defined_under(value: Value, op: OperationRef) -> bool {
    let owner = ffi::result_owner(value)
        .and_then(|owner| owner.parent_operation())
        .or_else(|| ffi::argument_owner(value).and_then(|block| block.parent_operation()));
    let mut at = owner;
    while let Some(parent) = at {
        if parent == op {
            return true;
        }
        at = parent.parent_operation();
    }
    false
}

/// The rule of an op carrying its first `carries` operands through its regions into its
/// results (its other operands, if any, used whole): one pass-through factor per unblocked
/// class of carried dims, the other dims must replicate.
pub fn carried_rule(
    op: OperationRef,
    rules: &Rules,
    carries: usize,
    yielding: &[usize],
) -> Result<Rule, String> {
    let mut classes = classes(op, rules, carries, yielding);
    // The carries each class leaves partial when tiled; a class whose sums cannot be carried
    // is blocked.
    let mut partial_of: HashMap<usize, Vec<usize>> = HashMap::new();
    for i in 0..carries {
        let Ok(value) = op.operand(i) else { continue };
        for dim in 0..rank(value) {
            let node = classes.node(value, dim);
            let root = classes.find(node);
            if classes.blocked[root] || partial_of.contains_key(&root) {
                continue;
            }
            let reduces = classes
                .reductions
                .values()
                .flatten()
                .map(|&(_, n)| n)
                .collect::<Vec<_>>();
            let touched = reduces.into_iter().any(|n| classes.find(n) == root);
            match if touched {
                partials(op, &mut classes, root, carries)
            } else {
                Some(Vec::new())
            } {
                Some(found) => {
                    partial_of.insert(root, found);
                }
                None => classes.blocked[root] = true,
            }
        }
    }
    let mut rule = Rule::new();
    let mut factor_of: HashMap<usize, crate::tmr::FactorId> = HashMap::new();
    let mut operands = Vec::new();
    for i in 0..carries {
        let value = op.operand(i).map_err(|_| format!("no operand {i}"))?;
        operands.push(factor_dims(&mut classes, value, &mut rule, &mut factor_of));
    }
    for dims in &operands {
        rule.push_operand(dims.clone());
    }
    let extra: Vec<usize> = op.operands().skip(carries).map(rank).collect();
    let mut rule = rule.with_whole_operands(&extra).with_invariant_results();
    for (i, dims) in operands.into_iter().enumerate() {
        rule.push_result(dims);
        rule.set_init(i, i);
    }
    for (root, factor) in factor_of {
        for &carry in partial_of.get(&root).into_iter().flatten() {
            rule = rule.with_partial_result(factor, carry, ReductionKind::Sum);
        }
    }
    Ok(rule)
}

/// The dims of `value` as factors of `rule`: one pass-through factor per unblocked class (the
/// same for every value the class reaches), the other dims whole. A class reaching two dims of
/// one value (a transpose in the body) cannot be one tile of it.
pub(super) fn factor_dims(
    classes: &mut Classes,
    value: Value,
    rule: &mut Rule,
    factor_of: &mut HashMap<usize, crate::tmr::FactorId>,
) -> TensorDims {
    let mut dims = TensorDims::unindexed(rank(value));
    let mut seen = HashSet::new();
    for dim in 0..rank(value) {
        let node = classes.node(value, dim);
        let root = classes.find(node);
        let factor = if classes.blocked[root] || !seen.insert(root) {
            rule.add_factor(size_of(value, dim), FactorKind::MustReplicate)
        } else {
            *factor_of.entry(root).or_insert_with(|| {
                rule.add_factor(classes.divides[root].max(1), FactorKind::PassThrough)
            })
        };
        dims.0[dim] = Some(factor);
    }
    dims
}

/// After propagation gave a carrying op its local operand and result types, divides the dims
/// of the tiled class everywhere in its regions, and lets every op whose types changed fix its
/// size attributes. `before`: the op's shapes before.
pub fn localize<'c>(
    context: &'c melior::Context,
    op: OperationRef<'c, '_>,
    before: &Shapes,
    carries: usize,
    yielding: &[usize],
) {
    let rules = Rules::default();
    let mut classes = classes(op, &rules, carries, yielding);
    let inputs: Vec<(Value, Vec<i64>, &Vec<i64>)> = (0..carries)
        .filter_map(|i| {
            let operand = op.operand(i).ok()?;
            Some((operand, shape_of(operand), before.operands.get(i)?))
        })
        .collect();
    divide_regions(context, op, &mut classes, &inputs);
}

/// `value`'s static shape (empty when it has none).
pub(super) fn shape_of(value: Value) -> Vec<i64> {
    static_shape(value.r#type()).unwrap_or_default()
}

/// Divides the dims of every class an input's new shape split (each input with its new shape and
/// the shape it had) everywhere in `op`'s regions, then lets each op whose types changed fix its
/// attributes.
pub(super) fn divide_regions<'c>(
    context: &'c melior::Context,
    op: OperationRef<'c, '_>,
    classes: &mut Classes,
    inputs: &[(Value, Vec<i64>, &Vec<i64>)],
) {
    // The tiled classes, and how many parts each dim of them is in.
    let mut parts: HashMap<usize, i64> = HashMap::new();
    for (input, new, old) in inputs {
        let input = *input;
        for (dim, (&was, &is)) in old.iter().zip(new).enumerate() {
            if was != is && is > 0 {
                let node = classes.node(input, dim);
                let root = classes.find(node);
                parts.insert(root, was / is);
            }
        }
    }
    if parts.is_empty() {
        return;
    }
    let shape_of = |value: Value| static_shape(value.r#type()).unwrap_or_default();
    // A capture keeps its global type until the op reads its local slice (after this): what
    // an op inside reads of it is the local shape (a gather of a captured table split on its
    // row width reads rows of the local width).
    let captured: HashMap<usize, &Vec<i64>> = inputs
        .iter()
        .filter(|(input, _, _)| !defined_under(*input, op))
        .map(|(input, local, _)| (crate::ffi::value_id(*input), local))
        .collect();
    let mut retyped = Vec::new();
    for block in blocks(op) {
        for index in 0..block.argument_count() {
            let Ok(argument) = block.argument(index) else {
                continue;
            };
            divide(classes, argument.into(), &parts);
        }
        for inner in ops_of(block) {
            let shapes = Shapes {
                operands: inner.operands().map(shape_of).collect(),
                results: inner.results().map(|r| shape_of(r.into())).collect(),
                local_inputs: Vec::new(),
            };
            let reads_capture = inner
                .operands()
                .any(|value| captured.contains_key(&crate::ffi::value_id(value)));
            let mut changed = false;
            for result in inner.results() {
                changed |= divide(classes, result.into(), &parts);
            }
            retyped.push((inner, shapes, changed, reads_capture));
        }
    }
    // Sizes in attributes are fixed once every type is local (an op reads its operands'
    // new types): ops whose operands or results changed.
    for (inner, mut shapes, changed, reads_capture) in retyped {
        let operands_changed = inner
            .operands()
            .map(shape_of)
            .zip(&shapes.operands)
            .any(|(now, was)| &now != was);
        if reads_capture {
            shapes.local_inputs = inner
                .operands()
                .map(|value| {
                    captured
                        .get(&crate::ffi::value_id(value))
                        .map_or_else(|| shape_of(value), |local| (*local).clone())
                })
                .collect();
        }
        if changed || operands_changed {
            super::retype(context, inner, &shapes);
        }
    }
}

/// Divides every dim of `value` in a tiled class; whether its type changed.
fn divide(classes: &mut Classes, value: Value, parts: &HashMap<usize, i64>) -> bool {
    let mut ty = value.r#type();
    let mut changed = false;
    for dim in 0..rank(value) {
        let node = classes.node(value, dim);
        let root = classes.find(node);
        if let Some(&n) = parts.get(&root) {
            let size = size_of(value, dim);
            if n > 1 && size % n == 0 {
                ty = with_dim(ty, dim, size / n);
                changed = true;
            }
        }
    }
    if changed {
        value.set_type(ty);
    }
    changed
}
