//! What padding costs, op by op: the share of an op's work spent on the padding of dims an axis
//! does not divide (docs/design.md#uneven-dims), recorded by `pad_dim` on the ops it pads or
//! makes and summed by the simulator.

use crate::ffi;
use melior::{
    ir::{operation::OperationLike, OperationRef},
    Context,
};

/// The attribute on each op that runs on padded values, or that padding made: the share of its
/// work spent on padding (an op over a batch of 6 padded to 8: 0.25; a mask: 1). The simulator
/// counts it (`padding` in its reports); exports drop it.
pub const ATTR: &str = "partir.padding_share";

/// The share of `op`'s work spent on padding, as [`ATTR`] says (0 without it).
pub fn of(op: OperationRef) -> f64 {
    op.attribute(ATTR)
        .ok()
        .and_then(|attr| melior::ir::attribute::FloatAttribute::try_from(attr).ok())
        .map_or(0.0, |attr| attr.value())
}

/// Drops every [`ATTR`] in `module`: a program for another runtime.
pub fn drop_all(module: OperationRef) {
    ffi::walk(module, |op| {
        if op.attribute(ATTR).is_ok() {
            ffi::remove_attribute(op, ATTR);
        }
    });
}

/// Marks `op` as spending `share` more of its work on padding: an op padded twice (two dims,
/// or one dim by two tactics) spends 1 - (1 - a)(1 - b).
pub(super) fn add<'c>(context: &'c Context, op: OperationRef<'c, '_>, share: f64) {
    let before = of(op);
    let after = 1.0 - (1.0 - before) * (1.0 - share);
    ffi::set_attribute(
        op,
        ATTR,
        melior::ir::attribute::FloatAttribute::new(
            context,
            melior::ir::r#type::Type::float64(context),
            after,
        )
        .into(),
    );
}
