//===- Enums.td - enums shared by PartIR:Core and PartIR:HLO -------------===//
#ifndef PARTIR_COMMON_ENUMS
#define PARTIR_COMMON_ENUMS

include "mlir/IR/EnumAttr.td"

// How per-device (or per-iteration) partial results combine.
def Partir_ReductionKind : I32EnumAttr<"ReductionKind", "combiner of partial results", [
    I32EnumAttrCase<"sum", 0>,
    I32EnumAttrCase<"max", 1>,
    I32EnumAttrCase<"min", 2>,
    I32EnumAttrCase<"mul", 3>,
  ]> {
  let cppNamespace = "::mlir::partir";
  let genSpecializedAttr = 1;
}

#endif // PARTIR_COMMON_ENUMS
