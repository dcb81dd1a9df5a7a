// Fuzz class (StableHLO generator): a schedule that tiled or pinned a named value computed
// inside a `stablehlo.case` branch or a `stablehlo.while` body was accepted, and the lowering
// then refused the partir loop (or pin) left inside the region ("'partir.loop' inside
// 'stablehlo.case' cannot be lowered"). Tile and replicate now reject such a value up front,
// at the value, naming the op whose region holds it.
// RUN: mlir-opt %plugin --allow-unregistered-dialect -split-input-file -verify-diagnostics -p 'builtin.module(partir-mesh{axes=a=2}, partir-tile{value=inside dim=0 axis=a})' %s
// RUN: mlir-opt %plugin --allow-unregistered-dialect -split-input-file -verify-diagnostics -p 'builtin.module(partir-mesh{axes=a=2}, partir-replicate{value=inside axis=a})' %s
// The values the regions read and return still tile, and the result lowers.
// RUN: mlir-opt %plugin --allow-unregistered-dialect -split-input-file -p 'builtin.module(partir-mesh{axes=a=2}, partir-tile{value=x dim=0 axis=a}, partir-propagate, partir-lower-to-hlo)' %s | FileCheck %s
// CHECK: partir_hlo.sharding = #partir_hlo.sharding<[{"a"}, {}]>
// CHECK: "stablehlo.case"
// CHECK: partir_hlo.sharding = #partir_hlo.sharding<[{"a"}, {}]>
// CHECK: "stablehlo.while"

"func.func"() <{arg_attrs = [{}, {partir.name = "x"}], function_type = (tensor<i32>, tensor<8x4xf32>) -> tensor<8x4xf32>, sym_name = "main"}> ({
^bb0(%index: tensor<i32>, %x: tensor<8x4xf32>):
  %r = "stablehlo.case"(%index) ({
    // expected-error @+1 {{'inside' is computed inside a region of 'stablehlo.case'}}
    %t = "stablehlo.tanh"(%x) {partir.name = "inside"} : (tensor<8x4xf32>) -> tensor<8x4xf32>
    "stablehlo.return"(%t) : (tensor<8x4xf32>) -> ()
  }, {
    "stablehlo.return"(%x) : (tensor<8x4xf32>) -> ()
  }) : (tensor<i32>) -> tensor<8x4xf32>
  "func.return"(%r) : (tensor<8x4xf32>) -> ()
}) : () -> ()

// -----

"func.func"() <{arg_attrs = [{partir.name = "x"}], function_type = (tensor<8x4xf32>) -> tensor<8x4xf32>, sym_name = "main"}> ({
^bb0(%x: tensor<8x4xf32>):
  %zero = "stablehlo.constant"() <{value = dense<0> : tensor<i32>}> : () -> tensor<i32>
  %r:2 = "stablehlo.while"(%zero, %x) ({
  ^bb0(%i: tensor<i32>, %carry: tensor<8x4xf32>):
    %two = "stablehlo.constant"() <{value = dense<2> : tensor<i32>}> : () -> tensor<i32>
    %more = "stablehlo.compare"(%i, %two) <{comparison_direction = #stablehlo<comparison_direction LT>}> : (tensor<i32>, tensor<i32>) -> tensor<i1>
    "stablehlo.return"(%more) : (tensor<i1>) -> ()
  }, {
  ^bb0(%i: tensor<i32>, %carry: tensor<8x4xf32>):
    // expected-error @+1 {{'inside' is computed inside a region of 'stablehlo.while'}}
    %t = "stablehlo.tanh"(%carry) {partir.name = "inside"} : (tensor<8x4xf32>) -> tensor<8x4xf32>
    %one = "stablehlo.constant"() <{value = dense<1> : tensor<i32>}> : () -> tensor<i32>
    %next = "stablehlo.add"(%i, %one) : (tensor<i32>, tensor<i32>) -> tensor<i32>
    "stablehlo.return"(%next, %t) : (tensor<i32>, tensor<8x4xf32>) -> ()
  }) : (tensor<i32>, tensor<8x4xf32>) -> (tensor<i32>, tensor<8x4xf32>)
  "func.return"(%r#1) : (tensor<8x4xf32>) -> ()
}) : () -> ()
