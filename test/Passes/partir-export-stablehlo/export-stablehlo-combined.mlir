// A combined all_reduce stays one collective for XLA: stablehlo.all_reduce is variadic.
// RUN: mlir-opt %plugin --allow-unregistered-dialect -p 'builtin.module(partir-export-stablehlo)' %s | FileCheck %s
// RUN: mlir-opt %plugin --allow-unregistered-dialect -p 'builtin.module(partir-export-stablehlo)' %s | mlir-opt --allow-unregistered-dialect -o /dev/null

// CHECK-LABEL: func.func @main(
// CHECK-SAME:      %[[A:.*]]: tensor<8x4xf32>{{.*}}, %[[B:.*]]: tensor<f32>
// CHECK:         %[[R:.*]]:2 = "stablehlo.all_reduce"(%[[A]], %[[B]])
// CHECK:           "stablehlo.add"
// CHECK:         replica_groups = dense<{{\[\[}}0, 2, 4, 6], [1, 3, 5, 7]]> : tensor<2x4xi64>
// CHECK-SAME:    (tensor<8x4xf32>, tensor<f32>) -> (tensor<8x4xf32>, tensor<f32>)
// CHECK:         return %[[R]]#0, %[[R]]#1
// CHECK-NOT:     partir_hlo.
partir.mesh @mesh ["batch"=4, "model"=2]
func.func @main(%a: tensor<8x4xf32>, %b: tensor<f32>) -> (tensor<8x4xf32>, tensor<f32>) {
  %r:2 = partir_hlo.all_reduce sum %a, %b axes ["batch"] : tensor<8x4xf32>, tensor<f32>
  return %r#0, %r#1 : tensor<8x4xf32>, tensor<f32>
}
