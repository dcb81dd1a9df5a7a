//! A rotation of a value split on the rotated dim (`jnp.roll` of a pipeline's state buffer,
//! split one stage per device; see [`crate::rules::rotation`]) becomes one permute of whole
//! chunks, as GSPMD partitions it. Its pieces, one op at a time, are slices of fewer rows than
//! devices: propagation would stop at them and gather the buffer.
//!
//! ```text
//! %r = concatenate(slice %x [1, 2), slice %x [0, 1)) along 0    %x: [2, 4, 16] split on stage
//!   becomes
//! %r = partir.loop "stage" [#tile<0>] (%i) { partir.permute 0 %x[%i] from [1, 0] }
//! ```

use super::{view, Propagation, Reach};
use crate::{
    ffi::{self, Severity},
    ir::core::{self, static_shape},
    passes::names::PROPAGATE as PASS,
    rules::rotation::{rotation, Rotated},
};
use melior::{
    ir::{block::BlockLike, operation::OperationLike, OperationRef, Value, ValueLike},
    Context,
};

impl<'c> Propagation<'c> {
    /// A rotation around `op` made one permute: its pieces are erased, so the sweep starts
    /// again. Whether it did.
    pub(super) fn rotated(&mut self, op: OperationRef<'c, '_>, axis: &str, axis_size: i64) -> bool {
        let rotated = self.reach == Reach::All && rotate_around(self.context, op, axis, axis_size);
        self.erased_body |= rotated;
        rotated
    }
}

/// Rewrites a rotation that `op` is (or is a piece of, up to two ops down: a slice, then the
/// pad of the transpose's sum) when its source is tiled on the rotated dim along `axis`.
/// Whether it did: `op` may be erased then.
fn rotate_around<'c>(
    context: &'c Context,
    op: OperationRef<'c, '_>,
    axis: &str,
    axis_size: i64,
) -> bool {
    let mut candidates = vec![op];
    for result in op.results() {
        for user in core::users(result.into()) {
            candidates.push(user);
            for inner in user.results() {
                candidates.extend(core::users(inner.into()));
            }
        }
    }
    candidates.into_iter().any(|candidate| {
        rotation(candidate).is_some_and(|rotated| rotate(context, &rotated, axis, axis_size))
    })
}

/// `rotated.parts[0]`'s result as one permute of `rotated.source`'s chunks; whether it did.
fn rotate<'c>(context: &'c Context, rotated: &Rotated<'c, '_>, axis: &str, parts: i64) -> bool {
    let (source, dim) = (rotated.source, rotated.dim);
    let op = rotated.parts[0];
    let Ok(result) = op.result(0).map(Value::from) else {
        return false;
    };
    // Its source split (forward), or what reads its result splits it (backward): a permute
    // of a whole source is each device taking another chunk, no communication.
    let split = view::tiling(source, axis) == Some(dim)
        || view::split_along(result, dim)
            .iter()
            .any(|along| along == axis);
    if !split {
        return false;
    }
    let Some(shape) = static_shape(source.r#type()) else {
        return false;
    };
    let rows = shape[dim];
    // The shift must move whole chunks (roll by one stage of one row each).
    if parts <= 0 || rows % parts != 0 || rotated.shift % (rows / parts) != 0 {
        return false;
    }
    let chunks = rotated.shift / (rows / parts);
    let sources: Vec<i64> = (0..parts).map(|r| (r - chunks).rem_euclid(parts)).collect();
    let location = op.location();
    let tiled = core::chunk_loop(
        context,
        axis,
        parts,
        dim,
        source.r#type(),
        location,
        |range, chunk| core::permute(context, source, range, dim, &sources, chunk, location),
    );
    let Some(block) = op.block() else {
        return false;
    };
    let tiled = block.insert_operation_before(op, tiled);
    let name = crate::rules::describe(op);
    ffi::replace_all_uses(result, tiled.result(0).expect("one result").into());
    ffi::emit(
        location,
        Severity::Remark,
        &format!(
            "{PASS}: '{name}' rotates its operand by {} rows on dim {dim}, split along '{axis}' ({parts} chunks of {}): one permute of whole chunks",
            rotated.shift,
            rows / parts
        ),
    );
    for part in &rotated.parts {
        let dead = part
            .results()
            .all(|result| ffi::uses(Value::from(result)).is_empty());
        if dead {
            // SAFETY: no use of `part` is left, and no handle to it is used after this (the
            // sweep starts again: `erased_body`).
            unsafe { ffi::erase(*part) };
        }
    }
    true
}
