//===- Glue.cpp - what Rust needs that the MLIR C API lacks --------------===//

#include "partir/src/ffi/glue.rs.h"

#include "mlir/CAPI/IR.h"
#include "mlir/CAPI/Support.h"
#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/Dialect/Linalg/IR/Linalg.h"
#include "mlir/Dialect/Linalg/Transforms/Transforms.h"
#include "mlir/Dialect/Tensor/IR/Tensor.h"
#include "mlir/Dialect/Tensor/Transforms/Transforms.h"
#include "mlir/Dialect/Utils/ReshapeOpsUtils.h"
#include "mlir/IR/OperationSupport.h"
#include "mlir/IR/PatternMatch.h"
#include "mlir/Transforms/GreedyPatternRewriteDriver.h"
#include "mlir/Transforms/InliningUtils.h"
#include "mlir/IR/AttrTypeSubElements.h"
#include "mlir/IR/BuiltinAttributes.h"
#include "mlir/IR/Diagnostics.h"
#include "mlir/IR/Verifier.h"
#include "partir/Core/CoreDialect.h"
#include "partir/Hlo/HloDialect.h"

using namespace mlir;
using namespace mlir::partir;

namespace partir::glue {

void emit_diagnostic(MlirLocation location, Severity severity, rust::Str message) {
  Location loc = unwrap(location);
  StringRef text(message.data(), message.size());
  switch (severity) {
  case Severity::Warning:
    emitWarning(loc) << text;
    break;
  case Severity::Remark:
    emitRemark(loc) << text;
    break;
  case Severity::Note:
    // A bare note is reported on its own location (notes normally attach to an error).
    loc->getContext()->getDiagEngine().emit(loc, DiagnosticSeverity::Note) << text;
    break;
  default:
    emitError(loc) << text;
  }
}

MlirAttribute tile_attr_get(MlirContext context, int64_t dim) {
  return wrap(TileAttr::get(unwrap(context), dim));
}
bool attr_is_tile(MlirAttribute attr) { return isa<TileAttr>(unwrap(attr)); }
int64_t tile_attr_dim(MlirAttribute attr) { return cast<TileAttr>(unwrap(attr)).getDim(); }
MlirAttribute sum_attr_get(MlirContext context, int32_t kind) {
  return wrap(SumAttr::get(unwrap(context), static_cast<ReductionKind>(kind)));
}
bool attr_is_sum(MlirAttribute attr) { return isa<SumAttr>(unwrap(attr)); }
int32_t sum_attr_kind(MlirAttribute attr) {
  return static_cast<int32_t>(cast<SumAttr>(unwrap(attr)).getKind());
}
MlirType range_type_get(MlirContext context, int64_t size) {
  return wrap(RangeType::get(unwrap(context), size));
}
bool type_is_range(MlirType type) { return isa<RangeType>(unwrap(type)); }
int64_t range_type_size(MlirType type) { return cast<RangeType>(unwrap(type)).getSize(); }

namespace {
using mlir::partir::ReductionKind;

/// The combiner of a linalg reduction: what the region does with each init's block argument.
/// `linalg.yield (arith.addf %in, %out)` is a sum. Each accumulator must be read once, by its
/// combiner, whose other operand does not read it (`%out + %out * %in` is no sum of partial
/// results). Every result must combine the same way; anything else is -1 (never tiled).
int32_t combinerOf(linalg::LinalgOp op, unsigned inits) {
  if (inits == 0)
    return -1;
  Block *body = op.getBlock();
  auto yield = dyn_cast<linalg::YieldOp>(body->getTerminator());
  if (!yield || yield.getNumOperands() != inits || body->getNumArguments() < inits)
    return -1;
  int32_t common = -1;
  for (auto [index, accumulator] : llvm::enumerate(body->getArguments().take_back(inits))) {
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

LinalgFacts linalg_facts(MlirOperation raw) {
  LinalgFacts facts{};
  auto op = dyn_cast<linalg::LinalgOp>(unwrap(raw));
  if (!op)
    return facts;
  facts.is_linalg = true;
  facts.indexing_maps = wrap(static_cast<Attribute>(op.getIndexingMaps()));
  // The init count once: each DPS query re-reads the operand segment sizes (half of this
  // function's time when pricing plans).
  unsigned inits = op.getNumDpsInits();
  facts.num_inputs = op->getNumOperands() - inits;
  std::string iterators;
  for (utils::IteratorType type : op.getIteratorTypesArray())
    iterators += type == utils::IteratorType::parallel    ? 'p'
                 : type == utils::IteratorType::reduction ? 'r'
                                                          : 'o';
  facts.iterators = iterators;
  facts.combiner = combinerOf(op, inits);
  op->walk([&](linalg::IndexOp index) {
    if (index.getDim() < 64)
      facts.indexed_dims |= uint64_t{1} << index.getDim();
  });
  return facts;
}

/// Rewrites every f32 in `raw` (types, float and dense attributes, function signatures) to
/// f64, for a higher-precision reference run of the same program. Returns false when the
/// result does not verify (an op that insists on f32, such as a bitcast to i32); the module is
/// then unusable and the caller drops it.
bool widen_f32_to_f64(MlirOperation raw) {
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

namespace {
/// `expand_shape(collapse_shape x)` that only moves unit dims (16x1x1x4 -> 64 -> 1x1x16x4)
/// becomes a collapse to the non-unit dims and an expand from them (16x1x1x4 -> 16x4 ->
/// 1x1x16x4), so that each non-unit dim keeps its own group and can carry a tile (through the
/// 64, only the 16 could). Upstream's canonicalization leaves such pairs alone.
struct SplitUnitDimReshapePair : OpRewritePattern<tensor::ExpandShapeOp> {
  using OpRewritePattern::OpRewritePattern;
  LogicalResult matchAndRewrite(tensor::ExpandShapeOp expand,
                                PatternRewriter &rewriter) const override {
    auto collapse = expand.getSrc().getDefiningOp<tensor::CollapseShapeOp>();
    if (!collapse)
      return failure();
    RankedTensorType source = collapse.getSrcType(), result = expand.getResultType();
    if (!source.hasStaticShape() || !result.hasStaticShape())
      return failure();
    auto nonUnit = [](ArrayRef<int64_t> shape) {
      SmallVector<int64_t> dims;
      for (int64_t size : shape)
        if (size != 1)
          dims.push_back(size);
      return dims;
    };
    SmallVector<int64_t> squeezed = nonUnit(source.getShape());
    // Only unit dims move, and the pair does merge some non-unit dims (else nothing to gain).
    if (squeezed != nonUnit(result.getShape()) ||
        static_cast<int64_t>(squeezed.size()) <= collapse.getResultType().getRank())
      return failure();
    auto toSqueezed = getReassociationIndicesForCollapse(source.getShape(), squeezed);
    auto fromSqueezed = getReassociationIndicesForCollapse(result.getShape(), squeezed);
    if (!toSqueezed || !fromSqueezed)
      return failure();
    auto middle = RankedTensorType::get(squeezed, source.getElementType());
    Value value = collapse.getSrc();
    if (squeezed.size() != source.getShape().size())
      value = rewriter.create<tensor::CollapseShapeOp>(collapse.getLoc(), middle, value,
                                                        *toSqueezed);
    if (squeezed.size() != result.getShape().size())
      value = rewriter.create<tensor::ExpandShapeOp>(expand.getLoc(), result, value,
                                                      *fromSqueezed);
    rewriter.replaceOp(expand, value);
    return success();
  }
};
} // namespace

/// Restores batch dims that a `tensor.collapse_shape` merged into one in front of a batched
/// contraction, with upstream's reshape-by-expansion patterns:
///   %a = collapse_shape %q [[0, 1], [2], [3]] : 8x4x16x16 into 32x16x16   (batch, heads merged)
///   %s = linalg.batch_matmul ins(%a, %b) outs(%fill : 32x16x16)
///   %e = expand_shape %s [[0, 1], [2], [3]] : 32x16x16 into 8x4x16x16
/// becomes one linalg.generic over [batch, heads, q, k, d] on %q and the uncollapsed %b, its
/// init a fill of 8x4x16x16, and the reshapes fold away. Only named linalg ops fed by a
/// collapse_shape are touched (generalized first: the patterns rewrite linalg.generic); ops
/// the patterns cannot expand stay generalized. Reshape pairs that only move unit dims are
/// split first (SplitUnitDimReshapePair). Returns how many ops were expanded.
int64_t unmerge_batch_dims(MlirOperation raw) {
  Operation *root = unwrap(raw);
  MLIRContext *context = root->getContext();
  constexpr StringLiteral mark = "partir.unmerge";
  SmallVector<linalg::LinalgOp> candidates;
  root->walk([&](linalg::LinalgOp op) {
    if (isa<linalg::GenericOp>(op) || !op.hasPureTensorSemantics())
      return;
    bool merged = llvm::any_of(op.getDpsInputs(), [](Value input) {
      auto collapse = input.getDefiningOp<tensor::CollapseShapeOp>();
      return collapse && collapse.getSrcType().getRank() > collapse.getResultType().getRank();
    });
    if (merged)
      candidates.push_back(op);
  });
  // Rewrite the reshapes and linalg ops concerned and what the patterns create, nothing else:
  // a whole-module greedy run was superlinear (0.28 s of 0.7 s on 48 layers).
  GreedyRewriteConfig config;
  config.setRegionSimplificationLevel(GreedySimplifyRegionLevel::Disabled)
      .enableConstantCSE(false)
      .setStrictness(GreedyRewriteStrictness::ExistingAndNewOps);
  {
    SmallVector<Operation *> pairsFound;
    // The collapses too, so that the driver erases them once dead.
    root->walk([&](tensor::ExpandShapeOp expand) {
      if (auto collapse = expand.getSrc().getDefiningOp<tensor::CollapseShapeOp>()) {
        pairsFound.push_back(collapse);
        pairsFound.push_back(expand);
      }
    });
    RewritePatternSet pairs(context);
    pairs.add<SplitUnitDimReshapePair>(context);
    (void)applyOpPatternsGreedily(pairsFound, std::move(pairs), config);
  }
  if (candidates.empty())
    return 0;
  IRRewriter rewriter(context);
  // The generalized ops, the collapses feeding them and the reshapes reading their results.
  SmallVector<Operation *> worklist;
  for (linalg::LinalgOp op : candidates) {
    rewriter.setInsertionPoint(op);
    FailureOr<linalg::GenericOp> generic = linalg::generalizeNamedOp(rewriter, op);
    if (failed(generic))
      continue;
    (*generic)->setAttr(mark, UnitAttr::get(context));
    worklist.push_back(*generic);
    for (Value operand : (*generic)->getOperands()) {
      Operation *producer = operand.getDefiningOp();
      if (!producer || !isa<tensor::CollapseShapeOp, linalg::FillOp, tensor::EmptyOp>(producer))
        continue;
      worklist.push_back(producer);
      // A fill's empty, erased once the fill is rebuilt on the expanded shape.
      for (Value init : producer->getOperands())
        if (Operation *empty = init.getDefiningOp<tensor::EmptyOp>())
          worklist.push_back(empty);
    }
    for (Operation *user : (*generic)->getUsers())
      if (isa<tensor::ExpandShapeOp, tensor::CollapseShapeOp>(user))
        worklist.push_back(user);
  }
  RewritePatternSet patterns(context);
  // Only a collapse_shape feeding a marked op is folded into it (the op's loops grow); the
  // collapse the patterns put after the result cancels against the model's expand_shape.
  linalg::populateFoldReshapeOpsByExpansionPatterns(patterns, [&](OpOperand *operand) {
    Operation *producer = operand->get().getDefiningOp();
    return producer && isa<tensor::CollapseShapeOp>(producer) &&
           operand->getOwner()->hasAttr(mark);
  });
  tensor::CollapseShapeOp::getCanonicalizationPatterns(patterns, context);
  tensor::ExpandShapeOp::getCanonicalizationPatterns(patterns, context);
  linalg::FillOp::getCanonicalizationPatterns(patterns, context);
  tensor::populateFoldTensorEmptyPatterns(patterns);
  (void)applyOpPatternsGreedily(worklist, std::move(patterns), config);
  // The expanded ops are new (without the mark); the ones left marked did not expand.
  int64_t left = 0;
  root->walk([&](linalg::GenericOp op) {
    if (op->hasAttr(mark)) {
      op->removeAttr(mark);
      ++left;
    }
  });
  return static_cast<int64_t>(candidates.size()) - left;
}

namespace {
/// Upstream's inliner asks each op's dialect whether it may be inlined, and a dialect that is
/// not registered (StableHLO read in generic form by a stock mlir-opt) has no one to ask: the
/// stock `inline` pass refuses or crashes there. A callee's ops compute the same values
/// wherever they are cloned (no op partir meets refers to its enclosing function), so every
/// op is legal here, and `func.return` hands its operands to the call's results.
struct CloneEverything : InlinerInterface {
  using InlinerInterface::InlinerInterface;
  bool isLegalToInline(Operation *, Operation *, bool) const final { return true; }
  bool isLegalToInline(Region *, Region *, bool, IRMapping &) const final { return true; }
  bool isLegalToInline(Operation *, Region *, bool, IRMapping &) const final { return true; }
  void handleTerminator(Operation *op, ValueRange valuesToRepl) const final {
    for (auto [result, value] : llvm::zip(valuesToRepl, op->getOperands()))
      result.replaceAllUsesWith(value);
  }
  // The defaults ask the dialect of the op around the call (a `stablehlo.while` body's is
  // unregistered: a null dialect, a crash); nothing here needs more than the plain answer.
  bool allowSingleBlockOptimization(iterator_range<Region::iterator>) const final { return true; }
  void processInlinedCallBlocks(Operation *, iterator_range<Region::iterator>) const final {}
  Value handleArgument(OpBuilder &, Operation *, Operation *, Value argument,
                       DictionaryAttr) const final {
    return argument;
  }
  Value handleResult(OpBuilder &, Operation *, Operation *, Value result,
                     DictionaryAttr) const final {
    return result;
  }
};
} // namespace

/// `call` replaced by clones of `callee`'s ops, when its body is one block ending in
/// `func.return`: what upstream's `inlineCall` does (locations become
/// `callsite(callee_loc at call_loc)`), without splitting the caller's block at the call and
/// merging it back, which moves every op after the call twice per call. On LLaMA-3 70B as
/// written (80 layers, 171 calls, 54k ops) that made inlining quadratic: 0.25 s of 7 s.
static bool inline_single_block(func::CallOp call, func::FuncOp callee) {
  Region &body = callee.getBody();
  if (!body.hasOneBlock())
    return false;
  Block &block = body.front();
  auto ret = dyn_cast<func::ReturnOp>(block.getTerminator());
  if (!ret || ret.getNumOperands() != call.getNumResults() ||
      block.getNumArguments() != call.getNumOperands())
    return false;
  IRMapping mapper;
  for (auto [argument, operand] : llvm::zip(block.getArguments(), call.getOperands()))
    mapper.map(argument, operand);
  Location at = call.getLoc();
  DenseMap<Location, Location> remapped;
  auto remap = [&](Location loc) {
    auto [it, inserted] = remapped.try_emplace(loc, loc);
    if (inserted)
      it->second = CallSiteLoc::get(loc, at);
    return it->second;
  };
  OpBuilder builder(call);
  for (Operation &op : block.without_terminator()) {
    Operation *clone = builder.clone(op, mapper);
    if (isa<UnknownLoc>(at))
      continue;
    clone->walk([&](Operation *nested) {
      nested->setLoc(remap(nested->getLoc()));
      for (Region &region : nested->getRegions())
        for (Block &inner : region)
          for (BlockArgument argument : inner.getArguments())
            argument.setLoc(remap(argument.getLoc()));
    });
  }
  for (auto [result, value] : llvm::zip(call.getResults(), ret.getOperands()))
    result.replaceAllUsesWith(mapper.lookupOrDefault(value));
  call.erase();
  return true;
}

/// Inlines every `func.call` under `root` whose callee is a `func.func` with a body in the same
/// module, with upstream's `inlineCall` (ops keep their locations as call sites:
/// `callsite(callee_loc at call_loc)`), rounds after rounds until no call is left (a callee's
/// own calls are inlined in the next round; 64 rounds bound recursion). Private functions left
/// without a use are erased. Returns how many calls were inlined; the calls left are the
/// caller's to report.
int64_t inline_calls(MlirOperation raw) {
  Operation *root = unwrap(raw);
  MLIRContext *context = root->getContext();
  CloneEverything interface(context);
  auto clone = [](OpBuilder &, Region *src, Block *inlineBlock, Block *postInsertBlock,
                  IRMapping &mapper, bool) {
    src->cloneInto(inlineBlock->getParent(), postInsertBlock->getIterator(), mapper);
  };
  int64_t inlined = 0;
  for (int round = 0; round < 64; ++round) {
    SymbolTableCollection symbols;
    SmallVector<std::pair<func::CallOp, func::FuncOp>> calls;
    root->walk([&](func::CallOp call) {
      auto callee = symbols.lookupNearestSymbolFrom<func::FuncOp>(call, call.getCalleeAttr());
      if (callee && !callee.isExternal() && callee != call->getParentOfType<func::FuncOp>())
        calls.emplace_back(call, callee);
    });
    int64_t before = inlined;
    for (auto [call, callee] : calls) {
      if (inline_single_block(call, callee)) {
        ++inlined;
        continue;
      }
      if (succeeded(inlineCall(interface, clone, cast<CallOpInterface>(call.getOperation()),
                               cast<CallableOpInterface>(callee.getOperation()),
                               &callee.getBody()))) {
        call.erase();
        ++inlined;
      }
    }
    if (inlined == before)
      break;
  }
  auto module = dyn_cast<ModuleOp>(root);
  if (!module)
    return inlined;
  // Until none is left: a helper only called from a dead helper is dead once that one is gone.
  // Uses are read off every op's attributes here: upstream's symbol-use queries answer
  // "unknown" as soon as an unregistered op with a region (StableHLO's reduce) may be a symbol
  // table, which JAX's programs always have.
  for (bool erased = true; erased;) {
    DenseSet<StringAttr> used;
    // A definition names itself with a StringAttr (`sym_name`), so only references count.
    module.walk([&](Operation *op) {
      op->getAttrDictionary().walk([&](SymbolRefAttr ref) { used.insert(ref.getRootReference()); });
    });
    SmallVector<func::FuncOp> dead;
    for (auto function : module.getOps<func::FuncOp>())
      if (function.isPrivate() && !used.contains(function.getSymNameAttr()))
        dead.push_back(function);
    for (func::FuncOp function : dead)
      function.erase();
    erased = !dead.empty();
  }
  return inlined;
}

/// `#partir_hlo.sharding<...>` from an ArrayAttr (one per dim) of ArrayAttrs of StringAttrs.
MlirAttribute sharding_attr_get(MlirAttribute raw) {
  auto array = cast<ArrayAttr>(unwrap(raw));
  SmallVector<ArrayAttr> dims;
  for (Attribute dim : array)
    dims.push_back(cast<ArrayAttr>(dim));
  return wrap(partir_hlo::ShardingAttr::get(array.getContext(), dims));
}

MlirAttribute sharding_attr_dims(MlirAttribute raw) {
  auto sharding = dyn_cast<partir_hlo::ShardingAttr>(unwrap(raw));
  if (!sharding)
    return MlirAttribute{nullptr};
  SmallVector<Attribute> dims(sharding.getDims().begin(), sharding.getDims().end());
  return wrap(ArrayAttr::get(sharding.getContext(), dims));
}

bool context_is_multithreaded(MlirContext context) {
  return unwrap(context)->isMultithreadingEnabled();
}

/// Upstream CSE's key for `op`: its name, operands, attributes, properties and result types,
/// locations aside (`OperationEquivalence::computeHash`). Equal ops hash equal.
uint64_t operation_hash(MlirOperation op) {
  return static_cast<uint64_t>(OperationEquivalence::computeHash(
      unwrap(op), OperationEquivalence::directHashValue, OperationEquivalence::ignoreHashValue,
      OperationEquivalence::IgnoreLocations));
}

/// Whether `a` and `b` compute the same thing by upstream CSE's test (locations aside). The
/// C API's attribute list would miss an unregistered op's properties (`<{...}>`), and two
/// `stablehlo.compare`s differing only in their direction would look equal.
bool operations_equivalent(MlirOperation a, MlirOperation b) {
  return OperationEquivalence::isEquivalentTo(unwrap(a), unwrap(b),
                                              OperationEquivalence::IgnoreLocations);
}

} // namespace partir::glue
