//! partir-auto: automatic partitioning along an axis (the papers' Monte Carlo tree search).
//! Declared in Passes.td so that pipelines naming it parse; the search itself is not built yet,
//! so the pass fails with a located error rather than succeeding silently.

use super::{names, options::AutoOptions, program_location, PassError, PassResult};
use melior::ir::OperationRef;

pub fn run<'c>(module: OperationRef<'c, '_>, _options: &AutoOptions) -> PassResult<'c> {
    Err(PassError::new(
        program_location(module),
        format!(
            "{}: not implemented yet in this version of partir",
            names::AUTO
        ),
    ))
}
