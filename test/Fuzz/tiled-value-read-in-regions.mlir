// Fuzz class 1: a tiled value read inside a nested region (an scf.for body, a tensor.extract in
// a linalg.generic body) made lowering erase the value while the region still used it (a
// use-after-free: segfaults, heap corruption, hangs). Lowering now gathers it whole in front of
// the op and points the region at that.
// RUN: mlir-opt %plugin -p 'builtin.module(partir-mesh{axes=a=2}, partir-tile{value=x dim=0 axis=a}, partir-propagate, partir-lower-to-hlo)' %s | FileCheck %s

// CHECK-LABEL: func.func @main(
// CHECK-SAME:      %[[X:.*]]: tensor<4x8xf32> {partir.name = "x", partir_hlo.sharding = #partir_hlo.sharding<[{"a"}, {}]>}
// CHECK:         %[[E:.*]] = linalg.generic {{.*}} ins(%[[X]] : tensor<4x8xf32>)
// CHECK:         %[[W:.*]] = partir_hlo.all_gather %[[E]] dim 0 axes ["a"] : tensor<4x8xf32> -> tensor<8x8xf32>
// CHECK:         linalg.generic
// CHECK:           tensor.extract %[[W]]
// CHECK:         scf.for
// CHECK:           ins(%{{.*}}, %[[W]] : tensor<8x8xf32>, tensor<8x8xf32>)
func.func @main(%x: tensor<8x8xf32> {partir.name = "x"}, %y: tensor<8x8xf32>) -> (tensor<8x8xf32>, tensor<8x8xf32>) {
  %e0 = tensor.empty() : tensor<8x8xf32>
  %t = linalg.generic {indexing_maps = [affine_map<(i, j) -> (i, j)>, affine_map<(i, j) -> (i, j)>], iterator_types = ["parallel", "parallel"]} ins(%x : tensor<8x8xf32>) outs(%e0 : tensor<8x8xf32>) {
  ^bb0(%in: f32, %out: f32):
    %r = math.tanh %in : f32
    linalg.yield %r : f32
  } -> tensor<8x8xf32>
  %e1 = tensor.empty() : tensor<8x8xf32>
  %g = linalg.generic {indexing_maps = [affine_map<(i, j) -> (i, j)>, affine_map<(i, j) -> (i, j)>], iterator_types = ["parallel", "parallel"]} ins(%y : tensor<8x8xf32>) outs(%e1 : tensor<8x8xf32>) {
  ^bb0(%in: f32, %out: f32):
    %c0 = arith.constant 0 : index
    %v = tensor.extract %t[%c0, %c0] : tensor<8x8xf32>
    %r = arith.addf %in, %v : f32
    linalg.yield %r : f32
  } -> tensor<8x8xf32>
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c2 = arith.constant 2 : index
  %s = scf.for %i = %c0 to %c2 step %c1 iter_args(%acc = %y) -> (tensor<8x8xf32>) {
    %e = tensor.empty() : tensor<8x8xf32>
    %n = linalg.generic {indexing_maps = [affine_map<(i, j) -> (i, j)>, affine_map<(i, j) -> (i, j)>, affine_map<(i, j) -> (i, j)>], iterator_types = ["parallel", "parallel"]} ins(%acc, %t : tensor<8x8xf32>, tensor<8x8xf32>) outs(%e : tensor<8x8xf32>) {
    ^bb0(%a: f32, %b: f32, %out: f32):
      %r = arith.addf %a, %b : f32
      linalg.yield %r : f32
    } -> tensor<8x8xf32>
    scf.yield %n : tensor<8x8xf32>
  }
  return %g, %s : tensor<8x8xf32>, tensor<8x8xf32>
}
