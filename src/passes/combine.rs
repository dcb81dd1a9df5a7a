//! `partir-combine-collectives`: the pass shell of `lower_to_hlo::combine` (the rewrite, also run
//! on the simulator's lowered copy), with its options and the peak-memory remark.

use super::{
    lower_to_hlo::combine::{combine_function, Limits},
    names::COMBINE_COLLECTIVES as PASS,
    options::CombineOptions,
    program_location, require_no_loops,
    simulate::profile_function,
    PassError, PassResult,
};
use crate::{ffi, ir::names, sim::liveness};
use melior::{
    ir::{operation::OperationLike, OperationRef},
    Context,
};

pub fn run<'c>(
    context: &'c Context,
    module: OperationRef<'c, '_>,
    options: &CombineOptions,
) -> PassResult<'c> {
    require_no_loops(module, PASS)?;
    let threshold: bytesize::ByteSize = options.threshold.trim().parse().map_err(|_| {
        PassError::new(
            program_location(module),
            format!(
                "{PASS}: threshold '{}' is not a size (e.g. 30MiB, 512KiB, 4096B)",
                options.threshold
            ),
        )
    })?;
    if options.count < 1 {
        return Err(PassError::new(
            program_location(module),
            format!("{PASS}: count must be at least 1, got {}", options.count),
        ));
    }
    let limits = Limits {
        bytes: threshold.as_u64() as f64,
        count: options.count as usize,
    };
    for func in names::functions(module) {
        let before = peak_bytes(module, func)?;
        let summary = combine_function(context, func, limits);
        if summary.combined() == 0 {
            continue;
        }
        let after = peak_bytes(module, func)?;
        ffi::emit(
            func.location(),
            ffi::Severity::Remark,
            &format!(
                "{PASS}: combined {summary}; peak memory {} -> {}",
                crate::report::text::bytes(before),
                crate::report::text::bytes(after)
            ),
        );
    }
    Ok(())
}

/// The peak live bytes of `func` as the simulator counts them.
fn peak_bytes<'c>(
    module: OperationRef<'c, '_>,
    func: OperationRef<'c, '_>,
) -> Result<f64, PassError<'c>> {
    Ok(liveness::peak(&profile_function(module, func, false)?.buffers).0)
}
