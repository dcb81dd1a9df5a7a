// Calls as `jax.jit(step).lower()` emits them, in generic form (StableHLO unregistered, as in a
// stock mlir-opt): each call site gets its own copy of the callee, nested calls included, and the
// private functions left unused are erased.
// RUN: mlir-opt --allow-unregistered-dialect %plugin -p 'builtin.module(partir-inline-calls)' %s 2>&1 | FileCheck %s

// Four: @main's two, the one in @relu_twice, then its copy in @main.
// CHECK: remark: partir-inline-calls: 4 calls inlined
// CHECK-LABEL: func.func @main
// CHECK-NOT: func.call
// CHECK: %[[Z:.*]] = "stablehlo.constant"
// CHECK: %[[B:.*]] = "stablehlo.broadcast_in_dim"(%[[Z]])
// CHECK: %[[R:.*]] = "stablehlo.maximum"(%arg0, %[[B]])
// CHECK: "stablehlo.constant"
// CHECK: "stablehlo.broadcast_in_dim"
// CHECK: %[[S:.*]] = "stablehlo.maximum"(%arg1,
// CHECK: %[[T:.*]] = "stablehlo.add"(%[[R]], %[[S]])
// CHECK: return %[[T]]
// CHECK-NOT: func.func private
func.func @main(%x: tensor<8x4xf32>, %y: tensor<8x4xf32>) -> tensor<8x4xf32> {
  %0 = "func.call"(%x) <{callee = @relu}> : (tensor<8x4xf32>) -> tensor<8x4xf32>
  %1 = "func.call"(%y) <{callee = @relu_twice}> : (tensor<8x4xf32>) -> tensor<8x4xf32>
  %2 = "stablehlo.add"(%0, %1) : (tensor<8x4xf32>, tensor<8x4xf32>) -> tensor<8x4xf32>
  return %2 : tensor<8x4xf32>
}
func.func private @relu_twice(%a: tensor<8x4xf32>) -> tensor<8x4xf32> {
  %0 = "func.call"(%a) <{callee = @relu}> : (tensor<8x4xf32>) -> tensor<8x4xf32>
  return %0 : tensor<8x4xf32>
}
func.func private @relu(%a: tensor<8x4xf32>) -> tensor<8x4xf32> {
  %z = "stablehlo.constant"() <{value = dense<0.0> : tensor<f32>}> : () -> tensor<f32>
  %b = "stablehlo.broadcast_in_dim"(%z) <{broadcast_dimensions = array<i64>}> : (tensor<f32>) -> tensor<8x4xf32>
  %m = "stablehlo.maximum"(%a, %b) : (tensor<8x4xf32>, tensor<8x4xf32>) -> tensor<8x4xf32>
  return %m : tensor<8x4xf32>
}
