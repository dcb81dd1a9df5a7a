//! A slice (or an edge pad) of a split dim whose result the axis does not divide: `x[2:6]` of
//! 8 rows on 8 devices makes 4 rows. GSPMD pads such a result; so does partir. The op grows
//! its result to a multiple of the axis (`pad x low -2 high 2`: 8 rows, the last 4 padding),
//! `pad_dim` carries the padding to every value it flows to, as a tile of an uneven dim does
//! (docs/design.md#uneven-dims), and the grown op then splits with a halo (`halo.rs`): device
//! `j` gets row `j + 2` from device `j + 2`, one `collective_permute`.

use super::view::split_along;
use crate::{
    ffi::{self, Severity},
    ir::core::static_shape,
    passes::{
        names::PROPAGATE as PASS,
        pad_dim::{self, Padding},
        padding_share,
    },
    rules::{pad, Rules},
    tmr::{FactorKind, ValueRef},
};
use melior::{
    ir::{operation::OperationLike, OperationRef, Value, ValueLike},
    Context,
};

/// Grows `op`'s result when an operand tiled as `tilings` says indexes it through a moved
/// factor whose result dim `axis_size` does not divide; whether it did (`op` is then erased).
pub(super) fn grow_moved_result<'c>(
    context: &'c Context,
    rules: &Rules,
    op: OperationRef<'c, '_>,
    tilings: &[Option<usize>],
    axis: &str,
    axis_size: i64,
) -> bool {
    // What padding made (a slice back) is not grown again: it would be sliced back again.
    if op.result_count() != 1 || !pad::grows(op) || padding_share::of(op) > 0.0 {
        return false;
    }
    let Some(Ok(rule)) = rules.rule_for(op) else {
        return false;
    };
    let Ok(result) = op.result(0).map(Value::from) else {
        return false;
    };
    let Some(shape) = static_shape(result.r#type()) else {
        return false;
    };
    for (index, dim) in tilings.iter().enumerate() {
        let Some(dim) = *dim else { continue };
        let Ok(factor) = rule.factor_at(ValueRef::Operand(index), dim) else {
            continue;
        };
        if rule.factor(factor).kind != FactorKind::Moved {
            continue;
        }
        let Some(&[result_dim]) = rule
            .results()
            .first()
            .map(|dims| dims.dims_of(factor))
            .as_deref()
        else {
            continue;
        };
        let size = shape[result_dim];
        if size % axis_size == 0 || !split_along(result, result_dim).is_empty() {
            continue;
        }
        let to = (size + axis_size - 1) / axis_size * axis_size;
        let padding = Padding {
            dim: result_dim,
            chunks: 1,
            from: size,
            to,
        };
        let location = op.location();
        let name = crate::rules::describe(op);
        match pad_dim::grow_result(context, result, padding) {
            Ok(padded) => {
                ffi::emit(
                    location,
                    Severity::Remark,
                    &format!(
                        "{PASS}: dim {result_dim} of the result of '{name}' (size {size}) does not divide over axis '{axis}' (size {axis_size}): grown to {to}, {} per device, {} of padding (+{:.1}%) on {} values",
                        to / axis_size,
                        to - size,
                        100.0 * (to - size) as f64 / size as f64,
                        padded.values,
                    ),
                );
                return true;
            }
            Err(_) => return false,
        }
    }
    false
}
