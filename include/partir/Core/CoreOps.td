//===- CoreOps.td - PartIR:Core operations -------------------------------===//
#ifndef PARTIR_CORE_OPS
#define PARTIR_CORE_OPS

include "partir/Core/CoreDialect.td"
include "mlir/IR/SymbolInterfaces.td"
include "mlir/Interfaces/SideEffectInterfaces.td"
include "mlir/Interfaces/ControlFlowInterfaces.td"
include "mlir/Interfaces/InferTypeOpInterface.td"
include "mlir/IR/BuiltinAttributes.td"

class Partir_Op<string mnemonic, list<Trait> traits = []> : Op<Partir_Dialect, mnemonic, traits>;

def Partir_MeshOp : Partir_Op<"mesh", [Symbol, HasParent<"::mlir::ModuleOp">]> {
  let summary = "a logical device mesh with named axes, major to minor";
  let description = [{
    ```mlir
    partir.mesh @mesh ["batch"=4, "model"=2]
    ```
    declares 8 devices arranged as a 4x2 grid. Axis names are unique; sizes are positive.
    One mesh per module: loops, slices and collectives name its axes.
  }];
  let arguments = (ins SymbolNameAttr:$sym_name,
                       StrArrayAttr:$axis_names,
                       DenseI64ArrayAttr:$axis_sizes);
  let assemblyFormat = "$sym_name custom<MeshAxes>($axis_names, $axis_sizes) attr-dict";
  let hasVerifier = 1;
  let extraClassDeclaration = [{
    /// Size of `axis`, or std::nullopt when the mesh has no such axis.
    std::optional<int64_t> getAxisSize(::llvm::StringRef axis);
    /// "batch=4, model=2": for diagnostics.
    std::string describeAxes();
  }];
}

def Partir_LoopOp : Partir_Op<"loop", [SingleBlock, RecursiveMemoryEffects,
                                       RecursivelySpeculatable]> {
  let summary = "a functional loop over a mesh axis that tiles or reduces its results";
  let description = [{
    ```mlir
    %y = partir.loop "batch" [#partir.tile<0>] (%r: !partir.range<4>) {
      %xs = partir.slice 0 %x[%r] : tensor<32x64xf32> -> tensor<8x64xf32>
      partir.yield %xs : tensor<8x64xf32>
    } : tensor<32x64xf32>
    ```
    One action per result: `#partir.tile<d>` concatenates the yielded values along dim d,
    `#partir.sum` (or `#partir.sum<max>`, ...) reduces them. The range size equals the size of
    the axis in the module's `partir.mesh`; an axis appears at most once on a nesting path.
  }];
  let arguments = (ins StrAttr:$axis, ArrayAttr:$actions);
  let results = (outs Variadic<AnyType>:$results);
  let regions = (region SizedRegion<1>:$body);
  let hasCustomAssemblyFormat = 1;
  let hasVerifier = 1;
  let hasRegionVerifier = 1;
  let extraClassDeclaration = [{
    ::mlir::BlockArgument getRange() { return getBody().front().getArgument(0); }
  }];
}

def Partir_SliceOp : Partir_Op<"slice", [Pure]> {
  let summary = "chunk r of N equal chunks of a tensor along a dimension";
  let description = [{
    `partir.slice 0 %x[%r] : tensor<32x64xf32> -> tensor<8x64xf32>` with
    `%r : !partir.range<4>` is rows 8r..8r+7 of %x. `%r` is the range of an enclosing
    `partir.loop`; the sliced dimension must be divisible by the range size.
  }];
  let arguments = (ins I64Attr:$dim, AnyRankedTensor:$source, Partir_RangeType:$range);
  let results = (outs AnyRankedTensor:$result);
  let hasCustomAssemblyFormat = 1;
  let hasVerifier = 1;
}

def Partir_PermuteOp : Partir_Op<"permute", [Pure]> {
  let summary = "chunk from[r] of N equal chunks of a tensor along a dimension";
  let description = [{
    `partir.permute 0 %x[%r] from [1, 2, 3, -1] : tensor<32x64xf32> -> tensor<8x64xf32>` with
    `%r : !partir.range<4>` is chunk `from[r]` of %x (rows 8·from[r] .. 8·from[r]+7), or zeros
    where `from[r]` is -1: a `partir.slice` that reads another iteration's chunk. No two
    iterations read the same chunk, so when %x is split that way it lowers to one
    `partir_hlo.collective_permute` (the halo of a slice, pad or concatenate on a split dim, the
    mirror of a reverse).
  }];
  let arguments = (ins I64Attr:$dim, AnyRankedTensor:$source, Partir_RangeType:$range,
                       DenseI64ArrayAttr:$sources);
  let results = (outs AnyRankedTensor:$result);
  let hasCustomAssemblyFormat = 1;
  let hasVerifier = 1;
}

def Partir_YieldOp : Partir_Op<"yield", [Pure, Terminator, ReturnLike,
                                         HasParent<"::mlir::partir::LoopOp">]> {
  let summary = "the per-iteration values of a partir.loop";
  let arguments = (ins Variadic<AnyType>:$values);
  let assemblyFormat = "attr-dict ($values^ `:` type($values))?";
}

def Partir_ReplicateOp : Partir_Op<"replicate", [Pure, SameOperandsAndResultType]> {
  let summary = "pin a value to stay whole (replicated) along a mesh axis";
  let description = [{
    `%w2 = partir.replicate "model" %w : tensor<64x256xf32>` is an identity that propagation
    on axis "model" never tiles through: every use of %w2 sees the whole value on that axis.
    Other axes propagate through it as through an identity.
  }];
  let arguments = (ins StrAttr:$axis, AnyType:$input);
  let results = (outs AnyType:$result);
  let assemblyFormat = "$axis $input attr-dict `:` type($result)";
  let hasVerifier = 1;
}

#endif // PARTIR_CORE_OPS
