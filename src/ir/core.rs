//! Builders and matchers for PartIR:Core ops (`partir.loop`, `slice`, `permute`, `yield`,
//! `replicate`).

use crate::{
    ffi,
    ir::attrs::{Action, RangeType, TileAttr},
};
use melior::{
    ir::{
        attribute::{ArrayAttribute, IntegerAttribute, StringAttribute},
        operation::{OperationBuilder, OperationLike},
        r#type::{IntegerType, RankedTensorType},
        Attribute, Block, BlockLike, Identifier, Location, Operation, OperationRef, Region,
        RegionLike, ShapedTypeLike, Type, Value, ValueLike,
    },
    Context,
};

pub const LOOP_OP: &str = "partir.loop";
pub const SLICE_OP: &str = "partir.slice";
pub const YIELD_OP: &str = "partir.yield";
pub const REPLICATE_OP: &str = "partir.replicate";
pub const PERMUTE_OP: &str = "partir.permute";

/// Static shape of a ranked tensor type (None for any other type or a dynamic dim).
pub fn static_shape(ty: Type) -> Option<Vec<i64>> {
    ffi::tensor_shape(ty)?.into_iter().collect()
}

/// The same tensor type with `dim` resized to `size`.
pub fn with_dim<'c>(ty: Type<'c>, dim: usize, size: i64) -> Type<'c> {
    let mut shape = static_shape(ty).expect("static");
    shape[dim] = size;
    with_shape(ty, &shape)
}

/// The same tensor type (element, encoding) with shape `shape`.
pub fn with_shape<'c>(ty: Type<'c>, shape: &[i64]) -> Type<'c> {
    let tensor = RankedTensorType::try_from(ty).expect("a ranked tensor");
    let dims: Vec<u64> = shape.iter().map(|&size| size as u64).collect();
    RankedTensorType::new(&dims, tensor.element(), tensor.encoding()).into()
}

/// `tile(v, dim, axis)` as an identity loop over `axis`:
/// ```mlir
/// %v2 = partir.loop "batch" [#partir.tile<0>] (%r: !partir.range<4>) {
///   %s = partir.slice 0 %v[%r] : tensor<32x64xf32> -> tensor<8x64xf32>
///   partir.yield %s : tensor<8x64xf32>
/// } : tensor<32x64xf32>
/// ```
pub fn tile_identity<'c>(
    context: &'c Context,
    value: Value<'c, '_>,
    dim: usize,
    axis: &str,
    axis_size: i64,
    location: Location<'c>,
) -> Operation<'c> {
    let whole = value.r#type();
    chunk_loop(
        context,
        axis,
        axis_size,
        dim,
        whole,
        location,
        |range, chunk| slice(context, value, range, dim, chunk, location),
    )
}

/// `partir.loop AXIS [#tile<DIM>] (%r) { %c = CHUNK(%r); yield %c } : WHOLE`: a value of type
/// `whole` tiled on `dim`, each iteration's chunk made by one op (`chunk` builds it from the
/// range and the chunk's type): a slice in a tile identity, a permute in a rotation.
pub fn chunk_loop<'c>(
    context: &'c Context,
    axis: &str,
    axis_size: i64,
    dim: usize,
    whole: Type<'c>,
    location: Location<'c>,
    chunk: impl FnOnce(Value<'c, '_>, Type<'c>) -> Operation<'c>,
) -> Operation<'c> {
    let whole_size = static_shape(whole).expect("tile checks static shapes first")[dim];
    let chunk_type = with_dim(whole, dim, whole_size / axis_size);
    let body = Block::new(&[(RangeType::new(context, axis_size).into(), location)]);
    let range = body.argument(0).expect("one argument").into();
    let made = body.append_operation(chunk(range, chunk_type));
    let chunk_value = made.result(0).expect("one result").into();
    body.append_operation(yield_(context, &[chunk_value], location));
    let region = Region::new();
    region.append_block(body);
    loop_(
        context,
        axis,
        &[TileAttr::new(context, dim).into()],
        &[whole],
        region,
        location,
    )
}

/// `partir.loop AXIS [ACTIONS] (...) { region } : RESULT_TYPES`.
pub fn loop_<'c>(
    context: &'c Context,
    axis: &str,
    actions: &[Attribute<'c>],
    result_types: &[Type<'c>],
    body: Region<'c>,
    location: Location<'c>,
) -> Operation<'c> {
    OperationBuilder::new(LOOP_OP, location)
        .add_attributes(&[
            (
                Identifier::new(context, "axis"),
                StringAttribute::new(context, axis).into(),
            ),
            (
                Identifier::new(context, "actions"),
                ArrayAttribute::new(context, actions).into(),
            ),
        ])
        .add_results(result_types)
        .add_regions([body])
        .build()
        .expect("partir.loop is registered")
}

/// `partir.slice DIM %source[%range] : T -> CHUNK`.
pub fn slice<'c>(
    context: &'c Context,
    source: Value<'c, '_>,
    range: Value<'c, '_>,
    dim: usize,
    chunk: Type<'c>,
    location: Location<'c>,
) -> Operation<'c> {
    let i64_type = IntegerType::new(context, 64).into();
    OperationBuilder::new(SLICE_OP, location)
        .add_attributes(&[(
            Identifier::new(context, "dim"),
            IntegerAttribute::new(i64_type, dim as i64).into(),
        )])
        .add_operands(&[source, range])
        .add_results(&[chunk])
        .build()
        .expect("partir.slice is registered")
}

/// `partir.permute DIM %source[%range] from [SOURCES] : T -> CHUNK`: chunk `sources[r]`
/// (zeros where -1).
pub fn permute<'c>(
    context: &'c Context,
    source: Value<'c, '_>,
    range: Value<'c, '_>,
    dim: usize,
    sources: &[i64],
    chunk: Type<'c>,
    location: Location<'c>,
) -> Operation<'c> {
    let i64_type = IntegerType::new(context, 64).into();
    OperationBuilder::new(PERMUTE_OP, location)
        .add_attributes(&[
            (
                Identifier::new(context, "dim"),
                IntegerAttribute::new(i64_type, dim as i64).into(),
            ),
            (
                Identifier::new(context, "sources"),
                melior::ir::attribute::DenseI64ArrayAttribute::new(context, sources).into(),
            ),
        ])
        .add_operands(&[source, range])
        .add_results(&[chunk])
        .build()
        .expect("partir.permute is registered")
}

/// The `from` list of a `partir.permute` or `partir_hlo.collective_permute`.
pub fn permute_sources(op: OperationRef) -> Option<Vec<i64>> {
    let attribute = op.attribute("sources").ok()?;
    let array = melior::ir::attribute::DenseI64ArrayAttribute::try_from(attribute).ok()?;
    Some(
        (0..array.len())
            .filter_map(|i| array.element(i).ok())
            .collect(),
    )
}

/// `partir.yield VALUES`.
pub fn yield_<'c>(
    _context: &'c Context,
    values: &[Value<'c, '_>],
    location: Location<'c>,
) -> Operation<'c> {
    OperationBuilder::new(YIELD_OP, location)
        .add_operands(values)
        .build()
        .expect("partir.yield is registered")
}

/// `partir.replicate AXIS %value : T`.
pub fn replicate<'c>(
    context: &'c Context,
    value: Value<'c, '_>,
    axis: &str,
    location: Location<'c>,
) -> Operation<'c> {
    OperationBuilder::new(REPLICATE_OP, location)
        .add_attributes(&[(
            Identifier::new(context, "axis"),
            StringAttribute::new(context, axis).into(),
        )])
        .add_operands(&[value])
        .add_results(&[value.r#type()])
        .build()
        .expect("partir.replicate is registered")
}

/// Inserts `op` right after the definition of `value` (at the top of the block for a block
/// argument) and returns it.
pub fn insert_after_definition<'c, 'a>(
    value: Value<'c, 'a>,
    op: Operation<'c>,
) -> OperationRef<'c, 'a> {
    if let Some(block) = ffi::argument_owner(value) {
        match block.first_operation() {
            Some(first) => block.insert_operation_before(first, op),
            None => block.append_operation(op),
        }
    } else {
        let producer = ffi::result_owner(value).expect("a value is an argument or a result");
        let block = producer.block().expect("the producer is in a block");
        block.insert_operation_after(producer, op)
    }
}

/// `value` seen tiled on `dim` along `axis` by all its uses: a tile identity right after its
/// definition, which every use but the identity's own slice reads (a tile action; a loop's
/// carry entered by propagation). The identity.
pub fn view_in_place<'c, 'a>(
    context: &'c Context,
    value: Value<'c, 'a>,
    dim: usize,
    axis: &str,
    axis_size: i64,
    location: Location<'c>,
) -> OperationRef<'c, 'a> {
    let identity = tile_identity(context, value, dim, axis, axis_size, location);
    let identity = insert_after_definition(value, identity);
    let slice = identity
        .region(0)
        .ok()
        .and_then(|region| region.first_block())
        .and_then(|body| body.first_operation())
        .expect("a tile identity starts with its slice");
    ffi::replace_all_uses_except(value, identity.result(0).expect("one result").into(), slice);
    identity
}

/// Whether Core ops (loops, slices, pins) sit in `op`'s regions: propagation partitioned inside
/// them (a `while`'s body).
pub fn holds_core(op: OperationRef) -> bool {
    if op.region_count() == 0 {
        return false;
    }
    let mut found = false;
    ffi::walk(op, |inner| {
        found |= !ffi::same_operation(inner, op)
            && [LOOP_OP, SLICE_OP, PERMUTE_OP, REPLICATE_OP]
                .iter()
                .any(|name| ffi::op_is(inner, name));
    });
    found
}

/// The axis of a `partir.loop` or `partir.replicate`.
pub fn axis_of(op: OperationRef) -> Option<String> {
    if !ffi::op_is(op, LOOP_OP) && !ffi::op_is(op, REPLICATE_OP) {
        return None;
    }
    ffi::string_attribute(op.attribute("axis").ok()?)
}

/// True when `op` is a `partir.loop` over `axis` (`axis_of` without the copy).
pub fn is_loop_over(op: OperationRef, axis: &str) -> bool {
    ffi::op_is(op, LOOP_OP)
        && op
            .attribute("axis")
            .is_ok_and(|attr| ffi::string_attribute_is(attr, axis))
}

/// True when `op` is (nested in) a `partir.loop` over `axis`.
pub fn inside_loop_over(mut op: Option<OperationRef>, axis: &str) -> bool {
    while let Some(current) = op {
        if is_loop_over(current, axis) {
            return true;
        }
        op = current.parent_operation();
    }
    false
}

/// The operations that use `value` (once per use).
pub fn users<'c, 'a>(value: Value<'c, 'a>) -> Vec<OperationRef<'c, 'a>> {
    ffi::uses(value).into_iter().map(|(user, _)| user).collect()
}

/// The axis of the loop whose range a `partir.slice` uses.
pub fn slice_axis(slice: OperationRef) -> Option<String> {
    let range = slice.operand(1).ok()?;
    let block = ffi::argument_owner(range)?;
    axis_of(block.parent_operation()?)
}

/// The actions of a `partir.loop`, one per result.
pub fn actions(loop_op: OperationRef) -> Vec<Action> {
    let Some(actions) = loop_op
        .attribute("actions")
        .ok()
        .and_then(|attr| ArrayAttribute::try_from(attr).ok())
    else {
        return Vec::new();
    };
    (0..actions.len())
        .filter_map(|index| Action::try_from(actions.element(index).ok()?).ok())
        .collect()
}
