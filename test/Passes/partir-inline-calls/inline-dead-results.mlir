// JAX's private helpers return residuals their caller may not read (`@_where_0` returns a zero
// broadcast of the attention scores' shape: 32 GiB per device on the Mixtral 8x7B step). Once
// inlined, what nothing reads is erased, as XLA's dead code elimination erases it; an op that
// is not known to only compute its results (a custom call) stays.
// RUN: mlir-opt --allow-unregistered-dialect %plugin -p 'builtin.module(partir-inline-calls)' %s 2>&1 | FileCheck %s

// CHECK-LABEL: func.func @main
// CHECK-NOT: func.call
// CHECK: "stablehlo.broadcast_in_dim"(%arg2)
// CHECK-NEXT: %[[S:.*]] = "stablehlo.select"
// CHECK-NEXT: "stablehlo.custom_call"
// CHECK-NEXT: return %[[S]]
// CHECK-NOT: "stablehlo.constant"
func.func @main(%mask: tensor<4x8xi1>, %x: tensor<4x8xf32>, %fill: tensor<f32>) -> tensor<4x8xf32> {
  %r:2 = "func.call"(%mask, %x, %fill) <{callee = @_where_0}> : (tensor<4x8xi1>, tensor<4x8xf32>, tensor<f32>) -> (tensor<4x8xf32>, tensor<4x8xf32>)
  return %r#0 : tensor<4x8xf32>
}
func.func private @_where_0(%m: tensor<4x8xi1>, %a: tensor<4x8xf32>, %f: tensor<f32>) -> (tensor<4x8xf32>, tensor<4x8xf32>) {
  %b = "stablehlo.broadcast_in_dim"(%f) <{broadcast_dimensions = array<i64>}> : (tensor<f32>) -> tensor<4x8xf32>
  %s = "stablehlo.select"(%m, %a, %b) : (tensor<4x8xi1>, tensor<4x8xf32>, tensor<4x8xf32>) -> tensor<4x8xf32>
  %e = "stablehlo.custom_call"(%s) <{call_target_name = "side_effect"}> : (tensor<4x8xf32>) -> tensor<4x8xf32>
  %zero = "stablehlo.constant"() <{value = dense<0.0> : tensor<f32>}> : () -> tensor<f32>
  %residual = "stablehlo.broadcast_in_dim"(%zero) <{broadcast_dimensions = array<i64>}> : (tensor<f32>) -> tensor<4x8xf32>
  return %s, %residual : tensor<4x8xf32>, tensor<4x8xf32>
}
