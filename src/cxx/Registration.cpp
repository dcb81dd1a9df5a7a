//===- Registration.cpp - dialect registration, plugin info, dialect handles ===//
//
// These are reached through Rust: the cdylib exports only Rust symbols, so src/plugin.rs and
// src/capi.rs define the public entry points (mlirGetDialectPluginInfo, partirRegister...,
// mlirGetDialectHandle__partir__) and forward here.
//
//===----------------------------------------------------------------------===//

#include "Bridge.h"

#include "mlir/CAPI/IR.h"
#include "mlir/CAPI/Registration.h"
#include "mlir/IR/DialectRegistry.h"
#include "mlir/Tools/Plugins/DialectPlugin.h"
#include "mlir/Tools/Plugins/PassPlugin.h"
#include "partir/Hlo/HloDialect.h"

using namespace mlir;

static void registerPartirDialects(DialectRegistry *registry) {
  registry->insert<partir::PartirDialect, partir_hlo::PartirHloDialect>();
}

extern "C" void partir_cxx_register_dialects(MlirDialectRegistry registry) {
  registerPartirDialects(unwrap(registry));
}

void partir_cxx_fill_dialect_plugin_info(DialectPluginLibraryInfo *info) {
  *info = {MLIR_PLUGIN_API_VERSION, "partir", "0.1.0", registerPartirDialects};
}

void partir_cxx_fill_pass_plugin_info(PassPluginLibraryInfo *info) {
  *info = {MLIR_PLUGIN_API_VERSION, "partir", "0.1.0", partir_cxx_register_passes};
}

namespace {
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

extern "C" MlirDialectHandle partir_cxx_core_dialect_handle(void) {
  return handleFor<partir::PartirDialect>();
}

extern "C" MlirDialectHandle partir_cxx_hlo_dialect_handle(void) {
  return handleFor<partir_hlo::PartirHloDialect>();
}
