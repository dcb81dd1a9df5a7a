// What upstream fusion leaves (linalg-generalize-named-ops, linalg-fuse-elementwise-ops,
// canonicalize) partitions like the unfused program: a generalised fill of 0 is recognised as
// the identity, and a bias folded into a contraction's init is added once, after the sum.
// RUN: mlir-opt %plugin -p 'builtin.module(partir-mesh{axes=batch=4}, partir-tile{value=x dim=0 axis=batch}, partir-tile{value=d dim=0 axis=batch}, partir-propagate)' %s | FileCheck %s
// RUN: mlir-opt %plugin -p 'builtin.module(partir-mesh{axes=batch=4}, partir-tile{value=x dim=0 axis=batch}, partir-tile{value=d dim=0 axis=batch}, partir-propagate, partir-lower-to-hlo, cse)' %s | FileCheck %s --check-prefix=HLO

#x = affine_map<(b, i, j) -> (b, i)>
#d = affine_map<(b, i, j) -> (b, j)>
#ij = affine_map<(b, i, j) -> (i, j)>
#scalar = affine_map<(i, j) -> ()>
#full = affine_map<(i, j) -> (i, j)>
#col = affine_map<(i, j) -> (j)>

// The weight gradient x^T d contracts the batch dim b into a generalised fill of 0 (a generic
// with no inputs yielding a constant): an ordinary partial sum.
// CHECK-LABEL: func.func @generalized_fill
// CHECK: %[[Z:.*]] = linalg.generic {{.*}} outs(%{{.*}} : tensor<8x6xf32>)
// CHECK: %[[G:.*]] = partir.loop "batch" [#partir.sum]
// CHECK: outs(%[[Z]] : tensor<8x6xf32>)
// CHECK-NOT: linalg.add
// CHECK: return %[[G]]
// HLO-LABEL: func.func @generalized_fill
// HLO: partir_hlo.all_reduce sum %{{.*}} axes ["batch"] : tensor<8x6xf32>
// HLO-NEXT: return
func.func @generalized_fill(%x: tensor<16x8xf32> {partir.name = "x"}, %d: tensor<16x6xf32> {partir.name = "d"}) -> tensor<8x6xf32> {
  %zero = arith.constant 0.0 : f32
  %e = tensor.empty() : tensor<8x6xf32>
  %z = linalg.generic {indexing_maps = [#full], iterator_types = ["parallel", "parallel"]} outs(%e : tensor<8x6xf32>) {
  ^bb0(%out: f32):
    linalg.yield %zero : f32
  } -> tensor<8x6xf32>
  %g = linalg.generic {indexing_maps = [#x, #d, #ij], iterator_types = ["reduction", "parallel", "parallel"]} ins(%x, %d : tensor<16x8xf32>, tensor<16x6xf32>) outs(%z : tensor<8x6xf32>) {
  ^bb0(%a: f32, %b: f32, %acc: f32):
    %m = arith.mulf %a, %b : f32
    %s = arith.addf %acc, %m : f32
    linalg.yield %s : f32
  } -> tensor<8x6xf32>
  return %g : tensor<8x6xf32>
}

// A bias broadcast into the init of the contraction (fusion folded the bias add into it):
// every iteration starts from 0, and the bias is added to the all_reduced sum once.
// CHECK-LABEL: func.func @bias_in_init
// CHECK: %[[B:.*]] = linalg.generic {{.*}} ins(%arg2 : tensor<6xf32>) outs(%{{.*}} : tensor<8x6xf32>)
// CHECK: %[[ZERO:.*]] = arith.constant 0.000000e+00 : f32
// CHECK: %[[F:.*]] = linalg.fill ins(%[[ZERO]] : f32) outs(%{{.*}} : tensor<8x6xf32>)
// CHECK: %[[P:.*]] = partir.loop "batch" [#partir.sum]
// CHECK: outs(%[[F]] : tensor<8x6xf32>)
// CHECK: %[[S:.*]] = linalg.add ins(%[[B]], %[[P]] : tensor<8x6xf32>, tensor<8x6xf32>)
// CHECK: return %[[S]]
// HLO-LABEL: func.func @bias_in_init
// HLO: %[[PARTIAL:.*]] = linalg.generic {{.*}} ins(%arg0, %arg1 : tensor<4x8xf32>, tensor<4x6xf32>)
// HLO-NEXT: ^bb0
// HLO: %[[SUM:.*]] = partir_hlo.all_reduce sum %[[PARTIAL]] axes ["batch"] : tensor<8x6xf32>
// HLO: linalg.add ins(%{{.*}}, %[[SUM]] : tensor<8x6xf32>, tensor<8x6xf32>)
func.func @bias_in_init(%x: tensor<16x8xf32> {partir.name = "x"}, %d: tensor<16x6xf32> {partir.name = "d"}, %bias: tensor<6xf32>) -> tensor<8x6xf32> {
  %e = tensor.empty() : tensor<8x6xf32>
  %b = linalg.generic {indexing_maps = [#col, #full], iterator_types = ["parallel", "parallel"]} ins(%bias : tensor<6xf32>) outs(%e : tensor<8x6xf32>) {
  ^bb0(%in: f32, %out: f32):
    linalg.yield %in : f32
  } -> tensor<8x6xf32>
  %g = linalg.generic {indexing_maps = [#x, #d, #ij], iterator_types = ["reduction", "parallel", "parallel"]} ins(%x, %d : tensor<16x8xf32>, tensor<16x6xf32>) outs(%b : tensor<8x6xf32>) {
  ^bb0(%a: f32, %c: f32, %acc: f32):
    %m = arith.mulf %a, %c : f32
    %s = arith.addf %acc, %m : f32
    linalg.yield %s : f32
  } -> tensor<8x6xf32>
  return %g : tensor<8x6xf32>
}
