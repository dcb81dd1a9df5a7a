// The TMR rules of StableHLO ops, read by op name and attribute (printed form for StableHLO's
// own attributes) in a stock mlir-opt where the dialect is unregistered.
// RUN: mlir-opt %plugin --allow-unregistered-dialect -p 'builtin.module(partir-print-rules)' %s -o /dev/null 2>&1 | FileCheck %s

// Batched attention scores: b and h are batch dims, d is contracted.
// CHECK: stablehlo.dot_general: ([i,l,j,k],[i,m,j,k]) -> ([i,j,l,m]) reduction={k:sum} sizes={i=8,j=4,k=16,l=16,m=16}
// CHECK: stablehlo.broadcast_in_dim: ([j]) -> ([i,j]) sizes={i=8,j=64}
// A size-1 operand dim stretched is used whole.
// CHECK: stablehlo.broadcast_in_dim: ([i,_]) -> ([i,j]) sizes={i=8,j=64}
// CHECK: stablehlo.reduce: ([i,j],[]) -> ([i]) reduction={j:max} sizes={i=8,j=64}
// CHECK: stablehlo.transpose: ([i,j]) -> ([j,i]) sizes={i=8,j=64}
// A split reshape maps only its major dim.
// CHECK: stablehlo.reshape: ([i,j]) -> ([i,j,k]) replicate={k} sizes={i=8,j=8,k=8}
// An iota along its own dim cannot be chunked.
// CHECK: stablehlo.iota: () -> ([i,j]) replicate={j} sizes={i=8,j=64}
// The embedding lookup: tokens' dims pass through, the table's width passes through; rows split
// across devices are looked up masked and summed (Megatron's vocab-parallel embedding).
// CHECK: stablehlo.gather: ([l,k],[i,j,_]) -> ([i,j,k]) reduction={l:sum} sizes={i=8,j=16,k=64,l=64}
// Its gradient: tokens are summed into the table; split rows each add their own ids' updates.
// CHECK: stablehlo.scatter: ([l,k],[i,j,_],[i,j,k]) -> ([l,k]) reduction={i:sum,j:sum} sizes={i=8,j=16,k=64,l=64}
// CHECK: stablehlo.convolution: ([i,_,_,j],[_,_,j,k]) -> ([i,_,_,k]) reduction={j:sum} sizes={i=8,j=4,k=16}
// CHECK: stablehlo.custom_call: ([i,j]) -> ([i,j]) sizes={i=8,j=64}
// CHECK-NOT: warning

"builtin.module"() ({
  "func.func"() <{function_type = (tensor<8x16x4x16xf32>, tensor<8x16x4x16xf32>, tensor<64xf32>, tensor<8x1xf32>, tensor<64x64xf32>, tensor<8x16x1xi32>, tensor<8x16x16x4xf32>, tensor<3x3x4x16xf32>) -> (), sym_name = "main"}> ({
  ^bb0(%q: tensor<8x16x4x16xf32>, %k: tensor<8x16x4x16xf32>, %v: tensor<64xf32>, %col: tensor<8x1xf32>, %table: tensor<64x64xf32>, %tokens: tensor<8x16x1xi32>, %image: tensor<8x16x16x4xf32>, %kernel: tensor<3x3x4x16xf32>):
    %s = "stablehlo.dot_general"(%q, %k) <{dot_dimension_numbers = #stablehlo.dot<lhs_batching_dimensions = [0, 2], rhs_batching_dimensions = [0, 2], lhs_contracting_dimensions = [3], rhs_contracting_dimensions = [3]>}> : (tensor<8x16x4x16xf32>, tensor<8x16x4x16xf32>) -> tensor<8x4x16x16xf32>
    %b = "stablehlo.broadcast_in_dim"(%v) <{broadcast_dimensions = array<i64: 1>}> : (tensor<64xf32>) -> tensor<8x64xf32>
    %c = "stablehlo.broadcast_in_dim"(%col) <{broadcast_dimensions = array<i64: 0, 1>}> : (tensor<8x1xf32>) -> tensor<8x64xf32>
    %init = "stablehlo.constant"() <{value = dense<0xFF800000> : tensor<f32>}> : () -> tensor<f32>
    %m = "stablehlo.reduce"(%b, %init) <{dimensions = array<i64: 1>}> ({
    ^bb0(%x: tensor<f32>, %y: tensor<f32>):
      %z = "stablehlo.maximum"(%x, %y) : (tensor<f32>, tensor<f32>) -> tensor<f32>
      "stablehlo.return"(%z) : (tensor<f32>) -> ()
    }) : (tensor<8x64xf32>, tensor<f32>) -> tensor<8xf32>
    %t = "stablehlo.transpose"(%b) <{permutation = array<i64: 1, 0>}> : (tensor<8x64xf32>) -> tensor<64x8xf32>
    %r = "stablehlo.reshape"(%b) : (tensor<8x64xf32>) -> tensor<8x8x8xf32>
    %i = "stablehlo.iota"() <{iota_dimension = 1 : i64}> : () -> tensor<8x64xi32>
    %g = "stablehlo.gather"(%table, %tokens) <{dimension_numbers = #stablehlo.gather<offset_dims = [2], collapsed_slice_dims = [0], start_index_map = [0], index_vector_dim = 2>, indices_are_sorted = false, slice_sizes = array<i64: 1, 64>}> : (tensor<64x64xf32>, tensor<8x16x1xi32>) -> tensor<8x16x64xf32>
    %zeros = "stablehlo.constant"() <{value = dense<0.0> : tensor<64x64xf32>}> : () -> tensor<64x64xf32>
    %sc = "stablehlo.scatter"(%zeros, %tokens, %g) <{indices_are_sorted = false, scatter_dimension_numbers = #stablehlo.scatter<update_window_dims = [2], inserted_window_dims = [0], scatter_dims_to_operand_dims = [0], index_vector_dim = 2>, unique_indices = false}> ({
    ^bb0(%x: tensor<f32>, %y: tensor<f32>):
      %z = "stablehlo.add"(%x, %y) : (tensor<f32>, tensor<f32>) -> tensor<f32>
      "stablehlo.return"(%z) : (tensor<f32>) -> ()
    }) : (tensor<64x64xf32>, tensor<8x16x1xi32>, tensor<8x16x64xf32>) -> tensor<64x64xf32>
    %conv = "stablehlo.convolution"(%image, %kernel) <{batch_group_count = 1 : i64, dimension_numbers = #stablehlo.conv<[b, 0, 1, f]x[0, 1, i, o]->[b, 0, 1, f]>, feature_group_count = 1 : i64, padding = dense<1> : tensor<2x2xi64>, window_strides = array<i64: 1, 1>}> : (tensor<8x16x16x4xf32>, tensor<3x3x4x16xf32>) -> tensor<8x16x16x16xf32>
    %cc = "stablehlo.custom_call"(%b) <{call_target_name = "Sharding"}> : (tensor<8x64xf32>) -> tensor<8x64xf32>
    "func.return"() : () -> ()
  }) : () -> ()
}) : () -> ()
