// RUN: mlir-opt %plugin --allow-unregistered-dialect -p 'builtin.module(partir-simulate{device=%S/Inputs/round.toml})' %s -o /dev/null 2>&1 | FileCheck %s
//
// A loop holds one iteration's temporaries while it runs, beyond its carries (1024 f32 = 4 KiB):
// the body broadcasts the 4 KiB carry to %t (16 KiB) and reduces it back to %u (4 KiB, yielded).
// The broadcast fuses into the reduce (passes/simulate/fusion.rs: XLA's input fusion), so %t is
// never written. Live at the while: x (4 KiB), the loop's results (4 KiB) and the body's peak,
// %u (4 KiB): 12 KiB and the scalars (28 KiB when %t was written too). Counting carries and
// results only, the simulator said 8 KiB; XLA holds the body's buffers (a rematerialised
// layer's recomputed activations) while it runs.
// CHECK: peak memory  12.0{{[0-9]}} KiB
// CHECK-NEXT: peak at stablehlo.while
"func.func"() <{function_type = (tensor<1024xf32>) -> tensor<1024xf32>, sym_name = "main"}> ({
^bb0(%x: tensor<1024xf32>):
  %c0 = "stablehlo.constant"() <{value = dense<0> : tensor<i32>}> : () -> tensor<i32>
  %r:2 = "stablehlo.while"(%c0, %x) ({
  ^bb0(%i: tensor<i32>, %v: tensor<1024xf32>):
    %n = "stablehlo.constant"() <{value = dense<4> : tensor<i32>}> : () -> tensor<i32>
    %lt = "stablehlo.compare"(%i, %n) <{comparison_direction = #stablehlo<comparison_direction LT>}> : (tensor<i32>, tensor<i32>) -> tensor<i1>
    "stablehlo.return"(%lt) : (tensor<i1>) -> ()
  }, {
  ^bb0(%i: tensor<i32>, %v: tensor<1024xf32>):
    %one = "stablehlo.constant"() <{value = dense<1> : tensor<i32>}> : () -> tensor<i32>
    %j = "stablehlo.add"(%i, %one) : (tensor<i32>, tensor<i32>) -> tensor<i32>
    %t = "stablehlo.broadcast_in_dim"(%v) <{broadcast_dimensions = array<i64: 1>}> : (tensor<1024xf32>) -> tensor<4x1024xf32>
    %zero = "stablehlo.constant"() <{value = dense<0.0> : tensor<f32>}> : () -> tensor<f32>
    %u = "stablehlo.reduce"(%t, %zero) <{dimensions = array<i64: 0>}> ({
    ^bb0(%a: tensor<f32>, %b: tensor<f32>):
      %s = "stablehlo.add"(%a, %b) : (tensor<f32>, tensor<f32>) -> tensor<f32>
      "stablehlo.return"(%s) : (tensor<f32>) -> ()
    }) : (tensor<4x1024xf32>, tensor<f32>) -> tensor<1024xf32>
    "stablehlo.return"(%j, %u) : (tensor<i32>, tensor<1024xf32>) -> ()
  }) : (tensor<i32>, tensor<1024xf32>) -> (tensor<i32>, tensor<1024xf32>)
  "func.return"(%r#1) : (tensor<1024xf32>) -> ()
}) : () -> ()
