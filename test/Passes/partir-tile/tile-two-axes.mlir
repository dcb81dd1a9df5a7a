// Tiling one value along two axes (on two dims) composes: each action wraps the current uses.
// RUN: mlir-opt %plugin -p 'builtin.module(partir-mesh{axes=batch=4,model=2}, partir-tile{value=x dim=0 axis=batch}, partir-tile{value=x dim=1 axis=model})' %s | FileCheck %s
// RUN: mlir-opt %plugin -p 'builtin.module(partir-mesh{axes=batch=4,model=2}, partir-tile{value=x dim=0 axis=batch}, partir-tile{value=x dim=1 axis=model})' %s | mlir-opt %plugin -verify-roundtrip

// CHECK-LABEL: func.func @main
// CHECK: %[[M:.*]] = partir.loop "model" [#partir.tile<1>]
// CHECK-NEXT: partir.slice 1 %arg0[%{{.*}}] : tensor<32x64xf32> -> tensor<32x32xf32>
// CHECK: %[[B:.*]] = partir.loop "batch" [#partir.tile<0>]
// CHECK-NEXT: partir.slice 0 %[[M]][%{{.*}}] : tensor<32x64xf32> -> tensor<8x64xf32>
// CHECK: return %[[B]]
func.func @main(%x: tensor<32x64xf32> {partir.name = "x"}) -> tensor<32x64xf32> {
  return %x : tensor<32x64xf32>
}
