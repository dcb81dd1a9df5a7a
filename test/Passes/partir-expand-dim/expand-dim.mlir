// partir-expand-dim sees dim 1 of w (12 = 3 x 2 x 2: q|k|v x heads x head_dim, as GPT-2's
// fused c_attn) as [3, 2, 2], through every op the dim flows to: the matmul, the bias (an
// argument reached through the add), the slices of q and k by whole steps of 4, their
// concatenate (a gradient), a sum over it and the update. The entry function's expanded
// arguments and results record the caller's shape; the reshape of q*k keeps its own result.
// RUN: mlir-opt %plugin --allow-unregistered-dialect -p 'builtin.module(partir-expand-dim{value=w dim=1 sizes=3,2,2})' %s 2>&1 | FileCheck %s

// CHECK: remark: partir-expand-dim: 13 values expanded
// CHECK-LABEL: func.func @main
// CHECK-SAME: %arg1: tensor<8x3x2x2xf32> {partir.name = "w", partir.view_of = array<i64: 8, 12>}
// CHECK-SAME: %arg2: tensor<3x2x2xf32> {partir.name = "b", partir.view_of = array<i64: 12>}
// CHECK-SAME: -> (tensor<4x2x2xf32>, tensor<8x3x2x2xf32> {partir.view_of = array<i64: 8, 12>}, tensor<3x2x2xf32> {partir.view_of = array<i64: 12>})
// CHECK: "stablehlo.dot_general"(%arg0, %arg1) <{dot_dimension_numbers = #stablehlo.dot<lhs_contracting_dimensions = [1], rhs_contracting_dimensions = [0]>}> : (tensor<4x8xf32>, tensor<8x3x2x2xf32>) -> tensor<4x3x2x2xf32>
// CHECK: "stablehlo.broadcast_in_dim"(%arg2) <{broadcast_dimensions = array<i64: 1, 2, 3>}> : (tensor<3x2x2xf32>) -> tensor<4x3x2x2xf32>
// CHECK: "stablehlo.slice"({{.*}}) <{limit_indices = array<i64: 4, 2, 2, 2>, start_indices = array<i64: 0, 1, 0, 0>, strides = array<i64: 1, 1, 1, 1>}> : (tensor<4x3x2x2xf32>) -> tensor<4x1x2x2xf32>
// A sort reads q along the expanded dim: it keeps q's shape, through a reshape back.
// CHECK-NEXT: %[[BACK:.*]] = "stablehlo.reshape"({{.*}}) : (tensor<4x1x2x2xf32>) -> tensor<4x4xf32>
// CHECK: "stablehlo.slice"({{.*}}) <{limit_indices = array<i64: 4, 3, 2, 2>, start_indices = array<i64: 0, 2, 0, 0>, strides = array<i64: 1, 1, 1, 1>}> : (tensor<4x3x2x2xf32>) -> tensor<4x1x2x2xf32>
// CHECK: "stablehlo.multiply"({{.*}}) : (tensor<4x1x2x2xf32>, tensor<4x1x2x2xf32>) -> tensor<4x1x2x2xf32>
// CHECK: "stablehlo.reshape"({{.*}}) : (tensor<4x1x2x2xf32>) -> tensor<4x2x2xf32>
// CHECK: "stablehlo.concatenate"({{.*}}) <{dimension = 1 : i64}> : (tensor<4x1x2x2xf32>, tensor<4x1x2x2xf32>, tensor<4x1x2x2xf32>) -> tensor<4x3x2x2xf32>
// CHECK: "stablehlo.dot_general"(%arg0, {{.*}}) <{dot_dimension_numbers = #stablehlo.dot<lhs_contracting_dimensions = [0], rhs_contracting_dimensions = [0]>}> : (tensor<4x8xf32>, tensor<4x3x2x2xf32>) -> tensor<8x3x2x2xf32>
// CHECK: "stablehlo.subtract"(%arg1, {{.*}}) : (tensor<8x3x2x2xf32>, tensor<8x3x2x2xf32>) -> tensor<8x3x2x2xf32>
// CHECK: "stablehlo.reduce"({{.*}}) <{dimensions = array<i64: 0>}>
// CHECK: (tensor<4x3x2x2xf32>, tensor<f32>) -> tensor<3x2x2xf32>
// CHECK: "stablehlo.sort"(%[[BACK]])
func.func @main(%x: tensor<4x8xf32> {partir.name = "x"}, %w: tensor<8x12xf32> {partir.name = "w"}, %b: tensor<12xf32> {partir.name = "b"}) -> (tensor<4x2x2xf32>, tensor<8x12xf32>, tensor<12xf32>) {
  %y = "stablehlo.dot_general"(%x, %w) <{dot_dimension_numbers = #stablehlo.dot<lhs_contracting_dimensions = [1], rhs_contracting_dimensions = [0]>}> : (tensor<4x8xf32>, tensor<8x12xf32>) -> tensor<4x12xf32>
  %bb = "stablehlo.broadcast_in_dim"(%b) <{broadcast_dimensions = array<i64: 1>}> : (tensor<12xf32>) -> tensor<4x12xf32>
  %z = "stablehlo.add"(%y, %bb) : (tensor<4x12xf32>, tensor<4x12xf32>) -> tensor<4x12xf32>
  %q = "stablehlo.slice"(%z) <{start_indices = array<i64: 0, 4>, limit_indices = array<i64: 4, 8>, strides = array<i64: 1, 1>}> : (tensor<4x12xf32>) -> tensor<4x4xf32>
  %k = "stablehlo.slice"(%z) <{start_indices = array<i64: 0, 8>, limit_indices = array<i64: 4, 12>, strides = array<i64: 1, 1>}> : (tensor<4x12xf32>) -> tensor<4x4xf32>
  %qk = "stablehlo.multiply"(%q, %k) : (tensor<4x4xf32>, tensor<4x4xf32>) -> tensor<4x4xf32>
  %r = "stablehlo.reshape"(%qk) : (tensor<4x4xf32>) -> tensor<4x2x2xf32>
  %c = "stablehlo.concatenate"(%q, %k, %qk) <{dimension = 1 : i64}> : (tensor<4x4xf32>, tensor<4x4xf32>, tensor<4x4xf32>) -> tensor<4x12xf32>
  %g = "stablehlo.dot_general"(%x, %c) <{dot_dimension_numbers = #stablehlo.dot<lhs_contracting_dimensions = [0], rhs_contracting_dimensions = [0]>}> : (tensor<4x8xf32>, tensor<4x12xf32>) -> tensor<8x12xf32>
  %u = "stablehlo.subtract"(%w, %g) : (tensor<8x12xf32>, tensor<8x12xf32>) -> tensor<8x12xf32>
  %zero = "stablehlo.constant"() <{value = dense<0.0> : tensor<f32>}> : () -> tensor<f32>
  %db = "stablehlo.reduce"(%c, %zero) <{dimensions = array<i64: 0>}> ({
  ^bb0(%a0: tensor<f32>, %a1: tensor<f32>):
    %s = "stablehlo.add"(%a0, %a1) : (tensor<f32>, tensor<f32>) -> tensor<f32>
    "stablehlo.return"(%s) : (tensor<f32>) -> ()
  }) : (tensor<4x12xf32>, tensor<f32>) -> tensor<12xf32>
  %nb = "stablehlo.subtract"(%b, %db) : (tensor<12xf32>, tensor<12xf32>) -> tensor<12xf32>
  %srt = "stablehlo.sort"(%q) ({
  ^bb0(%s0: tensor<f32>, %s1: tensor<f32>):
    %lt = "stablehlo.compare"(%s0, %s1) <{comparison_direction = #stablehlo<comparison_direction LT>}> : (tensor<f32>, tensor<f32>) -> tensor<i1>
    "stablehlo.return"(%lt) : (tensor<i1>) -> ()
  }) {dimension = 1 : i64} : (tensor<4x4xf32>) -> tensor<4x4xf32>
  %use = "stablehlo.add"(%srt, %srt) : (tensor<4x4xf32>, tensor<4x4xf32>) -> tensor<4x4xf32>
  return %r, %u, %nb : tensor<4x2x2xf32>, tensor<8x12xf32>, tensor<12xf32>
}
