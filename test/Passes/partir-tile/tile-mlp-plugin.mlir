// The issue's acceptance run: stock mlir-opt with the plugin declares the mesh and tiles the
// MLP input `x` along "batch"; the output parses again.
// RUN: mlir-opt %plugin -p 'builtin.module(partir-mesh{axes=batch=4,model=2}, partir-tile{value=x dim=0 axis=batch})' %S/../../Inputs/mlp.mlir > %t.mlir
// RUN: FileCheck %s < %t.mlir
// RUN: mlir-opt %plugin %t.mlir | FileCheck %s

// CHECK: partir.mesh @mesh ["batch"=4, "model"=2]
// CHECK-LABEL: func.func @main
// CHECK-SAME: (%[[X:.*]]: tensor<32x64xf32> {partir.name = "x"}
// CHECK: %[[T:.*]] = partir.loop "batch" [#partir.tile<0>] (%[[R:.*]]: !partir.range<4>) {
// CHECK-NEXT:   %[[S:.*]] = partir.slice 0 %[[X]][%[[R]]] : tensor<32x64xf32> -> tensor<8x64xf32>
// CHECK-NEXT:   partir.yield %[[S]] : tensor<8x64xf32>
// CHECK-NEXT: } : tensor<32x64xf32>
// CHECK: linalg.matmul ins(%[[T]], %{{.*}} : tensor<32x64xf32>, tensor<64x256xf32>)
