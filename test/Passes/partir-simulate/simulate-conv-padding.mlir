// RUN: mlir-opt %plugin -split-input-file -p 'builtin.module(partir-simulate{device=%S/Inputs/round.toml})' %s -o /dev/null 2>&1 | FileCheck %s
//
// A 3x3 convolution over a zero-padded 4x4 image (SAME padding) counts only the taps that land
// on the image, as XLA's cost analysis does: per spatial dim, of the 4 outputs x 3 taps = 12
// (out, tap) pairs, o+t = 0 and o+t = 5 fall on the padding → 10; 10·10 iterations, mul+add each
// → 200 FLOP (not 2·144 = 288).

// CHECK-LABEL: partir-simulate: round
// CHECK: compute 200 FLOP
func.func @main(%image: tensor<1x4x4x1xf32>, %kernel: tensor<3x3x1x1xf32>) -> tensor<1x4x4x1xf32> {
  %zero = arith.constant 0.0 : f32
  %padded = tensor.pad %image low[0, 1, 1, 0] high[0, 1, 1, 0] {
  ^bb0(%i: index, %j: index, %k: index, %l: index):
    tensor.yield %zero : f32
  } : tensor<1x4x4x1xf32> to tensor<1x6x6x1xf32>
  %empty = tensor.empty() : tensor<1x4x4x1xf32>
  %init = linalg.fill ins(%zero : f32) outs(%empty : tensor<1x4x4x1xf32>) -> tensor<1x4x4x1xf32>
  %out = linalg.conv_2d_nhwc_hwcf ins(%padded, %kernel : tensor<1x6x6x1xf32>, tensor<3x3x1x1xf32>) outs(%init : tensor<1x4x4x1xf32>) -> tensor<1x4x4x1xf32>
  return %out : tensor<1x4x4x1xf32>
}

// -----

// Padding with ones is real data: every tap counts, 2·144 = 288 FLOP.
// CHECK-LABEL: partir-simulate: round
// CHECK: compute 288 FLOP
func.func @main(%image: tensor<1x4x4x1xf32>, %kernel: tensor<3x3x1x1xf32>) -> tensor<1x4x4x1xf32> {
  %zero = arith.constant 0.0 : f32
  %one = arith.constant 1.0 : f32
  %padded = tensor.pad %image low[0, 1, 1, 0] high[0, 1, 1, 0] {
  ^bb0(%i: index, %j: index, %k: index, %l: index):
    tensor.yield %one : f32
  } : tensor<1x4x4x1xf32> to tensor<1x6x6x1xf32>
  %empty = tensor.empty() : tensor<1x4x4x1xf32>
  %init = linalg.fill ins(%zero : f32) outs(%empty : tensor<1x4x4x1xf32>) -> tensor<1x4x4x1xf32>
  %out = linalg.conv_2d_nhwc_hwcf ins(%padded, %kernel : tensor<1x6x6x1xf32>, tensor<3x3x1x1xf32>) outs(%init : tensor<1x4x4x1xf32>) -> tensor<1x4x4x1xf32>
  return %out : tensor<1x4x4x1xf32>
}
