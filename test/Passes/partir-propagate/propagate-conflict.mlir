// Operands tiled incompatibly on one axis: propagation stops at the op with a remark naming
// the op, the axis and the reason, and leaves the op whole (reading both tile views).
// RUN: mlir-opt %plugin -verify-diagnostics -p 'builtin.module(partir-mesh{axes=batch=4,model=2}, partir-tile{value=a dim=0 axis=batch}, partir-tile{value=b dim=1 axis=batch}, partir-propagate{axis=batch})' %s | FileCheck %s

// CHECK-LABEL: func.func @rows_and_columns
// CHECK-DAG: %[[B:.*]] = partir.loop "batch" [#partir.tile<1>]
// CHECK-DAG: %[[A:.*]] = partir.loop "batch" [#partir.tile<0>]
// CHECK: %[[S:.*]] = linalg.add ins(%[[A]], %[[B]] : tensor<16x16xf32>, tensor<16x16xf32>) outs(%{{.*}} : tensor<16x16xf32>) -> tensor<16x16xf32>
// CHECK-NEXT: return %[[S]]
func.func @rows_and_columns(%a: tensor<16x16xf32> {partir.name = "a"}, %b: tensor<16x16xf32> {partir.name = "b"}) -> tensor<16x16xf32> {
  %e = tensor.empty() : tensor<16x16xf32>
  // expected-remark @below {{partir-propagate: stopped at 'linalg.add' on axis 'batch': operand 1 is tiled on dim 1, but this partitioning needs it on dim 0}}
  %s = linalg.add ins(%a, %b : tensor<16x16xf32>, tensor<16x16xf32>) outs(%e : tensor<16x16xf32>) -> tensor<16x16xf32>
  return %s : tensor<16x16xf32>
}
