//===- Passes.cpp - pass shells that hand the module to Rust -------------===//
//
// The pass classes are generated from include/partir/Passes.td; each runOnOperation collects
// its option values as strings and calls partir_rust_run_pass. A false return (a failed pass
// or a caught Rust panic, already reported as a diagnostic) becomes signalPassFailure().
//
//===----------------------------------------------------------------------===//

#include "Bridge.h"

#include "mlir/CAPI/IR.h"
#include "mlir/CAPI/Support.h"
#include "mlir/IR/BuiltinOps.h"
#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Bufferization/IR/Bufferization.h"
#include "mlir/Dialect/DLTI/DLTI.h"
#include "mlir/Dialect/MPI/IR/MPI.h"
#include "mlir/Dialect/MemRef/IR/MemRef.h"
#include "mlir/Dialect/Linalg/IR/Linalg.h"
#include "mlir/Dialect/SCF/IR/SCF.h"
#include "mlir/Dialect/Shard/IR/ShardDialect.h"
#include "mlir/Dialect/Tensor/IR/Tensor.h"
#include "mlir/Pass/Pass.h"
#include "partir/Hlo/HloDialect.h"
#include "llvm/ADT/StringExtras.h"

namespace mlir::partir {
#define GEN_PASS_DECL
#define GEN_PASS_DEF_PARTIRMESH
#define GEN_PASS_DEF_PARTIRTILE
#define GEN_PASS_DEF_PARTIRREPLICATE
#define GEN_PASS_DEF_PARTIRPRINTRULES
#define GEN_PASS_DEF_PARTIRPROPAGATE
#define GEN_PASS_DEF_PARTIRSCHEDULE
#define GEN_PASS_DEF_PARTIRSEQUENTIAL
#define GEN_PASS_DEF_PARTIRLOWERTOHLO
#define GEN_PASS_DEF_PARTIRSIMULATE
#define GEN_PASS_DEF_PARTIREXPORTSHARD
#define GEN_PASS_DEF_PARTIRTOMPI
#define GEN_PASS_DEF_PARTIRAUTO
#include "partir/Passes.h.inc"

namespace {
using Options = SmallVector<std::pair<std::string, std::string>>;

bool runInRust(StringRef name, Operation *op, const Options &options) {
  SmallVector<MlirStringRef> keys, values;
  for (const auto &[key, value] : options) {
    keys.push_back(wrap(StringRef(key)));
    values.push_back(wrap(StringRef(value)));
  }
  return partir_rust_run_pass(wrap(name), wrap(op), keys.data(), values.data(), keys.size());
}

std::string joined(const ArrayRef<std::string> list) { return llvm::join(list, ","); }

// One shell per pass: `OPTIONS` lists the option values handed to Rust.
#define PARTIR_RUST_PASS(CLASS, ARGUMENT, ...)                                               \
  struct CLASS : impl::CLASS##Base<CLASS> {                                                  \
    using CLASS##Base::CLASS##Base;                                                          \
    void getDependentDialects(DialectRegistry &registry) const override {                   \
      CLASS##Base::getDependentDialects(registry);                                          \
      registry.insert<PartirDialect, partir_hlo::PartirHloDialect>();                        \
    }                                                                                        \
    void runOnOperation() override {                                                         \
      Options options{__VA_ARGS__};                                                          \
      if (!runInRust(ARGUMENT, getOperation(), options))                                     \
        signalPassFailure();                                                                 \
    }                                                                                        \
  };

PARTIR_RUST_PASS(PartirMesh, "partir-mesh", {"axes", joined(axes)})
PARTIR_RUST_PASS(PartirTile, "partir-tile", {"value", value}, {"dim", std::to_string(dim)},
                 {"axis", axis})
PARTIR_RUST_PASS(PartirReplicate, "partir-replicate", {"value", value}, {"axis", axis})
PARTIR_RUST_PASS(PartirPrintRules, "partir-print-rules")
PARTIR_RUST_PASS(PartirPropagate, "partir-propagate", {"axis", axis}, {"reach", reach})
PARTIR_RUST_PASS(PartirSchedule, "partir-schedule", {"file", file}, {"device", device},
                 {"report", report})
PARTIR_RUST_PASS(PartirSequential, "partir-sequential")
PARTIR_RUST_PASS(PartirLowerToHlo, "partir-lower-to-hlo")
PARTIR_RUST_PASS(PartirSimulate, "partir-simulate", {"device", device}, {"report", report})
PARTIR_RUST_PASS(PartirExportShard, "partir-export-shard")
PARTIR_RUST_PASS(PartirToMpi, "partir-to-mpi")
PARTIR_RUST_PASS(PartirAuto, "partir-auto", {"axis", axis})
} // namespace

#define GEN_PASS_REGISTRATION
#include "partir/Passes.h.inc"
} // namespace mlir::partir

extern "C" void partir_cxx_register_passes(void) {
  // Registration is global; plugins, partir-opt and C API users may all ask for it.
  static bool registered = [] {
    mlir::partir::registerPartirPasses();
    return true;
  }();
  (void)registered;
}
