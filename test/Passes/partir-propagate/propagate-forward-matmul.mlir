// Forward propagation: a user of a value tiled along an axis is wrapped in a loop over that
// axis. x tiled on dim 0 makes the matmul a batch loop tiling dim 0 of its result; w has no
// batch factor and is used whole; the accumulator (fill of empty) is sliced through backward.
// RUN: mlir-opt %plugin -p 'builtin.module(partir-mesh{axes=batch=4,model=2}, partir-tile{value=x dim=0 axis=batch}, partir-propagate{axis=batch})' %s | FileCheck %s
// RUN: mlir-opt %plugin -p 'builtin.module(partir-mesh{axes=batch=4,model=2}, partir-tile{value=x dim=0 axis=batch}, partir-propagate{axis=batch})' %s | mlir-opt %plugin -verify-roundtrip

// CHECK-LABEL: func.func @matmul
// CHECK-SAME: (%[[X:.*]]: tensor<32x64xf32> {partir.name = "x"}, %[[W:.*]]: tensor<64x16xf32> {partir.name = "w"})
// CHECK: %[[E:.*]] = partir.loop "batch" [#partir.tile<0>] (%{{.*}}: !partir.range<4>) {
// CHECK-NEXT: tensor.empty() : tensor<8x16xf32>
// CHECK: %[[F:.*]] = partir.loop "batch" [#partir.tile<0>] (%[[RF:.*]]: !partir.range<4>) {
// CHECK-NEXT: %[[ES:.*]] = partir.slice 0 %[[E]][%[[RF]]] : tensor<32x16xf32> -> tensor<8x16xf32>
// CHECK-NEXT: linalg.fill ins(%{{.*}} : f32) outs(%[[ES]] : tensor<8x16xf32>) -> tensor<8x16xf32>
// CHECK: %[[H:.*]] = partir.loop "batch" [#partir.tile<0>] (%[[R:.*]]: !partir.range<4>) {
// CHECK-NEXT: %[[XS:.*]] = partir.slice 0 %[[X]][%[[R]]] : tensor<32x64xf32> -> tensor<8x64xf32>
// CHECK-NEXT: %[[FS:.*]] = partir.slice 0 %[[F]][%[[R]]] : tensor<32x16xf32> -> tensor<8x16xf32>
// CHECK-NEXT: %[[M:.*]] = linalg.matmul ins(%[[XS]], %[[W]] : tensor<8x64xf32>, tensor<64x16xf32>) outs(%[[FS]] : tensor<8x16xf32>) -> tensor<8x16xf32>
// CHECK-NEXT: partir.yield %[[M]] : tensor<8x16xf32>
// CHECK-NEXT: } : tensor<32x16xf32>
// CHECK-NEXT: return %[[H]] : tensor<32x16xf32>
// CHECK-NOT: partir.slice {{.*}} %[[W]]
func.func @matmul(%x: tensor<32x64xf32> {partir.name = "x"}, %w: tensor<64x16xf32> {partir.name = "w"}) -> tensor<32x16xf32> {
  %zero = arith.constant 0.0 : f32
  %e = tensor.empty() : tensor<32x16xf32>
  %f = linalg.fill ins(%zero : f32) outs(%e : tensor<32x16xf32>) -> tensor<32x16xf32>
  %h = linalg.matmul ins(%x, %w : tensor<32x64xf32>, tensor<64x16xf32>) outs(%f : tensor<32x16xf32>) -> tensor<32x16xf32>
  return %h : tensor<32x16xf32>
}

// An elementwise chain after the matmul follows: the generic and the exp land in batch loops
// that read the matmul's loop result through a slice on the same dim.
// CHECK-LABEL: func.func @chain
// CHECK: %[[H2:.*]] = partir.loop "batch" [#partir.tile<0>]
// CHECK: linalg.matmul
// CHECK: %[[G:.*]] = partir.loop "batch" [#partir.tile<0>] (%[[R2:.*]]: !partir.range<4>) {
// CHECK: partir.slice 0 %[[H2]][%[[R2]]] : tensor<32x16xf32> -> tensor<8x16xf32>
// CHECK: linalg.generic
// CHECK: arith.maximumf
// CHECK: %[[T:.*]] = partir.loop "batch" [#partir.tile<0>] (%[[R3:.*]]: !partir.range<4>) {
// CHECK: partir.slice 0 %[[G]][%[[R3]]] : tensor<32x16xf32> -> tensor<8x16xf32>
// CHECK: linalg.exp
// CHECK: return %[[T]]
#id = affine_map<(d0, d1) -> (d0, d1)>
func.func @chain(%x: tensor<32x64xf32> {partir.name = "x"}, %w: tensor<64x16xf32>) -> tensor<32x16xf32> {
  %zero = arith.constant 0.0 : f32
  %e = tensor.empty() : tensor<32x16xf32>
  %f = linalg.fill ins(%zero : f32) outs(%e : tensor<32x16xf32>) -> tensor<32x16xf32>
  %h = linalg.matmul ins(%x, %w : tensor<32x64xf32>, tensor<64x16xf32>) outs(%f : tensor<32x16xf32>) -> tensor<32x16xf32>
  %g = linalg.generic {indexing_maps = [#id, #id], iterator_types = ["parallel", "parallel"]} ins(%h : tensor<32x16xf32>) outs(%e : tensor<32x16xf32>) {
  ^bb0(%in: f32, %out: f32):
    %r = arith.maximumf %in, %zero : f32
    linalg.yield %r : f32
  } -> tensor<32x16xf32>
  %t = linalg.exp ins(%g : tensor<32x16xf32>) outs(%e : tensor<32x16xf32>) -> tensor<32x16xf32>
  return %t : tensor<32x16xf32>
}
