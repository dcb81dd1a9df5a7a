// Fuzz class 2: tensor.concat with an operand tiled on dim 0 along one axis, then its result
// on the concat dim along another, freed the concat while lowering still used it. Now the
// concat runs on batch chunks and its result is sliced locally along model.
// RUN: mlir-opt %plugin -p 'builtin.module(partir-mesh{axes=batch=4,model=2}, partir-tile{value=a dim=0 axis=batch}, partir-propagate{axis=batch}, partir-tile{value=c dim=1 axis=model}, partir-propagate{axis=model}, partir-lower-to-hlo)' %s 2>/dev/null | FileCheck %s

// CHECK-LABEL: func.func @main(
// CHECK-SAME:      %[[A:.*]]: tensor<2x4xf32> {partir.name = "a", partir_hlo.sharding = #partir_hlo.sharding<[{"batch"}, {}]>}
// CHECK-SAME:      %[[B:.*]]: tensor<2x4xf32> {partir.name = "b", partir_hlo.sharding = #partir_hlo.sharding<[{"batch"}, {}]>}
// CHECK-SAME:      -> (tensor<2x4xf32> {partir_hlo.sharding = #partir_hlo.sharding<[{"batch"}, {"model"}]>})
// CHECK:         %[[C:.*]] = tensor.concat dim(1) %[[A]], %[[B]] : (tensor<2x4xf32>, tensor<2x4xf32>) -> tensor<2x8xf32>
// CHECK:         %[[S:.*]] = partir_hlo.all_slice %[[C]] dim 1 axes ["model"] : tensor<2x8xf32> -> tensor<2x4xf32>
// CHECK:         linalg.generic {{.*}} ins(%[[S]] : tensor<2x4xf32>)
func.func @main(%a: tensor<8x4xf32> {partir.name = "a"}, %b: tensor<8x4xf32> {partir.name = "b"}) -> tensor<8x8xf32> {
  %c = tensor.concat dim(1) %a, %b : (tensor<8x4xf32>, tensor<8x4xf32>) -> tensor<8x8xf32>
  %e = tensor.empty() : tensor<8x8xf32>
  %t = linalg.generic {indexing_maps = [affine_map<(i, j) -> (i, j)>, affine_map<(i, j) -> (i, j)>], iterator_types = ["parallel", "parallel"]} ins(%c : tensor<8x8xf32>) outs(%e : tensor<8x8xf32>) attrs = {partir.name = "c"} {
  ^bb0(%in: f32, %out: f32):
    %r = math.tanh %in : f32
    linalg.yield %r : f32
  } -> tensor<8x8xf32>
  return %t : tensor<8x8xf32>
}
