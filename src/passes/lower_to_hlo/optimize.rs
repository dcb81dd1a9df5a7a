//! Collective peepholes on PartIR:HLO (docs/design.md#lowering), to a fixed point:
//! - `add(all_reduce sum axes A x, all_reduce sum axes A y)`, each reduce used only there
//!   → `all_reduce sum axes A (add(x, y))` (and `sub` alike): a sum distributes over addition,
//!   so partial sums added together are reduced once, after the add (Megatron's one backward
//!   all_reduce of the attention block's input gradient dQ·wqᵀ + dK·wkᵀ + dV·wvᵀ, instead of
//!   one per matmul). Also through `expand_shape`/`collapse_shape` between reduce and add. A
//!   chain of adds keeps deferring; a replicated operand stops it (x + Σa ≠ Σ(x + a));
//! - `all_slice dim d axes A (all_reduce axes A x)`, the reduce used only there
//!   → `reduce_scatter dim d axes A x` (ZeRO's gradient reduction); over more axes than the
//!   slice, `all_reduce axes A+B x` → `all_reduce axes B (reduce_scatter dim d axes A x)`:
//!   the sum over the other axes runs on the scattered chunk (a layer norm's scale gradient,
//!   partial over `model` under sequence parallelism, tiled on `data` by ZeRO-3: a
//!   reduce_scatter across nodes and an all_reduce of 1/128 of it on NVLink, not one
//!   all_reduce of it all across 1024 devices);
//! - `all_slice dim d axes A (all_gather dim d axes A x)` → `x`;
//! - `all_gather dim j (reshape x)`, where result dim j is x's dim d up to unit dims
//!   → `reshape (all_gather dim d x)`: gathers of a value and of its unit-dim reshapes (an
//!   optimizer state collapsed from `[1, 1, 16, 4]` to `[16, 4]`) become one, shared by cse;
//! - a loop's accumulation of reduced sums from zeros → the partial sums accumulated and
//!   reduced once after the loop (`loop_sums.rs`).
//!
//! Identical collectives are shared by upstream `cse` (they are Pure).

use crate::{ffi, ir::hlo};
use melior::ir::{
    block::BlockLike,
    operation::{OperationBuilder, OperationLike},
    Identifier, OperationRef, Value, ValueLike,
};

const ALL_SLICE: &str = "partir_hlo.all_slice";
const ALL_REDUCE: &str = "partir_hlo.all_reduce";
const ALL_GATHER: &str = "partir_hlo.all_gather";

fn is(op: OperationRef, name: &str) -> bool {
    crate::ffi::op_is(op, name)
}

fn same_attribute(a: OperationRef, b: OperationRef, name: &str) -> bool {
    matches!((a.attribute(name), b.attribute(name)), (Ok(x), Ok(y)) if x == y)
}

/// True for an elementwise add or sub of its first two operands, as its op family says
/// (`rules::linear`: linear jointly in both, `Linear::All` of two operands, or in operands 0
/// and 1 of a destination-passing op whose init is not read: a `linalg.generic` adding its two
/// inputs). `tosa.add` qualifies as `stablehlo.add` does.
pub(super) fn is_linear_binary(op: OperationRef) -> bool {
    use crate::rules::Linear;
    let tensor_result = op.result_count() == 1
        && op
            .result(0)
            .is_ok_and(|result| ffi::tensor_shape(result.r#type()).is_some());
    tensor_result
        && match crate::rules::linear(op) {
            Some(Linear::All) => op.operand_count() == 2,
            Some(Linear::Operands([0, 1])) => op.operand_count() == 3,
            _ => false,
        }
}

/// The `all_reduce sum` that operand `index` of `add` is, possibly through a chain of
/// layout ops (`rules::is_layout`: reshapes and transposes, linear and the same on every
/// device),
/// each value used only once on the way: (the reduce, its user, the operand index there).
pub(super) fn reduced_operand<'c, 'a>(
    add: OperationRef<'c, 'a>,
    index: usize,
) -> Option<(OperationRef<'c, 'a>, OperationRef<'c, 'a>, usize)> {
    let (mut user, mut position) = (add, index);
    loop {
        let operand = user.operand(position).ok()?;
        if ffi::uses(operand).len() != 1 {
            return None;
        }
        let producer = ffi::result_owner(operand)?;
        if is(producer, ALL_REDUCE) {
            return (hlo::reduction(producer) == Some(crate::tmr::ReductionKind::Sum))
                .then_some((producer, user, position));
        }
        if !crate::rules::is_layout(producer) {
            return None;
        }
        (user, position) = (producer, 0);
    }
}

/// `value` reduced as `like` reduces (its kind and axes), right after `anchor`: every use of
/// `value` but the new reduce reads the reduced value. The deferred sum of two partial sums,
/// a loop's accumulated partial sums (`loop_sums.rs`).
pub(super) fn reduce_in_place<'c>(
    context: &'c melior::Context,
    like: OperationRef<'c, '_>,
    value: Value<'c, '_>,
    anchor: OperationRef<'c, '_>,
) {
    let attributes = hlo::reduction_attributes(like)
        .map(|(name, attribute)| (Identifier::new(context, name), attribute));
    let reduce = OperationBuilder::new(ALL_REDUCE, like.location())
        .add_operands(&[value])
        .add_attributes(&attributes)
        .add_results(&[value.r#type()])
        .build()
        .expect("partir_hlo.all_reduce is registered");
    let block = anchor.block().expect("in a block");
    let reduce = block.insert_operation_after(anchor, reduce);
    ffi::replace_all_uses_except(
        value,
        Value::from(reduce.result(0).expect("one result")),
        reduce,
    );
}

/// `add(all_reduce sum A x, all_reduce sum A y)` → `all_reduce sum A (add(x, y))` when each
/// reduce has no other use (see the module comment), also seen through reshapes (the reshapes
/// then act on the partial sums). Program order, so chains of adds defer.
fn defer_sums_past_adds<'c>(context: &'c melior::Context, module: OperationRef<'c, '_>) {
    let mut adds = Vec::new();
    ffi::walk(module, |op| {
        if is_linear_binary(op) {
            adds.push(op);
        }
    });
    for add in adds {
        let producers: Vec<(OperationRef, OperationRef, usize)> = (0..2)
            .filter_map(|index| reduced_operand(add, index))
            .collect();
        let [(first, first_user, first_index), (second, second_user, second_index)] = producers[..]
        else {
            continue;
        };
        if ffi::same_operation(first, second)
            || hlo::collective_axes(first) != hlo::collective_axes(second)
        {
            continue;
        }
        for (reduce, user, index) in [
            (first, first_user, first_index),
            (second, second_user, second_index),
        ] {
            let partial = reduce.operand(0).expect("one operand");
            ffi::set_operand(user, index, partial);
        }
        let result = Value::from(add.result(0).expect("one result"));
        reduce_in_place(context, first, result, add);
        // SAFETY: `first` is unused and no handle to it is used after this.
        unsafe { ffi::erase(first) };
        // SAFETY: `second` is unused and no handle to it is used after this.
        unsafe { ffi::erase(second) };
    }
}

/// `all_gather dim j (reshape x)` → `reshape (all_gather dim d x)` (see the module comment).
fn gather_before_reshape<'c>(context: &'c melior::Context, module: OperationRef<'c, '_>) {
    let mut gathers = Vec::new();
    ffi::walk(module, |op| {
        if is(op, ALL_GATHER) {
            gathers.push(op);
        }
    });
    for gather in gathers {
        let operand = gather.operand(0).expect("one operand");
        let Some(reshape) = ffi::result_owner(operand) else {
            continue;
        };
        let Some(dim) = hlo::integer_attribute(gather, "dim").map(|d| d as usize) else {
            continue;
        };
        let Some(source_dim) = crate::rules::layout_source_dim(reshape, dim) else {
            continue;
        };
        let source = reshape.operand(0).expect("a reshape has a source");
        let gathered = Value::from(gather.result(0).expect("one result"));
        let (Some(from), Some(to)) = (
            crate::ir::core::static_shape(operand.r#type()),
            crate::ir::core::static_shape(gathered.r#type()),
        ) else {
            continue;
        };
        let factor = to[dim] / from[dim].max(1);
        let Some(source_shape) = crate::ir::core::static_shape(source.r#type()) else {
            continue;
        };
        let wide_source = crate::ir::core::with_dim(
            source.r#type(),
            source_dim,
            source_shape[source_dim] * factor,
        );
        let mut attributes: Vec<(Identifier, melior::ir::Attribute)> = ["dim", "axes"]
            .iter()
            .map(|name| {
                (
                    Identifier::new(context, name),
                    gather.attribute(name).expect("verified"),
                )
            })
            .collect();
        attributes[0].1 = melior::ir::attribute::IntegerAttribute::new(
            melior::ir::r#type::IntegerType::new(context, 64).into(),
            source_dim as i64,
        )
        .into();
        let block = gather.block().expect("in a block");
        let new_gather = OperationBuilder::new(ALL_GATHER, gather.location())
            .add_operands(&[source])
            .add_attributes(&attributes)
            .add_results(&[wide_source])
            .build()
            .expect("partir_hlo.all_gather is registered");
        let new_gather = block.insert_operation_before(gather, new_gather);
        let mut reshape_attributes: Vec<(Identifier, melior::ir::Attribute)> = vec![(
            Identifier::new(context, "reassociation"),
            reshape.attribute("reassociation").expect("a reshape"),
        )];
        if reshape.attribute("static_output_shape").is_ok() {
            let sizes: Vec<i64> = to.clone();
            reshape_attributes.push((
                Identifier::new(context, "static_output_shape"),
                melior::ir::attribute::DenseI64ArrayAttribute::new(context, &sizes).into(),
            ));
        }
        let new_reshape = OperationBuilder::new(
            reshape.name().as_string_ref().as_str().unwrap_or(""),
            reshape.location(),
        )
        .add_operands(&[Value::from(new_gather.result(0).expect("one result"))])
        .add_attributes(&reshape_attributes)
        .add_results(&[gathered.r#type()])
        .build()
        .expect("tensor reshapes are registered");
        let new_reshape = block.insert_operation_before(gather, new_reshape);
        ffi::replace_all_uses(
            gathered,
            Value::from(new_reshape.result(0).expect("one result")),
        );
        // SAFETY: `gather` is unused and no handle to it is used after this.
        unsafe { ffi::erase(gather) };
        if ffi::uses(operand).is_empty() {
            // SAFETY: `reshape` is unused and no handle to it is used after this.
            unsafe { ffi::erase(reshape) };
        }
    }
}

pub fn run<'c>(context: &'c melior::Context, module: OperationRef<'c, '_>) {
    gather_before_reshape(context, module);
    defer_sums_past_adds(context, module);
    super::loop_sums::reduce_after_loops(context, module);
    let mut slices = Vec::new();
    ffi::walk(module, |op| {
        if is(op, ALL_SLICE) {
            slices.push(op);
        }
    });
    for slice in slices {
        let operand = slice.operand(0).expect("one operand");
        let Some(producer) = ffi::result_owner(operand) else {
            continue;
        };
        if !same_attribute(slice, producer, "axes") {
            split_reduce_before_slice(context, slice, producer);
            continue;
        }
        let result = Value::from(slice.result(0).expect("one result"));
        if is(producer, ALL_GATHER) && same_attribute(slice, producer, "dim") {
            let source = producer.operand(0).expect("one operand");
            ffi::replace_all_uses(result, source);
            // SAFETY: `slice` is unused and no handle to it is used after this.
            unsafe { ffi::erase(slice) };
            if ffi::uses(operand).is_empty() {
                // SAFETY: `producer` is unused and no handle to it is used after this.
                unsafe { ffi::erase(producer) };
            }
        } else if is(producer, ALL_REDUCE) && ffi::uses(operand).len() == 1 {
            let attributes = hlo::reduction_attributes(producer)
                .into_iter()
                .map(|(name, attribute)| (Identifier::new(context, name), attribute))
                .chain(std::iter::once((
                    Identifier::new(context, "dim"),
                    slice.attribute("dim").expect("verified all_slice"),
                )))
                .collect::<Vec<_>>();
            let scatter = OperationBuilder::new("partir_hlo.reduce_scatter", slice.location())
                .add_operands(&[producer.operand(0).expect("one operand")])
                .add_attributes(&attributes)
                .add_results(&[result.r#type()])
                .build()
                .expect("partir_hlo.reduce_scatter is registered");
            let block = slice.block().expect("in a block");
            let scatter = block.insert_operation_before(slice, scatter);
            ffi::replace_all_uses(result, Value::from(scatter.result(0).expect("one result")));
            // SAFETY: `slice` is unused and no handle to it is used after this.
            unsafe { ffi::erase(slice) };
            // SAFETY: `producer` is unused and no handle to it is used after this.
            unsafe { ffi::erase(producer) };
        }
    }
}

/// `all_slice dim d axes A (all_reduce axes A+B x)`, the reduce used only there →
/// `all_reduce axes B (reduce_scatter dim d axes A x)` (see the module docs). A and B keep the
/// reduce's order; the slice's axes must be the reduce's, in its order, less B.
fn split_reduce_before_slice<'c>(
    context: &'c melior::Context,
    slice: OperationRef<'c, '_>,
    producer: OperationRef<'c, '_>,
) {
    let operand = slice.operand(0).expect("one operand");
    if !is(producer, ALL_REDUCE) || producer.operand_count() != 1 || ffi::uses(operand).len() != 1 {
        return;
    }
    let (Some(sliced), Some(reduced)) =
        (hlo::collective_axes(slice), hlo::collective_axes(producer))
    else {
        return;
    };
    let rest: Vec<String> = reduced
        .iter()
        .filter(|axis| !sliced.contains(axis))
        .cloned()
        .collect();
    let in_order: Vec<&String> = reduced
        .iter()
        .filter(|axis| sliced.contains(axis))
        .collect();
    if rest.is_empty() || in_order.len() != sliced.len() || !in_order.into_iter().eq(sliced.iter())
    {
        return;
    }
    let [kind, _] = hlo::reduction_attributes(producer);
    let axes_of = |axes: &[String]| hlo::axes_attribute(context, axes);
    let result = Value::from(slice.result(0).expect("one result"));
    let block = slice.block().expect("in a block");
    let scatter = OperationBuilder::new("partir_hlo.reduce_scatter", slice.location())
        .add_operands(&[producer.operand(0).expect("one operand")])
        .add_attributes(&[
            (Identifier::new(context, kind.0), kind.1),
            (Identifier::new(context, "axes"), axes_of(&sliced)),
            (
                Identifier::new(context, "dim"),
                slice.attribute("dim").expect("verified all_slice"),
            ),
        ])
        .add_results(&[result.r#type()])
        .build()
        .expect("partir_hlo.reduce_scatter is registered");
    let scatter = block.insert_operation_before(slice, scatter);
    let reduce = OperationBuilder::new("partir_hlo.all_reduce", producer.location())
        .add_operands(&[Value::from(scatter.result(0).expect("one result"))])
        .add_attributes(&[
            (Identifier::new(context, kind.0), kind.1),
            (Identifier::new(context, "axes"), axes_of(&rest)),
        ])
        .add_results(&[result.r#type()])
        .build()
        .expect("partir_hlo.all_reduce is registered");
    let reduce = block.insert_operation_before(slice, reduce);
    ffi::replace_all_uses(result, Value::from(reduce.result(0).expect("one result")));
    // SAFETY: `slice` is unused and no handle to it is used after this.
    unsafe { ffi::erase(slice) };
    // SAFETY: `producer` is unused and no handle to it is used after this.
    unsafe { ffi::erase(producer) };
}
