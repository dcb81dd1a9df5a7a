// A value holding several padded tiles read by an op outside the loops (docs/design.md#uneven-dims):
// x's 8 rows are tiled on a=2 (not propagated), then on b=3, so each a-tile of 4 rows is padded
// to 6. The tanh runs on the 12 rows as they are; the sum over the rows sees each tile's padding
// through a reshape to [2, 6, 16]: rows 4 and 5 of each tile read 0.
// RUN: mlir-opt %plugin --allow-unregistered-dialect -p 'builtin.module(partir-mesh{axes=a=2,b=3}, partir-tile{value=x dim=0 axis=a}, partir-tile{value=x dim=0 axis=b})' %s 2>&1 | FileCheck %s

// CHECK: remark: partir-tile: dim 0 of 'x' (size 8) padded to 12 to split it 6 ways along 'b' (each of its 2 tiles along 'a' padded from 4 to 6)
// CHECK: %[[T:.*]] = "stablehlo.tanh"(%{{.*}}) {partir.padding_share = {{.*}}} : (tensor<12x16xf32>) -> tensor<12x16xf32>
// CHECK: %[[SEEN:.*]] = "stablehlo.reshape"(%[[T]]) : (tensor<12x16xf32>) -> tensor<2x6x16xf32>
// CHECK: "stablehlo.iota"() {iota_dimension = 0 : i64} : () -> tensor<6xi32>
// CHECK: "stablehlo.constant"() {value = dense<4> : tensor<6xi32>}
// CHECK: "stablehlo.broadcast_in_dim"(%{{.*}}) {broadcast_dimensions = array<i64: 1>} : (tensor<6xi1>) -> tensor<2x6x16xi1>
// CHECK: %[[MASKED:.*]] = "stablehlo.select"(%{{.*}}, %[[SEEN]], %{{.*}}) {partir.padding_share = 1.000000e+00 : f64} : (tensor<2x6x16xi1>, tensor<2x6x16xf32>, tensor<2x6x16xf32>) -> tensor<2x6x16xf32>
// CHECK: %[[WHOLE:.*]] = "stablehlo.reshape"(%[[MASKED]]) : (tensor<2x6x16xf32>) -> tensor<12x16xf32>
// CHECK: "stablehlo.reduce"(%[[WHOLE]], %{{.*}}) <{dimensions = array<i64: 0>}>
func.func @main(%x: tensor<8x16xf32> {partir.name = "x"}) -> tensor<16xf32> {
  %t = "stablehlo.tanh"(%x) : (tensor<8x16xf32>) -> tensor<8x16xf32>
  %z = "stablehlo.constant"() <{value = dense<0.0> : tensor<f32>}> : () -> tensor<f32>
  %s = "stablehlo.reduce"(%t, %z) <{dimensions = array<i64: 0>}> ({
  ^bb0(%a: tensor<f32>, %b: tensor<f32>):
    %c = "stablehlo.add"(%a, %b) : (tensor<f32>, tensor<f32>) -> tensor<f32>
    "stablehlo.return"(%c) : (tensor<f32>) -> ()
  }) : (tensor<8x16xf32>, tensor<f32>) -> tensor<16xf32>
  return %s : tensor<16xf32>
}
