// tosa's partial sums added together are reduced once, after the add, as StableHLO's and
// arith's are: the peephole asks the op family whether an op adds its two operands
// (rules::linear), not its name.
// RUN: mlir-opt %plugin -p 'builtin.module(partir-mesh{axes=model=2}, partir-tile{value=w1 dim=1 axis=model}, partir-tile{value=w2 dim=1 axis=model}, partir-propagate, partir-lower-to-hlo)' %s 2>/dev/null | FileCheck %s

// CHECK-COUNT-2: tosa.matmul
// CHECK: %[[SUM:.*]] = tosa.add
// CHECK-NEXT: partir_hlo.all_reduce sum %[[SUM]] axes ["model"] : tensor<1x8x8xf32>
// CHECK-NOT: partir_hlo.all_reduce

func.func @main(%x: tensor<1x8x16xf32> {partir.name = "x"}, %w1: tensor<1x16x8xf32> {partir.name = "w1"}, %w2: tensor<1x16x8xf32> {partir.name = "w2"}) -> tensor<1x8x8xf32> {
  %zp = "tosa.const"() <{values = dense<0.0> : tensor<1xf32>}> : () -> tensor<1xf32>
  %a = tosa.matmul %x, %w1, %zp, %zp : (tensor<1x8x16xf32>, tensor<1x16x8xf32>, tensor<1xf32>, tensor<1xf32>) -> tensor<1x8x8xf32>
  %b = tosa.matmul %x, %w2, %zp, %zp : (tensor<1x8x16xf32>, tensor<1x16x8xf32>, tensor<1xf32>, tensor<1xf32>) -> tensor<1x8x8xf32>
  %s = tosa.add %a, %b : (tensor<1x8x8xf32>, tensor<1x8x8xf32>) -> tensor<1x8x8xf32>
  return %s : tensor<1x8x8xf32>
}
