//! `partir-replicate{value=SELECTOR axis=A}`: the replicate action of docs/design.md#actions.
//!
//! Every use of a selected value goes through `partir.replicate "A"`, a pin that propagation
//! on axis A never tiles through. Pinning a value twice on the same axis changes nothing.

use super::{
    foreign_region_owner, mesh_axis_size, names::REPLICATE as PASS, options::ReplicateOptions,
    pinned_along, select_values, sliced_along, PassError, PassResult,
};
use crate::{ffi, ir::core};
use melior::{ir::OperationRef, Context};

pub fn run<'c>(
    context: &'c Context,
    module: OperationRef<'c, '_>,
    options: &ReplicateOptions,
) -> PassResult<'c> {
    let named = crate::ir::names::named_values(module);
    replicate(context, module, &named, PASS, &options.value, &options.axis).map(|_| ())
}

/// Pins every value `selector` names along `axis`; returns how many. `who` prefixes the
/// diagnostics; `named` is the module's [`crate::ir::names::named_values`].
pub fn replicate<'c, 'a>(
    context: &'c Context,
    module: OperationRef<'c, 'a>,
    named: &[(String, crate::ir::NamedValue<'c, 'a>)],
    who: &str,
    selector: &str,
    axis: &str,
) -> Result<usize, PassError<'c>> {
    mesh_axis_size(module, who, axis)?;
    let targets = select_values(module, named, who, selector)?;
    for (name, target) in &targets {
        if let Some(owner) = foreign_region_owner(target.value) {
            return Err(PassError::new(
                target.location(),
                format!("{who}: '{name}' is computed inside a region of '{owner}': partir pins values of function bodies, not of other ops' regions; pin a value the '{owner}' reads or returns instead"),
            ));
        }
        if sliced_along(target.value, axis) {
            return Err(PassError::new(
                target.location(),
                format!("{who}: '{name}' is already tiled along axis '{axis}'; it cannot also stay whole there"),
            ));
        }
    }
    let count = targets.len();
    for (_, target) in targets {
        if pinned_along(target.value, axis) {
            continue;
        }
        let pin = core::replicate(context, target.value, axis, target.location());
        let pin = core::insert_after_definition(target.value, pin);
        ffi::replace_all_uses_except(target.value, pin.result(0).expect("one result").into(), pin);
    }
    Ok(count)
}
