// After propagation, slices of the tile action's identity loop on the same axis and dim read
// the tiled argument directly (slice d (loop A [tile<d>] {yield slice d x}) == slice d x),
// and the identity loop, now unused, is erased: no communication, no leftover view.
// RUN: mlir-opt %plugin -p 'builtin.module(partir-mesh{axes=batch=4,model=2}, partir-tile{value=x dim=0 axis=batch}, partir-propagate{axis=batch})' %s | FileCheck %s

// Two users of x: both loops slice %arg0 itself, and the only loops left are theirs.
// CHECK-LABEL: func.func @two_users
// CHECK-SAME: (%[[X:[^:]*]]: tensor<16x8xf32> {partir.name = "x"})
// CHECK-NOT: partir.loop
// CHECK: %[[E:.*]] = partir.loop "batch" [#partir.tile<0>]
// CHECK-NEXT: tensor.empty() : tensor<4x8xf32>
// CHECK: %[[N:.*]] = partir.loop "batch" [#partir.tile<0>] (%[[R1:.*]]: !partir.range<4>) {
// CHECK-NEXT: %[[S1:.*]] = partir.slice 0 %[[X]][%[[R1]]] : tensor<16x8xf32> -> tensor<4x8xf32>
// CHECK-NEXT: partir.slice 0 %[[E]][%[[R1]]]
// CHECK-NEXT: linalg.negf ins(%[[S1]] : tensor<4x8xf32>)
// CHECK: %[[P:.*]] = partir.loop "batch" [#partir.tile<0>] (%[[R2:.*]]: !partir.range<4>) {
// CHECK-NEXT: %[[S2:.*]] = partir.slice 0 %[[X]][%[[R2]]] : tensor<16x8xf32> -> tensor<4x8xf32>
// CHECK-NEXT: partir.slice 0 %[[E]][%[[R2]]]
// CHECK-NEXT: linalg.exp ins(%[[S2]] : tensor<4x8xf32>)
// CHECK-NOT: partir.loop
// CHECK: return %[[N]], %[[P]]
func.func @two_users(%x: tensor<16x8xf32> {partir.name = "x"}) -> (tensor<16x8xf32>, tensor<16x8xf32>) {
  %e = tensor.empty() : tensor<16x8xf32>
  %n = linalg.negf ins(%x : tensor<16x8xf32>) outs(%e : tensor<16x8xf32>) -> tensor<16x8xf32>
  %p = linalg.exp ins(%x : tensor<16x8xf32>) outs(%e : tensor<16x8xf32>) -> tensor<16x8xf32>
  return %n, %p : tensor<16x8xf32>, tensor<16x8xf32>
}

// A user that cannot be partitioned (the function's return needs x whole) keeps the view
// alive; the partitioned user still reads the argument, not the view.
// CHECK-LABEL: func.func @kept_view
// CHECK-SAME: (%[[X2:[^:]*]]: tensor<16x8xf32> {partir.name = "x"})
// CHECK: %[[V:.*]] = partir.loop "batch" [#partir.tile<0>] (%[[RV:.*]]: !partir.range<4>) {
// CHECK-NEXT: %[[SV:.*]] = partir.slice 0 %[[X2]][%[[RV]]] : tensor<16x8xf32> -> tensor<4x8xf32>
// CHECK-NEXT: partir.yield %[[SV]] : tensor<4x8xf32>
// CHECK: tensor.empty() : tensor<4x8xf32>
// CHECK: %[[NL:.*]] = partir.loop "batch" [#partir.tile<0>] (%[[RN:.*]]: !partir.range<4>) {
// CHECK-NEXT: %[[SN:.*]] = partir.slice 0 %[[X2]][%[[RN]]] : tensor<16x8xf32> -> tensor<4x8xf32>
// CHECK-NEXT: partir.slice 0
// CHECK-NEXT: linalg.negf ins(%[[SN]] : tensor<4x8xf32>)
// CHECK: return %[[NL]], %[[V]]
func.func @kept_view(%x: tensor<16x8xf32> {partir.name = "x"}) -> (tensor<16x8xf32>, tensor<16x8xf32>) {
  %e = tensor.empty() : tensor<16x8xf32>
  %n = linalg.negf ins(%x : tensor<16x8xf32>) outs(%e : tensor<16x8xf32>) -> tensor<16x8xf32>
  return %n, %x : tensor<16x8xf32>, tensor<16x8xf32>
}
