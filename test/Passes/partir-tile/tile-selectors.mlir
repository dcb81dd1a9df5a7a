// Selectors: `*` globs over partir.name, argN for unnamed arguments, and values named by a
// partir.name attribute on their defining op. Every match is tiled; others are left alone.
// RUN: mlir-opt %plugin -p 'builtin.module(partir-mesh{axes=model=2}, partir-tile{value=*/w* dim=1 axis=model})' %s | FileCheck %s --check-prefix=GLOB
// RUN: mlir-opt %plugin -p 'builtin.module(partir-mesh{axes=batch=4}, partir-tile{value=arg0 dim=0 axis=batch})' %s | FileCheck %s --check-prefix=ARGN
// RUN: mlir-opt %plugin -p 'builtin.module(partir-mesh{axes=batch=4}, partir-tile{value=h dim=0 axis=batch})' %s | FileCheck %s --check-prefix=OPNAME

// GLOB-LABEL: func.func @main
// GLOB-SAME: (%[[A:.*]]: tensor<32x64xf32>, %[[W1:.*]]: tensor<64x256xf32> {partir.name = "params/w1"}, %[[W2:.*]]: tensor<256x16xf32> {partir.name = "params/w2"})
// GLOB-DAG: partir.slice 1 %[[W1]][%{{.*}}] : tensor<64x256xf32> -> tensor<64x128xf32>
// GLOB-DAG: partir.slice 1 %[[W2]][%{{.*}}] : tensor<256x16xf32> -> tensor<256x8xf32>
// GLOB-NOT: partir.slice {{.*}} %[[A]]

// ARGN: partir.slice 0 %arg0[%{{.*}}] : tensor<32x64xf32> -> tensor<8x64xf32>
// ARGN-NOT: partir.slice

// OPNAME: %[[H:.*]] = linalg.matmul {partir.name = "h"}
// OPNAME-NEXT: %[[T:.*]] = partir.loop "batch" [#partir.tile<0>]
// OPNAME-NEXT: partir.slice 0 %[[H]][%{{.*}}] : tensor<32x256xf32> -> tensor<8x256xf32>
// OPNAME: linalg.matmul ins(%[[T]],
func.func @main(%a: tensor<32x64xf32>, %w1: tensor<64x256xf32> {partir.name = "params/w1"}, %w2: tensor<256x16xf32> {partir.name = "params/w2"}) -> tensor<32x16xf32> {
  %zero = arith.constant 0.0 : f32
  %e1 = tensor.empty() : tensor<32x256xf32>
  %f1 = linalg.fill ins(%zero : f32) outs(%e1 : tensor<32x256xf32>) -> tensor<32x256xf32>
  %h = linalg.matmul {partir.name = "h"} ins(%a, %w1 : tensor<32x64xf32>, tensor<64x256xf32>) outs(%f1 : tensor<32x256xf32>) -> tensor<32x256xf32>
  %e2 = tensor.empty() : tensor<32x16xf32>
  %f2 = linalg.fill ins(%zero : f32) outs(%e2 : tensor<32x16xf32>) -> tensor<32x16xf32>
  %y = linalg.matmul ins(%h, %w2 : tensor<32x256xf32>, tensor<256x16xf32>) outs(%f2 : tensor<32x16xf32>) -> tensor<32x16xf32>
  return %y : tensor<32x16xf32>
}
