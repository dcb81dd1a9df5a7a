//===- Registration.cpp - dialect registration, plugin info, dialect handles ===//
//
// These are reached through Rust: the cdylib exports only Rust symbols, so src/entry/plugin.rs
// and src/entry/capi.rs define the public entry points (mlirGetDialectPluginInfo,
// partirRegister..., mlirGetDialectHandle__partir__) and forward here (src/ffi/glue.rs).
//
//===----------------------------------------------------------------------===//

#include "partir/src/ffi/glue.rs.h"

#include "mlir/CAPI/IR.h"
#include "mlir/CAPI/Registration.h"
#include "mlir/IR/DialectRegistry.h"
#include "partir/Hlo/HloDialect.h"

namespace {
void registerPartirDialects(mlir::DialectRegistry *registry) {
  registry->insert<mlir::partir::PartirDialect, mlir::partir_hlo::PartirHloDialect>();
}

void registerPartirPasses() { partir::glue::register_passes(); }

template <typename DialectT>
MlirDialectHandle handleFor() {
  static MlirDialectRegistrationHooks hooks = {
      [](MlirDialectRegistry registry) { unwrap(registry)->insert<DialectT>(); },
      [](MlirContext context) { return wrap(unwrap(context)->getOrLoadDialect<DialectT>()); },
      [] { return wrap(DialectT::getDialectNamespace()); },
  };
  return MlirDialectHandle{&hooks};
}
} // namespace

namespace partir::glue {

void register_dialects(MlirDialectRegistry registry) { registerPartirDialects(unwrap(registry)); }

mlir::DialectPluginLibraryInfo dialect_plugin_info() {
  return {MLIR_PLUGIN_API_VERSION, "partir", "0.1.0", registerPartirDialects};
}

mlir::PassPluginLibraryInfo pass_plugin_info() {
  return {MLIR_PLUGIN_API_VERSION, "partir", "0.1.0", registerPartirPasses};
}

MlirDialectHandle core_dialect_handle() { return handleFor<mlir::partir::PartirDialect>(); }

MlirDialectHandle hlo_dialect_handle() {
  return handleFor<mlir::partir_hlo::PartirHloDialect>();
}

} // namespace partir::glue
