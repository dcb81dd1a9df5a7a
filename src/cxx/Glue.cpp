//===- Glue.cpp - what Rust needs that the MLIR C API lacks --------------===//

#include "Bridge.h"

#include "mlir/CAPI/IR.h"
#include "mlir/CAPI/Support.h"
#include "mlir/IR/Diagnostics.h"
#include "partir/Core/CoreDialect.h"

using namespace mlir;
using namespace mlir::partir;

extern "C" void partir_cxx_emit_diagnostic(MlirLocation location, int severity,
                                           MlirStringRef message) {
  Location loc = unwrap(location);
  StringRef text = unwrap(message);
  switch (severity) {
  case 1:
    emitWarning(loc) << text;
    break;
  case 2:
    emitRemark(loc) << text;
    break;
  case 3:
    // A bare note is reported on its own location (notes normally attach to an error).
    loc->getContext()->getDiagEngine().emit(loc, DiagnosticSeverity::Note) << text;
    break;
  default:
    emitError(loc) << text;
  }
}

extern "C" MlirAttribute partir_cxx_tile_attr_get(MlirContext context, int64_t dim) {
  return wrap(TileAttr::get(unwrap(context), dim));
}
extern "C" bool partir_cxx_attr_is_tile(MlirAttribute attr) {
  return isa<TileAttr>(unwrap(attr));
}
extern "C" int64_t partir_cxx_tile_attr_dim(MlirAttribute attr) {
  return cast<TileAttr>(unwrap(attr)).getDim();
}
extern "C" MlirAttribute partir_cxx_sum_attr_get(MlirContext context, int32_t kind) {
  return wrap(SumAttr::get(unwrap(context), static_cast<ReductionKind>(kind)));
}
extern "C" bool partir_cxx_attr_is_sum(MlirAttribute attr) { return isa<SumAttr>(unwrap(attr)); }
extern "C" int32_t partir_cxx_sum_attr_kind(MlirAttribute attr) {
  return static_cast<int32_t>(cast<SumAttr>(unwrap(attr)).getKind());
}
extern "C" MlirType partir_cxx_range_type_get(MlirContext context, int64_t size) {
  return wrap(RangeType::get(unwrap(context), size));
}
extern "C" bool partir_cxx_type_is_range(MlirType type) { return isa<RangeType>(unwrap(type)); }
extern "C" int64_t partir_cxx_range_type_size(MlirType type) {
  return cast<RangeType>(unwrap(type)).getSize();
}
