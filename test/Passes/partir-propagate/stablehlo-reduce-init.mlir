// A `stablehlo.reduce` split on its reduced dim gives partial results combined after the loop,
// so each device's init would be counted once per device: an init that is not the reduction's
// identity (5.0 for a sum) stops propagation there; JAX's 0.0 partitions.
// RUN: mlir-opt %plugin --allow-unregistered-dialect -p 'builtin.module(partir-mesh{axes=batch=4}, partir-tile{value=x dim=0 axis=batch}, partir-propagate)' %s 2>&1 | FileCheck %s

// CHECK: remark: partir-propagate: stopped at 'stablehlo.reduce' on axis 'batch': its accumulator is not the identity of the reduction it would be split into
// CHECK: partir.loop "batch" [#partir.sum]
// CHECK: "stablehlo.reduce"(%{{.*}}, %[[ZERO:[^)]*]])
"builtin.module"() ({
  "func.func"() <{arg_attrs = [{partir.name = "x"}], function_type = (tensor<8x4xf32>) -> (tensor<4xf32>, tensor<4xf32>), sym_name = "main"}> ({
  ^bb0(%x: tensor<8x4xf32>):
    %five = "stablehlo.constant"() <{value = dense<5.0> : tensor<f32>}> : () -> tensor<f32>
    %bad = "stablehlo.reduce"(%x, %five) <{dimensions = array<i64: 0>}> ({
    ^bb0(%a: tensor<f32>, %b: tensor<f32>):
      %s = "stablehlo.add"(%a, %b) : (tensor<f32>, tensor<f32>) -> tensor<f32>
      "stablehlo.return"(%s) : (tensor<f32>) -> ()
    }) : (tensor<8x4xf32>, tensor<f32>) -> tensor<4xf32>
    %zero = "stablehlo.constant"() <{value = dense<0.0> : tensor<f32>}> : () -> tensor<f32>
    %good = "stablehlo.reduce"(%x, %zero) <{dimensions = array<i64: 0>}> ({
    ^bb0(%a: tensor<f32>, %b: tensor<f32>):
      %s = "stablehlo.add"(%a, %b) : (tensor<f32>, tensor<f32>) -> tensor<f32>
      "stablehlo.return"(%s) : (tensor<f32>) -> ()
    }) : (tensor<8x4xf32>, tensor<f32>) -> tensor<4xf32>
    "func.return"(%bad, %good) : (tensor<4xf32>, tensor<4xf32>) -> ()
  }) : () -> ()
}) : () -> ()
