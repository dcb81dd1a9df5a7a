// JAX emits repeats: flax's bf16 Dense casts its input in each projection, so LLaMA's query,
// key and value read three converts of one activation. The frontend merges repeated pure ops
// (StableHLO is unregistered here, so upstream `cse` leaves them), so that a tactic splits and
// gathers the activation once, not three times: under Megatron-SP on LLaMA-3 8B, 192
// all_gathers instead of 384. Ops differing only in a property (a compare's direction) stay
// apart, and ops that write more than they read (a broadcast) stay one per reader, as XLA
// fuses them into each.
// RUN: mlir-opt --allow-unregistered-dialect %plugin -p 'builtin.module(partir-schedule{file=%S/Inputs/bp-x.toml})' %s 2>&1 | FileCheck %s

// CHECK: remark: partir-frontend: 2 repeated pure ops merged (common subexpressions)
// CHECK-LABEL: func.func @main
// CHECK: "stablehlo.convert"
// CHECK-NOT: "stablehlo.convert"
// CHECK: comparison_direction GT
// CHECK: comparison_direction LT
// CHECK: %[[E:.*]] = "stablehlo.broadcast_in_dim"
// CHECK: %[[F:.*]] = "stablehlo.broadcast_in_dim"
// CHECK: return %[[A:.*]], %[[A]], %[[A]], %{{.*}}, %{{.*}}, %[[E]], %[[F]] :
func.func @main(%x: tensor<8x4xf32> {partir.name = "x"}, %v: tensor<4xf32> {partir.name = "v"})
    -> (tensor<8x4xbf16>, tensor<8x4xbf16>, tensor<8x4xbf16>, tensor<8x4xi1>, tensor<8x4xi1>, tensor<8x4xf32>, tensor<8x4xf32>) {
  %a = "stablehlo.convert"(%x) : (tensor<8x4xf32>) -> tensor<8x4xbf16>
  %b = "stablehlo.convert"(%x) : (tensor<8x4xf32>) -> tensor<8x4xbf16>
  %c = "stablehlo.convert"(%x) : (tensor<8x4xf32>) -> tensor<8x4xbf16> loc("other")
  %gt = "stablehlo.compare"(%x, %x) <{compare_type = #stablehlo<comparison_type FLOAT>, comparison_direction = #stablehlo<comparison_direction GT>}> : (tensor<8x4xf32>, tensor<8x4xf32>) -> tensor<8x4xi1>
  %lt = "stablehlo.compare"(%x, %x) <{compare_type = #stablehlo<comparison_type FLOAT>, comparison_direction = #stablehlo<comparison_direction LT>}> : (tensor<8x4xf32>, tensor<8x4xf32>) -> tensor<8x4xi1>
  %e = "stablehlo.broadcast_in_dim"(%v) <{broadcast_dimensions = array<i64: 1>}> : (tensor<4xf32>) -> tensor<8x4xf32>
  %f = "stablehlo.broadcast_in_dim"(%v) <{broadcast_dimensions = array<i64: 1>}> : (tensor<4xf32>) -> tensor<8x4xf32>
  return %a, %b, %c, %gt, %lt, %e, %f : tensor<8x4xbf16>, tensor<8x4xbf16>, tensor<8x4xbf16>, tensor<8x4xi1>, tensor<8x4xi1>, tensor<8x4xf32>, tensor<8x4xf32>
}
