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

use super::{names::SEQUENTIAL as PASS, require_stage, PassResult, Stage};
use crate::{
    ffi,
    ir::{
        attrs::{Action, RangeType},
        builder::{combining_op, element_type, identity_for, Builder},
        core::{self, static_shape, LOOP_OP, PERMUTE_OP, REPLICATE_OP, SLICE_OP},
    },
};
use melior::{
    ir::{
        attribute::IntegerAttribute,
        block::BlockLike,
        operation::{OperationBuilder, OperationLike},
        OperationRef, Region, RegionLike, Type, Value, ValueLike,
    },
    Context,
};

pub fn run<'c>(context: &'c Context, module: OperationRef<'c, '_>) -> PassResult<'c> {
    require_stage(
        module,
        PASS,
        Stage::Core,
        "a PartIR:HLO program runs on MPI ranks (partir-to-mpi)",
    )?;
    let mut loops = Vec::new();
    ffi::walk(module, |op| {
        if crate::ffi::op_is(op, LOOP_OP) {
            loops.push(op);
        }
    });
    // Pre-order lists outer loops first; lowering innermost first keeps every handle valid.
    for loop_op in loops.into_iter().rev() {
        lower_loop(context, loop_op);
    }
    // Pins are identities in the sequential reading; the mesh is declarative.
    let mut pins = Vec::new();
    let mut meshes = Vec::new();
    ffi::walk(module, |op| {
        let name = op.name();
        match name.as_string_ref().as_str() {
            Ok(REPLICATE_OP) => pins.push(op),
            Ok(crate::ir::mesh::MESH_OP) => meshes.push(op),
            _ => {}
        }
    });
    for pin in pins {
        ffi::replace_all_uses(
            Value::from(pin.result(0).expect("a pin has a result")),
            pin.operand(0).expect("a pin has an operand"),
        );
        // SAFETY: `pin` is unused and no handle to it is used after this.
        unsafe { ffi::erase(pin) };
    }
    for op in meshes {
        // SAFETY: declarative, unused: nothing refers to it or into it.
        unsafe { ffi::erase(op) };
    }
    Ok(())
}

fn lower_loop<'c>(context: &'c Context, loop_op: OperationRef<'c, '_>) {
    let outside = Builder::before(context, loop_op);
    let body = loop_op
        .region(0)
        .expect("one region")
        .first_block()
        .expect("one block");
    let range = Value::from(body.argument(0).expect("the range"));
    let iterations = RangeType::try_from(range.r#type())
        .expect("a loop's range")
        .size();
    let actions = core::actions(loop_op);
    let result_types: Vec<Type> = loop_op.results().map(|result| result.r#type()).collect();
    let inits: Vec<Value> = actions
        .iter()
        .zip(&result_types)
        .map(|(action, ty)| match action {
            Action::Tile(_) | Action::Any => outside.empty(*ty),
            Action::Sum(kind) => outside.filled(*ty, identity_for(*kind, element_type(*ty))),
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
    range.set_type(Type::index(context));
    let accumulators: Vec<Value> = result_types
        .iter()
        .map(|ty| body.add_argument(*ty, loop_op.location()))
        .collect();
    for (user, _) in ffi::uses(range) {
        if crate::ffi::op_is(user, SLICE_OP) {
            lower_slice(context, user, range);
        } else if crate::ffi::op_is(user, PERMUTE_OP) {
            lower_permute(context, user, range);
        }
    }

    let terminator = body.terminator().expect("partir.yield");
    let inside = Builder::before(context, terminator);
    let updated: Vec<Value> = actions
        .iter()
        .enumerate()
        .map(|(index, action)| {
            let value = terminator.operand(index).expect("one value per result");
            let accumulator = accumulators[index];
            match action {
                Action::Tile(dim) => {
                    let chunk = static_shape(value.r#type()).expect("static")[*dim];
                    let offset = inside.binary("arith.muli", range, inside.index(chunk));
                    inside.insert_slice(value, accumulator, *dim, offset)
                }
                Action::Sum(kind) => inside.accumulate(combining_op(*kind), accumulator, value),
                // Every iteration yields the same value: the last one's is the result.
                Action::Any => value,
            }
        })
        .collect();
    inside.insert(
        OperationBuilder::new("scf.yield", terminator.location())
            .add_operands(&updated)
            .build()
            .expect("scf.yield"),
    );
    // SAFETY: `terminator` is unused and no handle to it is used after this.
    unsafe { ffi::erase(terminator) };

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
            Value::from(loop_op.result(index).expect("in range")),
            Value::from(for_op.result(index).expect("in range")),
        );
    }
    // SAFETY: `loop_op` is unused and no handle to it is used after this.
    unsafe { ffi::erase(loop_op) };
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
    let source = slice.operand(0).expect("a source");
    let extracted = builder.extract_slice(source, dim, offset, chunk_type);
    ffi::replace_all_uses(Value::from(slice.result(0).expect("one result")), extracted);
    // SAFETY: `slice` is unused and no handle to it is used after this.
    unsafe { ffi::erase(slice) };
}

/// `partir.permute d %x[%i] from S` as chunk `S[%i]` of `%x` ([`Builder::chunk_from`]).
fn lower_permute<'c>(
    context: &'c Context,
    permute: OperationRef<'c, '_>,
    induction: Value<'c, '_>,
) {
    let builder = Builder::before(context, permute);
    let dim = IntegerAttribute::try_from(permute.attribute("dim").expect("verified permute"))
        .expect("an integer")
        .value() as usize;
    let sources = core::permute_sources(permute).expect("a verified permute has sources");
    let chunk_type = permute.result(0).expect("one result").r#type();
    let source = permute.operand(0).expect("a source");
    let chunk = builder.chunk_from(source, dim, &sources, induction, chunk_type);
    ffi::replace_all_uses(Value::from(permute.result(0).expect("one result")), chunk);
    // SAFETY: `permute` is unused and no handle to it is used after this.
    unsafe { ffi::erase(permute) };
}
