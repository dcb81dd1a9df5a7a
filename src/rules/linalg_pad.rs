//! Linalg programs' values padded on a dim (see [`crate::rules::pad`]): zeros inserted into a
//! zero-filled tensor, `tensor.extract_slice` back, and the identity put where a reduction
//! would read padding, by an elementwise `linalg.generic` reading a constant row of flags:
//!
//! ```text
//! %z = linalg.fill ins(0.0) outs(tensor.empty : tensor<8x32xf32>)
//! %p = tensor.insert_slice %x into %z[0, 0] [6, 32] [1, 1]          the pad
//! %k = arith.constant dense<[true, true, true, true, true, true, false, false]> : tensor<8xi1>
//! %y = linalg.generic ins(%x, %k) outs(tensor.empty) {             what a sum over dim 0 reads
//!        ^bb0(%v: f32, %real: i1, %_: f32): linalg.yield (arith.select %real, %v, 0.0) }
//! ```
//!
//! The flags are a constant rather than `linalg.index`: a loop dim read by `linalg.index` must
//! stay whole, while a constant operand is sliced where it is read, so the mask partitions with
//! the value it masks and moves nothing.

use crate::{
    ir::builder::{element_type, identity_for, Builder},
    ir::core::{static_shape, with_shape},
    rules::{model::Entries, pad::Padder},
    tmr::ReductionKind,
};
use melior::{
    ir::{
        attribute::{
            ArrayAttribute, DenseI32ArrayAttribute, DenseI64ArrayAttribute, FloatAttribute,
            IntegerAttribute,
        },
        operation::OperationBuilder,
        r#type::IntegerType,
        Attribute, Block, BlockLike, Identifier, OperationRef, Region, RegionLike, Type, TypeLike,
        Value, ValueLike,
    },
    Context,
};

pub(super) fn register(rules: &mut Entries) {
    let padder = Padder {
        pad,
        slice,
        mask,
        reshape: None,
    };
    for dialect in ["linalg", "tensor", "arith"] {
        rules.add_padder(dialect, padder);
    }
    // Its reassociation groups dims and its result type says their sizes.
    rules.add_row_major_reshape("tensor.collapse_shape");
}

fn dense<'c>(context: &'c Context, values: &[i64]) -> Attribute<'c> {
    DenseI64ArrayAttribute::new(context, values).into()
}

/// Static offsets (zeros), sizes and unit strides of the block `[0, shape)`.
fn block<'c>(context: &'c Context, shape: &[i64]) -> [(&'static str, Attribute<'c>); 3] {
    [
        ("static_offsets", dense(context, &vec![0; shape.len()])),
        ("static_sizes", dense(context, shape)),
        ("static_strides", dense(context, &vec![1; shape.len()])),
    ]
}

fn pad<'c, 'a>(
    context: &'c Context,
    anchor: OperationRef<'c, 'a>,
    value: Value<'c, 'a>,
    dim: usize,
    to: i64,
) -> Option<Value<'c, 'a>> {
    let shape = static_shape(value.r#type())?;
    let mut padded = shape.clone();
    padded[dim] = to;
    let here = Builder::before(context, anchor);
    let zeros = here.filled(with_shape(value.r#type(), &padded), 0.0);
    let [offsets, sizes, strides] = block(context, &shape);
    Some(here.value_of(
        "tensor.insert_slice",
        &[value, zeros],
        &[
            offsets,
            sizes,
            strides,
            (
                "operandSegmentSizes",
                DenseI32ArrayAttribute::new(context, &[1, 1, 0, 0, 0]).into(),
            ),
        ],
        zeros.r#type(),
    ))
}

fn slice<'c, 'a>(
    context: &'c Context,
    anchor: OperationRef<'c, 'a>,
    value: Value<'c, 'a>,
    dim: usize,
    size: i64,
) -> Option<Value<'c, 'a>> {
    let mut shape = static_shape(value.r#type())?;
    shape[dim] = size;
    let here = Builder::before(context, anchor);
    let [offsets, sizes, strides] = block(context, &shape);
    Some(here.value_of(
        "tensor.extract_slice",
        &[value],
        &[
            offsets,
            sizes,
            strides,
            (
                "operandSegmentSizes",
                DenseI32ArrayAttribute::new(context, &[1, 0, 0, 0]).into(),
            ),
        ],
        with_shape(value.r#type(), &shape),
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
    let element = element_type(value.r#type());
    let here = Builder::before(context, anchor);
    let location = here.location();
    let bit: Type = IntegerType::new(context, 1).into();
    let flags_type = with_shape(Type::parse(context, "tensor<i1>")?, &[shape[dim]]);
    let flags: Vec<&str> = (0..shape[dim])
        .map(|position| if position < size { "true" } else { "false" })
        .collect();
    let flags = here.constant(
        Attribute::parse(
            context,
            &format!("dense<[{}]> : {flags_type}", flags.join(", ")),
        )?,
        flags_type,
    );
    let empty = here.empty(value.r#type());
    let rank = shape.len();
    let dims: Vec<String> = (0..rank).map(|d| format!("d{d}")).collect();
    let map = |results: &str| {
        Attribute::parse(
            context,
            &format!("affine_map<({}) -> ({results})>", dims.join(", ")),
        )
    };
    let whole = map(&dims.join(", "))?;
    let maps = ArrayAttribute::new(context, &[whole, map(&dims[dim])?, whole]);
    let parallel = Attribute::parse(context, "#linalg.iterator_type<parallel>")?;
    let iterators = ArrayAttribute::new(context, &vec![parallel; rank]);
    // The body: `select(real, v, identity)`, the identity made inside (nothing captured).
    let body = Block::new(&[(element, location), (bit, location), (element, location)]);
    let identity = identity_for(kind, element);
    let scalar: Attribute = if element.is_integer() {
        IntegerAttribute::new(element, identity as i64).into()
    } else {
        FloatAttribute::new(context, element, identity).into()
    };
    let constant = body.append_operation(
        OperationBuilder::new("arith.constant", location)
            .add_attributes(&[(Identifier::new(context, "value"), scalar)])
            .add_results(&[element])
            .build()
            .ok()?,
    );
    let kept = body.append_operation(
        OperationBuilder::new("arith.select", location)
            .add_operands(&[
                body.argument(1).ok()?.into(),
                body.argument(0).ok()?.into(),
                constant.result(0).ok()?.into(),
            ])
            .add_results(&[element])
            .build()
            .ok()?,
    );
    body.append_operation(
        OperationBuilder::new("linalg.yield", location)
            .add_operands(&[kept.result(0).ok()?.into()])
            .build()
            .ok()?,
    );
    let region = Region::new();
    region.append_block(body);
    let generic = OperationBuilder::new("linalg.generic", location)
        .add_attributes(&[
            (Identifier::new(context, "indexing_maps"), maps.into()),
            (Identifier::new(context, "iterator_types"), iterators.into()),
            (
                Identifier::new(context, "operandSegmentSizes"),
                DenseI32ArrayAttribute::new(context, &[2, 1]).into(),
            ),
        ])
        .add_operands(&[value, flags, empty])
        .add_results(&[value.r#type()])
        .add_regions([region])
        .build()
        .ok()?;
    Some(here.value(generic))
}
