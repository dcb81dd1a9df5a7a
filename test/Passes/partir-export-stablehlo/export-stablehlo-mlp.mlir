// A StableHLO MLP layer pair in JAX's generic form runs through the plugin in a stock mlir-opt
// (StableHLO unregistered): BP on batch=4, Megatron on model=2, lowered and exported as a
// StableHLO SPMD module for XLA with one replica per device (r = b*2 + m).
// RUN: mlir-opt %plugin --allow-unregistered-dialect -p 'builtin.module(partir-schedule{file=%S/Inputs/bp_mp.toml}, partir-lower-to-hlo, partir-export-stablehlo)' %s 2>/dev/null | FileCheck %s
// The output reads back in a stock mlir-opt without the plugin.
// RUN: mlir-opt %plugin --allow-unregistered-dialect -p 'builtin.module(partir-schedule{file=%S/Inputs/bp_mp.toml}, partir-lower-to-hlo, partir-export-stablehlo)' %s 2>/dev/null | mlir-opt --allow-unregistered-dialect -o /dev/null

// CHECK: module attributes {mhlo.num_partitions = 1 : i32, mhlo.num_replicas = 8 : i32, partir.mesh = "batch=4,model=2"}
// CHECK: func.func @main(%{{.*}}: tensor<8x16xf32> {partir.name = "x", partir.sharding = "[{\22batch\22}, {}]"}, %{{.*}}: tensor<16x8xf32> {partir.name = "w1", partir.sharding = "[{}, {\22model\22}]"}, %{{.*}}: tensor<8x8xf32> {partir.name = "w2", partir.sharding = "[{\22model\22}, {}]"})
// CHECK-SAME: -> (tensor<f32> {partir.sharding = "[]"})
// CHECK: "stablehlo.dot_general"{{.*}} : (tensor<8x16xf32>, tensor<16x8xf32>) -> tensor<8x8xf32>
// CHECK: "stablehlo.dot_general"{{.*}} : (tensor<8x8xf32>, tensor<8x8xf32>) -> tensor<8x8xf32>
// Megatron's row-parallel matmul: partial sums over model, groups {b*2, b*2+1}.
// CHECK: "stablehlo.all_reduce"
// CHECK: "stablehlo.add"
// CHECK: replica_groups = dense<{{\[\[}}0, 1], [2, 3], [4, 5], [6, 7]]> : tensor<4x2xi64>
// The loss: a sum over the batch shards, then over model.
// CHECK: "stablehlo.reduce"
// CHECK: "stablehlo.all_reduce"
// CHECK: replica_groups = dense<{{\[\[}}0, 2, 4, 6], [1, 3, 5, 7]]> : tensor<2x4xi64>
// CHECK-NOT: partir_hlo.
// CHECK-NOT: partir.mesh @

"builtin.module"() ({
  "func.func"() <{arg_attrs = [{partir.name = "x"}, {partir.name = "w1"}, {partir.name = "w2"}], function_type = (tensor<32x16xf32>, tensor<16x16xf32>, tensor<16x8xf32>) -> tensor<f32>, sym_name = "main"}> ({
  ^bb0(%x: tensor<32x16xf32>, %w1: tensor<16x16xf32>, %w2: tensor<16x8xf32>):
    %h = "stablehlo.dot_general"(%x, %w1) <{dot_dimension_numbers = #stablehlo.dot<lhs_contracting_dimensions = [1], rhs_contracting_dimensions = [0]>}> : (tensor<32x16xf32>, tensor<16x16xf32>) -> tensor<32x16xf32>
    %zero = "stablehlo.constant"() <{value = dense<0.0> : tensor<32x16xf32>}> : () -> tensor<32x16xf32>
    %r = "stablehlo.maximum"(%h, %zero) : (tensor<32x16xf32>, tensor<32x16xf32>) -> tensor<32x16xf32>
    %y = "stablehlo.dot_general"(%r, %w2) <{dot_dimension_numbers = #stablehlo.dot<lhs_contracting_dimensions = [1], rhs_contracting_dimensions = [0]>}> : (tensor<32x16xf32>, tensor<16x8xf32>) -> tensor<32x8xf32>
    %init = "stablehlo.constant"() <{value = dense<0.0> : tensor<f32>}> : () -> tensor<f32>
    %loss = "stablehlo.reduce"(%y, %init) <{dimensions = array<i64: 0, 1>}> ({
    ^bb0(%a: tensor<f32>, %b: tensor<f32>):
      %s = "stablehlo.add"(%a, %b) : (tensor<f32>, tensor<f32>) -> tensor<f32>
      "stablehlo.return"(%s) : (tensor<f32>) -> ()
    }) : (tensor<32x8xf32>, tensor<f32>) -> tensor<f32>
    "func.return"(%loss) : (tensor<f32>) -> ()
  }) : () -> ()
}) : () -> ()
