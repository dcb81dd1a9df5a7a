//! `partir-simulate{device=D report=R.json}`: reads a PartIR:HLO program into a
//! [`Profile`] (per-device work of every op, its collectives, its buffers) and prices it with
//! [`sim::simulate`]. A Core program is lowered (`partir-lower-to-hlo`, `cse`) on a copy first;
//! the IR is never changed.
//!
//! Work per op, from its TMR rule (every factor of the rule is a loop of the op):
//! ```text
//! linalg.matmul  ins(A: 8x64, B: 64x128)  factors i=8 j=128 k=64 (k: reduction)
//!   body: mulf, addf                     → flops = 2 · 8·128·64 = 131072, matrix units
//! linalg.generic {exp}  8x128             → transcendentals = 1024
//! tensor.collapse_shape, extract_slice   → no FLOPs (data movement)
//! ```
//! Bytes per op: its operands (not the destination it writes into) plus its results.
//! Buffers: every tensor result is a buffer, except views (reshapes, casts), and a linalg
//! result written into a destination that dies there (one-shot bufferization's in-place rule).

mod fusion;
mod iterations;
mod loop_memory;
mod profile;
mod rotation;

use super::{
    lower_to_hlo, names::SIMULATE as PASS, options::SimulateOptions, program_location, PassError,
    PassResult,
};
use crate::{
    ffi,
    ir::{core::LOOP_OP, names, Mesh},
    sim::{self, Device, Profile, DEFAULT_DEVICE},
};
use melior::{
    ir::{operation::OperationLike, Module, OperationRef, RegionLike},
    pass::PassManager,
    utility::parse_pass_pipeline,
    Context,
};
use profile::Reader;

pub fn run<'c>(
    context: &'c Context,
    module: OperationRef<'c, '_>,
    options: &SimulateOptions,
) -> PassResult<'c> {
    let location = program_location(module);
    let fail = |message: String| PassError::new(location, format!("{PASS}: {message}"));
    let device = match options.device.as_str() {
        "" => DEFAULT_DEVICE,
        name => name,
    };
    let device = Device::resolve(device).map_err(fail)?;
    let report = simulate_module(context, module, &device)?;
    eprint!("{}", report.text());
    write_report(&options.report, || report.json()).map_err(fail)
}

/// Writes `json()` to `path`, when given (a `report=PATH` option).
pub fn write_report(path: &str, json: impl FnOnce() -> String) -> Result<(), String> {
    match path {
        "" => Ok(()),
        path => std::fs::write(path, json())
            .map_err(|error| format!("cannot write the report '{path}': {error}")),
    }
}

/// Simulates `module` (HLO, or Core lowered on a copy) on `device`.
pub fn simulate_module<'c>(
    context: &'c Context,
    module: OperationRef<'c, '_>,
    device: &Device,
) -> Result<sim::Report, PassError<'c>> {
    Ok(sim::simulate(&profile_module(context, module)?, device))
}

/// The profile of `module`'s entry function; a Core module is lowered on a copy first.
pub fn profile_module<'c>(
    context: &'c Context,
    module: OperationRef<'c, '_>,
) -> Result<Profile, PassError<'c>> {
    if contains(module, LOOP_OP) {
        let copy = lowered_copy(context, module)?;
        return profile_hlo(copy.as_operation(), true);
    }
    profile_hlo(module, true)
}

fn contains(root: OperationRef, op_name: &str) -> bool {
    let mut found = false;
    ffi::walk(root, |op| {
        found = found || crate::ffi::op_is(op, op_name);
    });
    found
}

/// A copy of `module` lowered to PartIR:HLO (`partir-lower-to-hlo`, `cse`, then collectives
/// combined with XLA's default threshold, as `partir partition` does).
fn lowered_copy<'c>(
    context: &'c Context,
    module: OperationRef<'c, '_>,
) -> Result<Module<'c>, PassError<'c>> {
    // Outside a pass manager nothing loads the lowering's dialects for us.
    for dialect in ["partir_hlo", "tensor", "arith", "linalg"] {
        context.get_or_load_dialect(dialect);
    }
    let copy =
        Module::from_operation(ffi::clone_operation(module)).expect("a module's clone is a module");
    lower_in_place(context, copy)
}

/// Lowers a Core `module` (one that may be changed: a copy) to PartIR:HLO as `partir
/// partition` does, unverified: for pricing.
pub fn lower_in_place<'c>(
    context: &'c Context,
    copy: Module<'c>,
) -> Result<Module<'c>, PassError<'c>> {
    let location = program_location(copy.as_operation());
    lower_to_hlo::run(context, copy.as_operation())?;
    let manager = PassManager::new(context);
    // The copy is priced and dropped; verifying it (the whole program, twice) was a fifth of
    // `partir partition`'s time on the 48-layer Transformer. The lowering's output is verified
    // where it is kept (partir partition --stage hlo, the lit tests).
    manager.enable_verifier(false);
    parse_pass_pipeline(manager.as_operation_pass_manager(), "builtin.module(cse)")
        .expect("cse is registered");
    let mut copy = copy;
    manager
        .run(&mut copy)
        .map_err(|_| PassError::new(location, format!("{PASS}: cse failed on the lowered copy")))?;
    for func in names::functions(copy.as_operation()) {
        lower_to_hlo::combine::combine_function(
            context,
            func,
            lower_to_hlo::combine::Limits::default(),
        );
    }
    Ok(copy)
}

/// The entry function: `main`, else the first public function, else the first.
pub(crate) fn entry_function<'c, 'a>(module: OperationRef<'c, 'a>) -> Option<OperationRef<'c, 'a>> {
    let functions = names::functions(module);
    let named = |func: &OperationRef| {
        func.attribute("sym_name")
            .ok()
            .and_then(crate::ffi::string_attribute)
    };
    let public = |func: &OperationRef| {
        func.attribute("sym_visibility")
            .ok()
            .and_then(crate::ffi::string_attribute)
            .map(|visibility| visibility == "public")
            .unwrap_or(true)
    };
    functions
        .iter()
        .find(|func| named(func).as_deref() == Some("main"))
        .or_else(|| functions.iter().find(|func| public(func)))
        .or_else(|| functions.first())
        .copied()
}

/// The profile of `module`'s entry function (PartIR:HLO); `located`: steps and ops carry
/// their source locations (a report shows them; pricing alone skips them).
pub fn profile_hlo<'c>(
    module: OperationRef<'c, '_>,
    located: bool,
) -> Result<Profile, PassError<'c>> {
    let location = program_location(module);
    let func = entry_function(module)
        .ok_or_else(|| PassError::new(location, format!("{PASS}: the module has no function")))?;
    profile_function(module, func, located)
}

/// The profile of one function of `module` (a PartIR:HLO program): its ops, collectives and
/// buffers in program order; `located`: steps and ops carry their source locations.
pub fn profile_function<'c>(
    module: OperationRef<'c, '_>,
    func: OperationRef<'c, '_>,
    located: bool,
) -> Result<Profile, PassError<'c>> {
    let location = func.location();
    let mesh = Mesh::find(module).map(|(mesh, _)| mesh);
    let mut reader = Reader::new(mesh, located);
    let body = func
        .region(0)
        .ok()
        .and_then(|region| region.first_block())
        .ok_or_else(|| PassError::new(location, format!("{PASS}: the function has no body")))?;
    reader.arguments(body);
    reader.block(body)?;
    Ok(reader.finish())
}

/// Each argument's and result's sharding in a PartIR:HLO program (`partir_hlo.sharding`), by
/// its `partir.name` (`argN` / `result#N` without one), with the shape each device holds.
pub fn value_shardings(module: OperationRef) -> Vec<crate::sim::report::ValueSharding> {
    let mut found = Vec::new();
    for func in crate::ir::names::entry_functions(module) {
        let Ok(ty) = func.attribute("function_type") else {
            continue;
        };
        let Ok(ty) = melior::ir::attribute::TypeAttribute::try_from(ty) else {
            continue;
        };
        let Ok(ty) = melior::ir::r#type::FunctionType::try_from(ty.value()) else {
            continue;
        };
        for (list, is_result, count) in [
            ("arg_attrs", false, ty.input_count()),
            ("res_attrs", true, ty.result_count()),
        ] {
            let shardings = crate::ir::Sharding::of_function(func, list);
            let fields = crate::ir::func_attrs::entries(func, list, count);
            for (index, fields) in fields.iter().enumerate() {
                let value_type = if is_result {
                    ty.result(index)
                } else {
                    ty.input(index)
                };
                let name = crate::ir::func_attrs::name(fields).unwrap_or_else(|| {
                    if is_result {
                        format!("result#{index}")
                    } else {
                        format!("arg{index}")
                    }
                });
                let local_shape = value_type
                    .ok()
                    .and_then(crate::ffi::shaped_dims)
                    .unwrap_or_default();
                let axes = shardings
                    .get(index)
                    .cloned()
                    .flatten()
                    .map(|sharding| sharding.0)
                    .unwrap_or_else(|| vec![Vec::new(); local_shape.len()]);
                found.push(crate::sim::report::ValueSharding {
                    name,
                    is_result,
                    axes,
                    local_shape,
                });
            }
        }
    }
    found
}
