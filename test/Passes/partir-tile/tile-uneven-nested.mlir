// A dim split along one axis already and then along another that does not divide its tiles
// (docs/design.md#uneven-dims): x's 8 rows on a=2 are 2 tiles of 4, and b=3 pads each tile to
// 6 (2 rows per device), so the rows each a-tile holds stay where they were. The argument
// records the step (partir.padding: dim 0 as 2 chunks of 4 grown to 6), the a-loop's slices and
// its result carry the padding, and the sum over the rows reads zeros at each tile's end.
// RUN: mlir-opt %plugin --allow-unregistered-dialect -p 'builtin.module(partir-mesh{axes=a=2,b=3}, partir-tile{value=x dim=0 axis=a}, partir-propagate, partir-tile{value=x dim=0 axis=b})' %s 2>&1 | FileCheck %s

// CHECK: remark: partir-tile: dim 0 of 'x' (size 8) padded to 12 to split it 6 ways along 'b' (each of its 2 tiles along 'a' padded from 4 to 6): 2 per device, 4 of padding (+50.0%)
// CHECK: func.func @main(%arg0: tensor<12x16xf32> {partir.name = "x", partir.padded_from = array<i64: 8, 16>, partir.padding = array<i64: 0, 2, 4, 6>}) -> (tensor<16xf32>, tensor<12x16xf32> {partir.padded_from = array<i64: 8, 16>, partir.padding = array<i64: 0, 2, 4, 6>})
// CHECK: partir.loop "b" [#partir.tile<0>]
// CHECK: partir.slice 0 %arg0[%{{.*}}] : tensor<12x16xf32> -> tensor<4x16xf32>
// CHECK: %[[T:.*]] = partir.loop "a" [#partir.tile<0>]
// CHECK: partir.slice 0 %{{.*}} : tensor<12x16xf32> -> tensor<6x16xf32>
// CHECK: "stablehlo.tanh"(%{{.*}}) {partir.padding_share = 0.333{{[0-9]*}} : f64} : (tensor<6x16xf32>) -> tensor<6x16xf32>
// CHECK: } : tensor<12x16xf32>
// CHECK: partir.loop "a" [#partir.sum]
// CHECK: %[[IOTA:.*]] = "stablehlo.iota"() {iota_dimension = 0 : i64} : () -> tensor<6xi32>
// CHECK: "stablehlo.constant"() {value = dense<4> : tensor<6xi32>}
// CHECK: "stablehlo.select"
// CHECK: "stablehlo.reduce"
// CHECK: return %{{.*}}, %[[T]] : tensor<16xf32>, tensor<12x16xf32>
func.func @main(%x: tensor<8x16xf32> {partir.name = "x"}) -> (tensor<16xf32>, tensor<8x16xf32>) {
  %t = "stablehlo.tanh"(%x) : (tensor<8x16xf32>) -> tensor<8x16xf32>
  %z = "stablehlo.constant"() <{value = dense<0.0> : tensor<f32>}> : () -> tensor<f32>
  %s = "stablehlo.reduce"(%t, %z) <{dimensions = array<i64: 0>}> ({
  ^bb0(%a: tensor<f32>, %b: tensor<f32>):
    %c = "stablehlo.add"(%a, %b) : (tensor<f32>, tensor<f32>) -> tensor<f32>
    "stablehlo.return"(%c) : (tensor<f32>) -> ()
  }) : (tensor<8x16xf32>, tensor<f32>) -> tensor<16xf32>
  return %s, %t : tensor<16xf32>, tensor<8x16xf32>
}
