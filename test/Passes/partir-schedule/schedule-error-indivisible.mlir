// Tiling a dim the axis size does not divide pads it (tile-uneven.mlir); where it cannot (a
// program in dialects partir does not pad: TOSA), it is an error at the tactic's line in the
// schedule, naming tactic, value and sizes.
// RUN: cd %S && not mlir-opt %plugin -p 'builtin.module(partir-schedule{file=Inputs/bad-indivisible.toml})' %s -o /dev/null 2>&1 | FileCheck %s --implicit-check-not='error: partir-schedule' --implicit-check-not=remark: --implicit-check-not=func.func
// CHECK: bad-indivisible.toml:{{[0-9]+}}:1: error: partir-schedule: tactic 'MP': dim 1 of 'params/w1' (size 16) is not divisible by axis 'model' (size 3), and it cannot be padded to 18: partir pads StableHLO and linalg programs so far, and no op this value flows to is one

func.func @mlp(%w1: tensor<64x16xf32> {partir.name = "params/w1"}) -> tensor<64x16xf32> {
  %h = tosa.tanh %w1 : (tensor<64x16xf32>) -> tensor<64x16xf32>
  return %h : tensor<64x16xf32>
}
