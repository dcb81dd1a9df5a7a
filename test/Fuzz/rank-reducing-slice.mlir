// Fuzz class 8: a rank-reducing tensor.extract_slice of a tiled value kept its old sizes (its
// result type and static_sizes disagreed: invalid IR after partir-propagate). The sizes of the
// kept dims follow the new shape; dropped unit dims stay.
// RUN: mlir-opt %plugin -p 'builtin.module(partir-mesh{axes=a=2}, partir-tile{value=x dim=1 axis=a}, partir-propagate)' %s | FileCheck %s
// RUN: mlir-opt %plugin -p 'builtin.module(partir-mesh{axes=a=2}, partir-tile{value=x dim=1 axis=a}, partir-propagate, partir-lower-to-hlo)' %s | FileCheck %s --check-prefix=HLO

// CHECK-LABEL: func.func @main(
// CHECK:         partir.loop "a" [#partir.tile<0>]
// CHECK:           tensor.extract_slice %{{.*}}[0, 0, 0] [1, 8, 4] [1, 1, 1] : tensor<4x8x4xf32> to tensor<8x4xf32>
// HLO:           tensor.extract_slice %arg0[0, 0, 0] [1, 8, 4] [1, 1, 1] : tensor<4x8x4xf32> to tensor<8x4xf32>
func.func @main(%x: tensor<4x16x4xf32> {partir.name = "x"}) -> tensor<16x4xf32> {
  %s = tensor.extract_slice %x[0, 0, 0] [1, 16, 4] [1, 1, 1] : tensor<4x16x4xf32> to tensor<16x4xf32>
  return %s : tensor<16x4xf32>
}
