// The caller's program of view-expanded.mlir: the same matmul on w [8, 12].
func.func @main(%x: tensor<4x8xf32> {partir.name = "x"}, %w: tensor<8x12xf32> {partir.name = "w"}) -> tensor<4x12xf32> {
  %z = tensor.empty() : tensor<4x12xf32>
  %c = arith.constant 0.0 : f32
  %f = linalg.fill ins(%c : f32) outs(%z : tensor<4x12xf32>) -> tensor<4x12xf32>
  %y = linalg.matmul ins(%x, %w : tensor<4x8xf32>, tensor<8x12xf32>) outs(%f : tensor<4x12xf32>) -> tensor<4x12xf32>
  return %y : tensor<4x12xf32>
}
