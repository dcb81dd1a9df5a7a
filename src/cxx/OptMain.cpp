//===- OptMain.cpp - partir-opt: every upstream dialect and pass, plus PartIR ===//

#include "partir/src/ffi/glue.rs.h"

#include "mlir/InitAllDialects.h"
#include "mlir/InitAllExtensions.h"
#include "mlir/InitAllPasses.h"
#include "mlir/Tools/mlir-opt/MlirOptMain.h"
#include "partir/Hlo/HloDialect.h"

#include <string>
#include <vector>

namespace partir::glue {

int32_t opt_main(const rust::Vec<rust::String> &args) {
  std::vector<std::string> owned;
  for (const rust::String &arg : args)
    owned.emplace_back(arg.data(), arg.size());
  std::vector<char *> argv;
  for (std::string &arg : owned)
    argv.push_back(arg.data());
  argv.push_back(nullptr);

  mlir::DialectRegistry registry;
  mlir::registerAllDialects(registry);
  mlir::registerAllExtensions(registry);
  registry.insert<mlir::partir::PartirDialect, mlir::partir_hlo::PartirHloDialect>();
  mlir::registerAllPasses();
  register_passes();
  return mlir::asMainReturnCode(mlir::MlirOptMain(
      static_cast<int>(owned.size()), argv.data(),
      "partir-opt: MLIR optimizer driver with PartIR dialects and passes\n", registry));
}

} // namespace partir::glue
