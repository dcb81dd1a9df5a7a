//! Collective peepholes on PartIR:HLO (DESIGN §4), to a fixed point:
//! - `all_slice dim d axes A (all_reduce axes A x)`, the reduce used only there
//!   → `reduce_scatter dim d axes A x` (ZeRO's gradient reduction);
//! - `all_slice dim d axes A (all_gather dim d axes A x)` → `x`.
//!
//! Identical collectives are shared by upstream `cse` (they are Pure).

use crate::ffi;
use melior::ir::{
    block::BlockLike,
    operation::{OperationBuilder, OperationLike},
    Identifier, OperationRef, ValueLike,
};

const ALL_SLICE: &str = "partir_hlo.all_slice";
const ALL_REDUCE: &str = "partir_hlo.all_reduce";
const ALL_GATHER: &str = "partir_hlo.all_gather";

fn is(op: OperationRef, name: &str) -> bool {
    op.name().as_string_ref().as_str() == Ok(name)
}

fn same_attribute(a: OperationRef, b: OperationRef, name: &str) -> bool {
    matches!((a.attribute(name), b.attribute(name)), (Ok(x), Ok(y)) if x == y)
}

pub fn run<'c>(context: &'c melior::Context, module: OperationRef<'c, '_>) {
    let mut slices = Vec::new();
    ffi::walk(module, |op| {
        if is(op, ALL_SLICE) {
            slices.push(op);
        }
    });
    for slice in slices {
        let operand = ffi::anchor_value(slice.operand(0).expect("one operand"));
        let Some(producer) = ffi::result_owner(operand) else {
            continue;
        };
        if !same_attribute(slice, producer, "axes") {
            continue;
        }
        let result = ffi::anchor_value(slice.result(0).expect("one result"));
        if is(producer, ALL_GATHER) && same_attribute(slice, producer, "dim") {
            let source = ffi::anchor_value(producer.operand(0).expect("one operand"));
            ffi::replace_all_uses(result, source);
            ffi::erase(slice);
            if ffi::uses(operand).is_empty() {
                ffi::erase(producer);
            }
        } else if is(producer, ALL_REDUCE) && ffi::uses(operand).len() == 1 {
            let attributes = ["kind", "axes"]
                .iter()
                .map(|name| {
                    (
                        Identifier::new(context, name),
                        producer.attribute(name).expect("verified all_reduce"),
                    )
                })
                .chain(std::iter::once((
                    Identifier::new(context, "dim"),
                    slice.attribute("dim").expect("verified all_slice"),
                )))
                .collect::<Vec<_>>();
            let scatter = OperationBuilder::new("partir_hlo.reduce_scatter", slice.location())
                .add_operands(&[ffi::anchor_value(producer.operand(0).expect("one operand"))])
                .add_attributes(&attributes)
                .add_results(&[result.r#type()])
                .build()
                .expect("partir_hlo.reduce_scatter is registered");
            let block = slice.block().expect("in a block");
            let scatter = ffi::anchor(block.insert_operation_before(slice, scatter));
            ffi::replace_all_uses(
                result,
                ffi::anchor_value(scatter.result(0).expect("one result")),
            );
            ffi::erase(slice);
            ffi::erase(producer);
        }
    }
}
