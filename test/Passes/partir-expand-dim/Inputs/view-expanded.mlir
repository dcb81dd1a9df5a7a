// The linalg twin of fused.mlir's projection, as partir-expand-dim would leave it: w's dim 1 (12)
// seen as [3, 4], the caller's shapes recorded as partir.view_of. Used by mpi-view.test.
#x = affine_map<(i, k, a, b) -> (i, k)>
#w = affine_map<(i, k, a, b) -> (k, a, b)>
#y = affine_map<(i, k, a, b) -> (i, a, b)>
func.func @main(%x: tensor<4x8xf32> {partir.name = "x"}, %w: tensor<8x3x4xf32> {partir.name = "w", partir.view_of = array<i64: 8, 12>}) -> (tensor<4x3x4xf32> {partir.view_of = array<i64: 4, 12>}) {
  %z = tensor.empty() : tensor<4x3x4xf32>
  %c = arith.constant 0.0 : f32
  %f = linalg.fill ins(%c : f32) outs(%z : tensor<4x3x4xf32>) -> tensor<4x3x4xf32>
  %y = linalg.generic {indexing_maps = [#x, #w, #y], iterator_types = ["parallel", "reduction", "parallel", "parallel"]} ins(%x, %w : tensor<4x8xf32>, tensor<8x3x4xf32>) outs(%f : tensor<4x3x4xf32>) {
  ^bb0(%a: f32, %b: f32, %acc: f32):
    %m = arith.mulf %a, %b : f32
    %s = arith.addf %acc, %m : f32
    linalg.yield %s : f32
  } -> tensor<4x3x4xf32>
  return %y : tensor<4x3x4xf32>
}
