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

use super::expand_dim::{
    argument_index, entry_count, flow_sites, mark_caller_shape, set_signature,
};
use super::padding_share::add as add_padding_share;
use crate::{
    ffi,
    ir::{core, func, func_attrs},
    rules::{
        self,
        expand::Port,
        pad::{self, PadPlan, Padder},
        Rules, Shapes,
    },
};
use melior::{
    ir::{
        attribute::DenseI64ArrayAttribute, block::BlockLike, operation::OperationLike, Identifier,
        OperationRef, Value, ValueLike,
    },
    Context,
};
use std::collections::{HashMap, HashSet};

mod carriers;

/// The argument or result attribute holding the shape the caller knows: its array is the
/// program's without the padding.
pub const PADDED_FROM_ATTR: &str = "partir.padded_from";

/// The argument or result attribute listing, in the order applied, each padding of the
/// caller's array: groups of 4, `[dim, chunks, from, to]` (dim `dim` read as `chunks` equal
/// chunks, each grown from `from` to `to` with zeros at its end). A runtime pads arguments
/// step by step and undoes the steps on results, last first (`tools/partir_jax/xla_run.py`).
pub const PADDING_ATTR: &str = "partir.padding";

/// One padding of a dim: read as `chunks` equal chunks (one per tile of the axes splitting it
/// already), each grown from `from` to `to` at its end.
///
/// A vocabulary of 256 split on `model` (2) and then on `batch` (3): each `model` tile of 128
/// rows is padded to 129, 43 rows per device, `Padding { dim: 0, chunks: 2, from: 128, to: 129 }`.
/// Padding each tile at its end keeps the rows each `model` tile holds, so the ops already
/// partitioned on `model` (a vocab-parallel lookup's offsets 0 and 128) stay right.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Padding {
    pub dim: usize,
    pub chunks: i64,
    pub from: i64,
    pub to: i64,
}

impl Padding {
    /// The step as `partir.padding` spells it.
    fn step(&self) -> [i64; 4] {
        [self.dim as i64, self.chunks, self.from, self.to]
    }
}

/// What padding did: the padded value that stands for the one asked for, and how many values
/// were padded.
pub struct Padded<'c, 'a> {
    pub value: Value<'c, 'a>,
    pub values: usize,
}

/// Pads `seed` as `padding` says and every value it flows to; the padded value (the seed
/// itself, retyped, or a pad of it) that a tile splits. Err when `seed` is no static tensor,
/// its dim is not `chunks` chunks of `from`, or the padding cannot reach some value.
pub fn pad_value<'c: 'a, 'a>(
    context: &'c Context,
    seed: Value<'c, 'a>,
    padding: Padding,
) -> Result<Padded<'c, 'a>, String> {
    let (plan, padder) = planned(seed, padding)?;
    let values = plan.values.len();
    let value = plan.apply(context, padder, seed, false)?;
    Ok(Padded { value, values })
}

/// As [`pad_value`], but `seed`, an op's only result, is made padded by the op itself, grown
/// by its family ([`pad::grown`]: a slice reads on), and the op is erased: propagation grows a
/// slice of a split dim whose result the axis does not divide (`x[2:6]` of 8 rows on 8
/// devices), so that the grown op's rows move with a halo.
pub fn grow_result<'c: 'a, 'a>(
    context: &'c Context,
    seed: Value<'c, 'a>,
    padding: Padding,
) -> Result<Padded<'c, 'a>, String> {
    let producer = ffi::result_owner(seed).ok_or("not an op's result")?;
    if padding.chunks != 1 || producer.result_count() != 1 || !pad::grows(producer) {
        return Err(format!("'{}' cannot grow its result", op_name(producer)));
    }
    let (plan, padder) = planned(seed, padding)?;
    let values = plan.values.len();
    let value = plan.apply(context, padder, seed, true)?;
    if ffi::uses(seed).is_empty() {
        // SAFETY: its only result has no use left, and nothing holds a handle to it: the plan
        // is gone, and propagation starts its sweep again after a growth.
        unsafe { ffi::erase(producer) };
    }
    Ok(Padded { value, values })
}

/// Whether [`pad_value`] can pad `seed` (nothing is rewritten): a tile checks every value
/// before it rewrites any.
pub fn check(seed: Value, padding: Padding) -> Result<(), String> {
    planned(seed, padding).map(|_| ())
}

fn planned<'c, 'a>(
    seed: Value<'c, 'a>,
    padding: Padding,
) -> Result<(Plan<'c, 'a>, Padder), String> {
    let Padding {
        dim,
        chunks,
        from,
        to,
    } = padding;
    let shape = core::static_shape(seed.r#type()).ok_or("not a statically shaped tensor")?;
    let size = *shape.get(dim).ok_or("dim out of range")?;
    if to < from || chunks < 1 || size != chunks * from {
        return Err(format!(
            "cannot pad dim {dim} of size {size} as {chunks} chunks of {from} grown to {to}"
        ));
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
    plan.grow(seed, dim, chunks);
    let padder = plan.padder(seed).ok_or(
        "partir pads StableHLO and linalg programs so far, and no op this value flows to is one",
    )?;
    if padder.reshape.is_none() {
        plan.check_chunked()?;
    }
    Ok((plan, padder))
}

/// A padded value's dim, how many chunks of the padding it holds (1 in a loop body where the
/// axes splitting the dim have sliced it, the tiles of those axes outside), and how many
/// positions of the dim each padded position stands for (a batch merged with a sequence of 16
/// by a reshape: 16). The dim holds `chunks` chunks of `from·scale`, each grown to `to·scale`.
#[derive(Clone, Copy, PartialEq, Eq)]
struct Place {
    dim: usize,
    chunks: i64,
    scale: i64,
}

struct Plan<'c, 'a> {
    rules: Rules,
    /// Each chunk's size, and what it grows to.
    from: i64,
    to: i64,
    /// The padded values, each with its padded dim, in the order reached.
    values: Vec<(Value<'c, 'a>, Place)>,
    dim_of: HashMap<usize, Place>,
    /// Payload ops that run on padded values, with their plans.
    ops: Vec<(OperationRef<'c, 'a>, PadPlan)>,
    accepted: HashMap<usize, usize>,
    /// (op, operand) uses that read the padded value.
    padded_uses: HashSet<(usize, usize)>,
    /// Results of ops that run padded: their own type changes.
    in_place: HashSet<usize>,
}

impl<'c, 'a> Plan<'c, 'a> {
    fn place(&self, value: Value) -> Option<Place> {
        self.dim_of.get(&ffi::value_id(value)).copied()
    }

    fn add(&mut self, value: Value<'c, 'a>, place: Place) {
        self.dim_of.insert(ffi::value_id(value), place);
        self.values.push((value, place));
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

    fn grow(&mut self, seed: Value<'c, 'a>, dim: usize, chunks: i64) {
        self.add(
            seed,
            Place {
                dim,
                chunks,
                scale: 1,
            },
        );
        let mut next = 0;
        while next < self.values.len() {
            let (value, place) = self.values[next];
            next += 1;
            let sites = flow_sites(value);
            for (op, port) in sites {
                if func::is_return(op) || self.covers(op, port) {
                    continue;
                }
                if self.accept_carry(op, port, place) || self.accept_reshape(op, port, place) {
                    continue;
                }
                if !self.accept_core(op, port, place) {
                    self.accept(op, port, place);
                }
            }
        }
    }

    fn covers(&self, op: OperationRef, port: Port) -> bool {
        self.accepted
            .get(&ffi::operation_id(op))
            .is_some_and(|&i| self.ops[i].1.ports.iter().any(|(at, _)| *at == port))
    }

    fn accept(&mut self, op: OperationRef<'c, 'a>, port: Port, place: Place) {
        if self.accepted.contains_key(&ffi::operation_id(op)) {
            return;
        }
        let size = place.chunks * self.from * place.scale;
        let Some(plan) = pad::plan(&self.rules, op, port, place.dim, size) else {
            return;
        };
        let mut values = Vec::new();
        for &(at, d) in &plan.ports {
            let value: Option<Value> = match at {
                Port::Operand(i) => op.operand(i).ok(),
                Port::Result(i) => op.result(i).ok().map(Value::from),
            };
            let Some(value) = value else { return };
            let at_place = Place { dim: d, ..place };
            if self.place(value).is_some_and(|known| known != at_place) {
                return;
            }
            values.push((value, at_place, at));
        }
        self.accepted.insert(ffi::operation_id(op), self.ops.len());
        self.ops.push((op, plan));
        for (value, at_place, at) in values {
            match at {
                Port::Operand(i) => {
                    self.padded_uses.insert((ffi::operation_id(op), i));
                }
                Port::Result(_) => {
                    self.in_place.insert(ffi::value_id(value));
                }
            }
            if self.place(value).is_none() {
                self.add(value, at_place);
            }
        }
    }

    /// Err when a value holding the padding of several tiles would need a pad, a slice or a
    /// mask of its own (an op that cannot run padded defines or reads it, a reduction reads it)
    /// and the family cannot see a dim as its chunks ([`Padder::reshape`]).
    fn check_chunked(&self) -> Result<(), String> {
        for &(value, place) in &self.values {
            if place.chunks == 1 {
                continue;
            }
            let entry_argument = ffi::argument_owner(value)
                .and_then(|block| block.parent_operation())
                .is_some_and(func::is_function);
            let defined_padded = entry_argument || self.in_place.contains(&ffi::value_id(value));
            let stranded = if !defined_padded {
                ffi::result_owner(value).map(|op| op_name(op))
            } else {
                ffi::uses(value)
                    .into_iter()
                    .find(|(user, i)| {
                        !self.padded_uses.contains(&(ffi::operation_id(*user), *i))
                            && !func::is_return(*user)
                    })
                    .map(|(user, _)| op_name(user))
            };
            // A mask reads positions past `from` as padding: chunk by chunk, it sees them.
            let stranded = stranded.or_else(|| {
                self.ops
                    .iter()
                    .find(|(op, plan)| {
                        plan.masked.iter().any(|&(operand, _, _)| {
                            op.operand(operand)
                                .is_ok_and(|operand| ffi::value_id(operand) == ffi::value_id(value))
                        })
                    })
                    .map(|(op, _)| op_name(*op))
            });
            if let Some(op) = stranded {
                return Err(format!(
                    "dim {} of a value it flows to is split {} ways already and '{op}' {} it whole (padding each of those tiles at its end is supported where every op the padding reaches runs padded)",
                    place.dim,
                    place.chunks,
                    if defined_padded { "reads" } else { "defines" },
                ));
            }
        }
        Ok(())
    }

    /// Rewrites the program; the padded value standing for `seed`.
    fn apply(
        &self,
        context: &'c Context,
        padder: Padder,
        seed: Value<'c, 'a>,
        grow_seed: bool,
    ) -> Result<Value<'c, 'a>, String> {
        let before: Vec<Shapes> = self.ops.iter().map(|(op, _)| Shapes::of(*op)).collect();
        // What padding builds (a pad, a slice back, a mask) is all padding's work.
        let made = |value: Value<'c, 'a>| {
            if let Some(op) = ffi::result_owner(value) {
                add_padding_share(context, op, 1.0);
            }
        };
        let mut stand_in = None;
        let mut signatures: Vec<OperationRef<'c, 'a>> = Vec::new();
        let mut sign = |func: OperationRef<'c, 'a>| {
            if !signatures.iter().any(|f| ffi::same_operation(*f, func)) {
                signatures.push(func);
            }
        };
        for &(value, place) in &self.values {
            let dim = place.dim;
            let padding = Padding {
                dim,
                chunks: place.chunks,
                from: self.from * place.scale,
                to: self.to * place.scale,
            };
            let old = value.r#type();
            let caller = core::static_shape(old).ok_or("padded values are static")?;
            let mut shape = caller.clone();
            shape[dim] = place.chunks * self.to * place.scale;
            let anchor = after_definition(value).ok_or("a value with no op after it")?;
            let uses = ffi::uses(value);
            // The entry function's arguments pad in place: the caller's array, zero-padded at
            // the end of each chunk (`partir.padding`), as each device's shard of it.
            let entry_argument = ffi::argument_owner(value)
                .and_then(|block| block.parent_operation())
                .filter(|owner| func::is_function(*owner));
            if let Some(func) = entry_argument {
                let index = argument_index(value);
                mark_caller_shape(context, func, "arg_attrs", index, PADDED_FROM_ATTR, &caller);
                record_padding(context, func, "arg_attrs", index, padding);
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
                        record_padding(context, func, "res_attrs", i, padding);
                        sign(func);
                        continue;
                    }
                    unpadded.push((user, i));
                }
                if !unpadded.is_empty() {
                    let back = per_chunk(context, padder, anchor, value, place, |seen, at| {
                        (padder.slice)(context, anchor, seen, at, padding.from)
                            .inspect(|v| made(*v))
                    })
                    .ok_or("cannot slice a padded value back")?;
                    for (user, i) in unpadded {
                        ffi::set_operand(user, i, back);
                    }
                }
                if value == seed {
                    stand_in = Some(value);
                }
            } else {
                let (padded, unpadded): (Vec<_>, Vec<_>) =
                    uses.into_iter().partition(|(user, i)| {
                        self.padded_uses.contains(&(ffi::operation_id(*user), *i))
                    });
                if padded.is_empty() && value != seed {
                    continue;
                }
                let grown = if grow_seed && value == seed {
                    // The op itself makes it padded; whoever cannot read it so reads it
                    // sliced back, so the op is left without uses.
                    let grown = grown(context, value, padding)?;
                    // Returned padded, as an op running padded returns its result: a slice
                    // back would be a slice the axis does not divide, grown again.
                    let (returned, unpadded): (Vec<_>, Vec<_>) =
                        unpadded.into_iter().partition(|(user, _)| {
                            func::is_return(*user)
                                && user.parent_operation().is_some_and(func::is_function)
                        });
                    for (user, i) in returned {
                        let func = user.parent_operation().ok_or("a return's function")?;
                        mark_caller_shape(context, func, "res_attrs", i, PADDED_FROM_ATTR, &caller);
                        record_padding(context, func, "res_attrs", i, padding);
                        sign(func);
                        ffi::set_operand(user, i, grown);
                    }
                    if !unpadded.is_empty() {
                        let at = after_definition(grown).ok_or("a value with no op after it")?;
                        let back = (padder.slice)(context, at, grown, dim, padding.from)
                            .ok_or("cannot slice a padded value back")?;
                        made(back);
                        for (user, i) in unpadded {
                            ffi::set_operand(user, i, back);
                        }
                    }
                    grown
                } else {
                    per_chunk(context, padder, anchor, value, place, |seen, at| {
                        (padder.pad)(context, anchor, seen, at, padding.to).inspect(|v| made(*v))
                    })
                    .ok_or("cannot pad a value")?
                };
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
                let place = self.place(value).map_or(
                    Place {
                        dim,
                        chunks: 1,
                        scale: 1,
                    },
                    |place| Place { dim, ..place },
                );
                let from = self.from * place.scale;
                let masked = per_chunk(context, padder, *op, value, place, |seen, at| {
                    (padder.mask)(context, *op, seen, at, from, kind).inspect(|v| made(*v))
                })
                .ok_or("cannot mask a padded value")?;
                ffi::set_operand(*op, operand, masked);
            }
            rules::retype(context, *op, before);
            add_padding_share(context, *op, 1.0 - self.from as f64 / self.to as f64);
        }
        for func in signatures {
            set_signature(context, func);
        }
        stand_in.ok_or_else(|| "the padded value was not made".to_string())
    }
}

/// `value`'s op grown to make it padded as `padding` says ([`pad::grown`]), with the share of
/// its work that is padding.
fn grown<'c: 'a, 'a>(
    context: &'c Context,
    value: Value<'c, 'a>,
    padding: Padding,
) -> Result<Value<'c, 'a>, String> {
    let producer = ffi::result_owner(value).ok_or("a grown value is a result")?;
    let grown = pad::grown(context, producer, padding.dim, padding.to)
        .ok_or("its op cannot grow its result")?;
    if let Some(op) = ffi::result_owner(grown) {
        add_padding_share(context, op, 1.0 - padding.from as f64 / padding.to as f64);
    }
    Ok(grown)
}

/// `resize` (a pad, a slice back or a mask on a dim) applied to each chunk of `value`'s padded
/// dim: the value seen as `[.., chunks, size, ..]`, resized on the chunk's dim, and seen whole
/// again. One chunk: `resize` on the dim itself.
///
/// ```text
/// %v : [256]  (2 tiles of 128 padded to 129, seen whole: [2·128])
/// reshape [2, 128] -> pad dim 1 to 129 -> [2, 129] -> reshape [258]
/// ```
fn per_chunk<'c, 'a>(
    context: &'c Context,
    padder: Padder,
    anchor: OperationRef<'c, 'a>,
    value: Value<'c, 'a>,
    place: Place,
    resize: impl FnOnce(Value<'c, 'a>, usize) -> Option<Value<'c, 'a>>,
) -> Option<Value<'c, 'a>> {
    let Place { dim, chunks, .. } = place;
    if chunks == 1 {
        return resize(value, dim);
    }
    let reshape = padder.reshape?;
    let mut shape = core::static_shape(value.r#type())?;
    let size = shape[dim] / chunks;
    shape.splice(dim..=dim, [chunks, size]);
    let seen = reshape(context, anchor, value, &shape)?;
    let done = resize(seen, dim + 1)?;
    let mut whole = core::static_shape(done.r#type())?;
    let merged = whole[dim] * whole[dim + 1];
    whole.splice(dim..=dim + 1, [merged]);
    reshape(context, anchor, done, &whole)
}

fn op_name(op: OperationRef) -> String {
    op.name()
        .as_string_ref()
        .as_str()
        .unwrap_or("?")
        .to_string()
}

/// Appends `padding`'s step to entry `index`'s `partir.padding` in `func`'s `name`
/// (`arg_attrs` or `res_attrs`).
fn record_padding<'c>(
    context: &'c Context,
    func: OperationRef<'c, '_>,
    name: &str,
    index: usize,
    padding: Padding,
) {
    let mut entries = func_attrs::entries(func, name, entry_count(func, name));
    let Some(fields) = entries.get_mut(index) else {
        return;
    };
    let mut steps: Vec<i64> = Vec::new();
    fields.retain(|field| {
        if !func_attrs::is_named(field, PADDING_ATTR) {
            return true;
        }
        if let Ok(array) = DenseI64ArrayAttribute::try_from(field.1) {
            steps.extend((0..array.len()).filter_map(|i| array.element(i).ok()));
        }
        false
    });
    steps.extend(padding.step());
    fields.push((
        Identifier::new(context, PADDING_ATTR),
        DenseI64ArrayAttribute::new(context, &steps).into(),
    ));
    func_attrs::set_entries(context, func, name, &entries);
}

/// The op right after `value`'s definition: what is built before it sits after the value.
fn after_definition<'c, 'a>(value: Value<'c, 'a>) -> Option<OperationRef<'c, 'a>> {
    match ffi::argument_owner(value) {
        Some(block) => block.first_operation(),
        None => ffi::result_owner(value)?.next_in_block(),
    }
}
