// A function called twice with different shardings: one call site reads a batch-tiled value,
// the other a replicated one. Each copy is partitioned as its call site needs: the first runs on
// 2x4 rows per device, the second whole.
// RUN: mlir-opt --allow-unregistered-dialect %plugin -p 'builtin.module(partir-schedule{file=%S/Inputs/bp-x.toml})' %s 2>&1 | FileCheck %s

// CHECK: remark: partir-inline-calls: 2 calls inlined
// CHECK: remark: partir-schedule: tactic 'BP' on axis 'batch': 1 values tiled, 0 pinned, 2 ops partitioned, 0 conflicts
// CHECK-NOT: no tile mapping rule
// CHECK: partir.loop "batch" [#partir.tile<0>]
// CHECK: "stablehlo.maximum"({{.*}}) : (tensor<2x4xf32>, tensor<2x4xf32>) -> tensor<2x4xf32>
// CHECK: "stablehlo.maximum"({{.*}}) : (tensor<8x4xf32>, tensor<8x4xf32>) -> tensor<8x4xf32>
func.func @main(%x: tensor<8x4xf32> {partir.name = "x"}, %w: tensor<8x4xf32> {partir.name = "w"}) -> (tensor<8x4xf32>, tensor<8x4xf32>) {
  %0 = "func.call"(%x) <{callee = @relu}> : (tensor<8x4xf32>) -> tensor<8x4xf32>
  %1 = "func.call"(%w) <{callee = @relu}> : (tensor<8x4xf32>) -> tensor<8x4xf32>
  return %0, %1 : tensor<8x4xf32>, tensor<8x4xf32>
}
func.func private @relu(%a: tensor<8x4xf32>) -> tensor<8x4xf32> {
  %z = "stablehlo.constant"() <{value = dense<0.0> : tensor<f32>}> : () -> tensor<f32>
  %b = "stablehlo.broadcast_in_dim"(%z) <{broadcast_dimensions = array<i64>}> : (tensor<f32>) -> tensor<8x4xf32>
  %m = "stablehlo.maximum"(%a, %b) : (tensor<8x4xf32>, tensor<8x4xf32>) -> tensor<8x4xf32>
  return %m : tensor<8x4xf32>
}
