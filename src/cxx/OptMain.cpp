//===- OptMain.cpp - partir-opt: every upstream dialect and pass, plus PartIR ===//

#include "Bridge.h"

#include "mlir/InitAllDialects.h"
#include "mlir/InitAllExtensions.h"
#include "mlir/InitAllPasses.h"
#include "mlir/Tools/mlir-opt/MlirOptMain.h"
#include "partir/Hlo/HloDialect.h"

extern "C" int partir_cxx_opt_main(int argc, char **argv) {
  mlir::DialectRegistry registry;
  mlir::registerAllDialects(registry);
  mlir::registerAllExtensions(registry);
  registry.insert<mlir::partir::PartirDialect, mlir::partir_hlo::PartirHloDialect>();
  mlir::registerAllPasses();
  partir_cxx_register_passes();
  return mlir::asMainReturnCode(mlir::MlirOptMain(
      argc, argv, "partir-opt: MLIR optimizer driver with PartIR dialects and passes\n",
      registry));
}
