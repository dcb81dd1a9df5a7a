// Tiling a dim the axis size does not divide pads it (tile-uneven.mlir); where it cannot (a linalg
// program), it is an error at the tactic's line in the schedule,
// naming tactic, value and sizes.
// RUN: cd %S && not mlir-opt %plugin -p 'builtin.module(partir-schedule{file=Inputs/bad-indivisible.toml})' %s -o /dev/null 2>&1 | FileCheck %s --implicit-check-not='error: partir-schedule' --implicit-check-not=remark: --implicit-check-not=func.func
// CHECK: bad-indivisible.toml:{{[0-9]+}}:1: error: partir-schedule: tactic 'MP': dim 1 of 'params/w1' (size 16) is not divisible by axis 'model' (size 3), and it cannot be padded to 18: partir pads StableHLO programs so far, and no op this value flows to is StableHLO

func.func @mlp(%x: tensor<32x64xf32> {partir.name = "x"}, %w1: tensor<64x16xf32> {partir.name = "params/w1"}) -> tensor<32x16xf32> {
  %zero = arith.constant 0.0 : f32
  %e = tensor.empty() : tensor<32x16xf32>
  %f = linalg.fill ins(%zero : f32) outs(%e : tensor<32x16xf32>) -> tensor<32x16xf32>
  %h = linalg.matmul ins(%x, %w1 : tensor<32x64xf32>, tensor<64x16xf32>) outs(%f : tensor<32x16xf32>) -> tensor<32x16xf32>
  return %h : tensor<32x16xf32>
}
