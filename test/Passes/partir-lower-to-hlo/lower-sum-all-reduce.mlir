// A #sum loop result is an all_reduce over the loop's axis, with the loop's reduction kind;
// nested #sum loops over two axes are one all_reduce over both (outer axis first).
// RUN: mlir-opt %plugin -p 'builtin.module(partir-lower-to-hlo)' %s | FileCheck %s --implicit-check-not=partir.loop --implicit-check-not=partir.slice

partir.mesh @mesh ["batch"=4, "model"=2]

// The contracted dim is split: each device multiplies its 4x2 by 2x6 chunk; partial sums (%z
// is the zero accumulator, as a fill would give).
// CHECK-LABEL: func.func @sum(
// CHECK-SAME:      %[[A:.*]]: tensor<4x2xf32> {partir_hlo.sharding = #partir_hlo.sharding<[{}, {"batch"}]>},
// CHECK-SAME:      %[[B:.*]]: tensor<2x6xf32> {partir_hlo.sharding = #partir_hlo.sharding<[{"batch"}, {}]>},
// CHECK-SAME:      %[[Z:.*]]: tensor<4x6xf32> {partir_hlo.sharding = #partir_hlo.sharding<[{}, {}]>})
// CHECK-SAME:    -> (tensor<4x6xf32> {partir_hlo.sharding = #partir_hlo.sharding<[{}, {}]>})
// CHECK-NEXT:    %[[M:.*]] = linalg.matmul ins(%[[A]], %[[B]] : tensor<4x2xf32>, tensor<2x6xf32>) outs(%[[Z]] : tensor<4x6xf32>) -> tensor<4x6xf32>
// CHECK-NEXT:    %[[R:.*]] = partir_hlo.all_reduce sum %[[M]] axes ["batch"] : tensor<4x6xf32>
// CHECK-NEXT:    return %[[R]]
func.func @sum(%a: tensor<4x8xf32>, %b: tensor<8x6xf32>, %z: tensor<4x6xf32>) -> tensor<4x6xf32> {
  %y = partir.loop "batch" [#partir.sum] (%r: !partir.range<4>) {
    %as = partir.slice 1 %a[%r] : tensor<4x8xf32> -> tensor<4x2xf32>
    %bs = partir.slice 0 %b[%r] : tensor<8x6xf32> -> tensor<2x6xf32>
    %m = linalg.matmul ins(%as, %bs : tensor<4x2xf32>, tensor<2x6xf32>) outs(%z : tensor<4x6xf32>) -> tensor<4x6xf32>
    partir.yield %m : tensor<4x6xf32>
  } : tensor<4x6xf32>
  return %y : tensor<4x6xf32>
}

// A row max over a split dim is an all_reduce max.
// CHECK-LABEL: func.func @max(
// CHECK-SAME:      %[[X:.*]]: tensor<4x4xf32> {partir_hlo.sharding = #partir_hlo.sharding<[{}, {"model"}]>}
// CHECK:         %[[L:.*]] = linalg.reduce ins(%[[X]] : tensor<4x4xf32>)
// CHECK:         %[[R:.*]] = partir_hlo.all_reduce max %[[L]] axes ["model"] : tensor<4xf32>
// CHECK-NEXT:    return %[[R]]
func.func @max(%x: tensor<4x8xf32>, %init: tensor<4xf32>) -> tensor<4xf32> {
  %y = partir.loop "model" [#partir.sum<max>] (%r: !partir.range<2>) {
    %xs = partir.slice 1 %x[%r] : tensor<4x8xf32> -> tensor<4x4xf32>
    %m = linalg.reduce ins(%xs : tensor<4x4xf32>) outs(%init : tensor<4xf32>) dimensions = [1]
      (%in: f32, %acc: f32) {
        %v = arith.maximumf %in, %acc : f32
        linalg.yield %v : f32
      }
    partir.yield %m : tensor<4xf32>
  } : tensor<4xf32>
  return %y : tensor<4xf32>
}

// Contracted dim split over both axes (batch major): one all_reduce over ["batch", "model"].
// CHECK-LABEL: func.func @sum_two_axes(
// CHECK-SAME:      %[[A:.*]]: tensor<4x2xf32> {partir_hlo.sharding = #partir_hlo.sharding<[{}, {"batch", "model"}]>},
// CHECK-SAME:      %[[B:.*]]: tensor<2x6xf32> {partir_hlo.sharding = #partir_hlo.sharding<[{"batch", "model"}, {}]>},
// CHECK:         %[[M:.*]] = linalg.matmul ins(%[[A]], %[[B]] : tensor<4x2xf32>, tensor<2x6xf32>)
// CHECK-NEXT:    %[[R:.*]] = partir_hlo.all_reduce sum %[[M]] axes ["batch", "model"] : tensor<4x6xf32>
// CHECK-NEXT:    return %[[R]]
func.func @sum_two_axes(%a: tensor<4x16xf32>, %b: tensor<16x6xf32>, %z: tensor<4x6xf32>) -> tensor<4x6xf32> {
  %y = partir.loop "batch" [#partir.sum] (%r: !partir.range<4>) {
    %as = partir.slice 1 %a[%r] : tensor<4x16xf32> -> tensor<4x4xf32>
    %bs = partir.slice 0 %b[%r] : tensor<16x6xf32> -> tensor<4x6xf32>
    %i = partir.loop "model" [#partir.sum] (%q: !partir.range<2>) {
      %ass = partir.slice 1 %as[%q] : tensor<4x4xf32> -> tensor<4x2xf32>
      %bss = partir.slice 0 %bs[%q] : tensor<4x6xf32> -> tensor<2x6xf32>
      %m = linalg.matmul ins(%ass, %bss : tensor<4x2xf32>, tensor<2x6xf32>) outs(%z : tensor<4x6xf32>) -> tensor<4x6xf32>
      partir.yield %m : tensor<4x6xf32>
    } : tensor<4x6xf32>
    partir.yield %i : tensor<4x6xf32>
  } : tensor<4x6xf32>
  return %y : tensor<4x6xf32>
}
