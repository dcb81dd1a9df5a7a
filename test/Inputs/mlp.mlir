func.func @main(%x: tensor<32x64xf32> {partir.name = "x"}, %w1: tensor<64x256xf32> {partir.name = "params/w1"}) -> tensor<32x256xf32> {
  %zero = arith.constant 0.0 : f32
  %init = tensor.empty() : tensor<32x256xf32>
  %fill = linalg.fill ins(%zero : f32) outs(%init : tensor<32x256xf32>) -> tensor<32x256xf32>
  %h = linalg.matmul ins(%x, %w1 : tensor<32x64xf32>, tensor<64x256xf32>) outs(%fill : tensor<32x256xf32>) -> tensor<32x256xf32>
  return %h : tensor<32x256xf32>
}
