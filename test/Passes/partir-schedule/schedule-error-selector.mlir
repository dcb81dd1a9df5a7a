// A selector that matches nothing is an error at the tactic's line in the schedule, naming the
// nearest names there are (the program's signature is not quoted).
// RUN: cd %S && not mlir-opt %plugin -p 'builtin.module(partir-schedule{file=Inputs/bad-selector.toml})' %s -o /dev/null 2>&1 | FileCheck %s --implicit-check-not='error: partir-schedule' --implicit-check-not=remark: --implicit-check-not=func.func
// CHECK: bad-selector.toml:4:1: error: partir-schedule: tactic 'MP': selector '*w3' matches no function argument or named value (nearest names: params/w1, x (2 in all; `partir args MODEL` lists them)

func.func @mlp(%x: tensor<32x64xf32> {partir.name = "x"}, %w1: tensor<64x16xf32> {partir.name = "params/w1"}) -> tensor<32x16xf32> {
  %zero = arith.constant 0.0 : f32
  %e = tensor.empty() : tensor<32x16xf32>
  %f = linalg.fill ins(%zero : f32) outs(%e : tensor<32x16xf32>) -> tensor<32x16xf32>
  %h = linalg.matmul ins(%x, %w1 : tensor<32x64xf32>, tensor<64x16xf32>) outs(%f : tensor<32x16xf32>) -> tensor<32x16xf32>
  return %h : tensor<32x16xf32>
}
