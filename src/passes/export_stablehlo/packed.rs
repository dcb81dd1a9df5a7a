//! A combined `partir_hlo.reduce_scatter` exported as one `stablehlo.reduce_scatter`, whose
//! operand is one tensor: the packing XLA's reduce-scatter combiner does.

use super::{generic, generic_variadic};
use crate::ir::builder::Builder;
use melior::ir::{
    attribute::{DenseI64ArrayAttribute, IntegerAttribute},
    Attribute, Region, Type, Value, ValueLike,
};

/// A combined reduce_scatter as one `stablehlo.reduce_scatter` (whose operand is one tensor):
/// each operand with `dim` moved to the front and viewed as `[n, rest]` (device i's shard is
/// row i), the views concatenated along dim 1, scattered on dim 0, and each device's row cut
/// back into its operands' shards.
///
/// ```text
/// n = 4: %a [8, 4] on dim 0 -> a' = reshape a [4, 8]
///        %b [4, 8] on dim 1 -> b' = reshape (transpose b [8, 4]) [4, 8]
/// s = reduce_scatter (concatenate a', b' [4, 16]) dim 0 : [1, 16]
/// a = reshape s[:, 0:8] [2, 4];  b = transpose (reshape s[:, 8:16] [2, 4]) [4, 2]
/// ```
pub(super) fn packed_reduce_scatter<'c, 'a>(
    builder: &Builder<'c, 'a>,
    operands: &[Value<'c, 'a>],
    results: &[Type<'c>],
    dim: usize,
    devices: i64,
    groups: Attribute<'c>,
    combiner: Region<'c>,
) -> Vec<Value<'c, 'a>> {
    let context = builder.context();
    let shape_of = |ty: Type| -> Vec<i64> { crate::ir::core::static_shape(ty).unwrap_or_default() };
    let tensor = |shape: &[i64], like: Type<'c>| crate::ir::core::with_shape(like, shape);
    let dense =
        |values: &[i64]| -> Attribute<'c> { DenseI64ArrayAttribute::new(context, values).into() };
    let i64_attr = |value: i64| -> Attribute<'c> {
        IntegerAttribute::new(Type::parse(context, "i64").expect("i64"), value).into()
    };
    // The permutation that moves `dim` to the front, for a rank-`rank` value.
    let front = |rank: usize| -> Vec<i64> {
        std::iter::once(dim as i64)
            .chain((0..rank as i64).filter(|&d| d != dim as i64))
            .collect()
    };
    let mut rows = Vec::new();
    let mut widths = Vec::new();
    for &operand in operands {
        let shape = shape_of(operand.r#type());
        let permutation = front(shape.len());
        let moved: Vec<i64> = permutation.iter().map(|&d| shape[d as usize]).collect();
        let mut value = operand;
        if dim != 0 {
            value = generic(
                builder,
                "stablehlo.transpose",
                value,
                tensor(&moved, operand.r#type()),
                &[("permutation", dense(&permutation))],
                None,
            );
        }
        let width = moved.iter().product::<i64>() / devices;
        value = generic(
            builder,
            "stablehlo.reshape",
            value,
            tensor(&[devices, width], operand.r#type()),
            &[],
            None,
        );
        rows.push(value);
        widths.push(width);
    }
    let total: i64 = widths.iter().sum();
    let like = operands[0].r#type();
    let packed = generic_variadic(
        builder,
        "stablehlo.concatenate",
        &rows,
        &[tensor(&[devices, total], like)],
        &[("dimension", i64_attr(1))],
        None,
    )[0];
    let scattered = generic(
        builder,
        "stablehlo.reduce_scatter",
        packed,
        tensor(&[1, total], like),
        &[
            ("scatter_dimension", i64_attr(0)),
            ("replica_groups", groups),
        ],
        Some(combiner),
    );
    let mut offset = 0;
    let mut out = Vec::new();
    for ((&operand, &width), &result) in operands.iter().zip(&widths).zip(results) {
        let piece = generic(
            builder,
            "stablehlo.slice",
            scattered,
            tensor(&[1, width], like),
            &[
                ("start_indices", dense(&[0, offset])),
                ("limit_indices", dense(&[1, offset + width])),
                ("strides", dense(&[1, 1])),
            ],
            None,
        );
        offset += width;
        let local = shape_of(result);
        let permutation = front(local.len());
        let moved: Vec<i64> = permutation.iter().map(|&d| local[d as usize]).collect();
        let mut value = generic(
            builder,
            "stablehlo.reshape",
            piece,
            tensor(&moved, operand.r#type()),
            &[],
            None,
        );
        if dim != 0 {
            let mut inverse = vec![0; permutation.len()];
            for (i, &d) in permutation.iter().enumerate() {
                inverse[d as usize] = i as i64;
            }
            value = generic(
                builder,
                "stablehlo.transpose",
                value,
                result,
                &[("permutation", dense(&inverse))],
                None,
            );
        }
        out.push(value);
    }
    out
}
