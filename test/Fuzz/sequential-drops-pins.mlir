// Fuzz class 6: partir-sequential removed the mesh but left `partir.replicate` pins, so the
// sequential reading of any schedule with a pin did not verify. Pins are identities there.
// RUN: mlir-opt %plugin -p 'builtin.module(partir-mesh{axes=a=2}, partir-replicate{value=w axis=a}, partir-tile{value=x dim=0 axis=a}, partir-propagate, partir-sequential)' %s | FileCheck %s --implicit-check-not=partir.replicate --implicit-check-not=partir.mesh --implicit-check-not=partir.loop

// CHECK-LABEL: func.func @main(
// CHECK:         scf.for
// CHECK:           linalg.matmul
func.func @main(%x: tensor<8x4xf32> {partir.name = "x"}, %w: tensor<4x4xf32> {partir.name = "w"}) -> tensor<8x4xf32> {
  %z = arith.constant 0.0 : f32
  %e = tensor.empty() : tensor<8x4xf32>
  %f = linalg.fill ins(%z : f32) outs(%e : tensor<8x4xf32>) -> tensor<8x4xf32>
  %m = linalg.matmul ins(%x, %w : tensor<8x4xf32>, tensor<4x4xf32>) outs(%f : tensor<8x4xf32>) -> tensor<8x4xf32>
  return %m : tensor<8x4xf32>
}
