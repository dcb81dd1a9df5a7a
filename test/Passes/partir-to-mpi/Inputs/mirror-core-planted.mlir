// A planted bug in mirror-core.mlir: each device reverses the rows of the wrong device
// (its pair's neighbour), so the partitioned program differs from the original.
#reversed = affine_map<(d0, d1) -> (-d0 + 1, d1)>
#identity = affine_map<(d0, d1) -> (d0, d1)>
module {
  partir.mesh @mesh ["batch"=4]
  func.func @main(%x: tensor<8x4xf32>) -> tensor<8x4xf32> {
    %y = partir.loop "batch" [#partir.tile<0>] (%r: !partir.range<4>) {
      %c = partir.permute 0 %x[%r] from [2, 3, 0, 1] : tensor<8x4xf32> -> tensor<2x4xf32>
      %e = tensor.empty() : tensor<2x4xf32>
      %m = linalg.generic {indexing_maps = [#reversed, #identity],
                           iterator_types = ["parallel", "parallel"]}
          ins(%c : tensor<2x4xf32>) outs(%e : tensor<2x4xf32>) {
      ^bb0(%a: f32, %b: f32):
        linalg.yield %a : f32
      } -> tensor<2x4xf32>
      partir.yield %m : tensor<2x4xf32>
    } : tensor<8x4xf32>
    return %y : tensor<8x4xf32>
  }
}
