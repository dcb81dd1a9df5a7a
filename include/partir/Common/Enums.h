//===- Enums.h - enums shared by PartIR:Core and PartIR:HLO --------------===//
#ifndef PARTIR_COMMON_ENUMS_H
#define PARTIR_COMMON_ENUMS_H

#include "mlir/IR/BuiltinAttributes.h"
#include "mlir/IR/DialectImplementation.h"

#include "partir/Common/Enums.h.inc"

#endif
