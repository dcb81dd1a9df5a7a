// view-expanded.mlir with w read as [8, 4, 3]: factors in the wrong order (a planted bug).
#x = affine_map<(i, k, a, b) -> (i, k)>
#w = affine_map<(i, k, a, b) -> (k, b, a)>
#y = affine_map<(i, k, a, b) -> (i, a, b)>
func.func @main(%x: tensor<4x8xf32> {partir.name = "x"}, %w: tensor<8x4x3xf32> {partir.name = "w", partir.view_of = array<i64: 8, 12>}) -> (tensor<4x3x4xf32> {partir.view_of = array<i64: 4, 12>}) {
  %z = tensor.empty() : tensor<4x3x4xf32>
  %c = arith.constant 0.0 : f32
  %f = linalg.fill ins(%c : f32) outs(%z : tensor<4x3x4xf32>) -> tensor<4x3x4xf32>
  %y = linalg.generic {indexing_maps = [#x, #w, #y], iterator_types = ["parallel", "reduction", "parallel", "parallel"]} ins(%x, %w : tensor<4x8xf32>, tensor<8x4x3xf32>) outs(%f : tensor<4x3x4xf32>) {
  ^bb0(%a: f32, %b: f32, %acc: f32):
    %m = arith.mulf %a, %b : f32
    %s = arith.addf %acc, %m : f32
    linalg.yield %s : f32
  } -> tensor<4x3x4xf32>
  return %y : tensor<4x3x4xf32>
}
