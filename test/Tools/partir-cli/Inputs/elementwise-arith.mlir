func.func @main(%x: tensor<32x64xf32> {partir.name = "x"}, %y: tensor<32x64xf32> {partir.name = "y"}) -> tensor<32x64xf32> {
  %s = arith.subf %x, %y : tensor<32x64xf32>
  %e = math.exp %s : tensor<32x64xf32>
  return %e : tensor<32x64xf32>
}
