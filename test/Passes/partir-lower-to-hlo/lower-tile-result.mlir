// A #tile loop result is a sharded value: its payload runs on the local chunk, no collective,
// and the function returns it sharded (local type, partir_hlo.sharding on argument and result).
// RUN: mlir-opt %plugin -p 'builtin.module(partir-lower-to-hlo)' %s | FileCheck %s --implicit-check-not=partir_hlo.all --implicit-check-not=partir_hlo.reduce --implicit-check-not=partir.loop --implicit-check-not=partir.slice

partir.mesh @mesh ["batch"=4, "model"=2]

// CHECK-LABEL: func.func @tile_result(
// CHECK-SAME:      %[[X:.*]]: tensor<2x4xf32> {partir_hlo.sharding = #partir_hlo.sharding<[{"batch"}, {}]>},
// CHECK-SAME:      %[[W:.*]]: tensor<4x6xf32> {partir_hlo.sharding = #partir_hlo.sharding<[{}, {}]>})
// CHECK-SAME:    -> (tensor<2x6xf32> {partir_hlo.sharding = #partir_hlo.sharding<[{"batch"}, {}]>})
// CHECK:         %[[E:.*]] = tensor.empty() : tensor<2x6xf32>
// CHECK-NEXT:    %[[Z:.*]] = linalg.fill ins(%{{.*}} : f32) outs(%[[E]] : tensor<2x6xf32>) -> tensor<2x6xf32>
// CHECK-NEXT:    %[[Y:.*]] = linalg.matmul ins(%[[X]], %[[W]] : tensor<2x4xf32>, tensor<4x6xf32>) outs(%[[Z]] : tensor<2x6xf32>) -> tensor<2x6xf32>
// CHECK-NEXT:    return %[[Y]] : tensor<2x6xf32>
func.func @tile_result(%x: tensor<8x4xf32>, %w: tensor<4x6xf32>) -> tensor<8x6xf32> {
  %c0 = arith.constant 0.0 : f32
  %e = partir.loop "batch" [#partir.tile<0>] (%r: !partir.range<4>) {
    %el = tensor.empty() : tensor<2x6xf32>
    partir.yield %el : tensor<2x6xf32>
  } : tensor<8x6xf32>
  %z = partir.loop "batch" [#partir.tile<0>] (%r: !partir.range<4>) {
    %es = partir.slice 0 %e[%r] : tensor<8x6xf32> -> tensor<2x6xf32>
    %f = linalg.fill ins(%c0 : f32) outs(%es : tensor<2x6xf32>) -> tensor<2x6xf32>
    partir.yield %f : tensor<2x6xf32>
  } : tensor<8x6xf32>
  %y = partir.loop "batch" [#partir.tile<0>] (%r: !partir.range<4>) {
    %xs = partir.slice 0 %x[%r] : tensor<8x4xf32> -> tensor<2x4xf32>
    %zs = partir.slice 0 %z[%r] : tensor<8x6xf32> -> tensor<2x6xf32>
    %m = linalg.matmul ins(%xs, %w : tensor<2x4xf32>, tensor<4x6xf32>) outs(%zs : tensor<2x6xf32>) -> tensor<2x6xf32>
    partir.yield %m : tensor<2x6xf32>
  } : tensor<8x6xf32>
  return %y : tensor<8x6xf32>
}
