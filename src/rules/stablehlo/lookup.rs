//! Vocab-parallel lookups: a `gather` whose table is split along the dim its ids look up
//! (Megatron's vocab-parallel embedding; the label logit of a cross-entropy on vocab-split
//! logits), and the `scatter`-add of its gradient. Device `r` holds rows `[r·c, (r+1)·c)`:
//!
//! ```text
//! %g = gather(%table, %ids)                 // in a loop over A (range %r), table rows V/k = c
//! ==>
//! %o   = partir.slice 0 (constant [0, c, 2c, ...])[%r]   // this device's first row
//! %rel = %ids - broadcast(reshape(%o))
//! %in  = %rel >= 0 and %rel < c
//! %g   = gather(%table, clamp(0, %rel, c - 1))
//! %y   = select(broadcast(%in), %g, 0)                     // a partial sum: #partir.sum
//! ```
//! A scatter-add masks its updates instead (`select(%in, %updates, 0)`) and its result is the
//! device's rows (a tile). Clamping keeps every index in range, so nothing here relies on an
//! engine's out-of-bounds convention.

use crate::{
    ffi,
    ir::{attrs::RangeType, builder::Builder, core},
};
use melior::{
    ir::{
        attribute::DenseI64ArrayAttribute, block::BlockLike, operation::OperationLike,
        r#type::RankedTensorType, Attribute, OperationRef, Type, Value, ValueLike,
    },
    Context,
};

/// Where a one-component index sits: the operand dim it looks up and the indices' vector dim
/// (`rank` when implicit).
#[derive(Clone, Copy, Debug)]
pub(super) struct Lookup {
    pub dim: usize,
    pub vector_dim: usize,
}

impl Lookup {
    /// The dim a gather or scatter looks up one row of, when its index vector has exactly one
    /// component (an embedding, `take_along_axis`) and the row is one element wide there.
    pub fn of(
        start_map: &[usize],
        vector_dim: usize,
        indices: &[i64],
        window: &[i64],
    ) -> Option<Self> {
        let [dim] = start_map else { return None };
        let one_component = indices.get(vector_dim).is_none_or(|&n| n == 1);
        (one_component && window.get(*dim) == Some(&1)).then_some(Self {
            dim: *dim,
            vector_dim,
        })
    }
}

/// What a masked lookup needs: the device's range, the rows it holds and how many devices.
struct Split<'c, 'a> {
    range: Value<'c, 'a>,
    /// The op under the range's loop body that holds the lookup (the lookup itself, or a
    /// `stablehlo.while` around it): offsets are computed in front of it.
    top: OperationRef<'c, 'a>,
    rows: i64,
    parts: i64,
}

/// The split of `lookup.dim` of operand `table`: rows now and before; `None` when unsplit.
fn split<'c, 'a>(
    op: OperationRef<'c, 'a>,
    table: usize,
    lookup: Lookup,
    before: &[i64],
) -> Option<Split<'c, 'a>> {
    let now = core::static_shape(op.operand(table).ok()?.r#type())?;
    let (was, rows) = (*before.get(lookup.dim)?, *now.get(lookup.dim)?);
    if was == rows || rows <= 0 || was % rows != 0 {
        return None;
    }
    let parts = was / rows;
    // The innermost enclosing block whose first argument is a range of `parts`: the loop
    // that split the table (propagation's body, detached while it is built).
    let mut top = op;
    loop {
        let block = top.block()?;
        if let Ok(argument) = block.argument(0) {
            let argument = Value::from(argument);
            if RangeType::try_from(argument.r#type()).is_ok_and(|r| r.size() == parts) {
                return Some(Split {
                    range: argument,
                    top,
                    rows,
                    parts,
                });
            }
        }
        top = block.parent_operation()?;
    }
}

/// The lookup's ids relative to this device's rows, clamped into them, and whether each id
/// is this device's (`i1`, shaped like the ids).
struct Masked<'c, 'a> {
    clamped: Value<'c, 'a>,
    mine: Value<'c, 'a>,
}

fn mask<'c, 'a>(
    context: &'c Context,
    op: OperationRef<'c, 'a>,
    ids: Value<'c, 'a>,
    split: &Split<'c, 'a>,
) -> Option<Masked<'c, 'a>> {
    let shape = core::static_shape(ids.r#type())?;
    let element = ffi::shaped_element(ids.r#type());
    let tensor = |dims: &[i64], element: Type<'c>| -> Type<'c> {
        let dims: Vec<u64> = dims.iter().map(|&d| d as u64).collect();
        RankedTensorType::new(&dims, element, None).into()
    };
    let constant = |builder: &Builder<'c, 'a>, text: String, ty: Type<'c>| {
        let value = Attribute::parse(context, &format!("{text} : {ty}"))?;
        Some(Value::from(
            builder
                .op("stablehlo.constant", &[], &[("value", value)], &[ty])
                .result(0)
                .ok()?,
        ))
    };
    // The offsets are made next to the loop body's op (outside any region of it), so the
    // slice is one lowering materialises as this device's chunk.
    let outer = Builder::before(context, split.top);
    let starts: Vec<String> = (0..split.parts)
        .map(|r| (r * split.rows).to_string())
        .collect();
    let all = constant(
        &outer,
        format!("dense<[{}]>", starts.join(", ")),
        tensor(&[split.parts], element),
    )?;
    let one = tensor(&[1], element);
    let mine_start = Value::from(
        outer
            .insert(core::slice(
                context,
                all,
                split.range,
                0,
                one,
                outer.location(),
            ))
            .result(0)
            .ok()?,
    );
    let scalar = tensor(&[], element);
    let start = outer.op("stablehlo.reshape", &[mine_start], &[], &[scalar]);
    let start = Value::from(start.result(0).ok()?);
    let here = Builder::before(context, op);
    let broadcast = |value: Value<'c, 'a>, ty: Type<'c>| -> Option<Value<'c, 'a>> {
        let dims = DenseI64ArrayAttribute::new(context, &[]).into();
        Some(Value::from(
            here.op(
                "stablehlo.broadcast_in_dim",
                &[value],
                &[("broadcast_dimensions", dims)],
                &[ty],
            )
            .result(0)
            .ok()?,
        ))
    };
    let start = broadcast(start, ids.r#type())?;
    let relative = Value::from(
        here.op("stablehlo.subtract", &[ids, start], &[], &[ids.r#type()])
            .result(0)
            .ok()?,
    );
    let zero = constant(&here, "dense<0>".into(), scalar)?;
    let last = constant(&here, format!("dense<{}>", split.rows - 1), scalar)?;
    let bits = tensor(
        &shape,
        melior::ir::r#type::IntegerType::new(context, 1).into(),
    );
    let compare = |lhs: Value<'c, 'a>, direction: &str, rhs: Value<'c, 'a>| {
        let direction = Attribute::parse(
            context,
            &format!("#stablehlo<comparison_direction {direction}>"),
        )?;
        Some(Value::from(
            here.op(
                "stablehlo.compare",
                &[lhs, rhs],
                &[("comparison_direction", direction)],
                &[bits],
            )
            .result(0)
            .ok()?,
        ))
    };
    let (zeros, lasts) = (
        broadcast(zero, ids.r#type())?,
        broadcast(last, ids.r#type())?,
    );
    let above = compare(relative, "GE", zeros)?;
    let below = compare(relative, "LE", lasts)?;
    let mine = Value::from(
        here.op("stablehlo.and", &[above, below], &[], &[bits])
            .result(0)
            .ok()?,
    );
    let clamped = Value::from(
        here.op(
            "stablehlo.clamp",
            &[zero, relative, last],
            &[],
            &[ids.r#type()],
        )
        .result(0)
        .ok()?,
    );
    Some(Masked { clamped, mine })
}

/// `mine` (shaped like the ids) spread over `target`'s shape: the ids' dims other than the
/// vector dim sit at `positions` of `target`.
fn spread<'c, 'a>(
    context: &'c Context,
    builder: &Builder<'c, 'a>,
    mine: Value<'c, 'a>,
    lookup: Lookup,
    positions: &[usize],
    target: &[i64],
) -> Option<Value<'c, 'a>> {
    let shape = core::static_shape(mine.r#type())?;
    let kept: Vec<u64> = shape
        .iter()
        .enumerate()
        .filter(|&(d, _)| d != lookup.vector_dim)
        .map(|(_, &n)| n as u64)
        .collect();
    let bit = ffi::shaped_element(mine.r#type());
    let squeezed = Value::from(
        builder
            .op(
                "stablehlo.reshape",
                &[mine],
                &[],
                &[RankedTensorType::new(&kept, bit, None).into()],
            )
            .result(0)
            .ok()?,
    );
    let positions: Vec<i64> = positions.iter().map(|&p| p as i64).collect();
    let target: Vec<u64> = target.iter().map(|&d| d as u64).collect();
    Some(Value::from(
        builder
            .op(
                "stablehlo.broadcast_in_dim",
                &[squeezed],
                &[(
                    "broadcast_dimensions",
                    DenseI64ArrayAttribute::new(context, &positions).into(),
                )],
                &[RankedTensorType::new(&target, bit, None).into()],
            )
            .result(0)
            .ok()?,
    ))
}

/// `select(mask, value, 0)` in front of `anchor`.
fn zero_where_not<'c, 'a>(
    context: &'c Context,
    builder: &Builder<'c, 'a>,
    mask: Value<'c, 'a>,
    value: Value<'c, 'a>,
) -> Option<Value<'c, 'a>> {
    let ty = value.r#type();
    let zero = Attribute::parse(context, &format!("dense<0.0> : {ty}"))
        .or_else(|| Attribute::parse(context, &format!("dense<0> : {ty}")))?;
    let zeros = Value::from(
        builder
            .op("stablehlo.constant", &[], &[("value", zero)], &[ty])
            .result(0)
            .ok()?,
    );
    Some(Value::from(
        builder
            .op("stablehlo.select", &[mask, value, zeros], &[], &[ty])
            .result(0)
            .ok()?,
    ))
}

/// The lookup's ids (operand 1) made relative to this device's rows and clamped, and `value`
/// (the result or the updates, whose dims at `positions` are the ids' other dims) zeroed where
/// an id is another device's, built with `at`. None when the table is not split.
fn zeroed_elsewhere<'c, 'a>(
    context: &'c Context,
    op: OperationRef<'c, 'a>,
    lookup: Lookup,
    positions: &[usize],
    before: &[i64],
    value: Value<'c, 'a>,
    at: &Builder<'c, 'a>,
) -> Option<Value<'c, 'a>> {
    let split = split(op, 0, lookup, before)?;
    let masked = mask(context, op, op.operand(1).ok()?, &split)?;
    ffi::set_operand(op, 1, masked.clamped);
    let shape = core::static_shape(value.r#type())?;
    let mine = spread(context, at, masked.mine, lookup, positions, &shape)?;
    zero_where_not(context, at, mine, value)
}

/// A gather whose table (operand 0) was split along `lookup.dim`: its ids are made relative
/// and clamped, and rows of other devices read as zeros (the loop sums the devices' results).
/// `batch`: the result dims the ids' other dims become.
pub(super) fn mask_gather<'c>(
    context: &'c Context,
    op: OperationRef<'c, '_>,
    lookup: Lookup,
    batch: &[usize],
    before: &[i64],
) {
    let (Ok(result), Some(next)) = (op.result(0), op.next_in_block()) else {
        return;
    };
    let result = Value::from(result);
    let uses = ffi::uses(result);
    let after = Builder::before(context, next);
    if let Some(selected) = zeroed_elsewhere(context, op, lookup, batch, before, result, &after) {
        for (user, index) in uses {
            ffi::set_operand(user, index, selected);
        }
    }
}

/// A scatter-add whose input and result (operand 0) were split along `lookup.dim`: ids are made
/// relative and clamped, and updates for other devices' rows are zeros. `scatter`: the
/// updates' dims the ids' other dims are.
pub(super) fn mask_scatter<'c>(
    context: &'c Context,
    op: OperationRef<'c, '_>,
    lookup: Lookup,
    scatter: &[usize],
    before: &[i64],
) {
    let Ok(updates) = op.operand(2) else { return };
    let here = Builder::before(context, op);
    if let Some(selected) = zeroed_elsewhere(context, op, lookup, scatter, before, updates, &here) {
        ffi::set_operand(op, 2, selected);
    }
}
