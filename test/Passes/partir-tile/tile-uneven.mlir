// A tile the axis does not divide pads the dim (docs/design.md#uneven-dims): x's batch of 6 on
// 4 devices becomes 8; the argument is the caller's array with 2 rows of zeros at the end
// (partir.padded_from, partir.padding's steps), the ops the batch flows to run on 8 rows, a reduction over the rows
// reads its identity where the padding is (0 for a sum, -inf for a max), and the returned tanh
// stays padded (the caller drops the padding). Each op records the share of its work that is
// padding (partir.padding_share: 2 of 8 rows; a mask is all padding), which the simulator counts.
// RUN: mlir-opt %plugin --allow-unregistered-dialect -p 'builtin.module(partir-mesh{axes=batch=4}, partir-tile{value=x dim=0 axis=batch})' %s 2>&1 | FileCheck %s

// CHECK: remark: partir-tile: dim 0 of 'x' (size 6) padded to 8 to split it 4 ways along 'batch': 2 per device, 2 of padding (+33.3%) on 3 values
// CHECK: func.func @main(%arg0: tensor<8x8xf32> {partir.name = "x", partir.padded_from = array<i64: 6, 8>, partir.padding = array<i64: 0, 1, 6, 8>}, %arg1: tensor<8x4xf32> {partir.name = "w"}) -> (tensor<4xf32>, tensor<4xf32>, tensor<8x4xf32> {partir.padded_from = array<i64: 6, 4>, partir.padding = array<i64: 0, 1, 6, 8>})
// CHECK: %[[X:.*]] = partir.loop "batch" [#partir.tile<0>]
// CHECK: partir.slice 0 %arg0[%{{.*}}] : tensor<8x8xf32> -> tensor<2x8xf32>
// CHECK: %[[H:.*]] = "stablehlo.dot_general"(%[[X]], %arg1) {{.*}} -> tensor<8x4xf32>
// CHECK: %[[T:.*]] = "stablehlo.tanh"(%[[H]]) {partir.padding_share = 2.500000e-01 : f64} : (tensor<8x4xf32>) -> tensor<8x4xf32>
// CHECK: %[[IOTA:.*]] = "stablehlo.iota"() {iota_dimension = 0 : i64} : () -> tensor<8xi32>
// CHECK: %[[SIX:.*]] = "stablehlo.constant"() {value = dense<6> : tensor<8xi32>}
// CHECK: %[[REAL:.*]] = "stablehlo.compare"(%[[IOTA]], %[[SIX]]) {comparison_direction = #stablehlo<comparison_direction LT>}
// CHECK: %[[ROWS:.*]] = "stablehlo.broadcast_in_dim"(%[[REAL]]) {broadcast_dimensions = array<i64: 0>} : (tensor<8xi1>) -> tensor<8x4xi1>
// CHECK: %[[ZEROS:.*]] = "stablehlo.constant"() {value = dense<0.000000e+00> : tensor<8x4xf32>}
// CHECK: %[[SUMMED:.*]] = "stablehlo.select"(%[[ROWS]], %[[T]], %[[ZEROS]])
// CHECK: "stablehlo.reduce"(%[[SUMMED]], %{{.*}}) <{dimensions = array<i64: 0>}>
// CHECK: "stablehlo.constant"() {value = dense<0xFF800000> : tensor<8x4xf32>}
// CHECK: %[[MAXED:.*]] = "stablehlo.select"(%{{.*}}, %[[T]], %{{.*}})
// CHECK: "stablehlo.reduce"(%[[MAXED]], %{{.*}}) <{dimensions = array<i64: 0>}>
// CHECK: return %{{.*}}, %{{.*}}, %[[T]] : tensor<4xf32>, tensor<4xf32>, tensor<8x4xf32>
func.func @main(%x: tensor<6x8xf32> {partir.name = "x"}, %w: tensor<8x4xf32> {partir.name = "w"}) -> (tensor<4xf32>, tensor<4xf32>, tensor<6x4xf32>) {
  %h = "stablehlo.dot_general"(%x, %w) <{dot_dimension_numbers = #stablehlo.dot<lhs_contracting_dimensions = [1], rhs_contracting_dimensions = [0]>}> : (tensor<6x8xf32>, tensor<8x4xf32>) -> tensor<6x4xf32>
  %t = "stablehlo.tanh"(%h) : (tensor<6x4xf32>) -> tensor<6x4xf32>
  %z = "stablehlo.constant"() <{value = dense<0.0> : tensor<f32>}> : () -> tensor<f32>
  %s = "stablehlo.reduce"(%t, %z) <{dimensions = array<i64: 0>}> ({
  ^bb0(%a: tensor<f32>, %b: tensor<f32>):
    %c = "stablehlo.add"(%a, %b) : (tensor<f32>, tensor<f32>) -> tensor<f32>
    "stablehlo.return"(%c) : (tensor<f32>) -> ()
  }) : (tensor<6x4xf32>, tensor<f32>) -> tensor<4xf32>
  %ninf = "stablehlo.constant"() <{value = dense<0xFF800000> : tensor<f32>}> : () -> tensor<f32>
  %m = "stablehlo.reduce"(%t, %ninf) <{dimensions = array<i64: 0>}> ({
  ^bb0(%a: tensor<f32>, %b: tensor<f32>):
    %c = "stablehlo.maximum"(%a, %b) : (tensor<f32>, tensor<f32>) -> tensor<f32>
    "stablehlo.return"(%c) : (tensor<f32>) -> ()
  }) : (tensor<6x4xf32>, tensor<f32>) -> tensor<4xf32>
  return %s, %m, %t : tensor<4xf32>, tensor<4xf32>, tensor<6x4xf32>
}
