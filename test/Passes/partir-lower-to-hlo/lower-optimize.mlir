// Collective peepholes after lowering: all_reduce then all_slice over the same axes is one
// reduce_scatter (over more axes, a reduce_scatter then an all_reduce over the others); all_slice of an all_gather over the same axes and dim is the original value.
// RUN: mlir-opt %plugin -p 'builtin.module(partir-lower-to-hlo)' %s | FileCheck %s --implicit-check-not=partir.loop --implicit-check-not=partir.slice

partir.mesh @mesh ["batch"=4, "model"=2]

// A gradient-like partial sum (contracted dim split along batch) consumed split along batch
// on dim 0, as ZeRO's optimizer update does: reduce_scatter, no all_reduce, no all_slice.
// CHECK-LABEL: func.func @reduce_scatter(
// CHECK:         %[[M:.*]] = linalg.matmul ins(%{{.*}}, %{{.*}} : tensor<8x2xf32>, tensor<2x4xf32>)
// CHECK-NEXT:    %[[R:.*]] = partir_hlo.reduce_scatter sum %[[M]] dim 0 axes ["batch"] : tensor<8x4xf32> -> tensor<2x4xf32>
// CHECK-NEXT:    %[[T:.*]] = math.tanh %[[R]] : tensor<2x4xf32>
// CHECK-NEXT:    return %[[T]]
// CHECK-NOT:     partir_hlo.all_reduce
// CHECK-NOT:     partir_hlo.all_slice
func.func @reduce_scatter(%a: tensor<8x8xf32>, %b: tensor<8x4xf32>, %zero: tensor<8x4xf32>) -> tensor<8x4xf32> {
  %g = partir.loop "batch" [#partir.sum] (%r: !partir.range<4>) {
    %as = partir.slice 1 %a[%r] : tensor<8x8xf32> -> tensor<8x2xf32>
    %bs = partir.slice 0 %b[%r] : tensor<8x4xf32> -> tensor<2x4xf32>
    %m = linalg.matmul ins(%as, %bs : tensor<8x2xf32>, tensor<2x4xf32>) outs(%zero : tensor<8x4xf32>) -> tensor<8x4xf32>
    partir.yield %m : tensor<8x4xf32>
  } : tensor<8x4xf32>
  %u = partir.loop "batch" [#partir.tile<0>] (%r: !partir.range<4>) {
    %gs = partir.slice 0 %g[%r] : tensor<8x4xf32> -> tensor<2x4xf32>
    %t = math.tanh %gs : tensor<2x4xf32>
    partir.yield %t : tensor<2x4xf32>
  } : tensor<8x4xf32>
  return %u : tensor<8x4xf32>
}

// The same sum over batch and model (the contracted dim split along both, as a layer norm's
// scale gradient is under BP and sequence parallelism) consumed split along batch only: a
// reduce_scatter over batch, then the sum over model of the scattered chunk (XLA's
// AllReduceSplitter), not one all_reduce over both of the whole value.
// CHECK-LABEL: func.func @reduce_scatter_then_the_other_axis(
// CHECK:         %[[M:.*]] = linalg.matmul ins(%{{.*}}, %{{.*}} : tensor<8x1xf32>, tensor<1x4xf32>)
// CHECK-NEXT:    %[[R:.*]] = partir_hlo.reduce_scatter sum %[[M]] dim 0 axes ["batch"] : tensor<8x4xf32> -> tensor<2x4xf32>
// CHECK-NEXT:    %[[A:.*]] = partir_hlo.all_reduce sum %[[R]] axes ["model"] : tensor<2x4xf32>
// CHECK-NEXT:    %[[T:.*]] = math.tanh %[[A]] : tensor<2x4xf32>
// CHECK-NEXT:    return %[[T]]
// CHECK-NOT:     partir_hlo.all_slice
func.func @reduce_scatter_then_the_other_axis(%a: tensor<8x8xf32>, %b: tensor<8x4xf32>, %zero: tensor<8x4xf32>) -> tensor<8x4xf32> {
  %g = partir.loop "batch" [#partir.sum] (%r: !partir.range<4>) {
    %as = partir.slice 1 %a[%r] : tensor<8x8xf32> -> tensor<8x2xf32>
    %bs = partir.slice 0 %b[%r] : tensor<8x4xf32> -> tensor<2x4xf32>
    %h = partir.loop "model" [#partir.sum] (%q: !partir.range<2>) {
      %aq = partir.slice 1 %as[%q] : tensor<8x2xf32> -> tensor<8x1xf32>
      %bq = partir.slice 0 %bs[%q] : tensor<2x4xf32> -> tensor<1x4xf32>
      %m = linalg.matmul ins(%aq, %bq : tensor<8x1xf32>, tensor<1x4xf32>) outs(%zero : tensor<8x4xf32>) -> tensor<8x4xf32>
      partir.yield %m : tensor<8x4xf32>
    } : tensor<8x4xf32>
    partir.yield %h : tensor<8x4xf32>
  } : tensor<8x4xf32>
  %u = partir.loop "batch" [#partir.tile<0>] (%r: !partir.range<4>) {
    %gs = partir.slice 0 %g[%r] : tensor<8x4xf32> -> tensor<2x4xf32>
    %t = math.tanh %gs : tensor<2x4xf32>
    partir.yield %t : tensor<2x4xf32>
  } : tensor<8x4xf32>
  return %u : tensor<8x4xf32>
}

// A sharded value pinned whole (partir.replicate: all_gather), then sliced again the same way
// by a loop (all_slice): the slice of the gather is the local value itself. The gather stays
// only for the whole use.
// CHECK-LABEL: func.func @slice_of_gather(
// CHECK-SAME:      %[[X:.*]]: tensor<2x6xf32> {partir_hlo.sharding = #partir_hlo.sharding<[{"batch"}, {}]>})
// CHECK-NEXT:    %[[E:.*]] = math.exp %[[X]] : tensor<2x6xf32>
// CHECK-NEXT:    %[[G:.*]] = partir_hlo.all_gather %[[E]] dim 0 axes ["batch"] : tensor<2x6xf32> -> tensor<8x6xf32>
// CHECK-NEXT:    %[[T:.*]] = math.tanh %[[E]] : tensor<2x6xf32>
// CHECK-NEXT:    %[[W:.*]] = math.sqrt %[[G]] : tensor<8x6xf32>
// CHECK-NEXT:    return %[[T]], %[[W]]
func.func @slice_of_gather(%x: tensor<8x6xf32>) -> (tensor<8x6xf32>, tensor<8x6xf32>) {
  %y = partir.loop "batch" [#partir.tile<0>] (%r: !partir.range<4>) {
    %xs = partir.slice 0 %x[%r] : tensor<8x6xf32> -> tensor<2x6xf32>
    %e = math.exp %xs : tensor<2x6xf32>
    partir.yield %e : tensor<2x6xf32>
  } : tensor<8x6xf32>
  %p = partir.replicate "batch" %y : tensor<8x6xf32>
  %z = partir.loop "batch" [#partir.tile<0>] (%r: !partir.range<4>) {
    %ps = partir.slice 0 %p[%r] : tensor<8x6xf32> -> tensor<2x6xf32>
    %t = math.tanh %ps : tensor<2x6xf32>
    partir.yield %t : tensor<2x6xf32>
  } : tensor<8x6xf32>
  %w = math.sqrt %p : tensor<8x6xf32>
  return %z, %w : tensor<8x6xf32>, tensor<8x6xf32>
}

// Same without the whole use: the gather has no user left and disappears too.
// CHECK-LABEL: func.func @slice_of_gather_only(
// CHECK-SAME:      %[[X:.*]]: tensor<2x6xf32>
// CHECK-NEXT:    %[[E:.*]] = math.exp %[[X]] : tensor<2x6xf32>
// CHECK-NEXT:    %[[T:.*]] = math.tanh %[[E]] : tensor<2x6xf32>
// CHECK-NEXT:    return %[[T]]
func.func @slice_of_gather_only(%x: tensor<8x6xf32>) -> tensor<8x6xf32> {
  %y = partir.loop "batch" [#partir.tile<0>] (%r: !partir.range<4>) {
    %xs = partir.slice 0 %x[%r] : tensor<8x6xf32> -> tensor<2x6xf32>
    %e = math.exp %xs : tensor<2x6xf32>
    partir.yield %e : tensor<2x6xf32>
  } : tensor<8x6xf32>
  %p = partir.replicate "batch" %y : tensor<8x6xf32>
  %z = partir.loop "batch" [#partir.tile<0>] (%r: !partir.range<4>) {
    %ps = partir.slice 0 %p[%r] : tensor<8x6xf32> -> tensor<2x6xf32>
    %t = math.tanh %ps : tensor<2x6xf32>
    partir.yield %t : tensor<2x6xf32>
  } : tensor<8x6xf32>
  return %z : tensor<8x6xf32>
}
