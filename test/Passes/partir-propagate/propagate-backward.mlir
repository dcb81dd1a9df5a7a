// Backward propagation: tiling a named op result (partir.name on the op) makes every consumer
// slice it, so its producer is wrapped in a loop over the axis, and so on up the chain: the
// matmul's accumulator (fill of empty) and its lhs (an elementwise op on an argument) are
// sliced through, down to the argument. The tile action's view over the now-tiled result
// is dropped: the function returns the matmul's loop directly.
// RUN: mlir-opt %plugin -p 'builtin.module(partir-mesh{axes=batch=4,model=2}, partir-tile{value=h dim=0 axis=batch}, partir-propagate{axis=batch})' %s | FileCheck %s
// RUN: mlir-opt %plugin -p 'builtin.module(partir-mesh{axes=batch=4,model=2}, partir-tile{value=h dim=0 axis=batch}, partir-propagate{axis=batch})' %s | mlir-opt %plugin -verify-roundtrip

// CHECK-LABEL: func.func @named_result
// CHECK-SAME: (%[[X:[^:]*]]: tensor<32x64xf32>, %[[W:[^:]*]]: tensor<64x16xf32>)
// CHECK: %[[E:.*]] = partir.loop "batch" [#partir.tile<0>] (%{{.*}}: !partir.range<4>) {
// CHECK-NEXT: tensor.empty() : tensor<8x16xf32>
// CHECK: %[[F:.*]] = partir.loop "batch" [#partir.tile<0>] (%[[RF:.*]]: !partir.range<4>) {
// CHECK-NEXT: %[[ES:.*]] = partir.slice 0 %[[E]][%[[RF]]] : tensor<32x16xf32> -> tensor<8x16xf32>
// CHECK-NEXT: linalg.fill ins(%{{.*}} : f32) outs(%[[ES]] : tensor<8x16xf32>) -> tensor<8x16xf32>
// CHECK: %[[NE:.*]] = partir.loop "batch" [#partir.tile<0>] (%{{.*}}: !partir.range<4>) {
// CHECK-NEXT: tensor.empty() : tensor<8x64xf32>
// CHECK: %[[N:.*]] = partir.loop "batch" [#partir.tile<0>] (%[[RN:.*]]: !partir.range<4>) {
// CHECK-NEXT: %[[XS:.*]] = partir.slice 0 %[[X]][%[[RN]]] : tensor<32x64xf32> -> tensor<8x64xf32>
// CHECK-NEXT: %[[NES:.*]] = partir.slice 0 %[[NE]][%[[RN]]] : tensor<32x64xf32> -> tensor<8x64xf32>
// CHECK-NEXT: linalg.negf ins(%[[XS]] : tensor<8x64xf32>) outs(%[[NES]] : tensor<8x64xf32>)
// CHECK: %[[H:.*]] = partir.loop "batch" [#partir.tile<0>] (%[[R:.*]]: !partir.range<4>) {
// CHECK-NEXT: %[[NS:.*]] = partir.slice 0 %[[N]][%[[R]]] : tensor<32x64xf32> -> tensor<8x64xf32>
// CHECK-NEXT: %[[FS:.*]] = partir.slice 0 %[[F]][%[[R]]] : tensor<32x16xf32> -> tensor<8x16xf32>
// CHECK-NEXT: %[[M:.*]] = linalg.matmul {partir.name = "h"} ins(%[[NS]], %[[W]] : tensor<8x64xf32>, tensor<64x16xf32>) outs(%[[FS]] : tensor<8x16xf32>) -> tensor<8x16xf32>
// CHECK-NEXT: partir.yield %[[M]] : tensor<8x16xf32>
// CHECK-NEXT: } : tensor<32x16xf32>
// CHECK-NEXT: return %[[H]] : tensor<32x16xf32>
func.func @named_result(%x: tensor<32x64xf32>, %w: tensor<64x16xf32>) -> tensor<32x16xf32> {
  %zero = arith.constant 0.0 : f32
  %e = tensor.empty() : tensor<32x16xf32>
  %f = linalg.fill ins(%zero : f32) outs(%e : tensor<32x16xf32>) -> tensor<32x16xf32>
  %ne = tensor.empty() : tensor<32x64xf32>
  %n = linalg.negf ins(%x : tensor<32x64xf32>) outs(%ne : tensor<32x64xf32>) -> tensor<32x64xf32>
  %h = linalg.matmul {partir.name = "h"} ins(%n, %w : tensor<32x64xf32>, tensor<64x16xf32>) outs(%f : tensor<32x16xf32>) -> tensor<32x16xf32>
  return %h : tensor<32x16xf32>
}

// The tile action replaces every use of the named value, the return's included, so the
// producer (backward) and the other user (forward) are both partitioned, and the function
// returns both loops' results.
// CHECK-LABEL: func.func @result_and_user
// CHECK: tensor.empty() : tensor<8x16xf32>
// CHECK: %[[A:.*]] = partir.loop "batch" [#partir.tile<0>] (%[[RA:.*]]: !partir.range<4>) {
// CHECK-NEXT: partir.slice 0 %arg0[%[[RA]]]
// CHECK-NEXT: partir.slice 0 %arg1[%[[RA]]]
// CHECK-NEXT: partir.slice 0
// CHECK-NEXT: linalg.add {partir.name = "h"} ins(%{{.*}}, %{{.*}} : tensor<8x16xf32>, tensor<8x16xf32>)
// CHECK: %[[X:.*]] = partir.loop "batch" [#partir.tile<0>] (%[[RX:.*]]: !partir.range<4>) {
// CHECK-NEXT: %[[AS:.*]] = partir.slice 0 %[[A]][%[[RX]]] : tensor<32x16xf32> -> tensor<8x16xf32>
// CHECK-NEXT: partir.slice 0
// CHECK-NEXT: linalg.exp ins(%[[AS]] : tensor<8x16xf32>)
// CHECK: return %[[A]], %[[X]]
func.func @result_and_user(%a: tensor<32x16xf32>, %b: tensor<32x16xf32>) -> (tensor<32x16xf32>, tensor<32x16xf32>) {
  %e = tensor.empty() : tensor<32x16xf32>
  %s = linalg.add {partir.name = "h"} ins(%a, %b : tensor<32x16xf32>, tensor<32x16xf32>) outs(%e : tensor<32x16xf32>) -> tensor<32x16xf32>
  %x = linalg.exp ins(%s : tensor<32x16xf32>) outs(%e : tensor<32x16xf32>) -> tensor<32x16xf32>
  return %s, %x : tensor<32x16xf32>, tensor<32x16xf32>
}
