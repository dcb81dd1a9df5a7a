//===- Passes.cpp - pass shells that hand the module to Rust -------------===//
//
// The pass classes are generated from include/partir/Passes.td; each runOnOperation copies its
// option values, by name, into the pass's typed options (src/passes/options.rs, shared through
// cxx) and calls the Rust entry point of the same name (src/entry/passes.rs). A false return (a
// failed pass or a caught Rust panic, already reported as a diagnostic) becomes
// signalPassFailure().
//
//===----------------------------------------------------------------------===//

#include "partir/src/entry/passes.rs.h"
#include "partir/src/ffi/glue.rs.h"
#include "partir/src/passes/options.rs.h"

#include "mlir/CAPI/IR.h"
#include "mlir/CAPI/Support.h"
#include "mlir/IR/BuiltinOps.h"
#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Bufferization/IR/Bufferization.h"
#include "mlir/Dialect/DLTI/DLTI.h"
#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/Dialect/MPI/IR/MPI.h"
#include "mlir/Dialect/MemRef/IR/MemRef.h"
#include "mlir/Dialect/Linalg/IR/Linalg.h"
#include "mlir/Dialect/SCF/IR/SCF.h"
#include "mlir/Dialect/Shard/IR/ShardDialect.h"
#include "mlir/Dialect/Tensor/IR/Tensor.h"
#include "mlir/Pass/Pass.h"
#include "partir/Hlo/HloDialect.h"

namespace mlir::partir {
#define GEN_PASS_DECL
#define GEN_PASS_DEF_PARTIRMESH
#define GEN_PASS_DEF_PARTIRTILE
#define GEN_PASS_DEF_PARTIRUNMERGEBATCHDIMS
#define GEN_PASS_DEF_PARTIRINLINECALLS
#define GEN_PASS_DEF_PARTIRREPLICATE
#define GEN_PASS_DEF_PARTIRPRINTRULES
#define GEN_PASS_DEF_PARTIRPROPAGATE
#define GEN_PASS_DEF_PARTIREXPANDDIM
#define GEN_PASS_DEF_PARTIRSCHEDULE
#define GEN_PASS_DEF_PARTIRSEQUENTIAL
#define GEN_PASS_DEF_PARTIRLOWERTOHLO
#define GEN_PASS_DEF_PARTIRCOMBINECOLLECTIVES
#define GEN_PASS_DEF_PARTIRSIMULATE
#define GEN_PASS_DEF_PARTIREXPORTSHARD
#define GEN_PASS_DEF_PARTIREXPORTSTABLEHLO
#define GEN_PASS_DEF_PARTIRTOMPI
#define GEN_PASS_DEF_PARTIRAUTO
#include "partir/Passes.h.inc"

namespace {
namespace entry = ::partir::entry;
namespace options = ::partir::options;

rust::String text(const std::string &value) { return rust::String(value); }

rust::Vec<int64_t> numbers(ArrayRef<int64_t> values) {
  rust::Vec<int64_t> out;
  for (int64_t value : values)
    out.push_back(value);
  return out;
}

rust::Vec<rust::String> texts(ArrayRef<std::string> values) {
  rust::Vec<rust::String> out;
  for (const std::string &value : values)
    out.push_back(rust::String(value));
  return out;
}

// One shell per pass: RUN is the call into Rust, with the pass's options built by name.
#define PARTIR_RUST_PASS(CLASS, RUN)                                                         \
  struct CLASS : impl::CLASS##Base<CLASS> {                                                  \
    using CLASS##Base::CLASS##Base;                                                          \
    void getDependentDialects(DialectRegistry &registry) const override {                   \
      CLASS##Base::getDependentDialects(registry);                                          \
      registry.insert<PartirDialect, partir_hlo::PartirHloDialect>();                        \
    }                                                                                        \
    void runOnOperation() override {                                                         \
      MlirOperation op = wrap(getOperation().getOperation());                                \
      if (!(RUN))                                                                            \
        signalPassFailure();                                                                 \
    }                                                                                        \
  };

PARTIR_RUST_PASS(PartirMesh, entry::run_mesh(op, options::MeshOptions{.axes = texts(axes)}))
PARTIR_RUST_PASS(PartirUnmergeBatchDims, entry::run_unmerge_batch_dims(op))
PARTIR_RUST_PASS(PartirInlineCalls, entry::run_inline_calls(op))
PARTIR_RUST_PASS(PartirTile,
                 entry::run_tile(op, options::TileOptions{
                                         .value = text(value), .dim = dim, .axis = text(axis)}))
PARTIR_RUST_PASS(PartirExpandDim,
                 entry::run_expand_dim(op, options::ExpandDimOptions{
                                               .value = text(value), .dim = dim, .sizes = numbers(sizes)}))
PARTIR_RUST_PASS(PartirReplicate,
                 entry::run_replicate(op, options::ReplicateOptions{.value = text(value),
                                                                    .axis = text(axis)}))
PARTIR_RUST_PASS(PartirPrintRules, entry::run_print_rules(op))
PARTIR_RUST_PASS(PartirPropagate,
                 entry::run_propagate(op, options::PropagateOptions{.axis = text(axis),
                                                                    .reach = text(reach)}))
PARTIR_RUST_PASS(PartirSchedule,
                 entry::run_schedule(op, options::ScheduleOptions{.file = text(file),
                                                                  .device = text(device),
                                                                  .report = text(report)}))
PARTIR_RUST_PASS(PartirSequential, entry::run_sequential(op))
PARTIR_RUST_PASS(PartirLowerToHlo, entry::run_lower_to_hlo(op))
PARTIR_RUST_PASS(PartirCombineCollectives,
                 entry::run_combine_collectives(
                     op, options::CombineOptions{.threshold = text(threshold), .count = count}))
PARTIR_RUST_PASS(PartirSimulate,
                 entry::run_simulate(op, options::SimulateOptions{.device = text(device),
                                                                  .report = text(report)}))
PARTIR_RUST_PASS(PartirExportShard, entry::run_export_shard(op))
PARTIR_RUST_PASS(PartirExportStablehlo, entry::run_export_stablehlo(op))
PARTIR_RUST_PASS(PartirToMpi, entry::run_to_mpi(op))
PARTIR_RUST_PASS(PartirAuto,
                 entry::run_auto(op, options::AutoOptions{.axis = text(axis),
                                                          .memory = text(memory),
                                                          .device = text(device),
                                                          .time_limit = timeLimit,
                                                          .seed = seed,
                                                          .evaluations = evaluations}))
} // namespace

#define GEN_PASS_REGISTRATION
#include "partir/Passes.h.inc"
} // namespace mlir::partir

void partir::glue::register_passes() {
  // Registration is global; plugins, partir-opt and C API users may all ask for it.
  static bool registered = [] {
    mlir::partir::registerPartirPasses();
    return true;
  }();
  (void)registered;
}
