//! This file is long because it is the one table of every query an op family answers beyond
//! its rule, each with the accessor the passes call: split, a new query would have two homes.
//!
//! Each op family's model beyond its rule: what propagation, lowering and the simulator ask of
//! an op (its local-shape rewrite, cost class, trip count, linear operands, fills, layout,
//! padding, ...). Families fill the tables in their `register`; the passes ask the queries
//! below and never compare op names themselves (`tests/architecture.rs` checks that), so a
//! new dialect is known everywhere once its family file registers it.

use super::{Entry, BUILTIN};
use melior::ir::{operation::OperationLike, OperationRef};
use std::collections::{HashMap, HashSet};

/// Rewrites the attributes of an op that spell out sizes, after propagation gave it local
/// types (`before`: the shapes it had).
pub type Retype = for<'c, 'a> fn(&'c melior::Context, OperationRef<'c, 'a>, &Shapes);

/// An op's operand and result shapes before it was re-typed.
pub struct Shapes {
    pub operands: Vec<Vec<i64>>,
    pub results: Vec<Vec<i64>>,
    /// The local shapes of the op's inputs (operands, then the values its regions capture:
    /// [`inputs`]) as propagation gives them: a capture keeps its global type until the op is
    /// retyped, and a `case` whose result is a partial sum learns the split from it alone.
    pub local_inputs: Vec<Vec<i64>>,
}

impl Shapes {
    /// `op`'s operand and result shapes as they are now (empty for a non-tensor).
    pub fn of(op: OperationRef) -> Self {
        let shape = |value: melior::ir::Value| {
            crate::ir::core::static_shape(melior::ir::ValueLike::r#type(&value)).unwrap_or_default()
        };
        Shapes {
            operands: op.operands().map(shape).collect(),
            results: op.results().map(|r| shape(r.into())).collect(),
            local_inputs: Vec::new(),
        }
    }
}

/// How the simulator counts an op that has no body to read (a linalg op's body says it).
#[derive(Clone, Copy, Debug, PartialEq)]
pub enum Cost {
    /// Copies data, no arithmetic: a transpose, a slice, a broadcast.
    Moves,
    /// A view of operand 0: no new buffer, no work (a reshape).
    View,
    /// Nothing worth counting: a constant.
    Free,
    /// A destination not written yet (`tensor.empty`): no work and no buffer of its own (the
    /// op that writes into it owns the buffer), and any device can make its own.
    Empty,
    /// This many FLOPs per iteration of its rule (an add: 1, a reduce: 1).
    Flops(f64),
    /// One transcendental per iteration (exp, log, tanh, rsqrt, ...).
    Transcendental,
    /// A multiply-accumulate per iteration (2 FLOPs on the matrix unit): a matmul.
    Contraction,
    /// A convolution: 2 FLOPs per result element and kernel element of one output feature.
    Convolution,
    /// A loop: its regions' ops, each counted as itself, times its trip count
    /// ([`trip_count`]).
    Loop,
}

/// How fusion treats an op: which ops the simulator counts as kernels of their own, and which
/// values never reach memory. XLA fuses on every backend (its loop and input fusions); an op
/// fuses into its consumers when all of them take fused producers.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Fusion {
    /// Computes inside its consumers' kernel when they all take fused producers, and takes
    /// fused producers itself: elementwise ops, broadcasts, transposes, slices, converts, views.
    Producer,
    /// A kernel that takes fused producers and writes its result: a reduction.
    Root,
    /// A kernel of its own, reading its operands from memory: a contraction, a convolution, a
    /// gather, a scatter, an in-place update, a sort, a loop.
    Alone,
}

/// Rewrites an op, before propagation, into an equal form its rule partitions better;
/// whether it did (see [`canonicalize`]).
pub type Canonicalize = for<'c, 'a> fn(&'c melior::Context, OperationRef<'c, 'a>) -> bool;

/// In which operands an op is linear, read from the op (a `reduce` is linear when it sums).
pub type LinearIn = fn(OperationRef) -> Option<Linear>;

/// In which operands an op is linear, so that a partial sum (each device's part of a sum)
/// may flow through it and come out partial: `add(a, b)` of two partials is partial, but
/// `add(a, w)` of a partial and a whole value is not (w would be added on every device).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Linear {
    /// Jointly in all its operands, each of which must then be partial (add, concatenate).
    All,
    /// Jointly in these operands, each of which must then be partial; the others (indices,
    /// predicates) are read whole (dynamic_update_slice: 0 and 1; select: 1 and 2).
    Operands(&'static [usize]),
    /// In any one operand while the others are whole (multiply, dot_general).
    EachAlone,
}

/// How many times a loop op runs its body (None when it cannot be told statically).
pub type TripCount = fn(OperationRef) -> Option<i64>;

/// What every element of an op's result holds, when the op fills it with one scalar.
#[derive(Clone, Copy, Debug, PartialEq)]
pub enum Fill {
    /// This scalar: a splat constant.
    Scalar(f64),
    /// Whatever operand `i` holds (or is filled with): a fill of a scalar operand, a reshape,
    /// broadcast or convert of a filled tensor.
    Operand(usize),
}

/// Reads what `op` fills its result with (None: not a fill, or not one this op can tell).
pub type FillOf = fn(OperationRef) -> Option<Fill>;

/// Why `op`'s local-shape rewrite cannot remake it for a tile (a non-splat constant).
pub type Tileable = fn(OperationRef) -> Result<(), String>;

/// For a layout op and dim `dim` of its result: the source dim that carries all of it.
pub type SourceDim = fn(OperationRef, usize) -> Option<usize>;

/// Builds, in front of `op`, an op computing `op`'s result 0 with dim `dim` grown to `to`
/// positions at its end, which hold padding (anything): `x[2:6]` grown to 8 rows reads rows 2
/// to 9 of `x`, past its end as zeros. See [`super::pad::grown`].
pub type Grow = for<'c, 'a> fn(
    &'c melior::Context,
    OperationRef<'c, 'a>,
    usize,
    i64,
) -> Option<melior::ir::Value<'c, 'a>>;

/// What an op pads its operand 0 with zeros: per dim, the zeros before and after the source,
/// and the source's shape.
#[derive(Clone, Debug, PartialEq)]
pub struct Padding {
    pub low: Vec<i64>,
    pub high: Vec<i64>,
    pub source: Vec<i64>,
}

/// Reads the zero padding of an op (None: it pads with something else).
pub type ZeroPadding = fn(OperationRef) -> Option<Padding>;

/// Reads whether an op makes every element of its result from scalar inputs alone, the same
/// wherever the element is, and how a chunk of it is made (None: it does not).
pub type ScalarBroadcast = fn(OperationRef) -> Option<Remake>;

/// How a chunk of an op's result that is made of scalars alone is made.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Remake {
    /// The op writing into a local destination in place of operand `i` (a fill's init).
    Into(usize),
    /// The op itself with the chunk's type (a `stablehlo.broadcast_in_dim` of a rank-0
    /// tensor: nothing in it spells out the result's size).
    Retyped,
}

/// What each family's `register` fills: rules, and the rest of each op's model.
#[derive(Default)]
pub(super) struct Entries {
    pub(super) rules: HashMap<&'static str, Entry>,
    retypes: HashMap<&'static str, Retype>,
    costs: HashMap<&'static str, Cost>,
    /// How fusion treats ops whose cost does not say it (see [`fusion`]).
    fusions: HashMap<&'static str, Fusion>,
    /// The cost of a dialect's ops that register none of their own (`tensor`: all move data).
    dialect_costs: HashMap<&'static str, Cost>,
    /// Scalar ops that multiply (with a reduction: a contraction, on the matrix unit).
    multiplies: HashSet<&'static str>,
    /// Ops whose every result is its operand of the same index, passed through (a barrier):
    /// one op per value computes the same.
    per_value: HashSet<&'static str>,
    trip_counts: HashMap<&'static str, TripCount>,
    /// Loop ops that can be pipelined over stacked layers (see [`pipeline_loop`]).
    pipelines: HashMap<&'static str, super::pipeline::PipelineLoop>,
    linear: HashMap<&'static str, LinearIn>,
    /// Linear only for a sum a loop carries out (see [`linear_in_loop_sums`]).
    loop_sum_linear: HashMap<&'static str, LinearIn>,
    canonical: HashMap<&'static str, Canonicalize>,
    fills: HashMap<&'static str, FillOf>,
    tileable: HashMap<&'static str, Tileable>,
    /// Dialects whose ops take a fresh accumulator partir builds (see [`fresh_accumulator`]).
    fresh_accumulators: HashSet<&'static str>,
    /// Layout ops, with how their result dims map to source dims when the family says.
    layouts: HashMap<&'static str, Option<SourceDim>>,
    zero_paddings: HashMap<&'static str, ZeroPadding>,
    scalar_broadcasts: HashMap<&'static str, ScalarBroadcast>,
    /// Ops whose regions' captures are inputs of their rule, after their operands (see
    /// [`inputs`]).
    capturing: HashSet<&'static str>,
    /// Loop ops whose regions' arguments are their operands and whose body (this region)
    /// yields their results (see [`carried_body`]).
    carrying: HashMap<&'static str, usize>,
    /// Ops that read or write one block of their operand 0 at run-time offsets (see
    /// [`block_access`]).
    block_access: HashSet<&'static str>,
    /// Ops that can run with a dim of their values expanded into several: their plan (None:
    /// read off the rule) and their attribute rewrite (see [`super::expand`]).
    expansions: HashMap<&'static str, Expansion>,
    /// Per dialect: how it pads, slices back and neutralises values (see [`super::pad`]).
    padders: HashMap<&'static str, super::pad::Padder>,
    /// Ops whose result can grow on a dim by reading further (see [`Grow`]).
    grows: HashMap<&'static str, Grow>,
    /// Ops that may be a rotation of a value along a dim (see [`super::rotation`]).
    rotations: HashMap<&'static str, super::rotation::RotationOf>,
    /// Ops that read or write at positions their operands hold (a gather's indices).
    row_major_reshapes: HashSet<&'static str>,
}

/// A family's answer to dim expansion: its plan (None: by its rule) and its rewrite.
pub(super) type Expansion = (
    Option<super::expand::ExpandPlan>,
    super::expand::ExpandRewrite,
);

impl Entries {
    /// Adds (or replaces) the entry of `name`.
    pub(super) fn add(&mut self, name: &'static str, entry: Entry) {
        self.rules.insert(name, entry);
    }

    /// Says how the simulator counts `name`.
    pub(super) fn add_cost(&mut self, name: &'static str, cost: Cost) {
        self.costs.insert(name, cost);
    }

    /// Says how fusion treats `name`, when its cost does not say it (see [`fusion`]).
    pub(super) fn add_fusion(&mut self, name: &'static str, fusion: Fusion) {
        self.fusions.insert(name, fusion);
    }

    /// Says how the simulator counts the ops of `dialect` that say nothing themselves.
    pub(super) fn add_dialect_cost(&mut self, dialect: &'static str, cost: Cost) {
        self.dialect_costs.insert(dialect, cost);
    }

    /// Says that the scalar op `name` multiplies (see [`is_multiply`]).
    pub(super) fn add_multiply(&mut self, name: &'static str) {
        self.multiplies.insert(name);
    }

    /// Says how to rewrite `name` before propagation.
    pub(super) fn add_canonical(&mut self, name: &'static str, rewrite: Canonicalize) {
        self.canonical.insert(name, rewrite);
    }

    /// Says in which operands `name` is linear for a partial sum a loop carries out.
    pub(super) fn add_loop_sum_linear(&mut self, name: &'static str, linear: LinearIn) {
        self.loop_sum_linear.insert(name, linear);
    }

    /// Says in which operands `name` is linear.
    pub(super) fn add_linear(&mut self, name: &'static str, linear: LinearIn) {
        self.linear.insert(name, linear);
    }

    /// Says how to count the iterations of the loop op `name`.
    pub(super) fn add_trip_count(&mut self, name: &'static str, count: TripCount) {
        self.trip_counts.insert(name, count);
    }

    /// Says how the loop op `name` is pipelined over stacked layers.
    pub(super) fn add_pipeline(
        &mut self,
        name: &'static str,
        pipeline: super::pipeline::PipelineLoop,
    ) {
        self.pipelines.insert(name, pipeline);
    }

    /// Says that `name`'s rule takes the values its regions capture as inputs, after its
    /// operands (see [`inputs`]).
    pub(super) fn add_capturing(&mut self, name: &'static str) {
        self.capturing.insert(name);
    }

    /// Says that `name`'s regions take its operands as arguments and that its region `body`
    /// yields its results (see [`carried_body`]).
    pub(super) fn add_carried_body(&mut self, name: &'static str, body: usize) {
        self.carrying.insert(name, body);
    }

    /// Says that `name` reads or writes one block of its operand 0 (see [`block_access`]).
    pub(super) fn add_block_access(&mut self, name: &'static str) {
        self.block_access.insert(name);
    }

    /// Says that `name` can run with a dim of its values expanded (see [`super::expand`]).
    pub(super) fn add_expansion(
        &mut self,
        name: &'static str,
        plan: Option<super::expand::ExpandPlan>,
        rewrite: super::expand::ExpandRewrite,
    ) {
        self.expansions.insert(name, (plan, rewrite));
    }

    /// Says how the ops of `dialect` pad a dim (see [`super::pad`]).
    pub(super) fn add_padder(&mut self, dialect: &'static str, padder: super::pad::Padder) {
        self.padders.insert(dialect, padder);
    }

    /// Says how `name`'s result grows on a dim (see [`Grow`]).
    pub(super) fn add_grow(&mut self, name: &'static str, grow: Grow) {
        self.grows.insert(name, grow);
    }

    /// Says how to read whether `name` rotates a value (see [`super::rotation`]).
    pub(super) fn add_rotation(&mut self, name: &'static str, read: super::rotation::RotationOf) {
        self.rotations.insert(name, read);
    }

    /// Says that `name` is a row-major reshape whose types say it all (see
    /// [`is_row_major_reshape`]).
    pub(super) fn add_row_major_reshape(&mut self, name: &'static str) {
        self.row_major_reshapes.insert(name);
    }

    /// Says that `name` passes each operand to its result alone (see [`per_value`]).
    pub(super) fn add_per_value(&mut self, name: &'static str) {
        self.per_value.insert(name);
    }

    /// Adds (or replaces) the local-shape rewrite of `name`.
    pub(super) fn add_retype(&mut self, name: &'static str, retype: Retype) {
        self.retypes.insert(name, retype);
    }

    /// Says how to read what `name` fills its result with (see [`fill`]).
    pub(super) fn add_fill(&mut self, name: &'static str, fill: FillOf) {
        self.fills.insert(name, fill);
    }

    /// Says when `name`'s local-shape rewrite cannot remake it for a tile.
    pub(super) fn add_tileable(&mut self, name: &'static str, check: Tileable) {
        self.tileable.insert(name, check);
    }

    /// Says that the ops of `dialect` take a fresh accumulator (see [`fresh_accumulator`]).
    pub(super) fn add_fresh_accumulators(&mut self, dialect: &'static str) {
        self.fresh_accumulators.insert(dialect);
    }

    /// Says that `name` only re-lays out its operand (see [`is_layout`]), and, when given,
    /// which source dim carries a result dim.
    pub(super) fn add_layout(&mut self, name: &'static str, source_dim: Option<SourceDim>) {
        self.layouts.insert(name, source_dim);
    }

    /// Says how to read the zeros `name` pads with (see [`zero_padding`]).
    pub(super) fn add_zero_padding(&mut self, name: &'static str, padding: ZeroPadding) {
        self.zero_paddings.insert(name, padding);
    }

    /// Says how to read whether `name` broadcasts scalars (see [`broadcasts_scalars`]).
    pub(super) fn add_scalar_broadcast(&mut self, name: &'static str, read: ScalarBroadcast) {
        self.scalar_broadcasts.insert(name, read);
    }
}

/// The entry `op`'s family registered in `table` under its name.
fn registered<T: Copy>(table: &HashMap<&'static str, T>, op: OperationRef) -> Option<T> {
    let name = op.name();
    name.as_string_ref()
        .as_str()
        .ok()
        .and_then(|name| table.get(name).copied())
}

/// The dialect of an op named `name` (`tensor` of `tensor.pad`).
fn dialect_of(name: &str) -> &str {
    name.split_once('.').map_or(name, |(dialect, _)| dialect)
}

/// Whether `op` passes each operand to the result of the same index and nothing else, so one
/// op per value computes the same (`optimization_barrier`, `jax.checkpoint`'s). A loop's
/// results are all tiled or summed, so an op whose values split differently (a batch-split
/// activation and a whole weight behind one barrier) is partitioned one value at a time.
pub fn per_value(op: OperationRef) -> bool {
    op.name()
        .as_string_ref()
        .as_str()
        .is_ok_and(|name| BUILTIN.per_value.contains(name))
}

/// The values `op`'s rule describes as its inputs: its operands, then, for an op whose regions
/// take values from above as inputs (`lax.cond`'s `stablehlo.case`), those values, in
/// [`super::branches::captures`]' order. Propagation slices them as it slices operands.
pub fn inputs<'c, 'a>(op: OperationRef<'c, 'a>) -> Vec<melior::ir::Value<'c, 'a>> {
    let mut values: Vec<melior::ir::Value<'c, 'a>> = op.operands().collect();
    if takes_captures(op) {
        values.extend(super::branches::captures(op));
    }
    values
}

/// Whether `op`'s rule takes the values its regions capture as inputs (see [`inputs`]).
pub fn takes_captures(op: OperationRef) -> bool {
    op.name()
        .as_string_ref()
        .as_str()
        .is_ok_and(|name| BUILTIN.capturing.contains(name))
}

/// The region of a loop op whose block takes the op's operands as arguments (one per operand,
/// as every region of the op does) and whose terminator yields the op's results: a
/// `stablehlo.while`'s body. When the loop cannot be tiled whole (Megatron's partial sums feed
/// a layer norm in the same iteration), propagation partitions inside this body as inside a
/// function body, and lowering gives each carry one sharding (docs/design.md, "Loops").
pub fn carried_body(op: OperationRef) -> Option<usize> {
    registered(&BUILTIN.carrying, op)
}

/// Whether `op` reads or writes one block of its operand 0 at offsets known at run time (a
/// `dynamic_slice` reading one layer of a stacked weight, a `dynamic_update_slice` writing one
/// layer's gradient into the stack): split on a dim it takes whole, each device reads or
/// writes its share of the block, and no data moves. ZeRO reaches such ops (`Reach::Elementwise`).
pub fn block_access(op: OperationRef) -> bool {
    op.name()
        .as_string_ref()
        .as_str()
        .is_ok_and(|name| BUILTIN.block_access.contains(name))
}

/// Rewrites every op under `root` whose family has a canonical form that partitions better
/// (a gather indexed by an iota: batching dims); how many were rewritten.
pub fn canonicalize<'c>(context: &'c melior::Context, root: OperationRef<'c, '_>) -> usize {
    let mut found = Vec::new();
    crate::ffi::walk(root, |op| {
        if let Some(rewrite) = registered(&BUILTIN.canonical, op) {
            found.push((op, rewrite));
        }
    });
    found
        .into_iter()
        .filter(|(op, rewrite)| rewrite(context, *op))
        .count()
}

/// In which operands `op` is linear (None: not known to be).
pub fn linear(op: OperationRef) -> Option<Linear> {
    registered(&BUILTIN.linear, op).and_then(|linear| linear(op))
}

/// In which operands `op` is linear for a partial sum a loop carries and reduces after it:
/// where [`linear`] says, and a widening convert too (a bf16 gradient accumulated in f32).
pub fn linear_in_loop_sums(op: OperationRef) -> Option<Linear> {
    linear(op).or_else(|| registered(&BUILTIN.loop_sum_linear, op).and_then(|linear| linear(op)))
}

/// How many times a loop op (cost [`Cost::Loop`]) runs its body; None when unknown.
pub fn trip_count(op: OperationRef) -> Option<i64> {
    registered(&BUILTIN.trip_counts, op).and_then(|count| count(op))
}

/// Rewrites the loop `op` over stacked layers into its pipelined form (GPipe over `plan`'s
/// stage axis, see [`super::pipeline`]): None when its family has no such form, Err(why) when
/// this loop cannot be pipelined.
pub fn pipeline_loop<'c>(
    context: &'c melior::Context,
    op: OperationRef<'c, '_>,
    plan: &super::pipeline::PipelinePlan,
    id: usize,
) -> Option<Result<super::pipeline::Pipelined, String>> {
    registered(&BUILTIN.pipelines, op).map(|pipeline| pipeline(context, op, plan, id))
}

/// How the simulator counts the op named `name`: its own cost, else its dialect's (None:
/// partir does not know it).
pub fn cost(name: &str) -> Option<Cost> {
    BUILTIN
        .costs
        .get(name)
        .or_else(|| BUILTIN.dialect_costs.get(dialect_of(name)))
        .copied()
}

/// How fusion treats the op named `name`: as its family registered, else by its cost (moving
/// data, viewing it or computing elementwise fuses; a contraction, a convolution or a loop is
/// a kernel of its own). None: the op's body decides (a linalg op: see the simulator), or
/// partir does not know the op.
pub fn fusion(name: &str) -> Option<Fusion> {
    if let Some(fusion) = BUILTIN.fusions.get(name) {
        return Some(*fusion);
    }
    Some(match cost(name)? {
        Cost::Moves
        | Cost::View
        | Cost::Free
        | Cost::Empty
        | Cost::Flops(_)
        | Cost::Transcendental => Fusion::Producer,
        Cost::Contraction | Cost::Convolution | Cost::Loop => Fusion::Alone,
    })
}

/// Whether `op` only computes its results, so that an unused one may be dropped as XLA's dead
/// code elimination drops it: an op with results, no regions, of a cost the family knows
/// other than a loop (a custom call, a collective, a terminator are never pure here).
pub fn is_pure(op: OperationRef) -> bool {
    let name = op.name();
    op.result_count() > 0
        && op.region_count() == 0
        && name.as_string_ref().as_str().is_ok_and(|name| {
            matches!(
                cost(name),
                Some(
                    Cost::Moves
                        | Cost::View
                        | Cost::Free
                        | Cost::Empty
                        | Cost::Flops(_)
                        | Cost::Transcendental
                        | Cost::Contraction
                        | Cost::Convolution
                )
            )
        })
}

/// Whether `op` is a destination not written yet ([`Cost::Empty`]).
pub fn is_empty(op: OperationRef) -> bool {
    let name = op.name();
    name.as_string_ref()
        .as_str()
        .is_ok_and(|name| cost(name) == Some(Cost::Empty))
}

/// Whether the scalar op named `name` (in a linalg body) multiplies: a body that multiplies
/// and reduces is a contraction, which runs on the matrix unit.
pub fn is_multiply(name: &str) -> bool {
    BUILTIN.multiplies.contains(name)
}

/// After propagation re-typed `op` to local shapes, rewrites its attributes that spell out
/// sizes (nothing for ops whose types say it all).
pub fn retype<'c>(context: &'c melior::Context, op: OperationRef<'c, '_>, before: &Shapes) {
    if let Some(retype) = registered(&BUILTIN.retypes, op) {
        retype(context, op, before);
    }
}

/// Err(why) when `op`'s local-shape rewrite cannot remake it for a tile (a constant that is
/// not a splat: its value spells every element); Ok for every op whose types say it all.
pub fn tileable(op: OperationRef) -> Result<(), String> {
    registered(&BUILTIN.tileable, op).map_or(Ok(()), |check| check(op))
}

/// What every element of `op`'s result holds, when `op` fills it with one scalar (a splat
/// constant, a fill) or passes on a filled operand (a reshape, a broadcast): None otherwise.
/// Propagation follows [`Fill::Operand`] to tell whether an accumulator is an identity.
pub fn fill(op: OperationRef) -> Option<Fill> {
    registered(&BUILTIN.fills, op).and_then(|fill| fill(op))
}

/// The scalar every element of `value` holds, as its producer's family says (following
/// reshapes, broadcasts and converts of a fill to the fill); None when it is not a fill.
pub fn filled_with(value: melior::ir::Value) -> Option<f64> {
    let producer = crate::ffi::result_owner(value)?;
    match fill(producer)? {
        Fill::Scalar(scalar) => Some(scalar),
        Fill::Operand(index) => filled_with(producer.operand(index).ok()?),
    }
}

/// Whether a partial result of `op` may start from a fresh identity accumulator that partir
/// builds (`linalg.fill` into `tensor.empty`) when its own init is not the identity: linalg's
/// destination-passing ops. Other dialects' ops need their init to be the identity already
/// (JAX's scatter-add into zeros is).
pub fn fresh_accumulator(op: OperationRef) -> bool {
    let name = op.name();
    name.as_string_ref()
        .as_str()
        .is_ok_and(|name| BUILTIN.fresh_accumulators.contains(dialect_of(name)))
}

/// Whether `op` only re-lays out the elements of its one operand (a reshape, a transpose):
/// linear, and the same on every device, so a partial sum may be reduced after it as well as
/// before it.
pub fn is_layout(op: OperationRef) -> bool {
    registered(&BUILTIN.layouts, op).is_some()
}

/// For a layout op and dim `dim` of its result: the dim of its source that carries all of it
/// (a reshape adding or dropping unit dims); None when there is none or the family does not
/// say.
pub fn layout_source_dim(op: OperationRef, dim: usize) -> Option<usize> {
    registered(&BUILTIN.layouts, op)
        .flatten()
        .and_then(|source_dim| source_dim(op, dim))
}

/// The zeros `op` pads its operand with (a `tensor.pad` yielding 0.0): a window over them
/// does no useful work. None for any other op or padding value.
pub fn zero_padding(op: OperationRef) -> Option<Padding> {
    registered(&BUILTIN.zero_paddings, op).and_then(|padding| padding(op))
}

/// When `op` makes every element of its result from scalar inputs alone, the same wherever
/// the element is (a fill; a generic broadcasting scalars; a broadcast of a rank-0 tensor):
/// how a device makes its chunk of the result, with no communication.
pub fn broadcasts_scalars(op: OperationRef) -> Option<Remake> {
    registered(&BUILTIN.scalar_broadcasts, op).and_then(|read| read(op))
}

/// `op`'s dialect's padder (see [`super::pad`]).
pub(super) fn registered_padder(op: OperationRef) -> Option<super::pad::Padder> {
    let name = op.name();
    let name = name.as_string_ref().as_str().ok()?;
    BUILTIN.padders.get(dialect_of(name)).copied()
}

/// Whether `op` is a reshape of its one operand, row-major, whose result type alone says its
/// shape (no attribute spells a size): padding carries through it by the shapes alone
/// (`pad_dim`: a padded batch merged with the sequence pads the merged dim, tile by tile).
pub fn is_row_major_reshape(op: OperationRef) -> bool {
    op.name()
        .as_string_ref()
        .as_str()
        .is_ok_and(|name| BUILTIN.row_major_reshapes.contains(name))
}

/// How `op`'s result grows on a dim (see [`Grow`]; None: it cannot).
pub(super) fn registered_grow(op: OperationRef) -> Option<Grow> {
    registered(&BUILTIN.grows, op)
}

/// How `op`'s family reads it as a rotation (see [`super::rotation`]; None: it is none).
pub(super) fn registered_rotation(op: OperationRef) -> Option<super::rotation::RotationOf> {
    registered(&BUILTIN.rotations, op)
}

/// `op`'s family's answer to dim expansion (None: `op` cannot run on expanded values).
pub(super) fn registered_expansion(op: OperationRef) -> Option<Expansion> {
    registered(&BUILTIN.expansions, op)
}
