// A misspelt tactic key (tiles = ...) is an error with its line, never silently ignored.
// RUN: cd %S && mlir-opt %plugin -verify-diagnostics -p 'builtin.module(partir-schedule{file=Inputs/bad-unknown-key.toml})' %s
// RUN: cd %S && not mlir-opt %plugin -p 'builtin.module(partir-schedule{file=Inputs/bad-unknown-key.toml})' %s -o /dev/null 2>&1 | FileCheck %s --implicit-check-not='error: partir-schedule' --implicit-check-not=remark:
// CHECK: error: partir-schedule: schedule 'Inputs/bad-unknown-key.toml': unknown field `tiles`, expected one of `name`, `axis`, `tile`, `replicate`, `propagate`, `auto`, `pipeline` (line 7)

// expected-error @below {{partir-schedule: schedule 'Inputs/bad-unknown-key.toml': unknown field `tiles`, expected one of `name`, `axis`, `tile`, `replicate`, `propagate`, `auto`, `pipeline` (line 7)}}
func.func @mlp(%x: tensor<32x64xf32> {partir.name = "x"}, %w1: tensor<64x16xf32> {partir.name = "params/w1"}) -> tensor<32x16xf32> {
  %zero = arith.constant 0.0 : f32
  %e = tensor.empty() : tensor<32x16xf32>
  %f = linalg.fill ins(%zero : f32) outs(%e : tensor<32x16xf32>) -> tensor<32x16xf32>
  %h = linalg.matmul ins(%x, %w1 : tensor<32x64xf32>, tensor<64x16xf32>) outs(%f : tensor<32x16xf32>) -> tensor<32x16xf32>
  return %h : tensor<32x16xf32>
}
