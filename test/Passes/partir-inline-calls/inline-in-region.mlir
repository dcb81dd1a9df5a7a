// A call inside the body of an op of an unregistered dialect (`jax.lax.fori_loop`'s
// `stablehlo.while` calling a helper) is inlined there: upstream's default inliner hooks ask
// the dialect of the op around the call, which a stock mlir-opt does not know (that crashed).
// RUN: mlir-opt --allow-unregistered-dialect %plugin -p 'builtin.module(partir-inline-calls)' %s 2>&1 | FileCheck %s

// CHECK: remark: partir-inline-calls: 1 calls inlined
// CHECK: "stablehlo.while"
// CHECK-NOT: func.call
// CHECK: "stablehlo.maximum"
// CHECK: "stablehlo.return"
// CHECK-NOT: func.func private
func.func @main(%x: tensor<8x4xf32>) -> tensor<8x4xf32> {
  %0 = "stablehlo.while"(%x) ({
  ^bb0(%a: tensor<8x4xf32>):
    %c = "stablehlo.constant"() <{value = dense<true> : tensor<i1>}> : () -> tensor<i1>
    "stablehlo.return"(%c) : (tensor<i1>) -> ()
  }, {
  ^bb0(%a: tensor<8x4xf32>):
    %r = "func.call"(%a) <{callee = @relu}> : (tensor<8x4xf32>) -> tensor<8x4xf32>
    "stablehlo.return"(%r) : (tensor<8x4xf32>) -> ()
  }) : (tensor<8x4xf32>) -> tensor<8x4xf32>
  return %0 : tensor<8x4xf32>
}
func.func private @relu(%a: tensor<8x4xf32>) -> tensor<8x4xf32> {
  %m = "stablehlo.maximum"(%a, %a) : (tensor<8x4xf32>, tensor<8x4xf32>) -> tensor<8x4xf32>
  return %m : tensor<8x4xf32>
}
