//! `partir-propagate{axis=A}`: spread tiling decisions through the program with the Tile
//! Mapping Registry, as rewrites of Core IR, to a fixed point per axis (docs/design.md#propagation).
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

mod body;
mod elementwise;
mod explain;
mod grow;
mod moved;
mod readers;
mod rewrite;
mod rotate;
pub(super) mod view;

use super::{
    names::PROPAGATE as PASS, options::PropagateOptions, program_location, PassError, PassResult,
};
use crate::{
    ffi::{self, Severity},
    ir::{func::is_return, names, Mesh},
    rules::{self, Fill, Rules},
    schedule::Reach,
    tmr::{Conflict, ResultTiling, Rule, TileEffect},
};
use elementwise::is_elementwise;
use explain::{explain_operand, explain_result};
use melior::{
    ir::{operation::OperationLike, OperationRef, Value},
    Context,
};
use std::collections::{HashMap, HashSet};
use view::Consumer;

pub fn run<'c>(
    context: &'c Context,
    module: OperationRef<'c, '_>,
    options: &PropagateOptions,
) -> PassResult<'c> {
    let Some((mesh, _)) = Mesh::find(module) else {
        return Err(PassError::new(
            program_location(module),
            format!(
                "{PASS}: the module declares no partir.mesh; run partir-mesh{{axes=...}} first"
            ),
        ));
    };
    let axes: Vec<(String, i64)> = match options.axis.as_str() {
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
    let reach = Reach::parse(&options.reach).map_err(|error| {
        PassError::new(program_location(module), format!("{PASS}: reach={error}"))
    })?;
    let mut propagation = Propagation::new(context);
    for func in names::functions(module) {
        for (axis, size) in &axes {
            propagation.run(func, axis, *size, reach);
        }
    }
    Ok(())
}

/// Per axis, per value (`ffi::value_id`), the dims a later tactic of the schedule tiles it
/// on along that axis.
pub type LaterSplits = HashMap<String, HashMap<usize, HashSet<usize>>>;

/// What one propagation run remembers: the rules, and what it already reported.
pub struct Propagation<'c> {
    context: &'c Context,
    rules: Rules,
    warned_ops: HashSet<String>,
    reported: HashSet<(usize, String)>,
    /// Per run, how many ops each axis wrapped (for the schedule's summaries).
    wrapped: HashMap<String, usize>,
    /// How far the current run spreads tilings.
    reach: Reach,
    /// Every stop reported, in order (what the command line and the JSON report show).
    stops: Vec<crate::sim::report::PropagationStop>,
    /// The rules of ops with regions (a `while` over a scanned layer, a `case`), read off their
    /// bodies once per op rather than at every query: propagation never changes an op's
    /// regions, and an op it wraps is erased, so its entry is dropped then (`apply`). Scanned
    /// LLaMA's BP went from 3.3 s to 0.4 s.
    region_rules: HashMap<usize, Option<Result<Rule, String>>>,
    /// Whether the last op wrapped had a body propagation looks into, or an op was erased
    /// (see `run`).
    erased_body: bool,
    /// Per axis, the values later tactics of the schedule tile along it (see `body.rs`).
    later: LaterSplits,
    /// The mesh's axis sizes (read in `run`).
    axis_sizes: HashMap<String, i64>,
}

pub use crate::sim::report::STOP_DETAIL;
pub(crate) use body::carried_body;

/// Why an op is not partitioned along an axis.
enum Stop {
    /// Not a propagation candidate at all (nothing to report).
    Skip,
    /// A conflict to report as a remark.
    Conflict(String),
}

impl Stop {
    /// A conflict with what it means at this place appended.
    fn explained(self, detail: impl FnOnce() -> String) -> Self {
        match self {
            Stop::Conflict(reason) => Stop::Conflict(format!("{reason}{STOP_DETAIL}{}", detail())),
            skip => skip,
        }
    }
}

impl<'c> Propagation<'c> {
    /// Says which values later tactics tile along which axes (`schedule.rs`).
    pub fn split_later(&mut self, later: LaterSplits) {
        self.later = later;
    }

    /// How many ops this run has partitioned along `axis` so far.
    pub fn wrapped_along(&self, axis: &str) -> usize {
        self.wrapped.get(axis).copied().unwrap_or(0)
    }

    /// How many conflicts this run has reported so far.
    pub fn conflicts(&self) -> usize {
        self.reported.len()
    }

    /// The stops reported since the `from`-th.
    pub fn stops_from(&self, from: usize) -> &[crate::sim::report::PropagationStop] {
        self.stops.get(from..).unwrap_or_default()
    }

    /// How many stops this run has reported so far.
    pub fn stop_count(&self) -> usize {
        self.stops.len()
    }

    pub fn new(context: &'c Context) -> Self {
        Self {
            context,
            rules: Rules::default(),
            warned_ops: HashSet::new(),
            reported: HashSet::new(),
            wrapped: HashMap::new(),
            reach: Reach::All,
            stops: Vec::new(),
            region_rules: HashMap::new(),
            erased_body: false,
            later: HashMap::new(),
            axis_sizes: HashMap::new(),
        }
    }

    /// Propagates along `axis` in `func` to a fixed point, through the ops `reach` allows.
    pub fn run(&mut self, func: OperationRef<'c, '_>, axis: &str, axis_size: i64, reach: Reach) {
        self.reach = reach;
        if let Some((mesh, _)) = func.parent_operation().and_then(Mesh::find) {
            self.axis_sizes = mesh
                .axes
                .iter()
                .map(|axis| (axis.name.clone(), axis.size))
                .collect();
        }
        loop {
            let mut changed = false;
            // Wrapping a loop op erases it and the ops of its body, which the list holds
            // (`view::payloads` looks into bodies): the sweep then starts again.
            for op in view::payloads(func) {
                changed |= self.forward(op, axis, axis_size);
                if std::mem::take(&mut self.erased_body) {
                    break;
                }
            }
            for op in view::payloads(func).into_iter().rev() {
                changed |= self.backward(op, axis, axis_size);
                if std::mem::take(&mut self.erased_body) {
                    break;
                }
            }
            if !changed {
                break;
            }
        }
        rewrite::cancel_views(func, axis);
        super::dead_code::erase(func);
    }

    /// Wraps `op` if one of its operands is tiled along `axis` and its rule agrees.
    fn forward(&mut self, op: OperationRef<'c, '_>, axis: &str, axis_size: i64) -> bool {
        if !is_candidate(op, axis) {
            return false;
        }
        if self.rotated(op, axis, axis_size) {
            return true;
        }
        // A value an op's regions read from above (`lax.cond`'s branches capture theirs) is
        // not an operand the op can be given a slice of: it is read whole (gathered), which
        // is said here rather than left to the lowering.
        let takes_captures = crate::rules::takes_captures(op);
        if let Some((value, dim)) = view::captured_tiling(op, axis).filter(|_| !takes_captures) {
            let reason = format!(
                "its regions read a value from above (not an operand) that is split on dim {dim} along '{axis}'; partir does not slice captured values, so the op runs whole and reads it gathered{STOP_DETAIL}the captured value derives from {}",
                names::derived_from(value, 3).join(", ")
            );
            self.remark(op, axis, &reason);
            return false;
        }
        let inputs = if takes_captures {
            crate::rules::inputs(op).len()
        } else {
            op.operand_count()
        };
        let carries = body::carried_body(op).is_some();
        let tilings: Vec<Option<usize>> = (0..inputs)
            .map(|index| {
                let source = view::operand_source(op, index).source;
                if carries {
                    view::carried_tiling(source, axis)
                } else {
                    view::tiling(source, axis)
                }
            })
            .collect();
        let mut first_stop = None;
        // Of the partitionings the tiled operands ask for, the one most of them agree with:
        // operands tiled on another factor are then moved, so the fewest are. Attention
        // reading V tiled on its head dim and the scores tiled on heads partitions on heads, as
        // both the scores and their row sums are. Ties: the one that moves the fewest bytes
        // ([`moved::moved_bytes`]; then the first operand's): multi-query attention's probs . V, probs
        // split on heads (32 KiB) and the single V head split on its dim (8 KiB), gathers V.
        let mut best: Option<(usize, f64, (TileEffect, Vec<rewrite::FreshInit>))> = None;
        for (index, tiling) in tilings.iter().enumerate() {
            let Some(dim) = *tiling else {
                continue;
            };
            if view::pins(op, axis) {
                first_stop.get_or_insert(Stop::Conflict(format!(
                    "operand {index} is tiled on dim {dim} but the value is pinned to stay whole (partir.replicate){STOP_DETAIL}{}",
                    explain_operand(op, index, dim, axis, axis_size)
                )));
                break;
            }
            match self
                .effect(op, axis, axis_size, Some(index), |rule| {
                    rule.tile_operand_by(index, dim, axis_size)
                })
                .map_err(|stop| {
                    explain(op, stop, || {
                        explain_operand(op, index, dim, axis, axis_size)
                    })
                }) {
                Ok(effect) => {
                    let agreeing = effect
                        .0
                        .operands
                        .iter()
                        .zip(&tilings)
                        .filter(|(wanted, tiled)| wanted.is_some() && wanted == tiled)
                        .count();
                    let moved = moved::moved_bytes(op, &effect.0, &tilings, axis_size);
                    let better = best.as_ref().is_none_or(|(most, least, _)| {
                        agreeing > *most || (agreeing == *most && moved < *least)
                    });
                    if better {
                        best = Some((agreeing, moved, effect));
                    }
                }
                Err(stop) => {
                    first_stop.get_or_insert(stop);
                }
            }
        }
        if let Some((_, _, effect)) = best {
            self.apply(op, axis, axis_size, &effect);
            return true;
        }
        // A slice whose result the axis does not divide grows it, padded, and is erased: the
        // sweep starts again.
        if self.reach == Reach::All
            && grow::grow_moved_result(self.context, &self.rules, op, &tilings, axis, axis_size)
        {
            self.erased_body = true;
            return true;
        }
        // A loop that cannot be tiled whole is partitioned inside its body (`body.rs`).
        if body::carried_body(op).is_some() {
            let entered = self.enter_body(op, &tilings, axis, axis_size)
                | self.enter_split_reads(op, axis, axis_size);
            return self.exit_body(op, axis, axis_size) || entered;
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
        if crate::rules::rotation::rotation(op).is_some() && self.rotated(op, axis, axis_size) {
            return true;
        }
        for index in 0..op.result_count() {
            let Some(dim) = agreed_demand(view::logical_result(op, index), axis) else {
                continue;
            };
            match self
                .effect(op, axis, axis_size, None, |rule| {
                    rule.tile_result_by(index, dim, axis_size)
                })
                .map_err(|stop| {
                    explain(op, stop, || explain_result(op, index, dim, axis, axis_size))
                }) {
                Ok(effect) => {
                    self.apply(op, axis, axis_size, &effect);
                    return true;
                }
                // A loop that cannot be tiled whole is partitioned inside its body (or is
                // already, or its body only hands the carry on).
                Err(Stop::Conflict(_)) if body::carried_body(op).is_some() => {
                    if self.enter_carry(op, index, dim, axis, axis_size) {
                        return true;
                    }
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
        driver: Option<usize>,
        query: impl FnOnce(&Rule) -> Result<TileEffect, Conflict>,
    ) -> Result<(TileEffect, Vec<rewrite::FreshInit>), Stop> {
        let registered = if op.region_count() > 0 {
            self.region_rules
                .entry(ffi::operation_id(op))
                .or_insert_with(|| self.rules.rule_for(op))
                .clone()
        } else {
            self.rules.rule_for(op)
        };
        if body::entered(op) {
            return Err(Stop::Conflict(
                "its body is partitioned inside already".to_string(),
            ));
        }
        if self.carries_later_split(op, axis) {
            return Err(Stop::Conflict(format!(
                "a later tactic splits what it carries along '{axis}'"
            )));
        }
        let rule = match registered {
            None => {
                let name = crate::rules::describe(op);
                if self.warned_ops.insert(name.clone()) {
                    let hint = match name.split_once(" @") {
                        Some((_, target)) => format!(
                            " (a schedule's [rules] table gives one: \"{target}\" = \"<einsum>\")"
                        ),
                        None => String::new(),
                    };
                    ffi::emit(
                        op.location(),
                        Severity::Warning,
                        &format!("{PASS}: no tile mapping rule for '{name}'; nothing is partitioned through it{hint}"),
                    );
                }
                return Err(Stop::Skip);
            }
            Some(Err(reason)) => {
                return Err(Stop::Conflict(format!("its rule does not apply: {reason}")))
            }
            Some(Ok(rule)) => {
                let name = crate::rules::describe(op);
                if crate::rules::is_sharding_annotation(op) && self.warned_ops.insert(name.clone())
                {
                    ffi::emit(
                        op.location(),
                        Severity::Warning,
                        &format!("{PASS}: '{name}' is a sharding annotation; partir passes values through it and the schedule decides"),
                    );
                }
                rule
            }
        };
        // Reaching elementwise ops only, an op the rule cannot split is simply not reached:
        // it reads the value whole (ZeRO gathers it), no conflict to report.
        let elementwise = self.reach == Reach::Elementwise;
        // A source (an iota, a constant, random bits: no dim of it comes from an operand)
        // that cannot be made in chunks is made whole on every device, and each consumer
        // takes its chunk locally (an all_slice, no communication): nothing to report.
        let source = driver.is_none()
            && rule
                .operands()
                .iter()
                .all(|dims| dims.0.iter().all(Option::is_none));
        let effect = query(&rule).map_err(|conflict| {
            if elementwise || source {
                Stop::Skip
            } else {
                Stop::Conflict(conflict.to_string())
            }
        })?;
        if elementwise && !is_elementwise(op, &rule, &effect, driver) {
            return Err(Stop::Skip);
        }
        // `rewrite::wrap` gives the loop one result per tiling; a rule that does not describe
        // every result of the op must stop here rather than build a malformed loop.
        if effect.results.len() != op.result_count() {
            return Err(Stop::Conflict(format!(
                "its rule describes {} results but the op has {}",
                effect.results.len(),
                op.result_count()
            )));
        }
        readers::check_split(op, &effect, axis, axis_size, &self.axis_sizes)
            .map_err(Stop::Conflict)?;
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
        // A fresh accumulator is built with linalg ops: other dialects' ops need theirs to be
        // the identity already (JAX's scatter-add into zeros is).
        if !fresh_inits.is_empty() && !rules::fresh_accumulator(op) {
            return Err(Stop::Conflict(
                "its accumulator is not the identity of the reduction it would be split into"
                    .into(),
            ));
        }
        // A source whose local form cannot be made (a constant that is not a splat) is made
        // whole and sliced where used, as above: not a stop.
        rules::tileable(op).map_err(|reason| {
            if source {
                Stop::Skip
            } else {
                Stop::Conflict(reason)
            }
        })?;
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
        self.region_rules.remove(&ffi::operation_id(op));
        self.erased_body |= body::carried_body(op).is_some();
        rewrite::wrap(self.context, op, axis, axis_size, effect, fresh_inits);
        *self.wrapped.entry(axis.to_string()).or_default() += 1;
    }

    fn remark(&mut self, op: OperationRef, axis: &str, reason: &str) {
        if self
            .reported
            .insert((ffi::operation_id(op), axis.to_string()))
        {
            let (why, detail) = reason.split_once(STOP_DETAIL).unwrap_or((reason, ""));
            let stop = crate::sim::report::PropagationStop::new(
                crate::ir::location::describe(op.location(), ""),
                crate::rules::describe(op),
                axis.to_string(),
                why.to_string(),
                detail.to_string(),
            );
            ffi::emit(
                op.location(),
                Severity::Remark,
                &format!("{PASS}: {}", stop.message),
            );
            self.stops.push(stop);
        }
    }
}

/// `stop` with what it means at `op` appended, but at a loop propagation partitions inside
/// instead of stopping (`body.rs`): the explanation walks the values the op derives from,
/// which for a scan is most of the program, at every query.
fn explain(op: OperationRef, stop: Stop, detail: impl FnOnce() -> String) -> Stop {
    if body::carried_body(op).is_some() {
        stop
    } else {
        stop.explained(detail)
    }
}

/// An op propagation may partition along `axis`: it computes tensors, is not a terminator and
/// is not partitioned along `axis` yet.
fn is_candidate(op: OperationRef, axis: &str) -> bool {
    op.result_count() > 0 && !is_return(op) && !view::nested_over(op, axis)
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
            Consumer::Payload(user, _) if is_return(user) => continue,
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

/// The scalar every element of `value` holds, when it is built as such (its producer's
/// [`rules::fill`]): a `linalg.fill` of a constant, a `linalg.generic` without inputs yielding
/// one (a generalised fill), a splat constant, possibly reshaped or partitioned
/// (`%f = fill 0.0; %e = expand_shape %f` is 0.0).
fn identity_fill(value: Value) -> Option<f64> {
    let (producer, _) = view::producer(value)?;
    match rules::fill(producer)? {
        Fill::Scalar(scalar) => Some(scalar),
        Fill::Operand(index) => identity_fill(view::operand_source(producer, index).source),
    }
}
