// An inlined op's location says where it was called from, as upstream's inliner writes it:
// `callsite(callee_loc at call_loc)`, on the ops of the callee's regions too (a reduction's
// body). The calls are inlined in place: the ops after them stay in
// order (partir clones a single-block callee before the call rather than splitting the block).
// RUN: mlir-opt --allow-unregistered-dialect %plugin -p 'builtin.module(partir-inline-calls)' --mlir-print-debuginfo --mlir-print-local-scope %s 2>&1 | FileCheck %s

// CHECK-LABEL: func.func @main
// CHECK: "stablehlo.constant"{{.*}} loc(callsite("zero" at "call_total"))
// CHECK: ^bb0(%{{.*}}: tensor<f32> loc(callsite("p" at "call_total")), %{{.*}}: tensor<f32> loc(callsite("q" at "call_total"))):
// CHECK: "stablehlo.add"{{.*}} loc(callsite("body_add" at "call_total"))
// CHECK: "stablehlo.return"{{.*}} loc(callsite("body_return" at "call_total"))
// CHECK: loc(callsite("reduce" at "call_total"))
// CHECK: "stablehlo.multiply"{{.*}} loc(callsite("square" at "call_twice"))
// CHECK: "stablehlo.subtract"{{.*}} loc("after")
func.func @main(%x: tensor<8x4xf32>) -> tensor<8xf32> {
  %0 = "func.call"(%x) <{callee = @total}> : (tensor<8x4xf32>) -> tensor<8xf32> loc("call_total")
  %1 = "func.call"(%0) <{callee = @twice}> : (tensor<8xf32>) -> tensor<8xf32> loc("call_twice")
  %2 = "stablehlo.subtract"(%1, %0) : (tensor<8xf32>, tensor<8xf32>) -> tensor<8xf32> loc("after")
  return %2 : tensor<8xf32>
}
func.func private @total(%a: tensor<8x4xf32>) -> tensor<8xf32> {
  %z = "stablehlo.constant"() <{value = dense<0.0> : tensor<f32>}> : () -> tensor<f32> loc("zero")
  %r = "stablehlo.reduce"(%a, %z) <{dimensions = array<i64: 1>}> ({
  ^bb0(%p: tensor<f32> loc("p"), %q: tensor<f32> loc("q")):
    %s = "stablehlo.add"(%p, %q) : (tensor<f32>, tensor<f32>) -> tensor<f32> loc("body_add")
    "stablehlo.return"(%s) : (tensor<f32>) -> () loc("body_return")
  }) : (tensor<8x4xf32>, tensor<f32>) -> tensor<8xf32> loc("reduce")
  return %r : tensor<8xf32>
}
func.func private @twice(%a: tensor<8xf32>) -> tensor<8xf32> {
  %m = "stablehlo.multiply"(%a, %a) : (tensor<8xf32>, tensor<8xf32>) -> tensor<8xf32> loc("square")
  return %m : tensor<8xf32>
}
