// A call nothing can inline (its callee is a declaration, or it recurses) is said, with what it
// means for partitioning; the pass still succeeds.
// RUN: mlir-opt --allow-unregistered-dialect %plugin -p 'builtin.module(partir-inline-calls)' %s 2>&1 | FileCheck %s

// CHECK: inline-left.mlir:[[# @LINE + 2]]:8: warning: partir-inline-calls: call to @external not inlined: its callee has no body in this module; nothing is partitioned through it
func.func @main(%x: tensor<8x4xf32>) -> tensor<8x4xf32> {
  %0 = "func.call"(%x) <{callee = @external}> : (tensor<8x4xf32>) -> tensor<8x4xf32>
  %1 = "func.call"(%0) <{callee = @forever}> : (tensor<8x4xf32>) -> tensor<8x4xf32>
  return %1 : tensor<8x4xf32>
}
func.func private @external(%a: tensor<8x4xf32>) -> tensor<8x4xf32>
// CHECK: warning: partir-inline-calls: call to @forever not inlined: it calls itself (recursion)
func.func private @forever(%a: tensor<8x4xf32>) -> tensor<8x4xf32> {
  %0 = "func.call"(%a) <{callee = @forever}> : (tensor<8x4xf32>) -> tensor<8x4xf32>
  return %0 : tensor<8x4xf32>
}
