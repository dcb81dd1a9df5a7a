// A partir.replicate pin keeps its value whole along its axis: forward propagation stops at
// the pin with a remark, and what comes after the pin stays unpartitioned along that axis.
// RUN: mlir-opt %plugin -verify-diagnostics -p 'builtin.module(partir-tile{value=x dim=0 axis=batch}, partir-propagate)' %s | FileCheck %s

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
