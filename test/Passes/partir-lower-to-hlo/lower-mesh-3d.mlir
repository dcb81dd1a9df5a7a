// Several axes: on a 4x2 mesh a value split over both axes on one dim, and on a 2x2x2 mesh
// collectives over two of three axes (axes listed major to minor, as the sharding nests them).
// RUN: mlir-opt %plugin -p 'builtin.module(partir-lower-to-hlo)' %s --split-input-file | FileCheck %s --implicit-check-not=partir.loop --implicit-check-not=partir.slice

partir.mesh @mesh ["batch"=4, "model"=2]

// Rows split 8 ways (batch major, model minor): local 1x6; used whole: one all_gather over both.
// CHECK-LABEL: func.func @gather_two_axes(
// CHECK-SAME:      %[[X:.*]]: tensor<1x6xf32> {partir_hlo.sharding = #partir_hlo.sharding<[{"batch", "model"}, {}]>})
// CHECK-NEXT:    %[[E:.*]] = math.exp %[[X]] : tensor<1x6xf32>
// CHECK-NEXT:    %[[G:.*]] = partir_hlo.all_gather %[[E]] dim 0 axes ["batch", "model"] : tensor<1x6xf32> -> tensor<8x6xf32>
// CHECK-NEXT:    math.tanh %[[G]] : tensor<8x6xf32>
func.func @gather_two_axes(%x: tensor<8x6xf32>) -> tensor<8x6xf32> {
  %y = partir.loop "batch" [#partir.tile<0>] (%r: !partir.range<4>) {
    %xs = partir.slice 0 %x[%r] : tensor<8x6xf32> -> tensor<2x6xf32>
    %i = partir.loop "model" [#partir.tile<0>] (%q: !partir.range<2>) {
      %xss = partir.slice 0 %xs[%q] : tensor<2x6xf32> -> tensor<1x6xf32>
      %e = math.exp %xss : tensor<1x6xf32>
      partir.yield %e : tensor<1x6xf32>
    } : tensor<2x6xf32>
    partir.yield %i : tensor<2x6xf32>
  } : tensor<8x6xf32>
  %t = math.tanh %y : tensor<8x6xf32>
  return %t : tensor<8x6xf32>
}

// -----

partir.mesh @mesh ["batch"=2, "model"=2, "seq"=2]

// 2x2x2: x rows over batch, columns over seq; w rows over seq, columns over model. The matmul
// contracts the seq-split dim (all_reduce over seq), and the result, split [{batch}, {model}],
// is used whole (one all_gather per split dim).
// CHECK-LABEL: func.func @mesh_3d(
// CHECK-SAME:      %[[X:.*]]: tensor<2x2xf32> {partir_hlo.sharding = #partir_hlo.sharding<[{"batch"}, {"seq"}]>},
// CHECK-SAME:      %[[W:.*]]: tensor<2x3xf32> {partir_hlo.sharding = #partir_hlo.sharding<[{"seq"}, {"model"}]>},
// CHECK-SAME:      %[[Z:.*]]: tensor<2x3xf32> {partir_hlo.sharding = #partir_hlo.sharding<[{"batch"}, {"model"}]>})
// CHECK-NEXT:    %[[M:.*]] = linalg.matmul ins(%[[X]], %[[W]] : tensor<2x2xf32>, tensor<2x3xf32>) outs(%[[Z]] : tensor<2x3xf32>) -> tensor<2x3xf32>
// CHECK-NEXT:    %[[R:.*]] = partir_hlo.all_reduce sum %[[M]] axes ["seq"] : tensor<2x3xf32>
// CHECK-DAG:     partir_hlo.all_gather {{.*}} dim 0 axes ["batch"]
// CHECK-DAG:     partir_hlo.all_gather {{.*}} dim 1 axes ["model"]
// CHECK:         %[[T:.*]] = math.tanh %{{.*}} : tensor<4x6xf32>
// CHECK-NEXT:    return %[[T]] : tensor<4x6xf32>
func.func @mesh_3d(%x: tensor<4x4xf32>, %w: tensor<4x6xf32>, %zero: tensor<4x6xf32>) -> tensor<4x6xf32> {
  %y = partir.loop "batch" [#partir.tile<0>] (%b: !partir.range<2>) {
    %xb = partir.slice 0 %x[%b] : tensor<4x4xf32> -> tensor<2x4xf32>
    %zb = partir.slice 0 %zero[%b] : tensor<4x6xf32> -> tensor<2x6xf32>
    %ym = partir.loop "model" [#partir.tile<1>] (%m: !partir.range<2>) {
      %wm = partir.slice 1 %w[%m] : tensor<4x6xf32> -> tensor<4x3xf32>
      %zm = partir.slice 1 %zb[%m] : tensor<2x6xf32> -> tensor<2x3xf32>
      %ys = partir.loop "seq" [#partir.sum] (%s: !partir.range<2>) {
        %xs = partir.slice 1 %xb[%s] : tensor<2x4xf32> -> tensor<2x2xf32>
        %ws = partir.slice 0 %wm[%s] : tensor<4x3xf32> -> tensor<2x3xf32>
        %p = linalg.matmul ins(%xs, %ws : tensor<2x2xf32>, tensor<2x3xf32>) outs(%zm : tensor<2x3xf32>) -> tensor<2x3xf32>
        partir.yield %p : tensor<2x3xf32>
      } : tensor<2x3xf32>
      partir.yield %ys : tensor<2x3xf32>
    } : tensor<2x6xf32>
    partir.yield %ym : tensor<2x6xf32>
  } : tensor<4x6xf32>
  %t = math.tanh %y : tensor<4x6xf32>
  return %t : tensor<4x6xf32>
}

// -----

partir.mesh @mesh ["batch"=2, "model"=2, "seq"=2]

// A contraction split over model and seq (nested #sum loops): one all_reduce over both.
// CHECK-LABEL: func.func @sum_model_seq(
// CHECK-SAME:      %[[A:.*]]: tensor<2x2xf32> {partir_hlo.sharding = #partir_hlo.sharding<[{}, {"model", "seq"}]>}
// CHECK:         %[[M:.*]] = linalg.matmul
// CHECK-NEXT:    partir_hlo.all_reduce sum %[[M]] axes ["model", "seq"] : tensor<2x5xf32>
func.func @sum_model_seq(%a: tensor<2x8xf32>, %b: tensor<8x5xf32>, %zero: tensor<2x5xf32>) -> tensor<2x5xf32> {
  %y = partir.loop "model" [#partir.sum] (%m: !partir.range<2>) {
    %am = partir.slice 1 %a[%m] : tensor<2x8xf32> -> tensor<2x4xf32>
    %bm = partir.slice 0 %b[%m] : tensor<8x5xf32> -> tensor<4x5xf32>
    %i = partir.loop "seq" [#partir.sum] (%s: !partir.range<2>) {
      %as = partir.slice 1 %am[%s] : tensor<2x4xf32> -> tensor<2x2xf32>
      %bs = partir.slice 0 %bm[%s] : tensor<4x5xf32> -> tensor<2x5xf32>
      %p = linalg.matmul ins(%as, %bs : tensor<2x2xf32>, tensor<2x5xf32>) outs(%zero : tensor<2x5xf32>) -> tensor<2x5xf32>
      partir.yield %p : tensor<2x5xf32>
    } : tensor<2x5xf32>
    partir.yield %i : tensor<2x5xf32>
  } : tensor<2x5xf32>
  return %y : tensor<2x5xf32>
}
