// A partir.replicate pin keeps its value whole along its axis: forward propagation stops at
// the pin with a remark, and what comes after the pin stays unpartitioned along that axis.
// RUN: mlir-opt %plugin -verify-diagnostics -p 'builtin.module(partir-tile{value=x dim=0 axis=batch}, partir-propagate)' %s | FileCheck %s
// RUN: mlir-opt %plugin -p 'builtin.module(partir-tile{value=x dim=0 axis=batch}, partir-propagate)' %s 2>/dev/null | mlir-opt %plugin -verify-roundtrip

partir.mesh @mesh ["batch"=4, "model"=2]

// CHECK-LABEL: func.func @pinned
// CHECK: %[[N:.*]] = partir.loop "batch" [#partir.tile<0>]
// CHECK: linalg.negf
// CHECK: %[[P:.*]] = partir.replicate "batch" %[[N]] : tensor<32x16xf32>
// CHECK-NEXT: %[[M:.*]] = linalg.exp ins(%[[P]] : tensor<32x16xf32>) outs(%{{.*}} : tensor<32x16xf32>)
// CHECK-NEXT: return %[[M]]
func.func @pinned(%x: tensor<32x16xf32> {partir.name = "x"}) -> tensor<32x16xf32> {
  %e = tensor.empty() : tensor<32x16xf32>
  %n = linalg.negf ins(%x : tensor<32x16xf32>) outs(%e : tensor<32x16xf32>) -> tensor<32x16xf32>
  // expected-remark @below {{partir-propagate: stopped at 'partir.replicate' on axis 'batch': operand 0 is tiled on dim 0 but the value is pinned to stay whole (partir.replicate)}}
  %p = partir.replicate "batch" %n : tensor<32x16xf32>
  %m = linalg.exp ins(%p : tensor<32x16xf32>) outs(%e : tensor<32x16xf32>) -> tensor<32x16xf32>
  return %m : tensor<32x16xf32>
}

// A pin along another axis is transparent along this one: it is partitioned like any
// one-operand elementwise op (this used to crash: the pin's registered rule had no results),
// and the exp after it follows. The pin itself stays in the IR, on its chunk.
// CHECK-LABEL: func.func @pinned_elsewhere
// CHECK: tensor.empty() : tensor<8x16xf32>
// CHECK: %[[N2:.*]] = partir.loop "batch" [#partir.tile<0>]
// CHECK: linalg.negf
// CHECK: %[[P2:.*]] = partir.loop "batch" [#partir.tile<0>] (%[[R2:.*]]: !partir.range<4>) {
// CHECK-NEXT: %[[S2:.*]] = partir.slice 0 %[[N2]][%[[R2]]] : tensor<32x16xf32> -> tensor<8x16xf32>
// CHECK-NEXT: %[[Q2:.*]] = partir.replicate "model" %[[S2]] : tensor<8x16xf32>
// CHECK-NEXT: partir.yield %[[Q2]] : tensor<8x16xf32>
// CHECK: %[[M2:.*]] = partir.loop "batch" [#partir.tile<0>] (%[[R3:.*]]: !partir.range<4>) {
// CHECK-NEXT: %[[S3:.*]] = partir.slice 0 %[[P2]][%[[R3]]] : tensor<32x16xf32> -> tensor<8x16xf32>
// CHECK-NEXT: partir.slice 0
// CHECK-NEXT: linalg.exp ins(%[[S3]] : tensor<8x16xf32>)
// CHECK: return %[[M2]]
func.func @pinned_elsewhere(%x: tensor<32x16xf32> {partir.name = "x"}) -> tensor<32x16xf32> {
  %e = tensor.empty() : tensor<32x16xf32>
  %n = linalg.negf ins(%x : tensor<32x16xf32>) outs(%e : tensor<32x16xf32>) -> tensor<32x16xf32>
  %p = partir.replicate "model" %n : tensor<32x16xf32>
  %m = linalg.exp ins(%p : tensor<32x16xf32>) outs(%e : tensor<32x16xf32>) -> tensor<32x16xf32>
  return %m : tensor<32x16xf32>
}
