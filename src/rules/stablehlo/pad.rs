//! StableHLO values padded on a dim (see [`crate::rules::pad`]): `stablehlo.pad` with zeros,
//! `stablehlo.slice` back, and the identity put where a reduction would read padding:
//!
//! ```text
//! %i = iota dim 0 : tensor<8xi32>
//! %k = compare LT, %i, dense<6>          rows 0..5 are real
//! %m = broadcast_in_dim %k, dims = [0] : tensor<8x32xi1>
//! %y = select %m, %x, dense<0.0>         what a sum over dim 0 reads
//! ```

use crate::{
    ffi,
    ir::{
        builder::{identity_for, Builder},
        core::{static_shape, with_shape},
    },
    rules::{model::Entries, pad::Padder},
    tmr::ReductionKind,
};
use melior::{
    ir::{
        attribute::DenseI64ArrayAttribute, operation::OperationLike, Attribute, OperationRef, Type,
        TypeLike, Value, ValueLike,
    },
    Context,
};

pub(super) fn register(rules: &mut Entries) {
    let padder = Padder {
        pad,
        slice,
        mask,
        reshape: Some(reshape),
    };
    rules.add_padder("stablehlo", padder);
    rules.add_padder("chlo", padder);
    rules.add_row_major_reshape("stablehlo.reshape");
    rules.add_grow("stablehlo.slice", grow_slice);
    rules.add_grow("stablehlo.pad", grow_pad);
}

/// A slice of stride 1 grown on `dim`: one `stablehlo.pad` cutting the same window with
/// negative edges, and reading on past `dim`'s limit (zeros past the operand's end).
///
/// ```text
/// slice %x [2:6]    : [8] -> [4]     grown to 8:   pad %x low -2 high 2 : [8] -> [8]
/// ```
fn grow_slice<'c, 'a>(
    context: &'c Context,
    op: OperationRef<'c, 'a>,
    dim: usize,
    to: i64,
) -> Option<Value<'c, 'a>> {
    let view = crate::rules::OpView::new(op);
    let (start, limit) = (view.dense("start_indices"), view.dense("limit_indices"));
    if view.dense("strides").iter().any(|&stride| stride != 1) {
        return None;
    }
    let operand = view.operand(0).ok()?;
    let low: Vec<i64> = start.iter().map(|&s| -s).collect();
    let mut high: Vec<i64> = limit.iter().zip(operand).map(|(&l, &n)| l - n).collect();
    *high.get_mut(dim)? += to - (limit[dim] - start[dim]);
    let value = op.operand(0).ok()?;
    let zero = zero_scalar(context, op, value)?;
    edge_padded(context, op, value, zero, &low, &high)
}

/// A rank-0 zero of `value`'s element type, before `anchor`: what padding pads with.
fn zero_scalar<'c, 'a>(
    context: &'c Context,
    anchor: OperationRef<'c, 'a>,
    value: Value<'c, 'a>,
) -> Option<Value<'c, 'a>> {
    splat(
        &Builder::before(context, anchor),
        &literal(0.0, ffi::shaped_element(value.r#type())),
        with_shape(value.r#type(), &[]),
    )
}

/// A pad without interior padding on `dim`, grown there: its high edge takes the growth.
fn grow_pad<'c, 'a>(
    context: &'c Context,
    op: OperationRef<'c, 'a>,
    dim: usize,
    to: i64,
) -> Option<Value<'c, 'a>> {
    let view = crate::rules::OpView::new(op);
    let (low, mut high) = (
        view.dense("edge_padding_low"),
        view.dense("edge_padding_high"),
    );
    if view.dense("interior_padding").iter().any(|&rows| rows != 0) {
        return None;
    }
    *high.get_mut(dim)? += to - view.result(0).ok()?.get(dim)?;
    edge_padded(
        context,
        op,
        op.operand(0).ok()?,
        op.operand(1).ok()?,
        &low,
        &high,
    )
}

/// `stablehlo.pad` of `value` with `padding` by these edges (none interior), before `anchor`.
fn edge_padded<'c, 'a>(
    context: &'c Context,
    anchor: OperationRef<'c, 'a>,
    value: Value<'c, 'a>,
    padding: Value<'c, 'a>,
    low: &[i64],
    high: &[i64],
) -> Option<Value<'c, 'a>> {
    let shape = static_shape(value.r#type())?;
    if low.len() != shape.len() || high.len() != shape.len() {
        return None;
    }
    let result: Vec<i64> = (0..shape.len())
        .map(|d| shape[d] + low[d] + high[d])
        .collect();
    if result.iter().any(|&rows| rows <= 0) {
        return None;
    }
    Some(Builder::before(context, anchor).value_of(
        "stablehlo.pad",
        &[value, padding],
        &[
            ("edge_padding_low", dense(context, low)),
            ("edge_padding_high", dense(context, high)),
            ("interior_padding", dense(context, &vec![0; shape.len()])),
        ],
        with_shape(value.r#type(), &result),
    ))
}

/// A splat of `literal` shaped `ty`.
fn splat<'c, 'a>(here: &Builder<'c, 'a>, literal: &str, ty: Type<'c>) -> Option<Value<'c, 'a>> {
    let value = Attribute::parse(here.context(), &format!("dense<{literal}> : {ty}"))?;
    Some(here.value_of("stablehlo.constant", &[], &[("value", value)], ty))
}

/// `value` as an MLIR literal of `element`: integers whole, infinities by their bits.
fn literal(value: f64, element: Type) -> String {
    if element.is_integer() {
        return format!("{}", value as i64);
    }
    if value.is_finite() {
        return format!("{value:?}");
    }
    let negative = value < 0.0;
    let bits = match (element.to_string().as_str(), negative) {
        ("f64", true) => "0xFFF0000000000000",
        ("f64", false) => "0x7FF0000000000000",
        ("f16", true) => "0xFC00",
        ("f16", false) => "0x7C00",
        ("bf16", true) => "0xFF80",
        ("bf16", false) => "0x7F80",
        (_, true) => "0xFF800000",
        (_, false) => "0x7F800000",
    };
    bits.to_string()
}

fn dense<'c>(context: &'c Context, values: &[i64]) -> Attribute<'c> {
    DenseI64ArrayAttribute::new(context, values).into()
}

fn pad<'c, 'a>(
    context: &'c Context,
    anchor: OperationRef<'c, 'a>,
    value: Value<'c, 'a>,
    dim: usize,
    to: i64,
) -> Option<Value<'c, 'a>> {
    let shape = static_shape(value.r#type())?;
    let zero = zero_scalar(context, anchor, value)?;
    let mut high = vec![0; shape.len()];
    high[dim] = to - shape[dim];
    edge_padded(context, anchor, value, zero, &vec![0; shape.len()], &high)
}

fn reshape<'c, 'a>(
    context: &'c Context,
    anchor: OperationRef<'c, 'a>,
    value: Value<'c, 'a>,
    shape: &[i64],
) -> Option<Value<'c, 'a>> {
    let here = Builder::before(context, anchor);
    Some(here.value_of(
        "stablehlo.reshape",
        &[value],
        &[],
        with_shape(value.r#type(), shape),
    ))
}

fn slice<'c, 'a>(
    context: &'c Context,
    anchor: OperationRef<'c, 'a>,
    value: Value<'c, 'a>,
    dim: usize,
    size: i64,
) -> Option<Value<'c, 'a>> {
    let mut limit = static_shape(value.r#type())?;
    limit[dim] = size;
    let here = Builder::before(context, anchor);
    Some(here.value_of(
        "stablehlo.slice",
        &[value],
        &[
            ("start_indices", dense(context, &vec![0; limit.len()])),
            ("limit_indices", dense(context, &limit)),
            ("strides", dense(context, &vec![1; limit.len()])),
        ],
        with_shape(value.r#type(), &limit),
    ))
}

fn mask<'c, 'a>(
    context: &'c Context,
    anchor: OperationRef<'c, 'a>,
    value: Value<'c, 'a>,
    dim: usize,
    size: i64,
    kind: ReductionKind,
) -> Option<Value<'c, 'a>> {
    let shape = static_shape(value.r#type())?;
    let element = ffi::shaped_element(value.r#type());
    let here = Builder::before(context, anchor);
    let counts = with_shape(Type::parse(context, "tensor<i32>")?, &[shape[dim]]);
    let iota = here.value_of(
        "stablehlo.iota",
        &[],
        &[("iota_dimension", Attribute::parse(context, "0 : i64")?)],
        counts,
    );
    let limit = splat(&here, &size.to_string(), counts)?;
    let bits = with_shape(Type::parse(context, "tensor<i1>")?, &[shape[dim]]);
    let real = here.value_of(
        "stablehlo.compare",
        &[iota, limit],
        &[(
            "comparison_direction",
            Attribute::parse(context, "#stablehlo<comparison_direction LT>")?,
        )],
        bits,
    );
    let spread = here.value_of(
        "stablehlo.broadcast_in_dim",
        &[real],
        &[("broadcast_dimensions", dense(context, &[dim as i64]))],
        with_shape(bits, &shape),
    );
    let identity = splat(
        &here,
        &literal(identity_for(kind, element), element),
        value.r#type(),
    )?;
    Some(here.value_of(
        "stablehlo.select",
        &[spread, value, identity],
        &[],
        value.r#type(),
    ))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn identities_are_spelled_as_mlir_reads_them() {
        let context = Context::new();
        let f32_type = Type::parse(&context, "f32").unwrap();
        let i32_type = Type::parse(&context, "i32").unwrap();
        let bf16 = Type::parse(&context, "bf16").unwrap();
        assert_eq!(literal(0.0, f32_type), "0.0");
        assert_eq!(literal(f64::NEG_INFINITY, f32_type), "0xFF800000");
        assert_eq!(literal(f64::INFINITY, bf16), "0x7F80");
        assert_eq!(literal(i32::MIN as f64, i32_type), "-2147483648");
    }
}
