//! Results read split already: a result dim that its readers take split along other axes (a
//! tile action's view of it, ZeRO's tile of an intermediate) holds that many tiles of what its
//! local type says, and tiling the op along one more axis must split each of them. 8 rows split
//! on `c` (2) inside a `c` loop and read split on `batch` (2) have 2 rows per device, which `a`
//! (4) cannot split further (`test/Fuzz/read-split-result.test`: lowering met a 0-row operand).

use super::view::split_along;
use crate::{
    ir::core::static_shape,
    tmr::{ResultTiling, TileEffect},
};
use melior::ir::{OperationRef, Value, ValueLike};
use std::collections::HashMap;

/// Err (the stop's reason) when a result `effect` tiles along `axis` is read split along other
/// axes (`axis_sizes`) that leave fewer positions than `axis_size` divides.
pub(super) fn check_split(
    op: OperationRef,
    effect: &TileEffect,
    axis: &str,
    axis_size: i64,
    axis_sizes: &HashMap<String, i64>,
) -> Result<(), String> {
    for (index, tiling) in effect.results.iter().enumerate() {
        let (ResultTiling::Tile(dim), Ok(result)) = (tiling, op.result(index)) else {
            continue;
        };
        let result = Value::from(result);
        let others: Vec<String> = split_along(result, *dim)
            .into_iter()
            .filter(|other| other != axis)
            .collect();
        let ways: i64 = others
            .iter()
            .map(|other| axis_sizes.get(other).copied().unwrap_or(1))
            .product();
        let size = static_shape(result.r#type())
            .and_then(|shape| shape.get(*dim).copied())
            .unwrap_or(0);
        if ways > 1 && size % (ways * axis_size) != 0 {
            return Err(format!(
                "dim {dim} of result {index} (size {size}) is read split {ways} ways along {} already, which leaves too few positions to split {axis_size} ways along '{axis}'",
                others.join(", ")
            ));
        }
    }
    Ok(())
}
