// Operands tiled on different dims along one axis: the op takes one partitioning (the one
// that moves the fewest bytes; a tie, the first operand's) and the other operand is sliced
// from its tile on the other dim, which lowers to one all_to_all (GSPMD reshards so too).
// Before, propagation stopped here and the op read both operands gathered.
// RUN: mlir-opt %plugin -p 'builtin.module(partir-mesh{axes=batch=4,model=2}, partir-tile{value=a dim=0 axis=batch}, partir-tile{value=b dim=1 axis=batch}, partir-propagate{axis=batch})' %s | FileCheck %s
// RUN: mlir-opt %plugin -p 'builtin.module(partir-mesh{axes=batch=4,model=2}, partir-tile{value=a dim=0 axis=batch}, partir-tile{value=b dim=1 axis=batch}, partir-propagate{axis=batch}, partir-lower-to-hlo)' %s | FileCheck %s --check-prefix=HLO

// CHECK-LABEL: func.func @rows_and_columns
// CHECK: %[[B:.*]] = partir.loop "batch" [#partir.tile<1>]
// CHECK: partir.loop "batch" [#partir.tile<0>] (%[[I:.*]]: !partir.range<4>)
// CHECK-DAG: partir.slice 0 %arg0[%[[I]]] : tensor<16x16xf32> -> tensor<4x16xf32>
// CHECK-DAG: %[[BROWS:.*]] = partir.slice 0 %[[B]][%[[I]]] : tensor<16x16xf32> -> tensor<4x16xf32>
// CHECK: linalg.add ins(%{{.*}}, %[[BROWS]] : tensor<4x16xf32>, tensor<4x16xf32>)

// HLO-LABEL: func.func @rows_and_columns
// HLO: partir_hlo.all_to_all %{{.*}} split 0 concat 1 axes ["batch"] : tensor<16x4xf32> -> tensor<4x16xf32>
// HLO-NOT: all_gather
// HLO: linalg.add ins(%{{.*}}, %{{.*}} : tensor<4x16xf32>, tensor<4x16xf32>)
func.func @rows_and_columns(%a: tensor<16x16xf32> {partir.name = "a"}, %b: tensor<16x16xf32> {partir.name = "b"}) -> tensor<16x16xf32> {
  %e = tensor.empty() : tensor<16x16xf32>
  %s = linalg.add ins(%a, %b : tensor<16x16xf32>, tensor<16x16xf32>) outs(%e : tensor<16x16xf32>) -> tensor<16x16xf32>
  return %s : tensor<16x16xf32>
}
