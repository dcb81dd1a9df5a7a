// An op without a tile mapping rule is never partitioned through, and the pass warns once
// per op name, however many times (and in however many functions) propagation reaches it.
// RUN: mlir-opt %plugin -allow-unregistered-dialect -verify-diagnostics -p 'builtin.module(partir-mesh{axes=batch=4,model=2}, partir-tile{value=x dim=0 axis=batch}, partir-propagate)' %s | FileCheck %s

// CHECK-LABEL: func.func @twice
// CHECK: %[[V:.*]] = partir.loop "batch" [#partir.tile<0>]
// CHECK: %[[A:.*]] = "test.foo"(%[[V]]) : (tensor<16x16xf32>) -> tensor<16x16xf32>
// CHECK-NEXT: %[[B:.*]] = "test.foo"(%[[V]]) : (tensor<16x16xf32>) -> tensor<16x16xf32>
// CHECK-NEXT: return %[[A]], %[[B]]
func.func @twice(%x: tensor<16x16xf32> {partir.name = "x"}) -> (tensor<16x16xf32>, tensor<16x16xf32>) {
  // expected-warning @below {{partir-propagate: no tile mapping rule for 'test.foo'; nothing is partitioned through it}}
  %a = "test.foo"(%x) : (tensor<16x16xf32>) -> tensor<16x16xf32>
  %b = "test.foo"(%x) : (tensor<16x16xf32>) -> tensor<16x16xf32>
  return %a, %b : tensor<16x16xf32>, tensor<16x16xf32>
}

// A second function reaching the same op name (and a registered op without a rule,
// tensor.reshape, reached from both sides) gets no second warning for test.foo.
// CHECK-LABEL: func.func @again
// CHECK: "test.foo"
// CHECK: tensor.reshape
func.func @again(%x: tensor<16x16xf32> {partir.name = "x"}, %shape: tensor<1xi64>) -> (tensor<16x16xf32>, tensor<256xf32>) {
  %a = "test.foo"(%x) : (tensor<16x16xf32>) -> tensor<16x16xf32>
  // expected-warning @below {{partir-propagate: no tile mapping rule for 'tensor.reshape'; nothing is partitioned through it}}
  %r = tensor.reshape %x(%shape) : (tensor<16x16xf32>, tensor<1xi64>) -> tensor<256xf32>
  return %a, %r : tensor<16x16xf32>, tensor<256xf32>
}
