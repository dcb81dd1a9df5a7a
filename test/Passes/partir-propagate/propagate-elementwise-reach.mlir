// reach=elementwise (a schedule's `propagate = "elementwise"`, ZeRO): a tile spreads through
// elementwise ops only. The momentum update m' = 0.9 m + g is split like m and reads g's chunk;
// the matmul that computes g and the one that reads w stay whole (w is gathered for them).
// RUN: mlir-opt %plugin -p 'builtin.module(partir-mesh{axes=batch=4}, partir-tile{value=w dim=0 axis=batch}, partir-tile{value=m dim=0 axis=batch}, partir-propagate{reach=elementwise})' %s | FileCheck %s
// RUN: mlir-opt %plugin -p 'builtin.module(partir-mesh{axes=batch=4}, partir-tile{value=w dim=0 axis=batch}, partir-tile{value=m dim=0 axis=batch}, partir-propagate{reach=elementwise}, partir-lower-to-hlo, cse)' %s | FileCheck %s --check-prefix=HLO
// RUN: not mlir-opt %plugin -p 'builtin.module(partir-mesh{axes=batch=4}, partir-propagate{reach=somewhere})' %s 2>&1 | FileCheck %s --check-prefix=BAD

#id = affine_map<(i, j) -> (i, j)>
// CHECK-LABEL: func.func @step
// The forward and the gradient matmuls are not partitioned:
// CHECK-NOT:   partir.loop "batch" [#partir.sum]
// CHECK:       linalg.matmul ins(%arg0, %{{.*}} : tensor<8x16xf32>, tensor<16x16xf32>)
// The update, split on dim 0 like m and w:
// CHECK:       partir.loop "batch" [#partir.tile<0>]
// CHECK:         arith.mulf
// HLO-LABEL: func.func @step(
// HLO-SAME:      %{{.*}}: tensor<4x16xf32> {partir.name = "w", partir_hlo.sharding = #partir_hlo.sharding<[{"batch"}, {}]>}
// HLO-SAME:      %{{.*}}: tensor<4x16xf32> {partir.name = "m", partir_hlo.sharding = #partir_hlo.sharding<[{"batch"}, {}]>}
// The parameter is gathered once for compute; the gradient is computed whole and sliced.
// HLO:         partir_hlo.all_gather %{{.*}} dim 0 axes ["batch"] : tensor<4x16xf32> -> tensor<16x16xf32>
// HLO-NOT:     partir_hlo.all_gather
// HLO:         partir_hlo.all_slice %{{.*}} dim 0 axes ["batch"] : tensor<16x16xf32> -> tensor<4x16xf32>
// BAD: partir-propagate: reach="somewhere" is not a propagation reach; use "all" (the default) or "elementwise"
func.func @step(%x: tensor<8x16xf32> {partir.name = "x"}, %w: tensor<16x16xf32> {partir.name = "w"}, %m: tensor<16x16xf32> {partir.name = "m"}) -> (tensor<16x16xf32>, tensor<8x16xf32>) {
  %zero = arith.constant 0.0 : f32
  %e = tensor.empty() : tensor<8x16xf32>
  %f = linalg.fill ins(%zero : f32) outs(%e : tensor<8x16xf32>) -> tensor<8x16xf32>
  %y = linalg.matmul ins(%x, %w : tensor<8x16xf32>, tensor<16x16xf32>) outs(%f : tensor<8x16xf32>) -> tensor<8x16xf32>
  %e2 = tensor.empty() : tensor<16x8xf32>
  %xt = linalg.transpose ins(%x : tensor<8x16xf32>) outs(%e2 : tensor<16x8xf32>) permutation = [1, 0]
  %e3 = tensor.empty() : tensor<16x16xf32>
  %f3 = linalg.fill ins(%zero : f32) outs(%e3 : tensor<16x16xf32>) -> tensor<16x16xf32>
  %g = linalg.matmul ins(%xt, %y : tensor<16x8xf32>, tensor<8x16xf32>) outs(%f3 : tensor<16x16xf32>) -> tensor<16x16xf32>
  %u = linalg.generic {indexing_maps = [#id, #id, #id], iterator_types = ["parallel", "parallel"]} ins(%m, %g : tensor<16x16xf32>, tensor<16x16xf32>) outs(%e3 : tensor<16x16xf32>) {
  ^bb0(%a: f32, %b: f32, %out: f32):
    %c = arith.constant 0.9 : f32
    %s = arith.mulf %a, %c : f32
    %r = arith.addf %s, %b : f32
    linalg.yield %r : f32
  } -> tensor<16x16xf32>
  return %u, %y : tensor<16x16xf32>, tensor<8x16xf32>
}
