//! Reading PartIR:HLO collectives: `partir_hlo.all_reduce sum %x axes ["batch", "model"]`
//! has `axes = ["batch", "model"]` and `kind = 0 : i32` (sum; the order of
//! `Partir_ReductionKind` in include/partir/Common/Enums.td).

use melior::ir::{
    attribute::{ArrayAttribute, IntegerAttribute},
    operation::OperationLike,
    Attribute, OperationRef,
};

/// The names of `Partir_ReductionKind`, by value.
const REDUCTION_KINDS: [&str; 4] = ["sum", "max", "min", "mul"];

/// The strings of an array of string attributes.
pub fn string_array(attr: Attribute) -> Option<Vec<String>> {
    let array = ArrayAttribute::try_from(attr).ok()?;
    (0..array.len())
        .map(|index| crate::ffi::string_attribute(array.element(index).ok()?))
        .collect()
}

/// The value of an integer attribute of `op`.
pub fn integer_attribute(op: OperationRef, name: &str) -> Option<i64> {
    IntegerAttribute::try_from(op.attribute(name).ok()?)
        .ok()
        .map(|attr| attr.value())
}

/// The mesh axes a collective runs over, in its order.
pub fn collective_axes(op: OperationRef) -> Option<Vec<String>> {
    string_array(op.attribute("axes").ok()?)
}

/// The reduction of an all_reduce or reduce_scatter: `sum`, `max`, `min` or `mul`.
pub fn reduction(op: OperationRef) -> Option<&'static str> {
    let kind = integer_attribute(op, "kind")?;
    REDUCTION_KINDS.get(usize::try_from(kind).ok()?).copied()
}
