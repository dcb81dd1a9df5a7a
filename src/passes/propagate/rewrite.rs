//! The rewrites of propagation: wrap a payload in a loop over an axis, and cancel slices of
//! tile-action views.

use super::view::{self, name_of};
use crate::{
    ffi,
    ir::{
        attrs::{Action, RangeType},
        builder::Builder,
        core::{self, static_shape, with_dim},
    },
    rules,
    tmr::{ReductionKind, ResultTiling, TileEffect},
};
use melior::{
    ir::{
        block::BlockLike, operation::OperationLike, Block, OperationRef, Region, RegionLike, Value,
        ValueLike,
    },
    Context,
};

/// A partial result whose accumulator is not the reduction's identity: each iteration starts
/// from the identity instead, and the loop's sum is combined with the accumulator after it.
#[derive(Clone, Copy, Debug)]
pub struct FreshInit {
    pub result: usize,
    /// The init operand of `result`.
    pub init: usize,
    pub kind: ReductionKind,
}

/// Wraps payload `op` in `partir.loop axis` per `effect`, right where it is:
/// ```mlir
/// %y = linalg.matmul ins(%x, %w) outs(%f)          // effect: x, f sliced on 0; y tiled on 0
/// ==>
/// %y = partir.loop "batch" [#partir.tile<0>] (%r: !partir.range<4>) {
///   %xs = partir.slice 0 %x[%r] ...   %fs = partir.slice 0 %f[%r] ...
///   %ys = linalg.matmul ins(%xs, %w) outs(%fs)
///   partir.yield %ys
/// }
/// ```
/// Slices of a tile-action view on the same axis and dim read the view's source directly.
/// With `fresh_inits`, `%y = matmul ins(%a, %b) outs(%bias)` tiled on its contracted dim is
/// `%f = fill 0.0; %p = loop [#sum] { matmul ins(slices) outs(%f) }; %y = linalg.add %bias, %p`.
pub fn wrap<'c>(
    context: &'c Context,
    op: OperationRef<'c, '_>,
    axis: &str,
    axis_size: i64,
    effect: &TileEffect,
    fresh_inits: &[FreshInit],
) {
    let outside = Builder::before(context, op);
    let location = op.location();
    let body = Block::new(&[(RangeType::new(context, axis_size).into(), location)]);
    let range: Value = body.argument(0).expect("one argument").into();
    // Operands, then the values the op's regions capture when its rule takes them as inputs
    // (a `lax.cond`'s branches): those are sliced alike and read through their slices.
    let inputs = rules::inputs(op);
    let mut operands = Vec::new();
    for &operand in &inputs {
        let index = operands.len();
        operands.push(match effect.operands.get(index).copied().flatten() {
            Some(dim) => {
                let source = cancel_view(operand, dim, axis);
                let whole =
                    static_shape(source.r#type()).expect("tiled operands are static tensors");
                let chunk = with_dim(source.r#type(), dim, whole[dim] / axis_size);
                let slice = body
                    .append_operation(core::slice(context, source, range, dim, chunk, location));
                Value::from(slice.result(0).expect("one result"))
            }
            None => match fresh_inits.iter().find(|fresh| fresh.init == index) {
                Some(fresh) => outside.filled(
                    operand.r#type(),
                    fresh
                        .kind
                        .identity()
                        .expect("fresh inits have a known kind"),
                ),
                None => operand,
            },
        });
    }
    // Shapes before tiling, for ops whose attributes spell out sizes (rank-reducing slices).
    let shape_of = |value: Value| static_shape(value.r#type()).unwrap_or_default();
    let before = rules::Shapes {
        operands: inputs.iter().map(|&value| shape_of(value)).collect(),
        results: op.results().map(|r| shape_of(r.into())).collect(),
        local_inputs: operands.iter().map(|&value| shape_of(value)).collect(),
    };
    let clone = body.append_operation(ffi::clone_operation(op));
    let count = op.operand_count();
    for (index, operand) in operands.iter().take(count).enumerate() {
        ffi::set_operand(clone, index, *operand);
    }

    let mut actions = Vec::new();
    let mut results = Vec::new();
    for (index, tiling) in effect.results.iter().enumerate() {
        let result = Value::from(clone.result(index).expect("in range"));
        let whole = result.r#type();
        match *tiling {
            ResultTiling::Tile(dim) => {
                let size = static_shape(whole).expect("tiled results are static tensors")[dim];
                result.set_type(with_dim(whole, dim, size / axis_size));
                actions.push(Action::Tile(dim).to_attribute(context));
            }
            ResultTiling::Sum(kind) => actions.push(Action::Sum(kind).to_attribute(context)),
            ResultTiling::Same => actions.push(Action::Any.to_attribute(context)),
        }
        results.push(whole);
        let _ = result;
    }
    // Yielded first: a retype that rewrites the op's local form (a masked lookup) replaces
    // the uses of its results.
    let yielded: Vec<Value> = clone.results().map(Value::from).collect();
    body.append_operation(core::yield_(context, &yielded, location));
    rules::retype(context, clone, &before);
    // After the retype, which reads the regions' ops with the types they had.
    for (captured, local) in inputs.iter().zip(&operands).skip(count) {
        if captured != local {
            replace_uses_under(*captured, *local, clone);
        }
    }
    let region = Region::new();
    region.append_block(body);
    let new_loop = core::loop_(context, axis, &actions, &results, region, location);
    let block = op.block().expect("payloads live in blocks");
    let new_loop = block.insert_operation_before(op, new_loop);
    for index in 0..op.result_count() {
        let mut result = Value::from(new_loop.result(index).expect("in range"));
        if let Some(fresh) = fresh_inits.iter().find(|fresh| fresh.result == index) {
            let accumulator = op.operand(fresh.init).expect("in range");
            result = outside.combine(fresh.kind, accumulator, result);
        }
        ffi::replace_all_uses(Value::from(op.result(index).expect("in range")), result);
    }
    // SAFETY: `op` is unused and no handle to it is used after this.
    unsafe { ffi::erase(op) };
}

/// Uses of `value` inside `op`'s regions read `with` instead.
fn replace_uses_under<'c, 'a>(value: Value<'c, 'a>, with: Value<'c, 'a>, op: OperationRef<'c, 'a>) {
    for (user, index) in ffi::uses(value) {
        let mut at = user.parent_operation();
        while let Some(parent) = at {
            if parent == op {
                ffi::set_operand(user, index, with);
                break;
            }
            at = parent.parent_operation();
        }
    }
}

/// `slice d (view over x on axis, dim d)` is `slice d x`: read the view's source.
fn cancel_view<'c: 'a, 'a>(value: Value<'c, 'a>, dim: usize, axis: &str) -> Value<'c, 'a> {
    match ffi::result_owner(value).and_then(view::identity_view) {
        Some((source, view_dim, view_axis)) if view_dim == dim && view_axis == axis => source,
        _ => value,
    }
}

/// After propagation along `axis`: slices of tile-action views on the same axis and dim read
/// the view's source, and views nobody uses any more are erased.
pub fn cancel_views(func: OperationRef, axis: &str) {
    let mut views = Vec::new();
    ffi::walk(func, |op| {
        if view::identity_view(op).is_some_and(|(_, _, view_axis)| view_axis == axis) {
            views.push(op);
        }
    });
    for view_op in views {
        let (source, dim, _) = view::identity_view(view_op).expect("collected above");
        let result = Value::from(view_op.result(0).expect("one result"));
        // A view of a value that is already tiled on the same dim along the axis (a tiled
        // named result whose producer backward propagation wrapped) is that value:
        // `loop A [tile<d>] { yield slice d (loop A [tile<d>] {.. yield v})[r] }` puts every
        // chunk back where it came from. Its users read the tiled value instead.
        if view::tiling(source, axis) == Some(dim) {
            ffi::replace_all_uses(result, source);
            // SAFETY: `view_op` is unused and no handle to it is used after this.
            unsafe { ffi::erase(view_op) };
            continue;
        }
        for (user, index) in ffi::uses(result) {
            let same_slice = name_of(user) == core::SLICE_OP
                && view::slice_dim(user) == Some(dim)
                && core::slice_axis(user).as_deref() == Some(axis);
            if same_slice && index == 0 {
                ffi::set_operand(user, 0, source);
            }
        }
        if ffi::uses(result).is_empty() {
            // SAFETY: `view_op` is unused and no handle to it is used after this.
            unsafe { ffi::erase(view_op) };
        }
    }
}
