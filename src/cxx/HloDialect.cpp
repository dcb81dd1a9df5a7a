//===- HloDialect.cpp - PartIR:HLO: sharding attribute and collectives ----===//
//
// Collectives are checked against the module's mesh: every axis exists, none repeats, and the
// local result shape is what the collective makes of the local operand shape.
//
//===----------------------------------------------------------------------===//

#include "partir/Hlo/HloDialect.h"

#include "mlir/IR/Builders.h"
#include "mlir/IR/DialectImplementation.h"
#include "mlir/IR/OpImplementation.h"
#include "mlir/Interfaces/FunctionInterfaces.h"
#include "llvm/ADT/StringSet.h"
#include "llvm/ADT/TypeSwitch.h"

using namespace mlir;
using namespace mlir::partir_hlo;
using mlir::partir::lookupAxisSize;

#include "partir/Hlo/HloDialect.cpp.inc"

#define GET_ATTRDEF_CLASSES
#include "partir/Hlo/HloAttrs.cpp.inc"

void PartirHloDialect::initialize() {
  addAttributes<
#define GET_ATTRDEF_LIST
#include "partir/Hlo/HloAttrs.cpp.inc"
      >();
  addOperations<
#define GET_OP_LIST
#include "partir/Hlo/HloOps.cpp.inc"
      >();
}

//===----------------------------------------------------------------------===//
// Sharding: #partir_hlo.sharding<[{"batch"}, {}]>
//===----------------------------------------------------------------------===//

Attribute ShardingAttr::parse(AsmParser &parser, Type) {
  SMLoc loc = parser.getCurrentLocation();
  MLIRContext *context = parser.getContext();
  SmallVector<ArrayAttr> dims;
  auto parseDim = [&]() -> ParseResult {
    SmallVector<Attribute> axes;
    if (failed(parser.parseOptionalLBrace()))
      return parser.emitError(parser.getCurrentLocation())
             << "expected '{' to open the axes of dim " << dims.size()
             << " of a sharding, e.g. {\"batch\"}, or {} for a replicated dim";
    if (failed(parser.parseOptionalRBrace())) {
      if (parser.parseCommaSeparatedList([&]() -> ParseResult {
            std::string axis;
            if (parser.parseString(&axis))
              return failure();
            axes.push_back(StringAttr::get(context, axis));
            return success();
          }) ||
          parser.parseRBrace())
        return failure();
    }
    dims.push_back(ArrayAttr::get(context, axes));
    return success();
  };
  if (parser.parseLess() ||
      parser.parseCommaSeparatedList(AsmParser::Delimiter::Square, parseDim,
                                     " in a sharding [{\"axis\", ...}, ...]") ||
      parser.parseGreater())
    return {};
  return ShardingAttr::getChecked([&] { return parser.emitError(loc); }, context, dims);
}

void ShardingAttr::print(AsmPrinter &printer) const {
  printer << "<[";
  llvm::interleaveComma(getDims(), printer, [&](ArrayAttr axes) {
    printer << '{';
    llvm::interleaveComma(axes, printer,
                          [&](Attribute axis) { printer.printAttributeWithoutType(axis); });
    printer << '}';
  });
  printer << "]>";
}

LogicalResult ShardingAttr::verify(function_ref<InFlightDiagnostic()> emitError,
                                   ArrayRef<ArrayAttr> dims) {
  llvm::StringSet<> seen;
  for (ArrayAttr axes : dims) {
    for (Attribute axis : axes) {
      auto name = dyn_cast<StringAttr>(axis);
      if (!name)
        return emitError() << "sharding axes must be strings, got " << axis;
      if (!seen.insert(name.getValue()).second)
        return emitError() << "sharding names axis \"" << name.getValue()
                           << "\" more than once";
    }
  }
  return success();
}

/// Checks a `partir_hlo.sharding` attribute on argument or result #`index` (of type `type`)
/// of `op`: it is a #partir_hlo.sharding with one entry per dim, naming axes of the mesh.
static LogicalResult verifyShardingOf(Operation *op, StringRef role, unsigned index, Type type,
                                      NamedAttribute attribute) {
  if (attribute.getName().getValue() != "partir_hlo.sharding")
    return op->emitOpError() << role << " #" << index << " has unknown attribute "
                             << attribute.getName()
                             << "; the only partir_hlo attribute there is partir_hlo.sharding";
  auto sharding = dyn_cast<ShardingAttr>(attribute.getValue());
  if (!sharding)
    return op->emitOpError() << role << " #" << index << ": partir_hlo.sharding must be a "
                             << "#partir_hlo.sharding<[...]>, got " << attribute.getValue();
  auto tensor = dyn_cast<RankedTensorType>(type);
  if (!tensor)
    return op->emitOpError() << role << " #" << index << " has type " << type
                             << ", but a partir_hlo.sharding needs a ranked tensor";
  if (static_cast<int64_t>(sharding.getDims().size()) != tensor.getRank())
    return op->emitOpError() << role << " #" << index << " of type " << type << " has rank "
                             << tensor.getRank() << " but its sharding " << sharding
                             << " has " << sharding.getDims().size()
                             << " entries; it needs one per dim";
  mlir::partir::MeshOp mesh = mlir::partir::getMesh(op);
  if (!mesh)
    return op->emitOpError() << role << " #" << index << " has sharding " << sharding
                             << " but the module declares no partir.mesh";
  for (ArrayAttr axes : sharding.getDims())
    for (StringRef axis : axes.getAsValueRange<StringAttr>())
      if (!mesh.getAxisSize(axis))
        return op->emitOpError() << role << " #" << index << " has sharding " << sharding
                                 << ", which names axis \"" << axis << "\", not in mesh @"
                                 << mesh.getSymName() << " [" << mesh.describeAxes() << "]";
  return success();
}

LogicalResult PartirHloDialect::verifyRegionArgAttribute(Operation *op, unsigned regionIndex,
                                                         unsigned argIndex,
                                                         NamedAttribute attribute) {
  Type type;
  if (auto function = dyn_cast<FunctionOpInterface>(op))
    type = function.getArgumentTypes()[argIndex];
  else if (!op->getRegion(regionIndex).empty())
    type = op->getRegion(regionIndex).getArgument(argIndex).getType();
  else
    return success();
  return verifyShardingOf(op, "argument", argIndex, type, attribute);
}

LogicalResult PartirHloDialect::verifyRegionResultAttribute(Operation *op, unsigned regionIndex,
                                                            unsigned resultIndex,
                                                            NamedAttribute attribute) {
  auto function = dyn_cast<FunctionOpInterface>(op);
  if (!function)
    return success();
  return verifyShardingOf(op, "result", resultIndex, function.getResultTypes()[resultIndex],
                          attribute);
}

//===----------------------------------------------------------------------===//
// Collectives
//===----------------------------------------------------------------------===//

namespace {
/// The number of devices a collective spans: the product of its axes' sizes.
FailureOr<int64_t> groupSize(Operation *op, ArrayAttr axes) {
  if (axes.empty())
    return op->emitOpError("names no mesh axes; a collective spans at least one axis");
  llvm::StringSet<> seen;
  int64_t product = 1;
  for (StringRef axis : axes.getAsValueRange<StringAttr>()) {
    if (!seen.insert(axis).second)
      return op->emitOpError() << "names axis \"" << axis << "\" more than once";
    std::optional<int64_t> size = lookupAxisSize(op, axis);
    if (!size)
      return failure();
    product *= *size;
  }
  return product;
}

LogicalResult checkDim(Operation *op, RankedTensorType type, int64_t dim, StringRef role) {
  if (dim < 0 || dim >= type.getRank())
    return op->emitOpError() << role << " dim " << dim << " is out of range for " << type;
  return success();
}

/// Shrinks `dim` of `shape` by `factor`, with a diagnostic when it does not divide.
LogicalResult shrink(Operation *op, SmallVector<int64_t> &shape, int64_t dim, int64_t factor,
                     ArrayAttr axes) {
  if (ShapedType::isDynamic(shape[dim]))
    return success();
  if (shape[dim] % factor != 0)
    return op->emitOpError() << "dim " << dim << " of size " << shape[dim]
                             << " is not divisible by " << factor << ", the size of axes "
                             << axes;
  shape[dim] /= factor;
  return success();
}

void grow(SmallVector<int64_t> &shape, int64_t dim, int64_t factor) {
  if (!ShapedType::isDynamic(shape[dim]))
    shape[dim] *= factor;
}

LogicalResult expectType(Operation *op, RankedTensorType operand, ArrayRef<int64_t> shape,
                         Type result, StringRef what) {
  auto expected = RankedTensorType::get(shape, operand.getElementType(), operand.getEncoding());
  if (expected != result)
    return op->emitOpError() << "result type " << result << " should be " << expected << " ("
                             << what << ")";
  return success();
}
} // namespace

LogicalResult AllGatherOp::verify() {
  FailureOr<int64_t> devices = groupSize(*this, getAxes());
  if (failed(devices) || failed(checkDim(*this, getOperand().getType(), getDim(), "gathered")))
    return failure();
  SmallVector<int64_t> shape(getOperand().getType().getShape());
  grow(shape, getDim(), *devices);
  return expectType(*this, getOperand().getType(), shape, getType(),
                    "all_gather multiplies the gathered dim by the size of its axes");
}

LogicalResult AllReduceOp::verify() {
  if (getOperands().empty())
    return emitOpError() << "reduces nothing: it needs at least one operand";
  return success(succeeded(groupSize(*this, getAxes())));
}

// Each result has its operand's type (a combined all_reduce reduces each buffer on its own).
LogicalResult AllReduceOp::inferReturnTypes(MLIRContext *, std::optional<Location>,
                                            ValueRange operands, DictionaryAttr, OpaqueProperties,
                                            RegionRange, SmallVectorImpl<Type> &types) {
  for (Value operand : operands)
    types.push_back(operand.getType());
  return success();
}

LogicalResult ReduceScatterOp::verify() {
  if (getOperands().empty())
    return emitOpError() << "reduces nothing: it needs at least one operand";
  if (getOperands().size() != getResults().size())
    return emitOpError() << "has " << getOperands().size() << " operands but "
                         << getResults().size() << " results (one result per operand)";
  FailureOr<int64_t> devices = groupSize(*this, getAxes());
  if (failed(devices))
    return failure();
  for (auto [operand, result] : llvm::zip(getOperands(), getResults())) {
    auto type = cast<RankedTensorType>(operand.getType());
    if (failed(checkDim(*this, type, getDim(), "scattered")))
      return failure();
    SmallVector<int64_t> shape(type.getShape());
    if (failed(shrink(*this, shape, getDim(), *devices, getAxes())))
      return failure();
    if (failed(expectType(*this, type, shape, result.getType(),
                          "reduce_scatter divides the scattered dim by the size of its axes")))
      return failure();
  }
  return success();
}

LogicalResult AllSliceOp::verify() {
  FailureOr<int64_t> devices = groupSize(*this, getAxes());
  if (failed(devices) || failed(checkDim(*this, getOperand().getType(), getDim(), "sliced")))
    return failure();
  SmallVector<int64_t> shape(getOperand().getType().getShape());
  if (failed(shrink(*this, shape, getDim(), *devices, getAxes())))
    return failure();
  return expectType(*this, getOperand().getType(), shape, getType(),
                    "all_slice divides the sliced dim by the size of its axes");
}

LogicalResult AllToAllOp::verify() {
  FailureOr<int64_t> devices = groupSize(*this, getAxes());
  RankedTensorType operand = getOperand().getType();
  if (failed(devices) || failed(checkDim(*this, operand, getSplitDim(), "split")) ||
      failed(checkDim(*this, operand, getConcatDim(), "concat")))
    return failure();
  if (getSplitDim() == getConcatDim())
    return emitOpError() << "splits and concatenates the same dim " << getSplitDim()
                         << "; that is not a redistribution";
  SmallVector<int64_t> shape(operand.getShape());
  if (failed(shrink(*this, shape, getSplitDim(), *devices, getAxes())))
    return failure();
  grow(shape, getConcatDim(), *devices);
  return expectType(*this, operand, shape, getType(),
                    "all_to_all divides the split dim and multiplies the concat dim");
}

LogicalResult CollectivePermuteOp::verify() {
  FailureOr<int64_t> devices = groupSize(*this, getAxes());
  if (failed(devices))
    return failure();
  if (getAxes().size() != 1)
    return emitOpError() << "permutes along " << getAxes().size()
                         << " axes; a collective_permute names one";
  return mlir::partir::verifyPermutation(*this, getSources(), *devices);
}

#define GET_OP_CLASSES
#include "partir/Hlo/HloOps.cpp.inc"
