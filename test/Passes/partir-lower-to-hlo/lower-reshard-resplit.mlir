// Resharding a value whose dim is re-split along another axis (found by partir-fuzz).
// RUN: mlir-opt %plugin -p 'builtin.module(partir-lower-to-hlo)' %s | FileCheck %s --implicit-check-not=partir.loop --implicit-check-not=partir.slice

partir.mesh @mesh ["model"=2, "batch"=2]
// A dim re-split along another axis is gathered whole first (fuzz: its local rows, 3 of 6, do
// not split 2 ways): from [{"model"}, {"batch"}] to [{"batch"}, {}], gather the rows over
// model, then move batch from the columns to the rows with one all_to_all.
// CHECK-LABEL: func.func @gather_before_resplit(
// CHECK-SAME:      %[[M:.*]]: tensor<3x4xf32> {partir_hlo.sharding = #partir_hlo.sharding<[{"model"}, {"batch"}]>}
// CHECK:         %[[G:.*]] = partir_hlo.all_gather %[[M]] dim 0 axes ["model"] : tensor<3x4xf32> -> tensor<6x4xf32>
// CHECK-NEXT:    %[[T:.*]] = partir_hlo.all_to_all %[[G]] split 0 concat 1 axes ["batch"] : tensor<6x4xf32> -> tensor<3x8xf32>
// CHECK-NEXT:    math.exp %[[T]] : tensor<3x8xf32>
func.func @gather_before_resplit(%m: tensor<6x8xf32>) -> tensor<6x8xf32> {
  %0 = partir.loop "batch" [#partir.tile<1>] (%r: !partir.range<2>) {
    %s = partir.slice 1 %m[%r] : tensor<6x8xf32> -> tensor<6x4xf32>
    partir.yield %s : tensor<6x4xf32>
  } : tensor<6x8xf32>
  %1 = partir.loop "model" [#partir.tile<0>] (%r: !partir.range<2>) {
    %s = partir.slice 0 %0[%r] : tensor<6x8xf32> -> tensor<3x8xf32>
    partir.yield %s : tensor<3x8xf32>
  } : tensor<6x8xf32>
  %2 = partir.loop "batch" [#partir.tile<0>] (%r: !partir.range<2>) {
    %s = partir.slice 0 %1[%r] : tensor<6x8xf32> -> tensor<3x8xf32>
    %e = math.exp %s : tensor<3x8xf32>
    partir.yield %e : tensor<3x8xf32>
  } : tensor<6x8xf32>
  return %2 : tensor<6x8xf32>
}
