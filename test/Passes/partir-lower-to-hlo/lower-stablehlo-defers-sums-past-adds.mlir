// StableHLO partial sums added together are reduced once, after the add (Megatron's backward:
// dx = dq·wqᵀ + dk·wkᵀ + dv·wvᵀ is one all_reduce, not three), also through a reshape.
// RUN: mlir-opt %plugin --allow-unregistered-dialect -p 'builtin.module(partir-mesh{axes=model=2}, partir-tile{value=w1 dim=0 axis=model}, partir-tile{value=w2 dim=0 axis=model}, partir-propagate, partir-lower-to-hlo)' %s 2>/dev/null | FileCheck %s

// CHECK-COUNT-2: "stablehlo.dot_general"
// CHECK: "stablehlo.reshape"
// CHECK: %[[SUM:.*]] = "stablehlo.add"
// CHECK-NEXT: partir_hlo.all_reduce sum %[[SUM]] axes ["model"] : tensor<8x4x2xf32>
// CHECK-NOT: partir_hlo.all_reduce

"builtin.module"() ({
  "func.func"() <{arg_attrs = [{partir.name = "x"}, {partir.name = "w1"}, {partir.name = "w2"}], function_type = (tensor<8x16xf32>, tensor<16x8xf32>, tensor<16x8xf32>) -> tensor<8x4x2xf32>, sym_name = "main"}> ({
  ^bb0(%x: tensor<8x16xf32>, %w1: tensor<16x8xf32>, %w2: tensor<16x8xf32>):
    %a = "stablehlo.dot_general"(%x, %w1) <{dot_dimension_numbers = #stablehlo.dot<lhs_contracting_dimensions = [1], rhs_contracting_dimensions = [0]>}> : (tensor<8x16xf32>, tensor<16x8xf32>) -> tensor<8x8xf32>
    %b = "stablehlo.dot_general"(%x, %w2) <{dot_dimension_numbers = #stablehlo.dot<lhs_contracting_dimensions = [1], rhs_contracting_dimensions = [0]>}> : (tensor<8x16xf32>, tensor<16x8xf32>) -> tensor<8x8xf32>
    %ar = "stablehlo.reshape"(%a) : (tensor<8x8xf32>) -> tensor<8x4x2xf32>
    %br = "stablehlo.reshape"(%b) : (tensor<8x8xf32>) -> tensor<8x4x2xf32>
    %s = "stablehlo.add"(%ar, %br) : (tensor<8x4x2xf32>, tensor<8x4x2xf32>) -> tensor<8x4x2xf32>
    "func.return"(%s) : (tensor<8x4x2xf32>) -> ()
  }) : () -> ()
}) : () -> ()
