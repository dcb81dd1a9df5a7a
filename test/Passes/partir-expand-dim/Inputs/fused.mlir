// A fused projection as GPT-2 writes it: w's dim 1 (12) holds q, k and v of 2 heads of 2; the
// step slices q and k out of x.w + b, and its "gradient" concatenates them back. Used by
// tests/published.rs (fused_projection_splits_by_heads) with fused.toml.
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
  return %r, %u, %nb : tensor<4x2x2xf32>, tensor<8x12xf32>, tensor<12xf32>
}
