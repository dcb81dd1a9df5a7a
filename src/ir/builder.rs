//! Building upstream ops (arith, tensor, linalg, memref, bufferization, mpi) in front of an
//! anchor op, for the lowering passes.

use crate::{
    ffi,
    ir::core::{static_shape, with_dim},
    tmr::ReductionKind,
};
use melior::{
    ir::{
        attribute::{
            DenseI32ArrayAttribute, DenseI64ArrayAttribute, FloatAttribute, IntegerAttribute,
        },
        block::BlockLike,
        operation::{OperationBuilder, OperationLike},
        r#type::{IntegerType, MemRefType, RankedTensorType},
        Attribute, Block, BlockRef, Identifier, Location, Operation, OperationRef, Region,
        RegionLike, ShapedTypeLike, Type, TypeLike, Value, ValueLike,
    },
    Context,
};

/// The named linalg op that combines two tensors as `kind` does (`linalg.add` for a sum).
pub fn combining_op(kind: ReductionKind) -> &'static str {
    match kind {
        ReductionKind::Mul => "linalg.mul",
        ReductionKind::Max => "linalg.max",
        ReductionKind::Min => "linalg.min",
        ReductionKind::Sum | ReductionKind::Other => "linalg.add",
    }
}

/// The identity of `kind` for elements of type `element`: -inf for a float max, the smallest
/// i32 for an integer one.
pub fn identity_for(kind: ReductionKind, element: Type) -> f64 {
    match (kind, element.is_integer()) {
        (ReductionKind::Max, true) => i32::MIN as f64,
        (ReductionKind::Min, true) => i32::MAX as f64,
        _ => kind.identity().unwrap_or(0.0),
    }
}

/// `ShapedType::kDynamic`.
pub const DYNAMIC: i64 = i64::MIN;

/// Builds ops right before `anchor`.
pub struct Builder<'c, 'a> {
    pub context: &'c Context,
    block: BlockRef<'c, 'a>,
    anchor: OperationRef<'c, 'a>,
    pub location: Location<'c>,
}

pub fn element_type(ty: Type) -> Type {
    RankedTensorType::try_from(ty)
        .map(|tensor| tensor.element())
        .unwrap_or(ty)
}

impl<'c, 'a> Builder<'c, 'a> {
    pub fn before(context: &'c Context, anchor: OperationRef<'c, 'a>) -> Self {
        let block = anchor.block().expect("ops live in blocks");
        Self {
            context,
            block,
            anchor,
            location: anchor.location(),
        }
    }

    pub fn insert(&self, op: Operation<'c>) -> OperationRef<'c, 'a> {
        self.block.insert_operation_before(self.anchor, op)
    }

    pub fn value(&self, op: Operation<'c>) -> Value<'c, 'a> {
        Value::from(self.insert(op).result(0).expect("one result"))
    }

    pub fn context(&self) -> &'c Context {
        self.context
    }

    pub fn location(&self) -> Location<'c> {
        self.location
    }

    fn id(&self, name: &str) -> Identifier<'c> {
        Identifier::new(self.context, name)
    }

    /// A generic op: name, operands, attributes, result types.
    pub fn op(
        &self,
        name: &str,
        operands: &[Value<'c, '_>],
        attributes: &[(&str, Attribute<'c>)],
        results: &[Type<'c>],
    ) -> OperationRef<'c, 'a> {
        let attributes: Vec<(Identifier, Attribute)> = attributes
            .iter()
            .map(|(key, value)| (self.id(key), *value))
            .collect();
        self.insert(
            OperationBuilder::new(name, self.location)
                .add_operands(operands)
                .add_attributes(&attributes)
                .add_results(results)
                .build()
                .unwrap_or_else(|error| panic!("{name} is registered: {error}")),
        )
    }

    /// The one result of `name` (see [`Self::op`]).
    pub fn value_of(
        &self,
        name: &str,
        operands: &[Value<'c, '_>],
        attributes: &[(&str, Attribute<'c>)],
        result: Type<'c>,
    ) -> Value<'c, 'a> {
        Value::from(
            self.op(name, operands, attributes, &[result])
                .result(0)
                .expect("one result"),
        )
    }

    /// Chunk `sources[index]` of `value` along `dim` (chunks of `chunk_type`'s size), zeros
    /// where that is -1: a `partir.permute` read sequentially, or on MPI from the gathered
    /// value.
    ///
    /// ```mlir
    /// %s = tensor.extract %sources[%index] : tensor<4xindex>
    /// %c = tensor.extract_slice %value[max(%s, 0) * chunk, ...]
    /// %y = arith.select (%s >= 0), %c, zeros
    /// ```
    pub fn chunk_from(
        &self,
        value: Value<'c, '_>,
        dim: usize,
        sources: &[i64],
        index: Value<'c, '_>,
        chunk_type: Type<'c>,
    ) -> Value<'c, 'a> {
        let chunk = crate::ir::core::static_shape(chunk_type).expect("static")[dim];
        let index_type = Type::index(self.context);
        let listed: Vec<String> = sources.iter().map(i64::to_string).collect();
        let table_type: Type =
            RankedTensorType::new(&[sources.len() as u64], index_type, None).into();
        let table = self.constant(
            Attribute::parse(
                self.context,
                &format!("dense<[{}]> : {table_type}", listed.join(", ")),
            )
            .expect("a dense index table"),
            table_type,
        );
        let source = self.value_of("tensor.extract", &[table, index], &[], index_type);
        let zero = self.index(0);
        let first = self.binary("arith.maxsi", source, zero);
        let offset = self.binary("arith.muli", first, self.index(chunk));
        let extracted = self.extract_slice(value, dim, offset, chunk_type);
        // `sge` is predicate 5 of arith.cmpi.
        let sge = Attribute::parse(self.context, "5 : i64").expect("an i64");
        let bit = IntegerType::new(self.context, 1).into();
        let read = self.value_of("arith.cmpi", &[source, zero], &[("predicate", sge)], bit);
        let zeros = self.filled(chunk_type, 0.0);
        self.value_of("arith.select", &[read, extracted, zeros], &[], chunk_type)
    }

    pub fn constant(&self, attribute: Attribute<'c>, ty: Type<'c>) -> Value<'c, 'a> {
        Value::from(
            self.op("arith.constant", &[], &[("value", attribute)], &[ty])
                .result(0)
                .expect("one result"),
        )
    }

    pub fn index(&self, value: i64) -> Value<'c, 'a> {
        let index = Type::index(self.context);
        self.constant(IntegerAttribute::new(index, value).into(), index)
    }

    pub fn i32(&self, value: i64) -> Value<'c, 'a> {
        let i32_type = IntegerType::new(self.context, 32).into();
        self.constant(IntegerAttribute::new(i32_type, value).into(), i32_type)
    }

    /// `name %lhs, %rhs` for a same-typed arith binary op.
    pub fn binary(&self, name: &str, lhs: Value<'c, '_>, rhs: Value<'c, '_>) -> Value<'c, 'a> {
        Value::from(
            self.op(name, &[lhs, rhs], &[], &[lhs.r#type()])
                .result(0)
                .expect("one result"),
        )
    }

    pub fn index_cast(&self, value: Value<'c, '_>) -> Value<'c, 'a> {
        Value::from(
            self.op(
                "arith.index_cast",
                &[value],
                &[],
                &[Type::index(self.context)],
            )
            .result(0)
            .expect("one result"),
        )
    }

    pub fn empty(&self, ty: Type<'c>) -> Value<'c, 'a> {
        Value::from(
            self.op("tensor.empty", &[], &[], &[ty])
                .result(0)
                .expect("one result"),
        )
    }

    /// A tensor of `ty` filled with `scalar` (a float for float tensors, an integer otherwise).
    pub fn filled(&self, ty: Type<'c>, scalar: f64) -> Value<'c, 'a> {
        let element = element_type(ty);
        let attribute: Attribute = if element.is_integer() {
            IntegerAttribute::new(element, scalar as i64).into()
        } else {
            FloatAttribute::new(self.context, element, scalar).into()
        };
        let constant = self.constant(attribute, element);
        let empty = self.empty(ty);
        let fill = OperationBuilder::new("linalg.fill", self.location)
            .add_attributes(&[(
                self.id("operandSegmentSizes"),
                DenseI32ArrayAttribute::new(self.context, &[1, 1]).into(),
            )])
            .add_operands(&[constant, empty])
            .add_results(&[ty])
            .add_regions([yield_first_region(element, self.location)])
            .build()
            .expect("linalg.fill");
        self.value(fill)
    }

    /// `linalg.<combine> ins(%acc, %value) outs(%acc)`: destination style.
    pub fn accumulate(
        &self,
        combine: &str,
        accumulator: Value<'c, '_>,
        value: Value<'c, '_>,
    ) -> Value<'c, 'a> {
        let op = self.insert(
            OperationBuilder::new(combine, self.location)
                .add_attributes(&[(
                    self.id("operandSegmentSizes"),
                    DenseI32ArrayAttribute::new(self.context, &[2, 1]).into(),
                )])
                .add_operands(&[accumulator, value, accumulator])
                .add_results(&[accumulator.r#type()])
                .add_regions([Region::new()])
                .build()
                .expect("a named linalg elementwise op"),
        );
        ffi::fill_linalg_named_region(op);
        Value::from(op.result(0).expect("one result"))
    }

    /// `linalg.add ins(%a, %b) outs(%empty)` (or `mul`, `max`, `min` after `kind`): the two
    /// combined elementwise into a new tensor.
    pub fn combine(
        &self,
        kind: ReductionKind,
        a: Value<'c, '_>,
        b: Value<'c, '_>,
    ) -> Value<'c, 'a> {
        let name = combining_op(kind);
        let empty = self.empty(a.r#type());
        let op = self.insert(
            OperationBuilder::new(name, self.location)
                .add_attributes(&[(
                    self.id("operandSegmentSizes"),
                    DenseI32ArrayAttribute::new(self.context, &[2, 1]).into(),
                )])
                .add_operands(&[a, b, empty])
                .add_results(&[a.r#type()])
                .add_regions([Region::new()])
                .build()
                .expect("a named linalg elementwise op"),
        );
        ffi::fill_linalg_named_region(op);
        Value::from(op.result(0).expect("one result"))
    }

    /// `tensor.extract_slice %source[..%offset at dim..] [shape of chunk] [1..]`.
    pub fn extract_slice(
        &self,
        source: Value<'c, '_>,
        dim: usize,
        offset: Value<'c, '_>,
        chunk: Type<'c>,
    ) -> Value<'c, 'a> {
        let (offsets, sizes, strides) = slice_attributes(self.context, chunk, dim);
        let segments = DenseI32ArrayAttribute::new(self.context, &[1, 1, 0, 0]).into();
        let op = self.op(
            "tensor.extract_slice",
            &[source, offset],
            &[
                ("static_offsets", offsets),
                ("static_sizes", sizes),
                ("static_strides", strides),
                ("operandSegmentSizes", segments),
            ],
            &[chunk],
        );
        Value::from(op.result(0).expect("one result"))
    }

    /// `tensor.insert_slice %chunk into %dest[..%offset at dim..]`.
    pub fn insert_slice(
        &self,
        chunk: Value<'c, '_>,
        dest: Value<'c, '_>,
        dim: usize,
        offset: Value<'c, '_>,
    ) -> Value<'c, 'a> {
        let (offsets, sizes, strides) = slice_attributes(self.context, chunk.r#type(), dim);
        let segments = DenseI32ArrayAttribute::new(self.context, &[1, 1, 1, 0, 0]).into();
        let op = self.op(
            "tensor.insert_slice",
            &[chunk, dest, offset],
            &[
                ("static_offsets", offsets),
                ("static_sizes", sizes),
                ("static_strides", strides),
                ("operandSegmentSizes", segments),
            ],
            &[dest.r#type()],
        );
        Value::from(op.result(0).expect("one result"))
    }

    /// The memref type of the same shape and element as a tensor type.
    pub fn memref_of(&self, tensor: Type<'c>) -> Type<'c> {
        let shape: Vec<i64> = static_shape(tensor).expect("static");
        MemRefType::new(element_type(tensor), &shape, None, None).into()
    }

    /// `bufferization.to_buffer %tensor`.
    pub fn to_buffer(&self, tensor: Value<'c, '_>) -> Value<'c, 'a> {
        let ty = self.memref_of(tensor.r#type());
        Value::from(
            self.op("bufferization.to_buffer", &[tensor], &[], &[ty])
                .result(0)
                .expect("one result"),
        )
    }

    /// `bufferization.to_tensor %buffer restrict writable`.
    pub fn to_tensor(&self, buffer: Value<'c, '_>, tensor: Type<'c>) -> Value<'c, 'a> {
        let unit = Attribute::unit(self.context);
        Value::from(
            self.op(
                "bufferization.to_tensor",
                &[buffer],
                &[("restrict", unit), ("writable", unit)],
                &[tensor],
            )
            .result(0)
            .expect("one result"),
        )
    }

    pub fn alloc(&self, memref: Type<'c>) -> Value<'c, 'a> {
        let segments = DenseI32ArrayAttribute::new(self.context, &[0, 0]).into();
        Value::from(
            self.op(
                "memref.alloc",
                &[],
                &[("operandSegmentSizes", segments)],
                &[memref],
            )
            .result(0)
            .expect("one result"),
        )
    }

    /// A rank-1 view of a static memref (MPI lowering counts only dim 0).
    pub fn flatten(&self, buffer: Value<'c, '_>) -> Value<'c, 'a> {
        let shape = ffi::shaped_dims(buffer.r#type()).expect("a static memref");
        let elements: i64 = shape.iter().product();
        let element = ffi::shaped_element(buffer.r#type());
        let flat = MemRefType::new(element, &[elements], None, None).into();
        let reassociation = if shape.is_empty() {
            vec![]
        } else {
            vec![(0..shape.len() as i64).collect::<Vec<_>>()]
        };
        let name = if shape.is_empty() {
            "memref.expand_shape"
        } else {
            "memref.collapse_shape"
        };
        let groups = Attribute::parse(self.context, &reassociation_text(&reassociation))
            .expect("reassociation");
        let mut attributes = vec![("reassociation", groups)];
        if shape.is_empty() {
            attributes.push((
                "static_output_shape",
                DenseI64ArrayAttribute::new(self.context, &[1]).into(),
            ));
        }
        Value::from(
            self.op(name, &[buffer], &attributes, &[flat])
                .result(0)
                .expect("one result"),
        )
    }
}

fn reassociation_text(groups: &[Vec<i64>]) -> String {
    let groups: Vec<String> = groups
        .iter()
        .map(|group| {
            format!(
                "[{}]",
                group
                    .iter()
                    .map(|dim| format!("{dim} : i64"))
                    .collect::<Vec<_>>()
                    .join(", ")
            )
        })
        .collect();
    format!("[{}]", groups.join(", "))
}

/// `^bb0(%in, %out): linalg.yield %in` (the body of a fill).
fn yield_first_region<'c>(element: Type<'c>, location: Location<'c>) -> Region<'c> {
    let block = Block::new(&[(element, location), (element, location)]);
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

/// Offsets (dynamic at `dim`), sizes (the chunk's shape) and unit strides of a slice.
fn slice_attributes<'c>(
    context: &'c Context,
    chunk: Type<'c>,
    dim: usize,
) -> (Attribute<'c>, Attribute<'c>, Attribute<'c>) {
    let shape = static_shape(chunk).expect("static slices");
    let offsets: Vec<i64> = (0..shape.len())
        .map(|index| if index == dim { DYNAMIC } else { 0 })
        .collect();
    (
        DenseI64ArrayAttribute::new(context, &offsets).into(),
        DenseI64ArrayAttribute::new(context, &shape).into(),
        DenseI64ArrayAttribute::new(context, &vec![1; shape.len()]).into(),
    )
}

/// `ty` with dim `dim` multiplied by `factor`.
pub fn scaled<'c>(ty: Type<'c>, dim: usize, factor: i64) -> Type<'c> {
    let size = static_shape(ty).expect("static")[dim];
    with_dim(ty, dim, size * factor)
}
