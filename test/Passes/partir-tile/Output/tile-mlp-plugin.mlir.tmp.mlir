module {
  partir.mesh @mesh ["batch"=4, "model"=2]
  func.func @main(%arg0: tensor<32x64xf32> {partir.name = "x"}, %arg1: tensor<64x256xf32> {partir.name = "params/w1"}) -> tensor<32x256xf32> {
    %0 = partir.loop "batch" [#partir.tile<0>] (%arg2: !partir.range<4>) {
      %4 = partir.slice 0 %arg0[%arg2] : tensor<32x64xf32> -> tensor<8x64xf32>
      partir.yield %4 : tensor<8x64xf32>
    } : tensor<32x64xf32>
    %cst = arith.constant 0.000000e+00 : f32
    %1 = tensor.empty() : tensor<32x256xf32>
    %2 = linalg.fill ins(%cst : f32) outs(%1 : tensor<32x256xf32>) -> tensor<32x256xf32>
    %3 = linalg.matmul ins(%0, %arg1 : tensor<32x64xf32>, tensor<64x256xf32>) outs(%2 : tensor<32x256xf32>) -> tensor<32x256xf32>
    return %3 : tensor<32x256xf32>
  }
}

