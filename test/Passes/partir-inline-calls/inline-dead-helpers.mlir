// RUN: mlir-opt --allow-unregistered-dialect %plugin -p 'builtin.module(partir-inline-calls)' %s | FileCheck %s
// As JAX lowers a step: a named module, ops with regions (a reduce) that upstream's symbol-use
// queries cannot see into, and a helper called only from another helper. Once every call is
// inlined no private function is left.
// CHECK: func.func public @main
// CHECK: "stablehlo.reduce"
// CHECK-NOT: func.call
// CHECK-NOT: func.func private
module @jit_step {
  func.func public @main(%x: tensor<8x4xf32>) -> tensor<8xf32> {
    %0 = func.call @outer(%x) : (tensor<8x4xf32>) -> tensor<8x4xf32>
    %z = "stablehlo.constant"() <{value = dense<0.0> : tensor<f32>}> : () -> tensor<f32>
    %r = "stablehlo.reduce"(%0, %z) <{dimensions = array<i64: 1>}> ({
    ^bb0(%a: tensor<f32>, %b: tensor<f32>):
      %s = "stablehlo.add"(%a, %b) : (tensor<f32>, tensor<f32>) -> tensor<f32>
      "stablehlo.return"(%s) : (tensor<f32>) -> ()
    }) : (tensor<8x4xf32>, tensor<f32>) -> tensor<8xf32>
    return %r : tensor<8xf32>
  }
  func.func private @outer(%a: tensor<8x4xf32>) -> tensor<8x4xf32> {
    %0 = func.call @inner(%a) : (tensor<8x4xf32>) -> tensor<8x4xf32>
    return %0 : tensor<8x4xf32>
  }
  func.func private @inner(%a: tensor<8x4xf32>) -> tensor<8x4xf32> {
    %0 = "stablehlo.abs"(%a) : (tensor<8x4xf32>) -> tensor<8x4xf32>
    return %0 : tensor<8x4xf32>
  }
}
