//===- Glue.cpp - what Rust needs that the MLIR C API lacks --------------===//

#include "Bridge.h"

#include "mlir/CAPI/IR.h"
#include "mlir/CAPI/Support.h"
#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Linalg/IR/Linalg.h"
#include "mlir/IR/AttrTypeSubElements.h"
#include "mlir/IR/BuiltinAttributes.h"
#include "mlir/IR/Diagnostics.h"
#include "mlir/IR/Verifier.h"
#include "partir/Core/CoreDialect.h"
#include "partir/Hlo/HloDialect.h"

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
/// The combiner of a linalg reduction: what the region does with each init's block argument.
/// `linalg.yield (arith.addf %in, %out)` is a sum. Each accumulator must be read once, by its
/// combiner, whose other operand does not read it (`%out + %out * %in` is no sum of partial
/// results). Every result must combine the same way; anything else is -1 (never tiled).
int32_t combinerOf(linalg::LinalgOp op) {
  if (op.getNumDpsInits() == 0)
    return -1;
  Block *body = op.getBlock();
  auto yield = dyn_cast<linalg::YieldOp>(body->getTerminator());
  if (!yield || yield.getNumOperands() != op.getNumDpsInits())
    return -1;
  int32_t common = -1;
  for (auto [index, accumulator] : llvm::enumerate(op.getRegionOutputArgs())) {
    Operation *combine = yield.getOperand(index).getDefiningOp();
    if (!combine || combine->getBlock() != body || combine->getNumOperands() != 2 ||
        !accumulator.hasOneUse() || !llvm::is_contained(combine->getOperands(), accumulator))
      return -1;
    // i1 arithmetic wraps (1 + 1 = 0) and unsigned max/min have no signed all_reduce: such
    // reductions are not split.
    if (accumulator.getType().isInteger(1))
      return -1;
    int32_t kind = -1;
    if (isa<arith::AddFOp, arith::AddIOp>(combine))
      kind = static_cast<int32_t>(ReductionKind::sum);
    else if (isa<arith::MaximumFOp, arith::MaxNumFOp, arith::MaxSIOp>(combine))
      kind = static_cast<int32_t>(ReductionKind::max);
    else if (isa<arith::MinimumFOp, arith::MinNumFOp, arith::MinSIOp>(combine))
      kind = static_cast<int32_t>(ReductionKind::min);
    else if (isa<arith::MulFOp, arith::MulIOp>(combine))
      kind = static_cast<int32_t>(ReductionKind::mul);
    if (kind < 0 || (index > 0 && kind != common))
      return -1;
    common = kind;
  }
  return common;
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

/// Rewrites every f32 in `raw` (types, float and dense attributes, function signatures) to
/// f64, for a higher-precision reference run of the same program. Returns false when the
/// result does not verify (an op that insists on f32, such as a bitcast to i32); the module is
/// then unusable and the caller drops it.
extern "C" bool partir_cxx_widen_f32_to_f64(MlirOperation raw) {
  Operation *root = unwrap(raw);
  MLIRContext *context = root->getContext();
  Type f32 = Float32Type::get(context);
  Type f64 = Float64Type::get(context);
  AttrTypeReplacer replacer;
  replacer.addReplacement([&](FloatType type) -> std::optional<Type> {
    if (type == f32)
      return f64;
    return std::nullopt;
  });
  replacer.addReplacement([&](FloatAttr attr) -> std::optional<Attribute> {
    if (attr.getType() != f32)
      return std::nullopt;
    return FloatAttr::get(f64, attr.getValueAsDouble());
  });
  replacer.addReplacement([&](DenseFPElementsAttr attr) -> std::optional<Attribute> {
    if (attr.getElementType() != f32)
      return std::nullopt;
    return attr.mapValues(f64, [](const APFloat &value) {
      APFloat wide = value;
      bool lost = false;
      wide.convert(APFloat::IEEEdouble(), APFloat::rmNearestTiesToEven, &lost);
      return wide.bitcastToAPInt();
    });
  });
  replacer.recursivelyReplaceElementsIn(root, /*replaceAttrs=*/true, /*replaceLocs=*/false,
                                        /*replaceTypes=*/true);
  return succeeded(verify(root));
}

/// `#partir_hlo.sharding<...>` from an ArrayAttr (one per dim) of ArrayAttrs of StringAttrs.
extern "C" MlirAttribute partir_cxx_sharding_attr_get(MlirAttribute raw) {
  auto array = cast<ArrayAttr>(unwrap(raw));
  SmallVector<ArrayAttr> dims;
  for (Attribute dim : array)
    dims.push_back(cast<ArrayAttr>(dim));
  return wrap(partir_hlo::ShardingAttr::get(array.getContext(), dims));
}
