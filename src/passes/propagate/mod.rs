//! `partir-propagate{axis=A}`: spread tiling decisions through the program with the Tile
//! Mapping Registry, as rewrites of Core IR, to a fixed point per axis (DESIGN §4).
//!
//! - Forward: an op using a value tiled along A is wrapped in a loop over A, its other
//!   operands sliced as its rule says (`rewrite::wrap`).
//! - Backward: when every consumer of an op's result slices it the same way along A, the op
//!   itself is wrapped, so the slices read a tiled value.
//! - Reduction factors give `#partir.sum` loops (with the reduction's kind); slices of a tile
//!   action's view on the same axis and dim read its source (`rewrite::cancel_views`).
//! - An op is never re-partitioned along an axis it already has (earlier decisions win);
//!   conflicts stop at the op with a remark naming op, axis and reason; an op without a rule
//!   gets one warning per op name.
//!
//! Example (BP on the MLP): `x` tiled on dim 0 along batch makes `matmul(x, w1)` a batch
//! loop tiling dim 0 (w1 whole), and `matmul(transpose(h), dy)` a `#partir.sum` loop.

mod rewrite;
pub(super) mod view;

use super::{program_location, PassError, PassOptions, PassResult};
use crate::{
    ffi::{self, Severity},
    ir::{names, op_info::Rules, Mesh},
    tmr::{Conflict, ResultTiling, Rule, TileEffect},
};
use melior::{
    ir::{block::BlockLike, operation::OperationLike, OperationRef, RegionLike, Value, ValueLike},
    Context,
};
use std::collections::{HashMap, HashSet};
use view::{name_of, Consumer};

const PASS: &str = "partir-propagate";

pub fn run<'c>(
    context: &'c Context,
    module: OperationRef<'c, '_>,
    options: &PassOptions,
) -> PassResult<'c> {
    let Some((mesh, _)) = Mesh::find(module) else {
        return Err(PassError::new(
            program_location(module),
            format!(
                "{PASS}: the module declares no partir.mesh; run partir-mesh{{axes=...}} first"
            ),
        ));
    };
    let axes: Vec<(String, i64)> = match options.text("axis") {
        "" => mesh
            .axes
            .iter()
            .map(|axis| (axis.name.clone(), axis.size))
            .collect(),
        axis => {
            let size = super::mesh_axis_size(module, PASS, axis)?;
            vec![(axis.to_string(), size)]
        }
    };
    let mut propagation = Propagation::new(context);
    for func in names::functions(module) {
        for (axis, size) in &axes {
            propagation.run(func, axis, *size);
        }
    }
    Ok(())
}

/// What one propagation run remembers: the rules, and what it already reported.
pub struct Propagation<'c> {
    context: &'c Context,
    rules: Rules,
    warned_ops: HashSet<String>,
    reported: HashSet<(usize, String)>,
    /// Per run, how many ops each axis wrapped (for the schedule's summaries).
    wrapped: HashMap<String, usize>,
}

/// Why an op is not partitioned along an axis.
enum Stop {
    /// Not a propagation candidate at all (nothing to report).
    Skip,
    /// A conflict to report as a remark.
    Conflict(String),
}

impl<'c> Propagation<'c> {
    /// How many ops this run has partitioned along `axis` so far.
    pub fn wrapped_along(&self, axis: &str) -> usize {
        self.wrapped.get(axis).copied().unwrap_or(0)
    }

    /// How many conflicts this run has reported so far.
    pub fn conflicts(&self) -> usize {
        self.reported.len()
    }

    pub fn new(context: &'c Context) -> Self {
        Self {
            context,
            rules: Rules::default(),
            warned_ops: HashSet::new(),
            reported: HashSet::new(),
            wrapped: HashMap::new(),
        }
    }

    /// Propagates along `axis` in `func` to a fixed point.
    pub fn run(&mut self, func: OperationRef<'c, '_>, axis: &str, axis_size: i64) {
        loop {
            let mut changed = false;
            for op in view::payloads(func) {
                changed |= self.forward(op, axis, axis_size);
            }
            for op in view::payloads(func).into_iter().rev() {
                changed |= self.backward(op, axis, axis_size);
            }
            if !changed {
                break;
            }
        }
        rewrite::cancel_views(func, axis);
    }

    /// Wraps `op` if one of its operands is tiled along `axis` and its rule agrees.
    fn forward(&mut self, op: OperationRef<'c, '_>, axis: &str, axis_size: i64) -> bool {
        if !is_candidate(op, axis) {
            return false;
        }
        let tilings: Vec<Option<usize>> = (0..op.operand_count())
            .map(|index| view::tiling(view::operand_source(op, index).source, axis))
            .collect();
        let mut first_stop = None;
        // Of the partitionings the tiled operands ask for, the one most of them agree with
        // (ties: the first operand's): operands tiled on another factor are then gathered, so
        // the fewest are. Attention reading V tiled on its head dim and the scores tiled on
        // heads partitions on heads, as both the scores and their row sums are.
        let mut best: Option<(usize, (TileEffect, Vec<rewrite::FreshInit>))> = None;
        for (index, tiling) in tilings.iter().enumerate() {
            let Some(dim) = *tiling else {
                continue;
            };
            if view::pins(op, axis) {
                first_stop.get_or_insert(Stop::Conflict(format!(
                    "operand {index} is tiled on dim {dim} but the value is pinned to stay whole (partir.replicate)"
                )));
                break;
            }
            match self.effect(op, axis, axis_size, |rule| {
                rule.tile_operand_by(index, dim, axis_size)
            }) {
                Ok(effect) => {
                    let agreeing = effect
                        .0
                        .operands
                        .iter()
                        .zip(&tilings)
                        .filter(|(wanted, tiled)| wanted.is_some() && wanted == tiled)
                        .count();
                    if best.as_ref().is_none_or(|(most, _)| agreeing > *most) {
                        best = Some((agreeing, effect));
                    }
                }
                Err(stop) => {
                    first_stop.get_or_insert(stop);
                }
            }
        }
        if let Some((_, effect)) = best {
            self.apply(op, axis, axis_size, &effect);
            return true;
        }
        if let Some(Stop::Conflict(reason)) = first_stop {
            self.remark(op, axis, &reason);
        }
        false
    }

    /// Wraps `op` when every consumer of one of its results slices it on the same dim.
    fn backward(&mut self, op: OperationRef<'c, '_>, axis: &str, axis_size: i64) -> bool {
        if !is_candidate(op, axis) || view::pins(op, axis) {
            return false;
        }
        for index in 0..op.result_count() {
            let Some(dim) = agreed_demand(view::logical_result(op, index), axis) else {
                continue;
            };
            match self.effect(op, axis, axis_size, |rule| {
                rule.tile_result_by(index, dim, axis_size)
            }) {
                Ok(effect) => {
                    self.apply(op, axis, axis_size, &effect);
                    return true;
                }
                Err(Stop::Conflict(reason)) => self.remark(op, axis, &reason),
                Err(Stop::Skip) => {}
            }
        }
        false
    }

    /// The effect of tiling `op` as `query` asks, checked against how its operands already are.
    fn effect(
        &mut self,
        op: OperationRef<'c, '_>,
        axis: &str,
        axis_size: i64,
        query: impl FnOnce(&Rule) -> Result<TileEffect, Conflict>,
    ) -> Result<(TileEffect, Vec<rewrite::FreshInit>), Stop> {
        let registered = self.rules.rule_for(op);
        let rule = match registered {
            None => {
                let name = name_of(op);
                if self.warned_ops.insert(name.clone()) {
                    ffi::emit(
                        op.location(),
                        Severity::Warning,
                        &format!("{PASS}: no tile mapping rule for '{name}'; nothing is partitioned through it"),
                    );
                }
                return Err(Stop::Skip);
            }
            Some(Err(reason)) => {
                return Err(Stop::Conflict(format!("its rule does not apply: {reason}")))
            }
            Some(Ok(rule)) => rule,
        };
        let effect = query(&rule).map_err(|conflict| Stop::Conflict(conflict.to_string()))?;
        // `rewrite::wrap` gives the loop one result per tiling; a rule that does not describe
        // every result of the op must stop here rather than build a malformed loop.
        if effect.results.len() != op.result_count() {
            return Err(Stop::Conflict(format!(
                "its rule describes {} results but the op has {}",
                effect.results.len(),
                op.result_count()
            )));
        }
        for (index, wanted) in effect.operands.iter().enumerate() {
            let source = view::operand_source(op, index).source;
            if let (Some(wanted), Some(tiled)) = (wanted, view::tiling(source, axis)) {
                if *wanted != tiled {
                    return Err(Stop::Conflict(format!(
                        "operand {index} is tiled on dim {tiled}, but this partitioning needs it on dim {wanted}"
                    )));
                }
            }
        }
        // A partial result whose accumulator does not hold the reduction's identity (a bias
        // folded into a matmul's init by fusion) starts each iteration from the identity and
        // is combined with the accumulator once, after the loop: acc + Σ partials.
        let mut fresh_inits = Vec::new();
        for (result, tiling) in effect.results.iter().enumerate() {
            if let ResultTiling::Sum(kind) = tiling {
                if let Some(init) = rule.init_of(result) {
                    if effect.identity_inits.contains(&init)
                        && identity_fill(view::operand_source(op, init).source) != kind.identity()
                    {
                        fresh_inits.push(rewrite::FreshInit {
                            result,
                            init,
                            kind: *kind,
                        });
                    }
                }
            }
        }
        if name_of(op) == "arith.constant"
            && ffi::resplat(
                op.attribute("value").map_err(|_| Stop::Skip)?,
                op.result(0).map_err(|_| Stop::Skip)?.r#type(),
            )
            .is_none()
        {
            return Err(Stop::Conflict("only splat constants can be tiled".into()));
        }
        let _ = axis_size;
        Ok((effect, fresh_inits))
    }

    fn apply(
        &mut self,
        op: OperationRef<'c, '_>,
        axis: &str,
        axis_size: i64,
        (effect, fresh_inits): &(TileEffect, Vec<rewrite::FreshInit>),
    ) {
        rewrite::wrap(self.context, op, axis, axis_size, effect, fresh_inits);
        *self.wrapped.entry(axis.to_string()).or_default() += 1;
    }

    fn remark(&mut self, op: OperationRef, axis: &str, reason: &str) {
        if self
            .reported
            .insert((ffi::operation_id(op), axis.to_string()))
        {
            ffi::emit(
                op.location(),
                Severity::Remark,
                &format!(
                    "{PASS}: stopped at '{}' on axis '{axis}': {reason}",
                    name_of(op)
                ),
            );
        }
    }
}

/// An op propagation may partition along `axis`: it computes tensors, is not a terminator and
/// is not partitioned along `axis` yet.
fn is_candidate(op: OperationRef, axis: &str) -> bool {
    op.result_count() > 0 && name_of(op) != "func.return" && !view::nested_over(op, axis)
}

/// The dim every consumer of `value` slices it on along `axis`, if they all agree (and there
/// is at least one). A function return consumes whatever it gets.
fn agreed_demand(value: Value, axis: &str) -> Option<usize> {
    if view::tiling(value, axis).is_some() {
        return None;
    }
    let mut agreed = None;
    for consumer in view::consumers(value) {
        let demand = match consumer {
            Consumer::Payload(user, _) if name_of(user) == "func.return" => continue,
            Consumer::Payload(user, index) => {
                if !view::nested_over(user, axis) {
                    return None;
                }
                view::operand_source(user, index).sliced_dim(axis)?
            }
            Consumer::View(view_op) => match view::identity_view(view_op) {
                Some((_, dim, view_axis)) if view_axis == axis => dim,
                _ => return None,
            },
            Consumer::Opaque => return None,
        };
        if agreed.is_some_and(|dim| dim != demand) {
            return None;
        }
        agreed = Some(demand);
    }
    agreed
}

/// The scalar every element of `value` holds, when it is built as such: a `linalg.fill` of a
/// constant, a `linalg.generic` without inputs yielding one (a generalised fill), a splat
/// constant, possibly reshaped or partitioned (`%f = fill 0.0; %e = expand_shape %f` is 0.0).
fn identity_fill(value: Value) -> Option<f64> {
    let (producer, _) = view::producer(value)?;
    let constant = |scalar: Value| {
        ffi::result_owner(scalar)
            .filter(|op| name_of(*op) == "arith.constant")
            .and_then(|op| op.attribute("value").ok())
            .and_then(ffi::scalar_value)
    };
    match name_of(producer).as_str() {
        "linalg.fill" => constant(view::operand_source(producer, 0).source),
        "arith.constant" => producer.attribute("value").ok().and_then(ffi::scalar_value),
        "tensor.expand_shape" | "tensor.collapse_shape" => {
            identity_fill(view::operand_source(producer, 0).source)
        }
        "linalg.generic" => {
            let info = ffi::linalg_info(producer)?;
            let body = producer.region(0).ok()?.first_block()?;
            let terminator = body.terminator()?;
            let first = body.first_operation()?;
            // `^bb0(%out): linalg.yield %c` with %c a constant (defined in the body or above),
            // or `^bb0(%in, %out): linalg.yield %in` of a scalar input (a generalised
            // `linalg.fill`: its input mapped to `()`).
            let yielded = ffi::anchor_value(terminator.operand(0).ok()?);
            let only_yield = ffi::same_operation(first, terminator)
                || (ffi::result_owner(yielded).is_some_and(|op| ffi::same_operation(op, first))
                    && first
                        .next_in_block()
                        .is_some_and(|next| ffi::same_operation(next, terminator)));
            if producer.result_count() != 1 || !only_yield {
                return None;
            }
            let first_argument = body.argument(0).ok().map(|a| a.to_raw().ptr);
            match info.num_inputs {
                0 => constant(yielded),
                1 if first_argument == Some(yielded.to_raw().ptr)
                    && info
                        .indexing_maps
                        .first()
                        .is_some_and(|m| m.results.is_empty()) =>
                {
                    constant(view::operand_source(producer, 0).source)
                }
                _ => None,
            }
        }
        _ => None,
    }
}
