//! The Tile Mapping Registry: every op's rule, in one place. One entry per op or op family
//! reads the op's own attributes and builds its rule from [`crate::tmr`]'s vocabulary (as
//! Shardy's `op_sharding_rule_registry.cc` does), so one hop finds any op's rule:
//!
//! | ops | entry |
//! |---|---|
//! | any op implementing linalg's `LinalgOp` (named, generic, fill, transpose, reduce, ...) | [`linalg`] |
//! | `tensor.*` (empty, expand/collapse_shape, extract/insert_slice, concat, pad) | [`tensor`] |
//! | `tosa.*` (elementwise, matmul, transpose, reshape, reduce_*) | [`tosa`] |
//! | elementwise `arith.*` / `math.*`, `arith.constant` | [`arith`] |
//! | `stablehlo.*` (generic form in a stock mlir-opt, or registered), `chlo` elementwise | [`stablehlo`] |
//! | `func.return`, `partir.replicate`, `partir.permute` | [`Rules::default`] below |
//! | ops registered at run time in einsum notation (C API) | [`register_einsum_rule`] |
//!
//! Adding an op is adding an entry; adding an array dialect is adding a file of entries. A
//! family's file also holds the rest of its ops' model ([`model`]): what they need once
//! propagation gives them local shapes ([`retype`]: attributes that spell out a size, a
//! slice's sizes, a splat constant's value), how the simulator counts them ([`cost`]), what
//! they fill ([`fill`]), whether they only re-lay out data ([`is_layout`]), and so on. That
//! file is the seam an array dialect plugs into, and the only place that decides anything by
//! an op's name: passes ask the model's queries.

mod arith;
pub(crate) mod branches;
pub mod expand;
mod linalg;
mod linalg_pad;
mod model;
pub mod pad;
pub mod pipeline;
pub mod regions;
pub mod rotation;
mod stablehlo;
pub use stablehlo::owns as is_stablehlo;
mod sums;
mod tensor;
#[cfg(test)]
mod tests;
mod tosa;

pub use model::{
    block_access, broadcasts_scalars, canonicalize, carried_body, cost, fill, filled_with,
    fresh_accumulator, fusion, inputs, is_empty, is_layout, is_multiply, is_pure,
    is_row_major_reshape, layout_source_dim, linear, linear_in_loop_sums, per_value, pipeline_loop,
    retype, takes_captures, tileable, trip_count, zero_padding, Canonicalize, Cost, Fill, FillOf,
    Fusion, Linear, LinearIn, Padding, Remake, Retype, ScalarBroadcast, Shapes, SourceDim,
    Tileable, TripCount, ZeroPadding,
};

use crate::{
    ffi,
    ir::{
        core::{PERMUTE_OP, REPLICATE_OP},
        func::RETURN_OP,
    },
    tmr::{FactorKind, Rule, TensorDims, DYNAMIC},
};
use melior::ir::{
    attribute::{DenseI32ArrayAttribute, DenseI64ArrayAttribute, IntegerAttribute},
    operation::OperationLike,
    OperationRef, Type, ValueLike,
};
use model::Entries;
use std::{
    collections::HashMap,
    sync::{LazyLock, Mutex},
};

/// An entry: builds the rule of one op (the message says why an op has none, e.g. a reshape
/// that is not a merge or split of dims).
pub type Entry = fn(&OpView) -> Result<Rule, String>;

/// What an entry reads: the op, its name, and its operand and result shapes (non-tensors are
/// rank 0; dynamic dims are [`DYNAMIC`]).
pub struct OpView<'c, 'a> {
    pub op: OperationRef<'c, 'a>,
    pub name: String,
    pub operands: Vec<Vec<i64>>,
    pub results: Vec<Vec<i64>>,
}

impl<'c, 'a> OpView<'c, 'a> {
    pub fn new(op: OperationRef<'c, 'a>) -> Self {
        Self {
            op,
            name: op.name().as_string_ref().as_str().unwrap_or("").to_string(),
            operands: op
                .operands()
                .map(|value| shape_of(value.r#type()))
                .collect(),
            results: op.results().map(|value| shape_of(value.r#type())).collect(),
        }
    }

    /// Shape of operand `i`.
    pub fn operand(&self, i: usize) -> Result<&[i64], String> {
        self.operands
            .get(i)
            .map(Vec::as_slice)
            .ok_or_else(|| format!("{}: no operand {i}", self.name))
    }

    /// Shape of result `i`.
    pub fn result(&self, i: usize) -> Result<&[i64], String> {
        self.results
            .get(i)
            .map(Vec::as_slice)
            .ok_or_else(|| format!("{}: no result {i}", self.name))
    }

    /// Ranks of operands from `from` on (extra operands, used whole).
    pub fn ranks_from(&self, from: usize) -> Vec<usize> {
        self.operands.iter().skip(from).map(Vec::len).collect()
    }

    /// A `DenseI64ArrayAttribute` (or `DenseI32ArrayAttribute`) attribute's values; empty when
    /// absent.
    pub fn dense(&self, name: &str) -> Vec<i64> {
        let Ok(attr) = self.op.attribute(name) else {
            return Vec::new();
        };
        if let Ok(array) = DenseI64ArrayAttribute::try_from(attr) {
            return (0..array.len())
                .filter_map(|index| array.element(index).ok())
                .collect();
        }
        DenseI32ArrayAttribute::try_from(attr)
            .map(|array| {
                (0..array.len())
                    .filter_map(|index| array.element(index).ok())
                    .map(i64::from)
                    .collect()
            })
            .unwrap_or_default()
    }

    /// An integer attribute's value.
    pub fn integer(&self, name: &str) -> Option<i64> {
        self.op
            .attribute(name)
            .ok()
            .and_then(|attr| IntegerAttribute::try_from(attr).ok())
            .map(|value| value.value())
    }

    /// `values` as dims of a rank-`rank` value, each checked.
    pub fn dims_in(&self, values: &[i64], rank: usize) -> Result<Vec<usize>, String> {
        values
            .iter()
            .map(|&d| {
                usize::try_from(d)
                    .ok()
                    .filter(|&d| d < rank)
                    .ok_or_else(|| format!("{}: dim {d} out of rank {rank}", self.name))
            })
            .collect()
    }
}

/// The static shape of `op`'s result (or operand) `index` as it is now.
fn result_shape(op: OperationRef, index: usize) -> Option<Vec<i64>> {
    let result = op.result(index).ok()?;
    crate::ir::core::static_shape(result.r#type())
}

fn operand_shape(op: OperationRef, index: usize) -> Option<Vec<i64>> {
    crate::ir::core::static_shape(op.operand(index).ok()?.r#type())
}

/// Sets `op`'s `name` to a dense i64 array.
fn set_dense<'c>(
    context: &'c melior::Context,
    op: OperationRef<'c, '_>,
    name: &str,
    values: &[i64],
) {
    ffi::set_attribute(
        op,
        name,
        DenseI64ArrayAttribute::new(context, values).into(),
    );
}

/// A splat constant's `value` re-made for its (local) result type: `dense<1.0> :
/// tensor<32x16xf32>` in a `tensor<8x16xf32>` result becomes `dense<1.0> : tensor<8x16xf32>`.
fn resplat_value<'c>(_: &'c melior::Context, op: OperationRef<'c, '_>, _: &Shapes) {
    let value = op.attribute("value").ok();
    let ty: Option<Type> = op.result(0).ok().map(|result| result.r#type());
    if let Some(resplat) = value
        .zip(ty)
        .and_then(|(value, ty)| ffi::resplat(value, ty))
    {
        ffi::set_attribute(op, "value", resplat);
    }
}

/// A constant's fill: the scalar of a splat `value` (see [`fill`]).
fn splat_fill(op: OperationRef) -> Option<Fill> {
    let value = op.attribute("value").ok()?;
    ffi::scalar_value(value).map(Fill::Scalar)
}

/// A constant can be tiled when its `value` is a splat: [`resplat_value`] remakes it for a
/// tile; any other value spells every element of the whole.
fn splat_only(op: OperationRef) -> Result<(), String> {
    let value = op.attribute("value").ok();
    let ty: Option<Type> = op.result(0).ok().map(|result| result.r#type());
    match value
        .zip(ty)
        .and_then(|(value, ty)| ffi::resplat(value, ty))
    {
        Some(_) => Ok(()),
        None => Err("only splat constants can be tiled".into()),
    }
}

fn shape_of(ty: Type) -> Vec<i64> {
    ffi::tensor_shape(ty)
        .map(|shape| {
            shape
                .into_iter()
                .map(|size| size.unwrap_or(DYNAMIC))
                .collect()
        })
        .unwrap_or_default()
}

/// The built-in entries, op name → entry, built once.
static BUILTIN: LazyLock<Entries> = LazyLock::new(|| {
    let mut entries = Entries::default();
    arith::register(&mut entries);
    tensor::register(&mut entries);
    tosa::register(&mut entries);
    stablehlo::register(&mut entries);
    linalg::register(&mut entries);
    linalg_pad::register(&mut entries);
    entries.add(RETURN_OP, |op| Ok(Rule::identity(&op.operands)));
    // bufferization's ops between tensors and buffers (after a CPU pipeline) only move data.
    entries.add_dialect_cost("bufferization", Cost::Moves);
    entries.add_cost(REPLICATE_OP, Cost::View);
    // A device's chunk of a filled value is filled alike (a gradient's zeros, split by stage).
    entries.add_fill(crate::ir::hlo::ALL_SLICE_OP, |_| Some(Fill::Operand(0)));
    // A pin is elementwise on every axis but its own (propagation stops at pins along their
    // own axis before asking for a rule).
    entries.add(REPLICATE_OP, |op| {
        Ok(Rule::elementwise(op.result(0)?, 1, 1))
    });
    // A permute (a halo's fetch, `stablehlo/halo.rs`) moves chunks of its dim along its own
    // loop's axis; along any other axis it is elementwise but for that dim, whose chunks
    // another split would change. Its range is read as it is.
    entries.add(PERMUTE_OP, |op| {
        let shape = op.result(0)?;
        let dim = op.integer("dim").ok_or("partir.permute without a dim")? as usize;
        let mut rule = Rule::new();
        let dims = TensorDims(
            shape
                .iter()
                .enumerate()
                .map(|(d, &size)| {
                    let kind = if d == dim {
                        FactorKind::MustReplicate
                    } else {
                        FactorKind::PassThrough
                    };
                    Some(rule.add_factor(size, kind))
                })
                .collect(),
        );
        rule.push_operand(dims.clone());
        rule.push_operand(TensorDims::unindexed(0));
        rule.push_result(dims);
        Ok(rule)
    });
    entries
});

/// Einsum rules registered at run time (C API, other compilers): op name → einsum.
static REGISTERED_EINSUMS: LazyLock<Mutex<HashMap<String, String>>> = LazyLock::new(Mutex::default);

/// The registry as one propagation sees it: the built-in entries and the einsum rules
/// registered when it started.
pub struct Rules {
    entries: &'static HashMap<&'static str, Entry>,
    einsums: HashMap<String, String>,
}

/// Registers the rule of `op_name` in einsum notation, for every later propagation:
/// `register_einsum_rule("my.matmul", "ik,kj->ij reduction={k:sum}")`. Factor sizes come from
/// each op's shapes. A later registration for the same op replaces an earlier one.
pub fn register_einsum_rule(op_name: &str, einsum: &str) -> Result<(), String> {
    if op_name.trim().is_empty() {
        return Err("an einsum rule needs an op name".into());
    }
    Rule::check_einsum(einsum)
        .map_err(|error| format!("einsum rule for '{op_name}' ('{einsum}'): {error}"))?;
    let mut registered = REGISTERED_EINSUMS
        .lock()
        .unwrap_or_else(|poisoned| poisoned.into_inner());
    registered.insert(op_name.to_string(), einsum.to_string());
    Ok(())
}

/// The key under which a custom call's rule is registered: `custom_call @target`.
fn custom_call_key(target: &str) -> String {
    format!("{CUSTOM_CALL} @{target}")
}

const CUSTOM_CALL: &str = "stablehlo.custom_call";

/// Registers a schedule's `[rules]`: the einsum of each custom call target, for every later
/// propagation (as [`register_einsum_rule`] does for an op name).
pub fn register_custom_call_rules(rules: &[(String, String)]) -> Result<(), String> {
    for (target, einsum) in rules {
        register_einsum_rule(&custom_call_key(target), einsum)?;
    }
    Ok(())
}

/// An op as a user knows it: its name, and a custom call's target (`stablehlo.custom_call
/// @lapack_spotrf_ffi`).
pub fn describe(op: OperationRef) -> String {
    let name = op.name().as_string_ref().as_str().unwrap_or("").to_string();
    match call_target(op).filter(|_| name == CUSTOM_CALL) {
        Some(target) => custom_call_key(&target),
        None => name,
    }
}

/// Whether `op` is a sharding annotation a user's program carries (`with_sharding_constraint`:
/// a `Sharding` custom call, `sdy.sharding_constraint`): partir's schedule decides, so it
/// passes values through.
pub fn is_sharding_annotation(op: OperationRef) -> bool {
    let name = op.name().as_string_ref().as_str().unwrap_or("").to_string();
    name == "sdy.sharding_constraint"
        || (name == CUSTOM_CALL && call_target(op).as_deref().is_some_and(is_sharding_call))
}

/// Shardy's sharding of a function argument or result (`in_shardings`, `out_shardings`).
pub const SHARDY_SHARDING_ATTR: &str = "sdy.sharding";

/// GSPMD's sharding of a function argument or result, and of a `Sharding` custom call
/// (`mhlo.sharding = "{devices=[4,1,2]<=[8] last_tile_dim_replicate}"`).
pub const HLO_SHARDING_ATTR: &str = "mhlo.sharding";

/// The sharding a sharding annotation op carries, printed: Shardy's `#sdy.sharding<...>`
/// (`sdy.sharding_constraint`) or GSPMD's string (a `Sharding` custom call). None for any
/// other op, and for the shard_map boundary calls, which mark manual regions, not shardings.
pub fn annotation_sharding(op: OperationRef) -> Option<String> {
    if !is_sharding_annotation(op) {
        return None;
    }
    if op.name().as_string_ref().as_str() == Ok(CUSTOM_CALL) {
        return (call_target(op).as_deref() == Some("Sharding"))
            .then(|| op.attribute(HLO_SHARDING_ATTR).ok())
            .flatten()
            .and_then(crate::ffi::string_attribute);
    }
    op.attribute("sharding").ok().map(|attr| attr.to_string())
}

/// Whether `op` declares the mesh a program's sharding annotations name (`sdy.mesh`).
pub fn is_sharding_mesh(op: OperationRef) -> bool {
    op.name().as_string_ref().as_str() == Ok("sdy.mesh")
}

/// The custom calls JAX emits for sharding annotations, which pass values through.
pub fn is_sharding_call(target: &str) -> bool {
    matches!(
        target,
        "Sharding" | "SPMDFullToShardShape" | "SPMDShardToFullShape"
    )
}

fn call_target(op: OperationRef) -> Option<String> {
    op.attribute("call_target_name")
        .ok()
        .and_then(crate::ffi::string_attribute)
}

impl Default for Rules {
    fn default() -> Self {
        let registered = REGISTERED_EINSUMS
            .lock()
            .unwrap_or_else(|poisoned| poisoned.into_inner());
        Rules {
            entries: &BUILTIN.rules,
            einsums: registered.clone(),
        }
    }
}

impl Rules {
    /// The rule of `op`: None when partir knows no rule for it, Some(Err) when its entry
    /// rejects this particular op (e.g. a reshape that is not a merge/split).
    pub fn rule_for(&self, op: OperationRef) -> Option<Result<Rule, String>> {
        self.rule_with(op, crate::ffi::linalg_info(op).as_ref())
    }

    /// [`Self::rule_for`] when `op`'s linalg facts were already read: `info` is None for an op
    /// that is not linalg (saves reading them twice on big programs).
    pub fn rule_with(
        &self,
        op: OperationRef,
        info: Option<&crate::ffi::LinalgInfo>,
    ) -> Option<Result<Rule, String>> {
        if let Some(info) = info {
            return Some(linalg::rule_of(op, info));
        }
        let view = OpView::new(op);
        if let Some(einsum) = self.einsums.get(&view.name) {
            return Some(Rule::einsum_shapes(einsum, &view.operands, &view.results));
        }
        if view.name == CUSTOM_CALL {
            let key = describe(op);
            if let Some(einsum) = self.einsums.get(&key) {
                return Some(Rule::einsum_shapes(einsum, &view.operands, &view.results));
            }
            // A call partir cannot read and nobody gave a rule for: no rule (warned about,
            // with its target), not a stop.
            if !is_sharding_call(call_target(op).as_deref().unwrap_or("")) {
                return None;
            }
        }
        self.entries
            .get(view.name.as_str())
            .map(|entry| entry(&view))
    }
}
