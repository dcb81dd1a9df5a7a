//! `partir-sequential`: the sequential reading of a Core program, with upstream ops only.
//!
//! ```mlir
//! %y = partir.loop "batch" [#partir.tile<0>] (%r: !partir.range<4>) {
//!   %xs = partir.slice 0 %x[%r] : tensor<32x64xf32> -> tensor<8x64xf32>
//!   ...  partir.yield %h : tensor<8x256xf32>
//! } : tensor<32x256xf32>
//! ==>
//! %e = tensor.empty() : tensor<32x256xf32>
//! %y = scf.for %i = %c0 to %c4 step %c1 iter_args(%acc = %e) -> (tensor<32x256xf32>) {
//!   %o = arith.muli %i, %c8 : index
//!   %xs = tensor.extract_slice %x[%o, 0] [8, 64] [1, 1] : ...
//!   ...  %u = tensor.insert_slice %h into %acc[%o, 0] [8, 256] [1, 1] : ...
//!   scf.yield %u : tensor<32x256xf32>
//! }
//! ```
//! A `#partir.sum<kind>` result starts from the kind's identity and combines each iteration
//! with arith (`addf`, `maximumf`, ...). Loops are lowered innermost first.

use super::PassResult;
use crate::{
    ffi,
    ir::core::{static_shape, LOOP_OP, SLICE_OP},
};
use melior::{
    ir::{
        attribute::{
            ArrayAttribute, DenseI32ArrayAttribute, DenseI64ArrayAttribute, FloatAttribute,
            IntegerAttribute,
        },
        block::BlockLike,
        operation::{OperationBuilder, OperationLike},
        Attribute, BlockRef, Identifier, Location, Operation, OperationRef, Region, RegionLike,
        Type, TypeLike, Value, ValueLike,
    },
    Context,
};

const DYNAMIC: i64 = i64::MIN;

pub fn run<'c>(context: &'c Context, module: OperationRef<'c, '_>) -> PassResult<'c> {
    let mut loops = Vec::new();
    ffi::walk(module, |op| {
        if op.name().as_string_ref().as_str() == Ok(LOOP_OP) {
            loops.push(op);
        }
    });
    // Pre-order lists outer loops first; lowering innermost first keeps every handle valid.
    for loop_op in loops.into_iter().rev() {
        lower_loop(context, loop_op);
    }
    let mut meshes = Vec::new();
    ffi::walk(module, |op| {
        if op.name().as_string_ref().as_str() == Ok(crate::ir::mesh::MESH_OP) {
            meshes.push(op);
        }
    });
    meshes.into_iter().for_each(ffi::erase);
    Ok(())
}

/// Builds ops in front of an anchor op.
struct Builder<'c, 'a> {
    context: &'c Context,
    block: BlockRef<'c, 'a>,
    anchor: OperationRef<'c, 'a>,
    location: Location<'c>,
}

impl<'c, 'a> Builder<'c, 'a> {
    fn before(context: &'c Context, anchor: OperationRef<'c, 'a>) -> Self {
        let block = ffi::anchor_block(anchor.block().expect("ops live in blocks"));
        Self {
            context,
            block,
            anchor,
            location: anchor.location(),
        }
    }

    fn insert(&self, op: Operation<'c>) -> OperationRef<'c, 'a> {
        ffi::anchor(self.block.insert_operation_before(self.anchor, op))
    }

    fn value(&self, op: Operation<'c>) -> Value<'c, 'a> {
        ffi::anchor_value(self.insert(op).result(0).expect("one result"))
    }

    fn index(&self, value: i64) -> Value<'c, 'a> {
        let index = Type::index(self.context);
        self.value(
            OperationBuilder::new("arith.constant", self.location)
                .add_attributes(&[(
                    Identifier::new(self.context, "value"),
                    IntegerAttribute::new(index, value).into(),
                )])
                .add_results(&[index])
                .build()
                .expect("arith.constant"),
        )
    }

    fn binary(&self, name: &str, lhs: Value<'c, '_>, rhs: Value<'c, '_>) -> Value<'c, 'a> {
        self.value(
            OperationBuilder::new(name, self.location)
                .add_operands(&[lhs, rhs])
                .add_results(&[lhs.r#type()])
                .build()
                .expect("arith binary op"),
        )
    }

    /// `linalg.<combine> ins(%acc, %value) outs(%acc)`: destination style, so bufferization
    /// updates the accumulator in place.
    fn accumulate(
        &self,
        combine: &str,
        accumulator: Value<'c, '_>,
        value: Value<'c, '_>,
    ) -> Value<'c, 'a> {
        let op = self.insert(
            OperationBuilder::new(combine, self.location)
                .add_attributes(&[(
                    Identifier::new(self.context, "operandSegmentSizes"),
                    DenseI32ArrayAttribute::new(self.context, &[2, 1]).into(),
                )])
                .add_operands(&[accumulator, value, accumulator])
                .add_results(&[accumulator.r#type()])
                .add_regions([Region::new()])
                .build()
                .expect("a named linalg elementwise op"),
        );
        ffi::fill_linalg_named_region(op);
        ffi::anchor_value(op.result(0).expect("one result"))
    }

    fn empty(&self, ty: Type<'c>) -> Value<'c, 'a> {
        self.value(
            OperationBuilder::new("tensor.empty", self.location)
                .add_results(&[ty])
                .build()
                .expect("tensor.empty"),
        )
    }

    /// A tensor of `ty` filled with the identity of `kind` (0 sum, 1 mul, -inf max, +inf min).
    fn identity(&self, ty: Type<'c>, kind: i32) -> Value<'c, 'a> {
        let element = element_type(ty);
        let is_float = !element.is_integer();
        let scalar: Attribute = match (kind, is_float) {
            (1, true) => FloatAttribute::new(self.context, element, f64::NEG_INFINITY).into(),
            (2, true) => FloatAttribute::new(self.context, element, f64::INFINITY).into(),
            (3, true) => FloatAttribute::new(self.context, element, 1.0).into(),
            (_, true) => FloatAttribute::new(self.context, element, 0.0).into(),
            (1, false) => IntegerAttribute::new(element, i64::MIN).into(),
            (2, false) => IntegerAttribute::new(element, i64::MAX).into(),
            (3, false) => IntegerAttribute::new(element, 1).into(),
            (_, false) => IntegerAttribute::new(element, 0).into(),
        };
        let constant = self.value(
            OperationBuilder::new("arith.constant", self.location)
                .add_attributes(&[(Identifier::new(self.context, "value"), scalar)])
                .add_results(&[element])
                .build()
                .expect("arith.constant"),
        );
        let empty = self.empty(ty);
        self.value(
            OperationBuilder::new("linalg.fill", self.location)
                .add_attributes(&[(
                    Identifier::new(self.context, "operandSegmentSizes"),
                    DenseI32ArrayAttribute::new(self.context, &[1, 1]).into(),
                )])
                .add_operands(&[constant, empty])
                .add_results(&[ty])
                .add_regions([fill_body(self.context, element, self.location)])
                .build()
                .expect("linalg.fill"),
        )
    }

    /// `tensor.extract_slice %source[..offset at dim..] [chunk] [1..]`.
    fn extract(
        &self,
        source: Value<'c, '_>,
        dim: usize,
        offset: Value<'c, '_>,
        chunk: Type<'c>,
    ) -> Value<'c, 'a> {
        let (offsets, sizes, strides) = slice_attrs(self.context, chunk, dim);
        self.value(
            OperationBuilder::new("tensor.extract_slice", self.location)
                .add_attributes(&[
                    (Identifier::new(self.context, "static_offsets"), offsets),
                    (Identifier::new(self.context, "static_sizes"), sizes),
                    (Identifier::new(self.context, "static_strides"), strides),
                    (
                        Identifier::new(self.context, "operandSegmentSizes"),
                        DenseI32ArrayAttribute::new(self.context, &[1, 1, 0, 0]).into(),
                    ),
                ])
                .add_operands(&[source, offset])
                .add_results(&[chunk])
                .build()
                .expect("tensor.extract_slice"),
        )
    }

    /// `tensor.insert_slice %chunk into %dest[..offset at dim..] [chunk] [1..]`.
    fn insert_slice(
        &self,
        chunk: Value<'c, '_>,
        dest: Value<'c, '_>,
        dim: usize,
        offset: Value<'c, '_>,
    ) -> Value<'c, 'a> {
        let (offsets, sizes, strides) = slice_attrs(self.context, chunk.r#type(), dim);
        self.value(
            OperationBuilder::new("tensor.insert_slice", self.location)
                .add_attributes(&[
                    (Identifier::new(self.context, "static_offsets"), offsets),
                    (Identifier::new(self.context, "static_sizes"), sizes),
                    (Identifier::new(self.context, "static_strides"), strides),
                    (
                        Identifier::new(self.context, "operandSegmentSizes"),
                        DenseI32ArrayAttribute::new(self.context, &[1, 1, 1, 0, 0]).into(),
                    ),
                ])
                .add_operands(&[chunk, dest, offset])
                .add_results(&[dest.r#type()])
                .build()
                .expect("tensor.insert_slice"),
        )
    }
}

fn element_type(ty: Type) -> Type {
    melior::ir::r#type::RankedTensorType::try_from(ty)
        .map(|tensor| melior::ir::ShapedTypeLike::element(&tensor))
        .unwrap_or(ty)
}

/// The region of a linalg.fill: `^bb0(%in, %out): linalg.yield %in`.
fn fill_body<'c>(context: &'c Context, element: Type<'c>, location: Location<'c>) -> Region<'c> {
    let _ = context;
    let block = melior::ir::Block::new(&[(element, location), (element, location)]);
    let input: Value = block.argument(0).expect("two arguments").into();
    block.append_operation(
        OperationBuilder::new("linalg.yield", location)
            .add_operands(&[input])
            .build()
            .expect("linalg.yield"),
    );
    let region = Region::new();
    region.append_block(block);
    region
}

/// Offsets (dynamic at `dim`), sizes (the chunk's shape) and unit strides.
fn slice_attrs<'c>(
    context: &'c Context,
    chunk: Type<'c>,
    dim: usize,
) -> (Attribute<'c>, Attribute<'c>, Attribute<'c>) {
    let shape = static_shape(chunk).expect("Core slices are static");
    let offsets: Vec<i64> = (0..shape.len())
        .map(|index| if index == dim { DYNAMIC } else { 0 })
        .collect();
    let strides = vec![1; shape.len()];
    (
        DenseI64ArrayAttribute::new(context, &offsets).into(),
        DenseI64ArrayAttribute::new(context, &shape).into(),
        DenseI64ArrayAttribute::new(context, &strides).into(),
    )
}

enum Action {
    Tile(usize),
    Sum(i32),
}

fn actions(loop_op: OperationRef) -> Vec<Action> {
    let actions = ArrayAttribute::try_from(loop_op.attribute("actions").expect("verified loop"))
        .expect("an array");
    (0..actions.len())
        .map(|index| {
            let action = actions.element(index).expect("in range");
            match ffi::tile_dim(action) {
                Some(dim) => Action::Tile(dim as usize),
                None => Action::Sum(ffi::sum_kind(action).unwrap_or(0)),
            }
        })
        .collect()
}

fn lower_loop<'c>(context: &'c Context, loop_op: OperationRef<'c, '_>) {
    let outside = Builder::before(context, loop_op);
    let body = ffi::anchor_block(
        loop_op
            .region(0)
            .expect("one region")
            .first_block()
            .expect("one block"),
    );
    let range = ffi::anchor_value(body.argument(0).expect("the range"));
    let iterations = ffi::range_size(range.r#type()).expect("a range");
    let actions = actions(loop_op);
    let result_types: Vec<Type> = loop_op.results().map(|result| result.r#type()).collect();
    let inits: Vec<Value> = actions
        .iter()
        .zip(&result_types)
        .map(|(action, ty)| match action {
            Action::Tile(_) => outside.empty(*ty),
            Action::Sum(kind) => outside.identity(*ty, *kind),
        })
        .collect();
    let (lower, upper, step) = (
        outside.index(0),
        outside.index(iterations),
        outside.index(1),
    );

    // The loop body becomes the scf.for body: the range turns into the induction variable.
    let region = Region::new();
    ffi::take_body(&region, loop_op.region(0).expect("one region"));
    ffi::set_value_type(range, Type::index(context));
    let accumulators: Vec<Value> = result_types
        .iter()
        .map(|ty| ffi::anchor_value(body.add_argument(*ty, loop_op.location())))
        .collect();
    for (user, _) in ffi::uses(range) {
        if user.name().as_string_ref().as_str() == Ok(SLICE_OP) {
            lower_slice(context, user, range);
        }
    }

    let terminator = ffi::anchor(body.terminator().expect("partir.yield"));
    let inside = Builder::before(context, terminator);
    let updated: Vec<Value> = actions
        .iter()
        .enumerate()
        .map(|(index, action)| {
            let value = ffi::anchor_value(terminator.operand(index).expect("one value per result"));
            let accumulator = accumulators[index];
            match action {
                Action::Tile(dim) => {
                    let chunk = static_shape(value.r#type()).expect("static")[*dim];
                    let offset = inside.binary("arith.muli", range, inside.index(chunk));
                    inside.insert_slice(value, accumulator, *dim, offset)
                }
                Action::Sum(kind) => {
                    let combine = match kind {
                        1 => "linalg.max",
                        2 => "linalg.min",
                        3 => "linalg.mul",
                        _ => "linalg.add",
                    };
                    inside.accumulate(combine, accumulator, value)
                }
            }
        })
        .collect();
    inside.insert(
        OperationBuilder::new("scf.yield", terminator.location())
            .add_operands(&updated)
            .build()
            .expect("scf.yield"),
    );
    ffi::erase(terminator);

    let mut operands = vec![lower, upper, step];
    operands.extend(inits);
    let for_op = outside.insert(
        OperationBuilder::new("scf.for", loop_op.location())
            .add_operands(&operands)
            .add_results(&result_types)
            .add_regions([region])
            .build()
            .expect("scf.for"),
    );
    for index in 0..loop_op.result_count() {
        ffi::replace_all_uses(
            ffi::anchor_value(loop_op.result(index).expect("in range")),
            ffi::anchor_value(for_op.result(index).expect("in range")),
        );
    }
    ffi::erase(loop_op);
}

/// `partir.slice d %x[%i]` (with %i now the induction variable) as `tensor.extract_slice`.
fn lower_slice<'c>(context: &'c Context, slice: OperationRef<'c, '_>, induction: Value<'c, '_>) {
    let builder = Builder::before(context, slice);
    let dim = IntegerAttribute::try_from(slice.attribute("dim").expect("verified slice"))
        .expect("an integer")
        .value() as usize;
    let chunk_type = slice.result(0).expect("one result").r#type();
    let chunk = static_shape(chunk_type).expect("static")[dim];
    let offset = builder.binary("arith.muli", induction, builder.index(chunk));
    let source = ffi::anchor_value(slice.operand(0).expect("a source"));
    let extracted = builder.extract(source, dim, offset, chunk_type);
    ffi::replace_all_uses(
        ffi::anchor_value(slice.result(0).expect("one result")),
        extracted,
    );
    ffi::erase(slice);
}
