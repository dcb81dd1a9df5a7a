// A padded program exported to upstream MLIR's `shard` dialect (docs/design.md#uneven-dims):
// each device's argument is its padded shard (2 of 8 rows, the caller's 6 recorded by
// partir.padded_from and partir.padding's steps, which the export keeps for a runtime), the
// mask's row indices are sliced locally (shard.all_slice of the iota: no communication), and
// the simulator's partir.padding_share is dropped.
// RUN: mlir-opt %plugin --allow-unregistered-dialect -p 'builtin.module(partir-mesh{axes=batch=4}, partir-tile{value=x dim=0 axis=batch}, partir-propagate, partir-lower-to-hlo, partir-export-shard)' %s 2>&1 | FileCheck %s --implicit-check-not=partir.padding_share

// CHECK: func.func @main(%arg0: tensor<2x8xf32> {partir.padded_from = array<i64: 6, 8>, partir.padding = array<i64: 0, 1, 6, 8>, shard.split_axes = #shard<axisarray{{\[\[0\], \[\]\]}}>}
// CHECK: %[[IOTA:.*]] = "stablehlo.iota"() {iota_dimension = 0 : i64} : () -> tensor<8xi32>
// CHECK: %[[SIX:.*]] = "stablehlo.constant"() {value = dense<6> : tensor<2xi32>}
// CHECK: %[[MINE:.*]] = shard.all_slice %[[IOTA]] on @mesh grid_axes = [0] slice_axis = 0 : tensor<8xi32> -> tensor<2xi32>
// CHECK: "stablehlo.compare"(%[[MINE]], %[[SIX]])
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
