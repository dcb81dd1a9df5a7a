//===- CoreDialect.cpp - PartIR:Core: types, attributes, ops, verifiers ---===//
//
// Every invariant of docs/design.md#partircore is checked here, with a message that says what was wrong and
// what would be right. The Rust passes rely on these verifiers: they build IR and verify it.
//
//===----------------------------------------------------------------------===//

#include "partir/Core/CoreDialect.h"

#include "mlir/IR/Builders.h"
#include "mlir/IR/DialectImplementation.h"
#include "mlir/IR/OpImplementation.h"
#include "llvm/ADT/DenseSet.h"
#include "llvm/ADT/StringSet.h"
#include "llvm/ADT/TypeSwitch.h"

using namespace mlir;
using namespace mlir::partir;

#include "partir/Common/Enums.cpp.inc"
#include "partir/Core/CoreDialect.cpp.inc"

#define GET_TYPEDEF_CLASSES
#include "partir/Core/CoreTypes.cpp.inc"

#define GET_ATTRDEF_CLASSES
#include "partir/Core/CoreAttrs.cpp.inc"

void PartirDialect::initialize() {
  addTypes<
#define GET_TYPEDEF_LIST
#include "partir/Core/CoreTypes.cpp.inc"
      >();
  addAttributes<
#define GET_ATTRDEF_LIST
#include "partir/Core/CoreAttrs.cpp.inc"
      >();
  addOperations<
#define GET_OP_LIST
#include "partir/Core/CoreOps.cpp.inc"
      >();
}

//===----------------------------------------------------------------------===//
// Types and attributes
//===----------------------------------------------------------------------===//

LogicalResult RangeType::verify(function_ref<InFlightDiagnostic()> emitError, int64_t size) {
  if (size <= 0)
    return emitError() << "!partir.range size must be positive, got " << size;
  return success();
}

LogicalResult TileAttr::verify(function_ref<InFlightDiagnostic()> emitError, int64_t dim) {
  if (dim < 0)
    return emitError() << "#partir.tile dim must be non-negative, got " << dim;
  return success();
}

//===----------------------------------------------------------------------===//
// Mesh
//===----------------------------------------------------------------------===//

// ["batch"=4, "model"=2]
static ParseResult parseMeshAxes(OpAsmParser &parser, ArrayAttr &names,
                                 DenseI64ArrayAttr &sizes) {
  SmallVector<Attribute> nameAttrs;
  SmallVector<int64_t> sizeValues;
  auto parseAxis = [&]() -> ParseResult {
    std::string name;
    int64_t size;
    if (parser.parseString(&name))
      return failure();
    if (failed(parser.parseOptionalEqual()))
      return parser.emitError(parser.getCurrentLocation())
             << "expected '=' and a size after mesh axis \"" << name << "\", as in [\""
             << name << "\"=4]";
    if (parser.parseInteger(size))
      return failure();
    nameAttrs.push_back(parser.getBuilder().getStringAttr(name));
    sizeValues.push_back(size);
    return success();
  };
  if (parser.parseCommaSeparatedList(AsmParser::Delimiter::Square, parseAxis,
                                     " in a mesh axis list [\"name\"=size, ...]"))
    return failure();
  names = parser.getBuilder().getArrayAttr(nameAttrs);
  sizes = parser.getBuilder().getDenseI64ArrayAttr(sizeValues);
  return success();
}

static void printMeshAxes(OpAsmPrinter &printer, MeshOp, ArrayAttr names,
                          DenseI64ArrayAttr sizes) {
  printer << '[';
  for (auto [index, name] : llvm::enumerate(names)) {
    if (index)
      printer << ", ";
    printer.printAttributeWithoutType(name);
    if (index < static_cast<size_t>(sizes.size()))
      printer << '=' << sizes[index];
  }
  printer << ']';
}

std::optional<int64_t> MeshOp::getAxisSize(StringRef axis) {
  for (auto [name, size] : llvm::zip(getAxisNames().getAsValueRange<StringAttr>(),
                                     getAxisSizes()))
    if (name == axis)
      return size;
  return std::nullopt;
}

std::string MeshOp::describeAxes() {
  std::string text;
  llvm::raw_string_ostream os(text);
  for (auto [index, pair] : llvm::enumerate(llvm::zip(
           getAxisNames().getAsValueRange<StringAttr>(), getAxisSizes()))) {
    if (index)
      os << ", ";
    os << std::get<0>(pair) << '=' << std::get<1>(pair);
  }
  return text;
}

LogicalResult MeshOp::verify() {
  if (getAxisNames().size() != static_cast<size_t>(getAxisSizes().size()))
    return emitOpError() << "has " << getAxisNames().size() << " axis names but "
                         << getAxisSizes().size() << " axis sizes";
  if (getAxisNames().empty())
    return emitOpError("must declare at least one axis");
  llvm::StringSet<> seen;
  for (auto [index, name, size] :
       llvm::enumerate(getAxisNames().getAsValueRange<StringAttr>(), getAxisSizes())) {
    if (name.empty())
      return emitOpError("axis names must be non-empty");
    if (llvm::any_of(name, [](char c) {
          return c == '"' || c == '\\' || static_cast<unsigned char>(c) < 0x20;
        }))
      return emitOpError() << "axis #" << index
                           << " holds a quote, a backslash or a control character; "
                              "name axes with printable text (batch, model, ...)";
    if (!seen.insert(name).second)
      return emitOpError() << "declares axis \"" << name << "\" twice";
    if (size <= 0)
      return emitOpError() << "axis \"" << name << "\" must have a positive size, got " << size;
  }
  // One mesh per module: the first one declared is the mesh.
  for (Operation &sibling : *(*this)->getBlock()) {
    if (&sibling == getOperation())
      break;
    if (auto other = dyn_cast<MeshOp>(sibling))
      return emitOpError() << "is a second mesh in this module; @" << other.getSymName()
                           << " is already declared (one partir.mesh per module)";
  }
  return success();
}

MeshOp mlir::partir::getMesh(Operation *op) {
  auto module = dyn_cast<ModuleOp>(op);
  if (!module)
    module = op->getParentOfType<ModuleOp>();
  if (!module)
    return nullptr;
  for (Operation &candidate : *module.getBody())
    if (auto mesh = dyn_cast<MeshOp>(candidate))
      return mesh;
  return nullptr;
}

std::optional<int64_t> mlir::partir::lookupAxisSize(Operation *op, StringRef axis) {
  MeshOp mesh = getMesh(op);
  if (!mesh) {
    op->emitOpError() << "names mesh axis \"" << axis
                      << "\" but the module declares no partir.mesh (add one, e.g. with "
                         "partir-mesh{axes="
                      << axis << "=4})";
    return std::nullopt;
  }
  std::optional<int64_t> size = mesh.getAxisSize(axis);
  if (!size)
    op->emitOpError() << "names mesh axis \"" << axis << "\", which is not in mesh @"
                      << mesh.getSymName() << " [" << mesh.describeAxes() << "]";
  return size;
}

//===----------------------------------------------------------------------===//
// Loop
//===----------------------------------------------------------------------===//

// %y = partir.loop "batch" [#partir.tile<0>] (%r: !partir.range<4>) { ... } : tensor<32xf32>
ParseResult LoopOp::parse(OpAsmParser &parser, OperationState &result) {
  StringAttr axis;
  ArrayAttr actions;
  if (parser.parseAttribute(axis, getAxisAttrName(result.name), result.attributes) ||
      parser.parseAttribute(actions, getActionsAttrName(result.name), result.attributes))
    return failure();
  OpAsmParser::Argument range;
  if (parser.parseLParen() || parser.parseArgument(range, /*allowType=*/true) ||
      parser.parseRParen())
    return failure();
  Region *body = result.addRegion();
  if (parser.parseRegion(*body, {range}) || parser.parseOptionalAttrDict(result.attributes) ||
      parser.parseColonTypeList(result.types))
    return failure();
  return success();
}

void LoopOp::print(OpAsmPrinter &printer) {
  printer << ' ';
  printer.printAttributeWithoutType(getAxisAttr());
  printer << ' ';
  printer.printAttribute(getActions());
  printer << " (";
  printer.printRegionArgument(getRange());
  printer << ") ";
  printer.printRegion(getBody(), /*printEntryBlockArgs=*/false,
                      /*printBlockTerminators=*/true);
  printer.printOptionalAttrDict((*this)->getAttrs(),
                                {getAxisAttrName(), getActionsAttrName()});
  printer << " : ";
  llvm::interleaveComma(getResultTypes(), printer);
}

LogicalResult LoopOp::verify() {
  std::optional<int64_t> axisSize = lookupAxisSize(*this, getAxis());
  if (!axisSize)
    return failure();
  Block &body = getBody().front();
  if (body.getNumArguments() != 1 || !isa<RangeType>(body.getArgument(0).getType()))
    return emitOpError("body must have exactly one argument, of type !partir.range<N>");
  int64_t rangeSize = cast<RangeType>(body.getArgument(0).getType()).getSize();
  if (rangeSize != *axisSize)
    return emitOpError() << "iterates over !partir.range<" << rangeSize << "> but axis \""
                         << getAxis() << "\" has size " << *axisSize;
  if (getNumResults() == 0)
    return emitOpError("must have at least one result");
  if (getActions().size() != getNumResults())
    return emitOpError() << "has " << getActions().size() << " actions for "
                         << getNumResults() << " results; each result needs one action";
  for (auto [index, action] : llvm::enumerate(getActions()))
    if (!isa<TileAttr, SumAttr, AnyAttr>(action))
      return emitOpError() << "action #" << index << " is " << action
                           << "; expected #partir.tile<dim>, #partir.sum or #partir.any";
  for (Operation *parent = (*this)->getParentOp(); parent; parent = parent->getParentOp()) {
    auto outer = dyn_cast<LoopOp>(parent);
    if (outer && outer.getAxis() == getAxis()) {
      InFlightDiagnostic diag = emitOpError()
                                << "is nested in another loop over axis \"" << getAxis()
                                << "\"; an axis appears at most once on a nesting path";
      diag.attachNote(outer.getLoc()) << "enclosing loop over \"" << getAxis() << "\"";
      return diag;
    }
  }
  return success();
}

/// The type a `#partir.tile<dim>` loop over `rangeSize` iterations produces from `yielded`.
static FailureOr<RankedTensorType> tiledType(Type yielded, int64_t dim, int64_t rangeSize) {
  auto tensor = dyn_cast<RankedTensorType>(yielded);
  if (!tensor || dim >= tensor.getRank())
    return failure();
  SmallVector<int64_t> shape(tensor.getShape());
  if (!ShapedType::isDynamic(shape[dim]))
    shape[dim] *= rangeSize;
  return RankedTensorType::get(shape, tensor.getElementType(), tensor.getEncoding());
}

LogicalResult LoopOp::verifyRegions() {
  Block &body = getBody().front();
  auto yield = body.mightHaveTerminator() ? dyn_cast<YieldOp>(body.getTerminator()) : nullptr;
  if (!yield)
    return emitOpError("body must end with partir.yield");
  if (yield.getNumOperands() != getNumResults())
    return emitOpError() << "yields " << yield.getNumOperands() << " values but has "
                         << getNumResults() << " results";
  int64_t rangeSize = cast<RangeType>(getRange().getType()).getSize();
  for (auto [index, action, yielded, result] :
       llvm::enumerate(getActions(), yield.getOperandTypes(), getResultTypes())) {
    if (auto tile = dyn_cast<TileAttr>(action)) {
      FailureOr<RankedTensorType> expected = tiledType(yielded, tile.getDim(), rangeSize);
      if (failed(expected))
        return emitOpError() << "result #" << index << ": " << action
                             << " needs a ranked tensor of rank > " << tile.getDim()
                             << ", but the body yields " << yielded;
      if (*expected != result)
        return emitOpError() << "result #" << index << " has type " << result << " but "
                             << action << " of " << rangeSize << " iterations yielding "
                             << yielded << " produces " << *expected;
    } else if (yielded != result) {
      return emitOpError() << "result #" << index << " has type " << result << " but "
                           << action << " of values of type " << yielded << " produces "
                           << yielded;
    }
  }
  return success();
}

//===----------------------------------------------------------------------===//
// Slice
//===----------------------------------------------------------------------===//

// partir.slice 0 %x[%r] : tensor<32x64xf32> -> tensor<8x64xf32>
ParseResult SliceOp::parse(OpAsmParser &parser, OperationState &result) {
  int64_t dim;
  OpAsmParser::UnresolvedOperand source, range;
  Type sourceType, resultType;
  SMLoc typesLoc;
  if (parser.parseInteger(dim) || parser.parseOperand(source) || parser.parseLSquare() ||
      parser.parseOperand(range) || parser.parseRSquare() ||
      parser.parseOptionalAttrDict(result.attributes) || parser.parseColon() ||
      parser.getCurrentLocation(&typesLoc) || parser.parseType(sourceType) ||
      parser.parseArrow() || parser.parseType(resultType))
    return failure();
  // The range size is not spelled out: it is the ratio of the sliced dim's sizes.
  auto sourceTensor = dyn_cast<RankedTensorType>(sourceType);
  auto resultTensor = dyn_cast<RankedTensorType>(resultType);
  if (!sourceTensor || !resultTensor || dim < 0 || dim >= sourceTensor.getRank() ||
      dim >= resultTensor.getRank())
    return parser.emitError(typesLoc) << "partir.slice needs ranked tensor types with a dim "
                                      << dim << " to slice";
  int64_t whole = sourceTensor.getDimSize(dim), chunk = resultTensor.getDimSize(dim);
  if (ShapedType::isDynamic(whole) || ShapedType::isDynamic(chunk))
    return parser.emitError(typesLoc)
           << "partir.slice of dim " << dim
           << " needs static sizes there to infer the range size, got " << sourceType
           << " -> " << resultType;
  if (chunk <= 0 || whole % chunk != 0)
    return parser.emitError(typesLoc)
           << "partir.slice of dim " << dim << ": size " << chunk
           << " is not a whole chunk of size " << whole
           << " (the result's dim must divide the source's dim into equal chunks)";
  result.addAttribute(getDimAttrName(result.name), parser.getBuilder().getI64IntegerAttr(dim));
  result.addTypes(resultType);
  Type rangeType = RangeType::get(parser.getContext(), whole / chunk);
  if (parser.resolveOperand(source, sourceType, result.operands) ||
      parser.resolveOperand(range, rangeType, result.operands))
    return failure();
  return success();
}

void SliceOp::print(OpAsmPrinter &printer) {
  printer << ' ' << getDim() << ' ' << getSource() << '[' << getRange() << ']';
  printer.printOptionalAttrDict((*this)->getAttrs(), {getDimAttrName()});
  printer << " : " << getSource().getType() << " -> " << getType();
}

LogicalResult SliceOp::verify() {
  RankedTensorType source = getSource().getType();
  int64_t dim = getDim();
  if (dim < 0 || dim >= source.getRank())
    return emitOpError() << "slices dim " << dim << " of a rank-" << source.getRank()
                         << " tensor";
  int64_t rangeSize = getRange().getType().getSize();
  int64_t whole = source.getDimSize(dim);
  if (!ShapedType::isDynamic(whole) && whole % rangeSize != 0)
    return emitOpError() << "dim " << dim << " of size " << whole
                         << " is not divisible by the range size " << rangeSize;
  SmallVector<int64_t> shape(source.getShape());
  if (!ShapedType::isDynamic(whole))
    shape[dim] = whole / rangeSize;
  auto expected = RankedTensorType::get(shape, source.getElementType(), source.getEncoding());
  if (expected != getType())
    return emitOpError() << "result type " << getType() << " should be " << expected
                         << " (chunk of " << rangeSize << " along dim " << dim << ")";
  auto range = dyn_cast<BlockArgument>(getRange());
  if (!range || !isa_and_nonnull<LoopOp>(range.getOwner()->getParentOp()))
    return emitOpError("range must be the index of an enclosing partir.loop");
  return success();
}

//===----------------------------------------------------------------------===//
// Permute
//===----------------------------------------------------------------------===//

LogicalResult mlir::partir::verifyPermutation(Operation *op, ArrayRef<int64_t> sources,
                                              int64_t size) {
  if (static_cast<int64_t>(sources.size()) != size)
    return op->emitOpError() << "lists " << sources.size() << " sources for " << size
                             << " devices";
  llvm::SmallDenseSet<int64_t> seen;
  for (int64_t source : sources) {
    if (source < -1 || source >= size)
      return op->emitOpError() << "source " << source << " is not in [-1, " << size << ")";
    if (source >= 0 && !seen.insert(source).second)
      return op->emitOpError() << "reads source " << source
                               << " twice (each sends to at most one other)";
  }
  return success();
}

ParseResult PermuteOp::parse(OpAsmParser &parser, OperationState &result) {
  int64_t dim;
  OpAsmParser::UnresolvedOperand source, range;
  Type sourceType, resultType;
  SmallVector<int64_t> sources;
  SMLoc typesLoc;
  auto parseSource = [&]() -> ParseResult {
    int64_t value;
    if (parser.parseInteger(value))
      return failure();
    sources.push_back(value);
    return success();
  };
  if (parser.parseInteger(dim) || parser.parseOperand(source) || parser.parseLSquare() ||
      parser.parseOperand(range) || parser.parseRSquare() || parser.parseKeyword("from") ||
      parser.parseCommaSeparatedList(OpAsmParser::Delimiter::Square, parseSource) ||
      parser.parseOptionalAttrDict(result.attributes) || parser.parseColon() ||
      parser.getCurrentLocation(&typesLoc) || parser.parseType(sourceType) ||
      parser.parseArrow() || parser.parseType(resultType))
    return failure();
  auto sourceTensor = dyn_cast<RankedTensorType>(sourceType);
  auto resultTensor = dyn_cast<RankedTensorType>(resultType);
  if (!sourceTensor || !resultTensor || dim < 0 || dim >= sourceTensor.getRank() ||
      dim >= resultTensor.getRank())
    return parser.emitError(typesLoc)
           << "partir.permute needs ranked tensor types with a dim " << dim;
  int64_t whole = sourceTensor.getDimSize(dim), chunk = resultTensor.getDimSize(dim);
  if (ShapedType::isDynamic(whole) || ShapedType::isDynamic(chunk) || chunk <= 0 ||
      whole % chunk != 0)
    return parser.emitError(typesLoc) << "partir.permute of dim " << dim
                                      << " needs static sizes there that divide into chunks, got "
                                      << sourceType << " -> " << resultType;
  Builder &builder = parser.getBuilder();
  result.addAttribute(getDimAttrName(result.name), builder.getI64IntegerAttr(dim));
  result.addAttribute(getSourcesAttrName(result.name), builder.getDenseI64ArrayAttr(sources));
  result.addTypes(resultType);
  Type rangeType = RangeType::get(parser.getContext(), whole / chunk);
  if (parser.resolveOperand(source, sourceType, result.operands) ||
      parser.resolveOperand(range, rangeType, result.operands))
    return failure();
  return success();
}

void PermuteOp::print(OpAsmPrinter &printer) {
  printer << ' ' << getDim() << ' ' << getSource() << '[' << getRange() << "] from [";
  llvm::interleaveComma(getSources(), printer);
  printer << ']';
  printer.printOptionalAttrDict((*this)->getAttrs(), {getDimAttrName(), getSourcesAttrName()});
  printer << " : " << getSource().getType() << " -> " << getType();
}

LogicalResult PermuteOp::verify() {
  RankedTensorType source = getSource().getType();
  int64_t dim = getDim();
  if (dim < 0 || dim >= source.getRank())
    return emitOpError() << "permutes dim " << dim << " of a rank-" << source.getRank()
                         << " tensor";
  int64_t rangeSize = getRange().getType().getSize();
  int64_t whole = source.getDimSize(dim);
  if (ShapedType::isDynamic(whole) || whole % rangeSize != 0)
    return emitOpError() << "dim " << dim << " of size " << whole
                         << " is not divisible by the range size " << rangeSize;
  SmallVector<int64_t> shape(source.getShape());
  shape[dim] = whole / rangeSize;
  auto expected = RankedTensorType::get(shape, source.getElementType(), source.getEncoding());
  if (expected != getType())
    return emitOpError() << "result type " << getType() << " should be " << expected
                         << " (chunk of " << rangeSize << " along dim " << dim << ")";
  auto range = dyn_cast<BlockArgument>(getRange());
  if (!range || !isa_and_nonnull<LoopOp>(range.getOwner()->getParentOp()))
    return emitOpError("range must be the index of an enclosing partir.loop");
  return verifyPermutation(*this, getSources(), rangeSize);
}

//===----------------------------------------------------------------------===//
// Replicate
//===----------------------------------------------------------------------===//

LogicalResult ReplicateOp::verify() {
  return success(lookupAxisSize(*this, getAxis()).has_value());
}

#define GET_OP_CLASSES
#include "partir/Core/CoreOps.cpp.inc"
