//===- CoreDialect.td - PartIR:Core dialect, types, attributes -----------===//
#ifndef PARTIR_CORE_DIALECT
#define PARTIR_CORE_DIALECT

include "mlir/IR/OpBase.td"
include "mlir/IR/AttrTypeBase.td"
include "mlir/IR/EnumAttr.td"
include "partir/Common/Enums.td"

def Partir_Dialect : Dialect {
  let name = "partir";
  let cppNamespace = "::mlir::partir";
  let summary = "PartIR:Core: functional loops over named mesh axes";
  let description = [{
    PartIR:Core expresses SPMD partitioning by rewriting, not annotation. A `partir.loop`
    over a mesh axis of size N runs its body for each r in 0..N-1 and either concatenates
    (`#partir.tile<d>`) or combines (`#partir.sum`) the per-iteration results; `partir.slice`
    takes chunk r of a value. Read sequentially, a Core program computes exactly what the
    original program computed; read in parallel, device r along the axis runs iteration r.
  }];
  let useDefaultTypePrinterParser = 1;
  let useDefaultAttributePrinterParser = 1;
}

class Partir_Type<string name, string typeMnemonic> : TypeDef<Partir_Dialect, name> {
  let mnemonic = typeMnemonic;
}

class Partir_Attr<string name, string attrMnemonic> : AttrDef<Partir_Dialect, name> {
  let mnemonic = attrMnemonic;
}

def Partir_RangeType : Partir_Type<"Range", "range"> {
  let summary = "the iteration index of a partir.loop over an axis of size N";
  let description = [{
    `!partir.range<4>` is the type of a loop's index over an axis of size 4. It is only
    consumed by `partir.slice`, which uses it to select one of N equal chunks.
  }];
  let parameters = (ins "int64_t":$size);
  let assemblyFormat = "`<` $size `>`";
  let genVerifyDecl = 1;
}

def Partir_TileAttr : Partir_Attr<"Tile", "tile"> {
  let summary = "loop action: concatenate per-iteration results along a dimension";
  let description = [{
    `#partir.tile<0>`: the loop result is the concatenation along dim 0 of the N values the
    body yields, so its dim 0 is N times the yielded dim 0.
  }];
  let parameters = (ins "int64_t":$dim);
  let assemblyFormat = "`<` $dim `>`";
  let genVerifyDecl = 1;
}

def Partir_SumAttr : Partir_Attr<"Sum", "sum"> {
  let summary = "loop action: combine per-iteration results with a reduction";
  let description = [{
    `#partir.sum` adds the N values the body yields; `#partir.sum<max>` (or `min`, `mul`)
    combines them with another associative reduction. The result type equals the yielded type.
  }];
  let parameters = (ins DefaultValuedParameter<"::mlir::partir::ReductionKind",
                                               "::mlir::partir::ReductionKind::sum">:$kind);
  let assemblyFormat = "(`<` $kind^ `>`)?";
}

def Partir_AnyAttr : Partir_Attr<"Any", "any"> {
  let summary = "loop action: every iteration yields the same value, which is the result";
  let description = [{
    `#partir.any`: the N values the body yields are equal (they do not depend on the range),
    and the loop result is that value: a device computes it whole. Propagation gives it to a
    result the tiled factor does not reach, of an op that carries unrelated values together
    (a `stablehlo.while`'s counter and weights next to its batch-split activations). The
    result type equals the yielded type.
  }];
}

#endif // PARTIR_CORE_DIALECT
