// The rows of x in reverse order: row i of the result is row 7 - i of x.
#reversed = affine_map<(d0, d1) -> (-d0 + 7, d1)>
#identity = affine_map<(d0, d1) -> (d0, d1)>
func.func @main(%x: tensor<8x4xf32>) -> tensor<8x4xf32> {
  %e = tensor.empty() : tensor<8x4xf32>
  %y = linalg.generic {indexing_maps = [#reversed, #identity],
                       iterator_types = ["parallel", "parallel"]}
      ins(%x : tensor<8x4xf32>) outs(%e : tensor<8x4xf32>) {
  ^bb0(%a: f32, %b: f32):
    linalg.yield %a : f32
  } -> tensor<8x4xf32>
  return %y : tensor<8x4xf32>
}
