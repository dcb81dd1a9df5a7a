// Uneven tiles in a linalg program (docs/design.md#uneven-dims, rules/linalg_pad.rs): x's batch
// of 6 on 4 devices becomes 8. The matmul, its fill and its empty destination run on 8 rows;
// the reduction over the rows reads them through an elementwise linalg.generic that selects 0
// where a constant row of flags says padding (a constant, not linalg.index, so it partitions
// with the value); the returned product stays padded.
// RUN: mlir-opt %plugin -p 'builtin.module(partir-mesh{axes=batch=4}, partir-tile{value=x dim=0 axis=batch})' %s 2>&1 | FileCheck %s

// CHECK: remark: partir-tile: dim 0 of 'x' (size 6) padded to 8 to split it 4 ways along 'batch': 2 per device, 2 of padding (+33.3%)
// CHECK: func.func @main(%arg0: tensor<8x8xf32> {partir.name = "x", partir.padded_from = array<i64: 6, 8>, partir.padding = array<i64: 0, 1, 6, 8>}
// CHECK: %[[H:.*]] = linalg.matmul {partir.padding_share = 2.500000e-01 : f64} ins(%{{.*}}, %arg1 : tensor<8x8xf32>, tensor<8x4xf32>) outs(%{{.*}} : tensor<8x4xf32>) -> tensor<8x4xf32>
// CHECK: %[[FLAGS:.*]] = arith.constant dense<[true, true, true, true, true, true, false, false]> : tensor<8xi1>
// CHECK: %[[MASKED:.*]] = linalg.generic {{.*}} ins(%[[H]], %[[FLAGS]] : tensor<8x4xf32>, tensor<8xi1>)
// CHECK: arith.select %{{.*}}, %{{.*}}, %{{.*}} : f32
// CHECK: linalg.generic {{.*}} iterator_types = ["reduction", "parallel"]} ins(%[[MASKED]] : tensor<8x4xf32>)
// CHECK: return %{{.*}}, %[[H]] : tensor<4xf32>, tensor<8x4xf32>
#id = affine_map<(d0, d1) -> (d0, d1)>
#row = affine_map<(d0, d1) -> (d1)>
func.func @main(%x: tensor<6x8xf32> {partir.name = "x"}, %w: tensor<8x4xf32> {partir.name = "w"}) -> (tensor<4xf32>, tensor<6x4xf32>) {
  %zero = arith.constant 0.0 : f32
  %e = tensor.empty() : tensor<6x4xf32>
  %f = linalg.fill ins(%zero : f32) outs(%e : tensor<6x4xf32>) -> tensor<6x4xf32>
  %h = linalg.matmul ins(%x, %w : tensor<6x8xf32>, tensor<8x4xf32>) outs(%f : tensor<6x4xf32>) -> tensor<6x4xf32>
  %e1 = tensor.empty() : tensor<4xf32>
  %f1 = linalg.fill ins(%zero : f32) outs(%e1 : tensor<4xf32>) -> tensor<4xf32>
  %s = linalg.generic {indexing_maps = [#id, #row], iterator_types = ["reduction", "parallel"]} ins(%h : tensor<6x4xf32>) outs(%f1 : tensor<4xf32>) {
  ^bb0(%in: f32, %acc: f32):
    %a = arith.addf %in, %acc : f32
    linalg.yield %a : f32
  } -> tensor<4xf32>
  return %s, %h : tensor<4xf32>, tensor<6x4xf32>
}
