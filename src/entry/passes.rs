//! The pass entry points: each pass's C++ shell (`src/cxx/Passes.cpp`, generated from
//! `include/partir/Passes.td`) calls the function of the same name here with the module and
//! its typed options; a false return (the failure is already a diagnostic) becomes
//! `signalPassFailure()`.

use super::guarded;
use crate::passes::{self, names, options::*};

#[cxx::bridge(namespace = "partir::entry")]
mod bridge {
    #[namespace = ""]
    extern "C++" {
        include!("mlir-c/IR.h");
        type MlirOperation = crate::ffi::glue::Operation;
    }

    #[namespace = "partir::options"]
    extern "C++" {
        include!("partir/src/passes/options.rs.h");
        type MeshOptions = crate::passes::options::MeshOptions;
        type TileOptions = crate::passes::options::TileOptions;
        type ExpandDimOptions = crate::passes::options::ExpandDimOptions;
        type ReplicateOptions = crate::passes::options::ReplicateOptions;
        type PropagateOptions = crate::passes::options::PropagateOptions;
        type ScheduleOptions = crate::passes::options::ScheduleOptions;
        type SimulateOptions = crate::passes::options::SimulateOptions;
        type AutoOptions = crate::passes::options::AutoOptions;
        type CombineOptions = crate::passes::options::CombineOptions;
    }

    extern "Rust" {
        fn run_mesh(op: MlirOperation, options: &MeshOptions) -> bool;
        fn run_unmerge_batch_dims(op: MlirOperation) -> bool;
        fn run_inline_calls(op: MlirOperation) -> bool;
        fn run_tile(op: MlirOperation, options: &TileOptions) -> bool;
        fn run_expand_dim(op: MlirOperation, options: &ExpandDimOptions) -> bool;
        fn run_replicate(op: MlirOperation, options: &ReplicateOptions) -> bool;
        fn run_print_rules(op: MlirOperation) -> bool;
        fn run_propagate(op: MlirOperation, options: &PropagateOptions) -> bool;
        fn run_schedule(op: MlirOperation, options: &ScheduleOptions) -> bool;
        fn run_sequential(op: MlirOperation) -> bool;
        fn run_lower_to_hlo(op: MlirOperation) -> bool;
        fn run_combine_collectives(op: MlirOperation, options: &CombineOptions) -> bool;
        fn run_simulate(op: MlirOperation, options: &SimulateOptions) -> bool;
        fn run_export_shard(op: MlirOperation) -> bool;
        fn run_export_stablehlo(op: MlirOperation) -> bool;
        fn run_to_mpi(op: MlirOperation) -> bool;
        fn run_auto(op: MlirOperation, options: &AutoOptions) -> bool;
    }
}

use crate::ffi::glue::Operation;

fn run_mesh(op: Operation, options: &MeshOptions) -> bool {
    guarded(names::MESH, op, |context, module| {
        passes::report(passes::mesh::run(context, module, options))
    })
}

fn run_unmerge_batch_dims(op: Operation) -> bool {
    guarded(names::UNMERGE_BATCH_DIMS, op, |_, module| {
        passes::report(passes::unmerge::run(module))
    })
}

fn run_inline_calls(op: Operation) -> bool {
    guarded(names::INLINE_CALLS, op, |_, module| {
        passes::report(passes::inline_calls::run(module))
    })
}

fn run_tile(op: Operation, options: &TileOptions) -> bool {
    guarded(names::TILE, op, |context, module| {
        passes::report(passes::tile::run(context, module, options))
    })
}

fn run_expand_dim(op: Operation, options: &ExpandDimOptions) -> bool {
    guarded(names::EXPAND_DIM, op, |context, module| {
        passes::report(passes::expand_dim::run(context, module, options))
    })
}

fn run_replicate(op: Operation, options: &ReplicateOptions) -> bool {
    guarded(names::REPLICATE, op, |context, module| {
        passes::report(passes::replicate::run(context, module, options))
    })
}

fn run_print_rules(op: Operation) -> bool {
    guarded(names::PRINT_RULES, op, |_, module| {
        passes::report(passes::print_rules::run(module))
    })
}

fn run_propagate(op: Operation, options: &PropagateOptions) -> bool {
    guarded(names::PROPAGATE, op, |context, module| {
        passes::report(passes::propagate::run(context, module, options))
    })
}

fn run_schedule(op: Operation, options: &ScheduleOptions) -> bool {
    guarded(names::SCHEDULE, op, |context, module| {
        passes::report(passes::schedule::run(context, module, options))
    })
}

fn run_sequential(op: Operation) -> bool {
    guarded(names::SEQUENTIAL, op, |context, module| {
        passes::report(passes::sequential::run(context, module))
    })
}

fn run_lower_to_hlo(op: Operation) -> bool {
    guarded(names::LOWER_TO_HLO, op, |context, module| {
        passes::report(passes::lower_to_hlo::run(context, module))
    })
}

fn run_combine_collectives(op: Operation, options: &CombineOptions) -> bool {
    guarded(names::COMBINE_COLLECTIVES, op, |context, module| {
        passes::report(passes::combine::run(context, module, options))
    })
}

fn run_simulate(op: Operation, options: &SimulateOptions) -> bool {
    guarded(names::SIMULATE, op, |context, module| {
        passes::report(passes::simulate::run(context, module, options))
    })
}

fn run_export_shard(op: Operation) -> bool {
    guarded(names::EXPORT_SHARD, op, |context, module| {
        passes::report(passes::export_shard::run(context, module))
    })
}

fn run_export_stablehlo(op: Operation) -> bool {
    guarded(names::EXPORT_STABLEHLO, op, |context, module| {
        passes::report(passes::export_stablehlo::run(context, module))
    })
}

fn run_to_mpi(op: Operation) -> bool {
    guarded(names::TO_MPI, op, |context, module| {
        passes::report(passes::to_mpi::run(context, module))
    })
}

fn run_auto(op: Operation, options: &AutoOptions) -> bool {
    guarded(names::AUTO, op, |context, module| {
        passes::report(passes::auto::run(context, module, options))
    })
}
