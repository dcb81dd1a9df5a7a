//===- Glue.cpp - what Rust needs that the MLIR C API lacks --------------===//

#include "Bridge.h"

#include "mlir/CAPI/IR.h"
#include "mlir/CAPI/Support.h"
#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Linalg/IR/Linalg.h"
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

namespace {
/// The combiner of a linalg reduction: what the region does with the init's block argument.
/// `linalg.yield (arith.addf %in, %out)` is a sum; anything unrecognised is -1.
int32_t combinerOf(linalg::LinalgOp op) {
  if (op.getNumDpsInits() == 0)
    return -1;
  Block *body = op.getBlock();
  auto yield = dyn_cast<linalg::YieldOp>(body->getTerminator());
  if (!yield || yield.getNumOperands() == 0)
    return -1;
  Value accumulator = op.getRegionOutputArgs()[0];
  Operation *combine = yield.getOperand(0).getDefiningOp();
  if (!combine || combine->getNumOperands() != 2 ||
      !llvm::is_contained(combine->getOperands(), accumulator))
    return -1;
  if (isa<arith::AddFOp, arith::AddIOp, arith::OrIOp>(combine))
    return static_cast<int32_t>(ReductionKind::sum);
  if (isa<arith::MaximumFOp, arith::MaxNumFOp, arith::MaxSIOp, arith::MaxUIOp>(combine))
    return static_cast<int32_t>(ReductionKind::max);
  if (isa<arith::MinimumFOp, arith::MinNumFOp, arith::MinSIOp, arith::MinUIOp>(combine))
    return static_cast<int32_t>(ReductionKind::min);
  if (isa<arith::MulFOp, arith::MulIOp>(combine))
    return static_cast<int32_t>(ReductionKind::mul);
  return -1;
}
} // namespace

extern "C" MlirAttribute partir_cxx_linalg_info(MlirOperation raw, int64_t *numInputs,
                                                char *iterators, size_t capacity,
                                                int32_t *combiner, uint64_t *indexedDims) {
  auto op = dyn_cast<linalg::LinalgOp>(unwrap(raw));
  if (!op)
    return MlirAttribute{nullptr};
  *numInputs = op.getNumDpsInputs();
  size_t index = 0;
  for (utils::IteratorType type : op.getIteratorTypesArray()) {
    if (index + 1 >= capacity)
      break;
    iterators[index++] = type == utils::IteratorType::parallel    ? 'p'
                         : type == utils::IteratorType::reduction ? 'r'
                                                                  : 'o';
  }
  iterators[index] = '\0';
  *combiner = combinerOf(op);
  *indexedDims = 0;
  op->walk([&](linalg::IndexOp index) {
    if (index.getDim() < 64)
      *indexedDims |= uint64_t{1} << index.getDim();
  });
  return wrap(static_cast<Attribute>(op.getIndexingMaps()));
}
