//! Which way a pipelined loop hands its state on: the sources of its rotation's permute.

use crate::ffi;
use melior::ir::OperationRef;

/// Which way loop `op`'s rotation moves chunks among `stages` devices, read off its first
/// permute's sources (`from`: device d takes chunk sources[d]): d - 1 forward, d + 1 reversed;
/// None when both read the same (2 stages) or the permute is neither.
pub(super) fn direction(op: OperationRef, stages: i64) -> Option<bool> {
    let mut sources = None;
    ffi::walk(op, |inner| {
        if sources.is_none() {
            sources = crate::ir::core::permute_sources(inner);
        }
    });
    let sources = sources?;
    let shifted = |by: i64| {
        (0..stages).all(|d| sources.get(d as usize) == Some(&(d + by).rem_euclid(stages)))
    };
    match (shifted(-1), shifted(1)) {
        (true, false) => Some(false),
        (false, true) => Some(true),
        _ => None,
    }
}
