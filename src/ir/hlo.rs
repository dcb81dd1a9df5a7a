//! Reading PartIR:HLO collectives: `partir_hlo.all_reduce sum %x axes ["batch", "model"]`
//! has `axes = ["batch", "model"]` and `kind = 0 : i32` (sum; the order of
//! `Partir_ReductionKind` in include/partir/Common/Enums.td).

use crate::{
    ir::attrs::{reduction_code, reduction_of_code},
    tmr::ReductionKind,
};
use melior::{
    ir::{
        attribute::{ArrayAttribute, IntegerAttribute},
        operation::OperationLike,
        r#type::IntegerType,
        Attribute, OperationRef,
    },
    Context,
};

/// `partir_hlo.all_slice`: each device keeps its chunk of a value it holds whole.
pub const ALL_SLICE_OP: &str = "partir_hlo.all_slice";

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

/// The `axes` attribute of a collective over `axes`: `["data", "fsdp"]`.
pub fn axes_attribute<'c>(context: &'c Context, axes: &[String]) -> Attribute<'c> {
    let names: Vec<Attribute> = axes
        .iter()
        .map(|axis| melior::ir::attribute::StringAttribute::new(context, axis).into())
        .collect();
    ArrayAttribute::new(context, &names).into()
}

/// The mesh axes a collective runs over, in its order.
pub fn collective_axes(op: OperationRef) -> Option<Vec<String>> {
    string_array(op.attribute("axes").ok()?)
}

/// The reduction of an all_reduce or reduce_scatter.
pub fn reduction(op: OperationRef) -> Option<ReductionKind> {
    reduction_of_code(i32::try_from(integer_attribute(op, "kind")?).ok()?)
}

/// The `kind` and `axes` attributes of an all_reduce, to build another reducing the same way
/// (a combined all_reduce, one moved past an add, a reduce_scatter).
pub fn reduction_attributes<'c>(op: OperationRef<'c, '_>) -> [(&'static str, Attribute<'c>); 2] {
    ["kind", "axes"].map(|name| (name, op.attribute(name).expect("verified all_reduce")))
}

/// The `kind` attribute of an all_reduce or reduce_scatter.
pub fn kind_attribute(context: &Context, kind: ReductionKind) -> Attribute<'_> {
    IntegerAttribute::new(
        IntegerType::new(context, 32).into(),
        i64::from(reduction_code(kind)),
    )
    .into()
}
