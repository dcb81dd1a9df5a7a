//===- CoreDialect.h - PartIR:Core dialect -------------------------------===//
#ifndef PARTIR_CORE_COREDIALECT_H
#define PARTIR_CORE_COREDIALECT_H

#include "mlir/Bytecode/BytecodeOpInterface.h"
#include "mlir/IR/BuiltinOps.h"
#include "mlir/IR/BuiltinTypes.h"
#include "mlir/IR/Dialect.h"
#include "mlir/IR/OpDefinition.h"
#include "mlir/IR/SymbolTable.h"
#include "mlir/Interfaces/ControlFlowInterfaces.h"
#include "mlir/Interfaces/SideEffectInterfaces.h"
#include "mlir/Interfaces/InferTypeOpInterface.h"

#include "partir/Common/Enums.h"

#include "partir/Core/CoreDialect.h.inc"

#define GET_TYPEDEF_CLASSES
#include "partir/Core/CoreTypes.h.inc"

#define GET_ATTRDEF_CLASSES
#include "partir/Core/CoreAttrs.h.inc"

#define GET_OP_CLASSES
#include "partir/Core/CoreOps.h.inc"

namespace mlir::partir {
/// The mesh of the module enclosing `op` (its first `partir.mesh`), or null.
MeshOp getMesh(Operation *op);

/// Looks up `axis` in the mesh of `op`'s module; on failure emits an error on `op` that says
/// what was wrong and which axes exist, and returns std::nullopt.
std::optional<int64_t> lookupAxisSize(Operation *op, StringRef axis);

/// Checks a permutation's `from` list (entry r: the chunk or device that r receives, -1 for
/// none): one entry per index of `size`, each in [-1, size), no source read twice.
LogicalResult verifyPermutation(Operation *op, ArrayRef<int64_t> sources, int64_t size);
} // namespace mlir::partir

#endif
