//! Padding a dim through the program, so that an axis that does not divide it splits it evenly
//! (docs/design.md#uneven-dims). `partir-tile` calls it when a dim of size n is split k ways
//! and k does not divide n: the dim becomes k·ceil(n/k), and every value it flows to pads with
//! it, op by op, as far as each op's family runs on padded values ([`crate::rules::pad`]).
//!
//! ```text
//! %x : [6,64]                       %x : [8,64] {partir.padded_from = [6, 64]}
//! %h = dot_general %x, %w : [6,32]  %h = dot_general %x, %w : [8,32]
//! %s = reduce %h dims=[0] : [32]    %s = reduce (select(row < 6, %h, 0)) dims=[0] : [32]
//! %t = slice %h [0:4]               %t = slice (slice %h [0:6]) [0:4]
//! return %h, %t                     return %h {partir.padded_from = [6, 32]}, %t
//! ```
//!
//! The program computes what it did: a padded position never reaches a real one (a reduction
//! over the dim reads its identity there). Loops, branches and ops that read at positions their
//! operands hold (a gather's indices) read the value sliced back. The entry function's
//! arguments and results pad in place and record the caller's shape (`partir.padded_from`),
//! which runtimes pad and slice (`tools/partir_jax/xla_run.py`); any other value the padding
//! reaches is padded where it is defined.

use super::expand_dim::{argument_index, mark_caller_shape, set_signature};
use crate::{
    ffi,
    ir::{core, func},
    rules::{
        self,
        expand::Port,
        pad::{self, PadPlan, Padder},
        Rules, Shapes,
    },
};
use melior::{
    ir::{block::BlockLike, operation::OperationLike, OperationRef, Value, ValueLike},
    Context,
};
use std::collections::{HashMap, HashSet};

/// The argument or result attribute holding the shape the caller knows: its array is the
/// program's without the padding at the end of each dim.
pub const PADDED_FROM_ATTR: &str = "partir.padded_from";

/// What padding did: the padded value that stands for the one asked for, and how many values
/// were padded.
pub struct Padded<'c, 'a> {
    pub value: Value<'c, 'a>,
    pub values: usize,
}

/// Pads dim `dim` of `seed` to `to` and every value it flows to; the padded value (the seed
/// itself, retyped, or a pad of it) that a tile splits. Err when `seed` is no static tensor,
/// `to` is smaller than the dim, or its dialect cannot pad.
pub fn pad_value<'c: 'a, 'a>(
    context: &'c Context,
    seed: Value<'c, 'a>,
    dim: usize,
    to: i64,
) -> Result<Padded<'c, 'a>, String> {
    let shape = core::static_shape(seed.r#type()).ok_or("not a statically shaped tensor")?;
    let from = *shape.get(dim).ok_or("dim out of range")?;
    let (plan, padder) = planned(seed, dim, from, to)?;
    let values = plan.values.len();
    let value = plan.apply(context, padder, seed)?;
    Ok(Padded { value, values })
}

/// Whether [`pad_value`] can pad `seed`'s dim `dim` to `to` (nothing is rewritten): a tile
/// checks every value before it rewrites any.
pub fn check(seed: Value, dim: usize, to: i64) -> Result<(), String> {
    let shape = core::static_shape(seed.r#type()).ok_or("not a statically shaped tensor")?;
    let from = *shape.get(dim).ok_or("dim out of range")?;
    planned(seed, dim, from, to).map(|_| ())
}

fn planned<'c, 'a>(
    seed: Value<'c, 'a>,
    dim: usize,
    from: i64,
    to: i64,
) -> Result<(Plan<'c, 'a>, Padder), String> {
    if to < from {
        return Err(format!("cannot pad dim {dim} of size {from} to {to}"));
    }
    let mut plan = Plan {
        rules: Rules::default(),
        from,
        to,
        values: Vec::new(),
        dim_of: HashMap::new(),
        ops: Vec::new(),
        accepted: HashMap::new(),
        padded_uses: HashSet::new(),
        in_place: HashSet::new(),
    };
    plan.grow(seed, dim);
    let padder = plan.padder(seed).ok_or(
        "partir pads StableHLO programs so far, and no op this value flows to is StableHLO",
    )?;
    Ok((plan, padder))
}

struct Plan<'c, 'a> {
    rules: Rules,
    from: i64,
    to: i64,
    /// The padded values, each with its padded dim, in the order reached.
    values: Vec<(Value<'c, 'a>, usize)>,
    dim_of: HashMap<usize, usize>,
    /// Ops that run on padded values, with their plans.
    ops: Vec<(OperationRef<'c, 'a>, PadPlan)>,
    accepted: HashMap<usize, usize>,
    /// (op, operand) uses that read the padded value.
    padded_uses: HashSet<(usize, usize)>,
    /// Results of ops that run padded: their own type changes.
    in_place: HashSet<usize>,
}

impl<'c, 'a> Plan<'c, 'a> {
    fn dim(&self, value: Value) -> Option<usize> {
        self.dim_of.get(&ffi::value_id(value)).copied()
    }

    fn add(&mut self, value: Value<'c, 'a>, dim: usize) {
        self.dim_of.insert(ffi::value_id(value), dim);
        self.values.push((value, dim));
    }

    /// The padder of the dialect the seed's ops are in (its producer's, else a user's).
    fn padder(&self, seed: Value<'c, 'a>) -> Option<Padder> {
        self.ops
            .iter()
            .map(|(op, _)| *op)
            .chain(ffi::result_owner(seed))
            .chain(ffi::uses(seed).into_iter().map(|(op, _)| op))
            .find_map(pad::padder)
    }

    fn grow(&mut self, seed: Value<'c, 'a>, dim: usize) {
        self.add(seed, dim);
        let mut next = 0;
        while next < self.values.len() {
            let (value, dim) = self.values[next];
            next += 1;
            let mut sites: Vec<(OperationRef<'c, 'a>, Port)> = ffi::uses(value)
                .into_iter()
                .map(|(op, i)| (op, Port::Operand(i)))
                .collect();
            if let Some(producer) = ffi::result_owner(value) {
                sites.push((
                    producer,
                    Port::Result(ffi::result_number(value).unwrap_or(0)),
                ));
            }
            for (op, port) in sites {
                if func::is_return(op) || self.covers(op, port) {
                    continue;
                }
                self.accept(op, port, dim);
            }
        }
    }

    fn covers(&self, op: OperationRef, port: Port) -> bool {
        self.accepted
            .get(&ffi::operation_id(op))
            .is_some_and(|&i| self.ops[i].1.ports.iter().any(|(at, _)| *at == port))
    }

    fn accept(&mut self, op: OperationRef<'c, 'a>, port: Port, dim: usize) {
        if self.accepted.contains_key(&ffi::operation_id(op)) {
            return;
        }
        let Some(plan) = pad::plan(&self.rules, op, port, dim, self.from) else {
            return;
        };
        let mut values = Vec::new();
        for &(at, d) in &plan.ports {
            let value: Option<Value> = match at {
                Port::Operand(i) => op.operand(i).ok(),
                Port::Result(i) => op.result(i).ok().map(Value::from),
            };
            let Some(value) = value else { return };
            if self.dim(value).is_some_and(|known| known != d) {
                return;
            }
            values.push((value, d, at));
        }
        self.accepted.insert(ffi::operation_id(op), self.ops.len());
        self.ops.push((op, plan));
        for (value, d, at) in values {
            match at {
                Port::Operand(i) => {
                    self.padded_uses.insert((ffi::operation_id(op), i));
                }
                Port::Result(_) => {
                    self.in_place.insert(ffi::value_id(value));
                }
            }
            if self.dim(value).is_none() {
                self.add(value, d);
            }
        }
    }

    /// Rewrites the program; the padded value standing for `seed`.
    fn apply(
        &self,
        context: &'c Context,
        padder: Padder,
        seed: Value<'c, 'a>,
    ) -> Result<Value<'c, 'a>, String> {
        let before: Vec<Shapes> = self.ops.iter().map(|(op, _)| Shapes::of(*op)).collect();
        let mut stand_in = None;
        let mut signatures: Vec<OperationRef<'c, 'a>> = Vec::new();
        let mut sign = |func: OperationRef<'c, 'a>| {
            if !signatures.iter().any(|f| ffi::same_operation(*f, func)) {
                signatures.push(func);
            }
        };
        for &(value, dim) in &self.values {
            let old = value.r#type();
            let caller = core::static_shape(old).ok_or("padded values are static")?;
            let mut shape = caller.clone();
            shape[dim] = self.to;
            let anchor = after_definition(value).ok_or("a value with no op after it")?;
            let uses = ffi::uses(value);
            // The entry function's arguments pad in place: the caller's array, zero-padded at
            // the end of the dim (`partir.padded_from`), as each device's shard of it.
            let entry_argument = ffi::argument_owner(value)
                .and_then(|block| block.parent_operation())
                .filter(|owner| func::is_function(*owner));
            if let Some(func) = entry_argument {
                mark_caller_shape(
                    context,
                    func,
                    "arg_attrs",
                    argument_index(value),
                    PADDED_FROM_ATTR,
                    &caller,
                );
                sign(func);
            }
            if entry_argument.is_some() || self.in_place.contains(&ffi::value_id(value)) {
                value.set_type(core::with_shape(old, &shape));
                let mut unpadded = Vec::new();
                for (user, i) in uses {
                    if self.padded_uses.contains(&(ffi::operation_id(user), i)) {
                        continue;
                    }
                    // Returned padded too: the caller slices the padding off.
                    if let Some(func) = user
                        .parent_operation()
                        .filter(|f| func::is_return(user) && func::is_function(*f))
                    {
                        mark_caller_shape(context, func, "res_attrs", i, PADDED_FROM_ATTR, &caller);
                        sign(func);
                        continue;
                    }
                    unpadded.push((user, i));
                }
                if !unpadded.is_empty() {
                    let back = (padder.slice)(context, anchor, value, dim, self.from)
                        .ok_or("cannot slice a padded value back")?;
                    for (user, i) in unpadded {
                        ffi::set_operand(user, i, back);
                    }
                }
                if value == seed {
                    stand_in = Some(value);
                }
            } else {
                let padded: Vec<_> = uses
                    .into_iter()
                    .filter(|(user, i)| self.padded_uses.contains(&(ffi::operation_id(*user), *i)))
                    .collect();
                if padded.is_empty() && value != seed {
                    continue;
                }
                let grown = (padder.pad)(context, anchor, value, dim, self.to)
                    .ok_or("cannot pad a value")?;
                for (user, i) in padded {
                    ffi::set_operand(user, i, grown);
                }
                if value == seed {
                    stand_in = Some(grown);
                }
            }
        }
        for ((op, plan), before) in self.ops.iter().zip(&before) {
            for &(operand, dim, kind) in &plan.masked {
                let value = op.operand(operand).map_err(|_| "a masked operand")?;
                let masked = (padder.mask)(context, *op, value, dim, self.from, kind)
                    .ok_or("cannot mask a padded value")?;
                ffi::set_operand(*op, operand, masked);
            }
            rules::retype(context, *op, before);
        }
        for func in signatures {
            set_signature(context, func);
        }
        stand_in.ok_or_else(|| "the padded value was not made".to_string())
    }
}

/// The op right after `value`'s definition: what is built before it sits after the value.
fn after_definition<'c, 'a>(value: Value<'c, 'a>) -> Option<OperationRef<'c, 'a>> {
    match ffi::argument_owner(value) {
        Some(block) => block.first_operation(),
        None => ffi::result_owner(value)?.next_in_block(),
    }
}
