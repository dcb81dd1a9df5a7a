//===- HloDialect.td - PartIR:HLO dialect and attributes -----------------===//
#ifndef PARTIR_HLO_DIALECT
#define PARTIR_HLO_DIALECT

include "mlir/IR/OpBase.td"
include "mlir/IR/AttrTypeBase.td"

def PartirHlo_Dialect : Dialect {
  let name = "partir_hlo";
  let cppNamespace = "::mlir::partir_hlo";
  let summary = "PartIR:HLO: device-local SPMD programs with explicit collectives";
  let description = [{
    Tensors have their local (per-device) shapes. Function arguments and results carry a
    `partir_hlo.sharding` attribute; collectives name the axes of the module's `partir.mesh`
    they communicate over.
  }];
  let dependentDialects = ["::mlir::partir::PartirDialect"];
  let useDefaultAttributePrinterParser = 1;
  // `partir_hlo.sharding` on a function argument or result: checked against its type and mesh.
  let hasRegionArgAttrVerify = 1;
  let hasRegionResultAttrVerify = 1;
}

def PartirHlo_ShardingAttr : AttrDef<PartirHlo_Dialect, "Sharding"> {
  let mnemonic = "sharding";
  let summary = "how a value is distributed over the mesh: per dim, the axes that split it";
  let description = [{
    For a 2-D value, `<[{"batch"}, {} ]>` splits dim 0 over axis "batch" and keeps dim 1
    whole; `<[{"batch", "model"}, {} ]>` splits dim 0 over both axes, batch major. An axis
    appears at most once; axes not named are replicated. (Printed without the spaces.)
  }];
  // One ArrayAttr of StringAttr per tensor dim.
  let parameters = (ins ArrayRefParameter<"::mlir::ArrayAttr", "axes per dim">:$dims);
  let hasCustomAssemblyFormat = 1;
  let genVerifyDecl = 1;
}

#endif // PARTIR_HLO_DIALECT
