//===- Passes.td - every partir pass and its options ---------------------===//
//
// Each pass is a thin C++ shell (src/cxx/Passes.cpp) that hands the module and its options to
// the Rust module of the same name (src/passes/<name>.rs). A pass that is declared here but not
// built yet fails with an explicit "not implemented" error, never a silent success.
//
//===----------------------------------------------------------------------===//
#ifndef PARTIR_PASSES
#define PARTIR_PASSES

include "mlir/Pass/PassBase.td"

def PartirMesh : Pass<"partir-mesh", "::mlir::ModuleOp"> {
  let summary = "Declare the device mesh: partir-mesh{axes=batch=4,model=2}";
  let description = [{
    Inserts `partir.mesh @mesh ["batch"=4, "model"=2]` at the top of the module. Running it
    again with the same axes changes nothing; a different mesh is an error.
  }];
  let options = [
    ListOption<"axes", "axes", "std::string",
               "mesh axes as NAME=SIZE, major to minor (e.g. batch=4,model=2)">,
  ];
}

def PartirTile : Pass<"partir-tile", "::mlir::ModuleOp"> {
  let summary = "The tile action: tile a value along a mesh axis on one dimension";
  let description = [{
    `partir-tile{value=x dim=0 axis=batch}` replaces every use of the values the selector
    names by `partir.loop "batch" [#partir.tile<0>] { partir.slice 0 %x[%r] }` (an identity
    that propagation then pushes into users and producers). Selectors name function
    arguments by their `partir.name` attribute (else `argN`), or op results by a `partir.name`
    attribute on the defining op; `*` matches any run of characters.
  }];
  let options = [
    Option<"value", "value", "std::string", "\"\"", "selector of the values to tile">,
    Option<"dim", "dim", "int64_t", "-1", "tensor dimension to tile">,
    Option<"axis", "axis", "std::string", "\"\"", "mesh axis to tile along">,
  ];
}

def PartirReplicate : Pass<"partir-replicate", "::mlir::ModuleOp"> {
  let summary = "The replicate action: pin values to stay whole along a mesh axis";
  let description = [{
    `partir-replicate{value=*bias* axis=model}` routes every use of the selected values through
    `partir.replicate "model"`, which propagation on that axis never tiles through.
  }];
  let options = [
    Option<"value", "value", "std::string", "\"\"", "selector of the values to pin">,
    Option<"axis", "axis", "std::string", "\"\"", "mesh axis along which they stay whole">,
  ];
}

def PartirPrintRules : Pass<"partir-print-rules", "::mlir::ModuleOp"> {
  let summary = "Report each op's Tile Mapping Registry rule in einsum notation (as remarks)";
  let description = [{
    For every op of every function (inside partir.loop bodies too, not inside other ops'
    regions), a remark such as
    `partir-print-rules: linalg.matmul: ([i,k],[k,j],[i,j]) -> ([i,j]) reduction={k:sum} sizes={i=32,k=64,j=256}`
    or `partir-print-rules: foo.bar: no rule`. Operands are listed inputs then inits.
  }];
}

def PartirPropagate : Pass<"partir-propagate", "::mlir::ModuleOp"> {
  let summary = "Propagate tiling decisions through the program with the Tile Mapping Registry";
  let options = [
    Option<"axis", "axis", "std::string", "\"\"", "mesh axis to propagate (all axes if empty)">,
    Option<"reach", "reach", "std::string", "\"all\"",
           "all: through every op with a rule; elementwise: only through elementwise ops (ZeRO)">,
  ];
}

def PartirSchedule : Pass<"partir-schedule", "::mlir::ModuleOp"> {
  let summary = "Apply a schedule of tactics (TOML) in order, propagating after each";
  let options = [
    Option<"file", "file", "std::string", "\"\"", "path of the schedule TOML file">,
    Option<"device", "device", "std::string", "\"\"",
           "after each tactic, simulate the program on this device (preset or TOML file)">,
    Option<"report", "report", "std::string", "\"\"",
           "with device: write the per-tactic JSON report to this path">,
  ];
  let description = [{
    Each tactic pins, tiles, then propagates along its axis, and a remark summarises it. With
    `device=D`, the program after each tactic is lowered on a copy and simulated
    (`partir-simulate`), and the remark adds its collectives, step time and peak memory.
  }];
}

def PartirSequential : Pass<"partir-sequential", "::mlir::ModuleOp"> {
  let summary = "Lower PartIR:Core loops to scf.for: the sequential reading of a Core program";
  let description = [{
    Each `partir.loop "a" [...] (%r: !partir.range<N>)` becomes an `scf.for` over 0..N whose
    iterations write chunk r of a `#partir.tile<d>` result with `tensor.insert_slice`, or
    combine into a `#partir.sum` accumulator (started at the reduction's identity);
    `partir.slice d %x[%r]` becomes `tensor.extract_slice`. The mesh is removed, so the result
    runs on one process with upstream passes only (e.g. under mlir-runner).
  }];
  let dependentDialects = ["::mlir::scf::SCFDialect", "::mlir::tensor::TensorDialect",
                           "::mlir::arith::ArithDialect", "::mlir::linalg::LinalgDialect"];
}

def PartirLowerToHlo : Pass<"partir-lower-to-hlo", "::mlir::ModuleOp"> {
  let summary = "Lower PartIR:Core to device-local PartIR:HLO with optimised collectives";
}

def PartirSimulate : Pass<"partir-simulate", "::mlir::ModuleOp"> {
  let summary = "Estimate step time, peak memory and communication on a described device";
  let options = [
    Option<"device", "device", "std::string", "\"\"",
           "device preset or TOML file (empty: the default device, tpu-v3)">,
    Option<"report", "report", "std::string", "\"\"", "write the JSON report to this path">,
  ];
  let description = [{
    Per device of the mesh: compute time per op (roofline: FLOPs and bytes from the TMR rules
    against the device's peaks), collective time (ring alpha-beta per mesh axis), peak memory
    (liveness of local buffers). Prints the report on stderr; the IR is unchanged. A Core
    program (with `partir.loop`s) is lowered to PartIR:HLO on a copy first.
  }];
}

def PartirExportShard : Pass<"partir-export-shard", "::mlir::ModuleOp"> {
  let summary = "Export PartIR:HLO to upstream MLIR's shard dialect";
  let description = [{
    The module's `partir.mesh @mesh ["batch"=4, "model"=2]` becomes the private
    `shard.grid @mesh(shape = 4x2) {shard.axis_names = ["batch", "model"]}`; each
    `partir_hlo` collective becomes the `shard` collective on `@mesh` with `grid_axes` the
    indices of its axes (in its order), the same tensor dims and reduction kind. The program
    stays in SPMD form (local shapes, as `shard-partition` leaves it), so argument and result
    shardings become `shard.split_axes = #shard<axisarray[[0], []]>` attributes rather than
    `shard.shard` annotations (which describe the global program and which
    `convert-shard-to-mpi` rejects); `partir.name` attributes are dropped. Anything else of
    partir left in the module is an error.
  }];
  let dependentDialects = ["::mlir::shard::ShardDialect"];
}

def PartirToMpi : Pass<"partir-to-mpi", "::mlir::ModuleOp"> {
  let summary = "Lower PartIR:HLO collectives to the mpi dialect on per-axis communicators";
  let description = [{
    Each collective runs on `mpi.comm_split(world, color, key)` for its axes. all_reduce is
    `mpi.allreduce`; all_gather an allreduce of a zero buffer holding the local chunk; all_slice
    a local extract_slice; reduce_scatter and all_to_all compose those. The result needs
    `mpi.init`/`mpi.finalize` around it (a harness) and runs under `mpiexec ... mlir-runner`.
  }];
  let dependentDialects = ["::mlir::mpi::MPIDialect", "::mlir::bufferization::BufferizationDialect",
                           "::mlir::memref::MemRefDialect", "::mlir::DLTIDialect",
                           "::mlir::tensor::TensorDialect", "::mlir::linalg::LinalgDialect",
                           "::mlir::arith::ArithDialect"];
}

def PartirAuto : Pass<"partir-auto", "::mlir::ModuleOp"> {
  let summary = "Automatic partitioning along an axis (Monte Carlo tree search)";
  let options = [
    Option<"axis", "axis", "std::string", "\"\"", "mesh axis to search over">,
  ];
}

#endif // PARTIR_PASSES
