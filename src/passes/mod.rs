//! One module per pass of DESIGN §5. `run` dispatches by pass argument; every pass reports
//! user errors as diagnostics with a location and returns failure, never panics on bad input.

mod export_shard;
mod lower_to_hlo;
mod mesh;
mod print_rules;
mod propagate;
mod replicate;
pub mod schedule;
mod sequential;
pub mod simulate;
mod tile;
mod to_mpi;

use crate::ffi::{self, Severity};
use melior::{
    ir::{operation::OperationLike, Location, OperationRef},
    Context,
};
use std::collections::BTreeMap;

/// A pass's option values, as strings keyed by option name (from Passes.td).
#[derive(Debug, Default, Clone)]
pub struct PassOptions(BTreeMap<String, String>);

impl PassOptions {
    pub fn insert(&mut self, key: String, value: String) {
        self.0.insert(key, value);
    }

    pub fn with(mut self, key: &str, value: &str) -> Self {
        self.insert(key.into(), value.into());
        self
    }

    /// The option's value, or "" when unset.
    pub fn text(&self, key: &str) -> &str {
        self.0.get(key).map(String::as_str).unwrap_or("")
    }

    /// The option's value as an integer (MLIR's option parser already checked the syntax).
    pub fn integer(&self, key: &str) -> Result<i64, String> {
        let text = self.text(key);
        text.parse()
            .map_err(|_| format!("option '{key}' is '{text}', not an integer"))
    }
}

/// A user-facing failure: one sentence, at a location.
#[derive(Debug)]
pub struct PassError<'c> {
    pub location: Location<'c>,
    pub message: String,
}

impl<'c> PassError<'c> {
    pub fn new(location: Location<'c>, message: impl Into<String>) -> Self {
        Self {
            location,
            message: message.into(),
        }
    }
}

pub type PassResult<'c> = Result<(), PassError<'c>>;

/// Runs pass `name` on `module`; false after reporting a diagnostic.
pub fn run<'c>(
    name: &str,
    context: &'c Context,
    module: OperationRef<'c, '_>,
    options: &PassOptions,
) -> bool {
    let result = match name {
        "partir-mesh" => mesh::run(context, module, options),
        "partir-tile" => tile::run(context, module, options),
        "partir-replicate" => replicate::run(context, module, options),
        "partir-propagate" => propagate::run(context, module, options),
        "partir-print-rules" => print_rules::run(module),
        "partir-sequential" => sequential::run(context, module),
        "partir-lower-to-hlo" => lower_to_hlo::run(context, module),
        "partir-to-mpi" => to_mpi::run(context, module),
        "partir-export-shard" => export_shard::run(context, module),
        "partir-schedule" => schedule::run(context, module, options),
        "partir-simulate" => simulate::run(context, module, options),
        other => Err(PassError::new(
            program_location(module),
            format!("{other}: not implemented yet in this version of partir"),
        )),
    };
    match result {
        Ok(()) => true,
        Err(error) => {
            ffi::emit(error.location, Severity::Error, &error.message);
            false
        }
    }
}

/// Where module-level errors point: the first function (the program being partitioned), or
/// the module when it has none. Example: `mlp.mlir:1:1: error: partir-tile: selector ...`.
pub fn program_location<'c>(module: OperationRef<'c, '_>) -> Location<'c> {
    crate::ir::names::functions(module)
        .first()
        .map(|func| func.location())
        .unwrap_or_else(|| module.location())
}

/// The size of `axis` in the module's mesh, or the error `pass` reports when the module has no
/// mesh or the mesh has no such axis.
fn mesh_axis_size<'c>(
    module: OperationRef<'c, '_>,
    pass: &str,
    axis: &str,
) -> Result<i64, PassError<'c>> {
    if axis.is_empty() {
        return Err(PassError::new(
            program_location(module),
            format!("{pass}: no axis given (axis=NAME)"),
        ));
    }
    let Some((mesh, location)) = crate::ir::Mesh::find(module) else {
        return Err(PassError::new(
            program_location(module),
            format!(
                "{pass}: the module declares no partir.mesh; run partir-mesh{{axes=...}} first"
            ),
        ));
    };
    mesh.axis_size(axis).ok_or_else(|| {
        PassError::new(
            location,
            format!("{pass}: axis '{axis}' is not in mesh {mesh}"),
        )
    })
}

/// The values `selector_text` names, or the error `pass` reports when it names none.
fn select_values<'c, 'a>(
    module: OperationRef<'c, 'a>,
    pass: &str,
    selector_text: &str,
) -> Result<Vec<(String, crate::ir::NamedValue<'c, 'a>)>, PassError<'c>> {
    let fail =
        |message: String| PassError::new(program_location(module), format!("{pass}: {message}"));
    let selector = crate::ir::Selector::new(selector_text).map_err(fail)?;
    crate::ir::names::select(module, &selector).map_err(fail)
}

/// True when some user of `value` pins it along `axis` with `partir.replicate`.
fn pinned_along(value: melior::ir::Value, axis: &str) -> bool {
    use crate::ir::core;
    core::users(value).into_iter().any(|user| {
        user.name().as_string_ref().as_str() == Ok(core::REPLICATE_OP)
            && core::axis_of(user).as_deref() == Some(axis)
    })
}

/// True when `value` is already the source of a tile identity (or any slice) along `axis`.
fn sliced_along(value: melior::ir::Value, axis: &str) -> bool {
    use crate::ir::core;
    core::users(value).into_iter().any(|user| {
        user.name().as_string_ref().as_str() == Ok(core::SLICE_OP)
            && core::slice_axis(user).as_deref() == Some(axis)
    })
}

/// The op in which `value` is defined: its producer, or the op owning its block.
fn defining_scope<'c, 'a>(value: melior::ir::Value<'c, 'a>) -> Option<OperationRef<'c, 'a>> {
    use melior::ir::block::BlockLike;
    match ffi::argument_owner(value) {
        Some(block) => block.parent_operation(),
        None => ffi::result_owner(value),
    }
}
