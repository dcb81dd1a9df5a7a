// Fuzz class 7: a dim tiled along two axes whose product does not divide it was accepted (each
// axis was checked alone); lowering then built a non-divisible all_slice. The second tile now
// pads each tile of the first (docs/design.md#uneven-dims); a program partir cannot pad (no
// StableHLO) gets an error that names both axes and the size needed.
// RUN: mlir-opt %plugin -p 'builtin.module(partir-mesh{axes=a=2,b=4}, partir-tile{value=x dim=0 axis=a}, partir-tile{value=x dim=0 axis=b})' %s -verify-diagnostics

// expected-error @+1 {{partir-tile: dim 0 of 'x' (size 4) is already split 2 ways (along 'a'); splitting each tile of 2 along 'b' (size 4) too needs it padded to 4 (the dim to 8), which cannot be done: partir pads StableHLO and linalg programs so far}}
func.func @main(%x: tensor<4xf32> {partir.name = "x"}) -> tensor<4xf32> {
  return %x : tensor<4xf32>
}
