// Running partir-propagate twice changes nothing: the second run finds every op already
// partitioned along the axis (or stopped at the same conflict) and rewrites nothing.
// RUN: mlir-opt %plugin -p 'builtin.module(partir-mesh{axes=batch=4,model=2}, partir-tile{value=x dim=0 axis=batch}, partir-tile{value=w1 dim=1 axis=model}, partir-tile{value=y dim=1 axis=batch}, partir-propagate)' %s > %t.once.mlir
// RUN: mlir-opt %plugin -p 'builtin.module(partir-mesh{axes=batch=4,model=2}, partir-tile{value=x dim=0 axis=batch}, partir-tile{value=w1 dim=1 axis=model}, partir-tile{value=y dim=1 axis=batch}, partir-propagate, partir-propagate)' %s > %t.twice.mlir
// RUN: diff %t.once.mlir %t.twice.mlir
// Re-running on the printed result (a fresh pass instance, nothing remembered) is also a no-op.
// RUN: mlir-opt %plugin -p 'builtin.module(partir-propagate)' %t.once.mlir > %t.again.mlir
// RUN: diff %t.once.mlir %t.again.mlir
// RUN: FileCheck %s < %t.twice.mlir

// Sanity check that the first run did partition (a diff of two no-ops would pass too).
// CHECK-LABEL: func.func @mlp
// CHECK-COUNT-5: partir.loop "batch"
// CHECK: partir.loop "model" [#partir.sum]
// CHECK-LABEL: func.func @moved
// CHECK: linalg.add ins(%{{.*}}, %{{.*}} : tensor<8x64xf32>, tensor<8x64xf32>)
func.func @mlp(%x: tensor<32x64xf32> {partir.name = "x"}, %w1: tensor<64x16xf32> {partir.name = "w1"}, %w2: tensor<16x8xf32> {partir.name = "w2"}) -> tensor<32x8xf32> {
  %zero = arith.constant 0.0 : f32
  %e1 = tensor.empty() : tensor<32x16xf32>
  %f1 = linalg.fill ins(%zero : f32) outs(%e1 : tensor<32x16xf32>) -> tensor<32x16xf32>
  %h = linalg.matmul ins(%x, %w1 : tensor<32x64xf32>, tensor<64x16xf32>) outs(%f1 : tensor<32x16xf32>) -> tensor<32x16xf32>
  %a = linalg.exp ins(%h : tensor<32x16xf32>) outs(%e1 : tensor<32x16xf32>) -> tensor<32x16xf32>
  %e2 = tensor.empty() : tensor<32x8xf32>
  %f2 = linalg.fill ins(%zero : f32) outs(%e2 : tensor<32x8xf32>) -> tensor<32x8xf32>
  %y = linalg.matmul ins(%a, %w2 : tensor<32x16xf32>, tensor<16x8xf32>) outs(%f2 : tensor<32x8xf32>) -> tensor<32x8xf32>
  return %y : tensor<32x8xf32>
}

// x tiled on dim 0, y on dim 1, both along batch: the add takes x's rows and y is moved to
// rows (an all_to_all once lowered), once.
func.func @moved(%x: tensor<32x64xf32> {partir.name = "x"}, %y: tensor<32x64xf32> {partir.name = "y"}) -> tensor<32x64xf32> {
  %e = tensor.empty() : tensor<32x64xf32>
  %s = linalg.add ins(%x, %y : tensor<32x64xf32>, tensor<32x64xf32>) outs(%e : tensor<32x64xf32>) -> tensor<32x64xf32>
  return %s : tensor<32x64xf32>
}
