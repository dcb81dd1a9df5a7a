// Without the axis option, partir-propagate propagates along every mesh axis (in mesh
// order): the same result as propagating batch then model explicitly.
// RUN: mlir-opt %plugin -p 'builtin.module(partir-mesh{axes=batch=4,model=2}, partir-tile{value=x dim=0 axis=batch}, partir-tile{value=w1 dim=1 axis=model}, partir-propagate)' %s | FileCheck %s
// RUN: mlir-opt %plugin -p 'builtin.module(partir-mesh{axes=batch=4,model=2}, partir-tile{value=x dim=0 axis=batch}, partir-tile{value=w1 dim=1 axis=model}, partir-propagate)' %s > %t.all.mlir
// RUN: mlir-opt %plugin -p 'builtin.module(partir-mesh{axes=batch=4,model=2}, partir-tile{value=x dim=0 axis=batch}, partir-tile{value=w1 dim=1 axis=model}, partir-propagate{axis=batch}, partir-propagate{axis=model})' %s > %t.each.mlir
// RUN: diff %t.all.mlir %t.each.mlir
// Propagating only batch leaves w1's tile view along model untouched.
// RUN: mlir-opt %plugin -p 'builtin.module(partir-mesh{axes=batch=4,model=2}, partir-tile{value=x dim=0 axis=batch}, partir-tile{value=w1 dim=1 axis=model}, partir-propagate{axis=batch})' %s | FileCheck %s --check-prefix=BATCH

// CHECK-LABEL: func.func @mlp
// CHECK: partir.loop "batch" [#partir.tile<0>]
// CHECK: partir.loop "model" [#partir.tile<1>]
// CHECK: linalg.matmul ins(%{{.*}}, %{{.*}} : tensor<8x64xf32>, tensor<64x8xf32>)
// CHECK: partir.loop "model" [#partir.sum]
// CHECK: linalg.matmul ins(%{{.*}}, %{{.*}} : tensor<8x8xf32>, tensor<8x8xf32>)

// BATCH-LABEL: func.func @mlp
// BATCH: %[[V:.*]] = partir.loop "model" [#partir.tile<1>] (%[[R:.*]]: !partir.range<2>) {
// BATCH-NEXT: partir.slice 1 %arg1[%[[R]]] : tensor<64x16xf32> -> tensor<64x8xf32>
// BATCH-NOT: partir.loop "model"
// BATCH: linalg.matmul ins(%{{.*}}, %[[V]] : tensor<8x64xf32>, tensor<64x16xf32>)
// BATCH-NOT: partir.loop "model"
// BATCH: linalg.matmul ins(%{{.*}}, %arg2 : tensor<8x16xf32>, tensor<16x8xf32>)
// BATCH-NOT: partir.loop "model"
// BATCH: return
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
