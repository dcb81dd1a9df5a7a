//! Propagation stops in the model's terms: after the reason, which value (by the arguments it
//! derives from), which dim and size, and what not splitting the op costs.

use super::view;
use crate::ir::names;
use melior::ir::{OperationRef, Value, ValueLike};

/// What a value is to a user: `8x4x16x16xf32 from params/layers/0/wq, params/layers/0/wk`.
fn describe_value(value: Value) -> String {
    const SHOWN: usize = 3;
    let names = names::derived_from(value, 2000);
    let from = match names.len() {
        0 => String::new(),
        n if n <= SHOWN => format!(" from {}", names.join(", ")),
        n => format!(" from {} and {} more", names[..SHOWN].join(", "), n - SHOWN),
    };
    let shape = crate::ir::core::static_shape(value.r#type())
        .map(|dims| crate::text::shape(&dims))
        .unwrap_or_else(|| "?".into());
    format!("{shape}{from}")
}

fn dim_size(value: Value, dim: usize) -> String {
    crate::ir::core::static_shape(value.r#type())
        .and_then(|dims| dims.get(dim).copied())
        .map_or_else(|| "?".into(), |size| size.to_string())
}

/// A forward stop in the model's terms: which operand, split how, and what not splitting the op
/// costs. Example: `operand 0 (32x16x16 from params/wq) is split on dim 0 (size 32) here; the op
/// runs whole on 'model': that operand is gathered (all_gather of 32.00 KiB per device) and the
/// op's work repeats on each of the 2 'model' devices`.
pub(super) fn explain_operand(
    op: OperationRef,
    index: usize,
    dim: usize,
    axis: &str,
    axis_size: i64,
) -> String {
    let value = view::operand_source(op, index).source;
    format!(
        "operand {index} ({}) is split on dim {dim} (size {}) here; the op runs whole on '{axis}': \
         that operand is gathered (all_gather of {} per device) and the op's work repeats on each \
         of the {axis_size} '{axis}' devices",
        describe_value(value),
        dim_size(value, dim),
        crate::report::text::bytes(crate::ir::types::tensor_bytes(value.r#type())),
    )
}

/// A backward stop: the users want a result split, the op cannot produce it split.
pub(super) fn explain_result(
    op: OperationRef,
    index: usize,
    dim: usize,
    axis: &str,
    axis_size: i64,
) -> String {
    let Ok(result) = op.result(index) else {
        return String::new();
    };
    let value: Value = result.into();
    format!(
        "its users read result {index} ({}) split on dim {dim} (size {}); the op runs whole on \
         '{axis}' and they slice its result (no communication), its work repeated on each of the \
         {axis_size} '{axis}' devices",
        describe_value(value),
        dim_size(value, dim),
    )
}
