//===- HloOps.td - PartIR:HLO collectives --------------------------------===//
#ifndef PARTIR_HLO_OPS
#define PARTIR_HLO_OPS

include "partir/Hlo/HloDialect.td"
include "partir/Common/Enums.td"
include "mlir/Interfaces/SideEffectInterfaces.td"
include "mlir/Interfaces/InferTypeOpInterface.td"
include "mlir/IR/BuiltinAttributes.td"

class PartirHlo_Op<string mnemonic, list<Trait> traits = []>
    : Op<PartirHlo_Dialect, mnemonic, traits> {
  // Every collective checks its axes against the module's mesh and its local shapes.
  let hasVerifier = 1;
}

def PartirHlo_AllGatherOp : PartirHlo_Op<"all_gather", [Pure]> {
  let summary = "concatenate the local shards of a dim over mesh axes";
  let description = [{
    `partir_hlo.all_gather %x dim 0 axes ["batch"] : tensor<8x64xf32> -> tensor<32x64xf32>`
    on a mesh with batch=4: dim 0 grows by the product of the axes' sizes.
  }];
  let arguments = (ins AnyRankedTensor:$operand, I64Attr:$dim, StrArrayAttr:$axes);
  let results = (outs AnyRankedTensor:$result);
  let assemblyFormat = "$operand `dim` $dim `axes` $axes attr-dict `:` type($operand) `->` type($result)";
}

def PartirHlo_AllReduceOp : PartirHlo_Op<"all_reduce", [Pure,
    DeclareOpInterfaceMethods<InferTypeOpInterface>]> {
  let summary = "combine partial values over mesh axes; every device gets the result";
  let description = [{
    `partir_hlo.all_reduce sum %x axes ["batch"] : tensor<64x256xf32>`

    Variadic, like XLA's combined all-reduce: one collective (one latency, one packed buffer)
    reduces every operand, each result having its operand's type.
    `partir-combine-collectives` forms these from independent all_reduces:

    `%g:2 = partir_hlo.all_reduce sum %dw1, %dw2 axes ["batch"] : tensor<64x256xf32>, tensor<256xf32>`
  }];
  let arguments = (ins Partir_ReductionKind:$kind, Variadic<AnyRankedTensor>:$operands,
                       StrArrayAttr:$axes);
  let results = (outs Variadic<AnyRankedTensor>:$results);
  let assemblyFormat = "$kind $operands `axes` $axes attr-dict `:` type($operands)";
}

def PartirHlo_ReduceScatterOp : PartirHlo_Op<"reduce_scatter", [Pure]> {
  let summary = "combine partial values over mesh axes, each device keeping its shard of a dim";
  let description = [{
    `partir_hlo.reduce_scatter sum %x dim 0 axes ["batch"] : tensor<64x256xf32> -> tensor<16x256xf32>`

    Variadic, like XLA's combined reduce-scatter: one collective reduces every operand and
    scatters each on `dim`. `partir-combine-collectives` forms these from independent
    reduce_scatters (ZeRO's gradient shards):

    `%g:2 = partir_hlo.reduce_scatter sum %dw1, %dw2 dim 0 axes ["batch"] : tensor<64x256xf32>, tensor<256xf32> -> tensor<16x256xf32>, tensor<64xf32>`
  }];
  let arguments = (ins Partir_ReductionKind:$kind, Variadic<AnyRankedTensor>:$operands,
                       I64Attr:$dim, StrArrayAttr:$axes);
  let results = (outs Variadic<AnyRankedTensor>:$results);
  let assemblyFormat = "$kind $operands `dim` $dim `axes` $axes attr-dict `:` type($operands) `->` type($results)";
}

def PartirHlo_AllSliceOp : PartirHlo_Op<"all_slice", [Pure]> {
  let summary = "keep this device's shard of a replicated value (no communication)";
  let description = [{
    `partir_hlo.all_slice %w dim 1 axes ["model"] : tensor<64x256xf32> -> tensor<64x128xf32>`
  }];
  let arguments = (ins AnyRankedTensor:$operand, I64Attr:$dim, StrArrayAttr:$axes);
  let results = (outs AnyRankedTensor:$result);
  let assemblyFormat = "$operand `dim` $dim `axes` $axes attr-dict `:` type($operand) `->` type($result)";
}

def PartirHlo_AllToAllOp : PartirHlo_Op<"all_to_all", [Pure]> {
  let summary = "move the sharding of a value from one dim to another over mesh axes";
  let description = [{
    `partir_hlo.all_to_all %x split 1 concat 0 axes ["batch"] : tensor<8x64xf32> -> tensor<32x16xf32>`:
    the input is sharded on dim 0; the result is sharded on dim 1 instead.
  }];
  let arguments = (ins AnyRankedTensor:$operand, I64Attr:$split_dim, I64Attr:$concat_dim,
                       StrArrayAttr:$axes);
  let results = (outs AnyRankedTensor:$result);
  let assemblyFormat = "$operand `split` $split_dim `concat` $concat_dim `axes` $axes attr-dict `:` type($operand) `->` type($result)";
}

def PartirHlo_CollectivePermuteOp : PartirHlo_Op<"collective_permute", [Pure,
    AllTypesMatch<["operand", "result"]>]> {
  let summary = "each device receives the local value of one other device along a mesh axis";
  let description = [{
    `partir_hlo.collective_permute %x axes ["batch"] from [3, 2, 1, 0] : tensor<2x64xf32>` on a
    mesh with batch=4: device r along `batch` receives device `from[r]`'s `%x` (zeros where
    `from[r]` is -1); one axis, every device sending to at most one other (StableHLO's
    `collective_permute` within each group of the other axes).
  }];
  let arguments = (ins AnyRankedTensor:$operand, StrArrayAttr:$axes, DenseI64ArrayAttr:$sources);
  let results = (outs AnyRankedTensor:$result);
  let assemblyFormat = "$operand `axes` $axes `from` $sources attr-dict `:` type($operand)";
}

#endif // PARTIR_HLO_OPS
