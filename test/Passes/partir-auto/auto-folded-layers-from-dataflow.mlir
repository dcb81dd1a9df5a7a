// partir-auto on the training step of auto-folded-layers.mlir with 6 layers and no
// locations: nothing says which layer an op is in but the argument names, so the seams
// between layers are found from the dataflow (passes/auto/seams.rs): the cuts keep layers
// {0, 5} and {0, 1, 5} (the last layer cannot be told from the head), and the price is
// extrapolated to 6 layers, exactly on the base program, the same plan as priced whole.
// RUN: mlir-opt %plugin -p 'builtin.module(partir-mesh{axes=batch=4,model=2}, partir-auto{axis=batch})' %s 2>&1 | FileCheck %s
// CHECK: remark: partir-auto: axis 'batch': {{[0-9]+}} raw actions, {{[0-9]+}} after analysis, {{.*}} 6 layers folded into cuts of 2 and 3, layers found from the dataflow (step 0.00% and peak 0.0% off on the base, calibrated to it)
// CHECK: remark: partir-auto: tactic 'auto' on 'batch': tile { x = 0 }
// CHECK: partir.loop "batch"
func.func @main(%x: tensor<64x32xf32> {partir.name = "x"}, %w0: tensor<64x32xf32> {partir.name = "params/layers/0/w"}, %w1: tensor<64x32xf32> {partir.name = "params/layers/1/w"}, %w2: tensor<64x32xf32> {partir.name = "params/layers/2/w"}, %w3: tensor<64x32xf32> {partir.name = "params/layers/3/w"}, %w4: tensor<64x32xf32> {partir.name = "params/layers/4/w"}, %w5: tensor<64x32xf32> {partir.name = "params/layers/5/w"}, %head: tensor<64x32xf32> {partir.name = "params/head"}) -> (tensor<64x32xf32> {partir.name = "params/layers/0/w"}, tensor<64x32xf32> {partir.name = "params/layers/1/w"}, tensor<64x32xf32> {partir.name = "params/layers/2/w"}, tensor<64x32xf32> {partir.name = "params/layers/3/w"}, tensor<64x32xf32> {partir.name = "params/layers/4/w"}, tensor<64x32xf32> {partir.name = "params/layers/5/w"}, tensor<64x32xf32> {partir.name = "out"}, tensor<64x32xf32> {partir.name = "dx"}) {
  %e = tensor.empty() : tensor<64x32xf32>
  %h0 = linalg.mul ins(%x, %w0 : tensor<64x32xf32>, tensor<64x32xf32>) outs(%e : tensor<64x32xf32>) -> tensor<64x32xf32>
  %h1 = linalg.mul ins(%h0, %w1 : tensor<64x32xf32>, tensor<64x32xf32>) outs(%e : tensor<64x32xf32>) -> tensor<64x32xf32>
  %h2 = linalg.mul ins(%h1, %w2 : tensor<64x32xf32>, tensor<64x32xf32>) outs(%e : tensor<64x32xf32>) -> tensor<64x32xf32>
  %h3 = linalg.mul ins(%h2, %w3 : tensor<64x32xf32>, tensor<64x32xf32>) outs(%e : tensor<64x32xf32>) -> tensor<64x32xf32>
  %h4 = linalg.mul ins(%h3, %w4 : tensor<64x32xf32>, tensor<64x32xf32>) outs(%e : tensor<64x32xf32>) -> tensor<64x32xf32>
  %h5 = linalg.mul ins(%h4, %w5 : tensor<64x32xf32>, tensor<64x32xf32>) outs(%e : tensor<64x32xf32>) -> tensor<64x32xf32>
  %out = linalg.mul ins(%h5, %head : tensor<64x32xf32>, tensor<64x32xf32>) outs(%e : tensor<64x32xf32>) -> tensor<64x32xf32>
  %d6 = linalg.mul ins(%out, %head : tensor<64x32xf32>, tensor<64x32xf32>) outs(%e : tensor<64x32xf32>) -> tensor<64x32xf32>
  %dw5 = linalg.mul ins(%d6, %h4 : tensor<64x32xf32>, tensor<64x32xf32>) outs(%e : tensor<64x32xf32>) -> tensor<64x32xf32>
  %d5 = linalg.mul ins(%d6, %w5 : tensor<64x32xf32>, tensor<64x32xf32>) outs(%e : tensor<64x32xf32>) -> tensor<64x32xf32>
  %dw4 = linalg.mul ins(%d5, %h3 : tensor<64x32xf32>, tensor<64x32xf32>) outs(%e : tensor<64x32xf32>) -> tensor<64x32xf32>
  %d4 = linalg.mul ins(%d5, %w4 : tensor<64x32xf32>, tensor<64x32xf32>) outs(%e : tensor<64x32xf32>) -> tensor<64x32xf32>
  %dw3 = linalg.mul ins(%d4, %h2 : tensor<64x32xf32>, tensor<64x32xf32>) outs(%e : tensor<64x32xf32>) -> tensor<64x32xf32>
  %d3 = linalg.mul ins(%d4, %w3 : tensor<64x32xf32>, tensor<64x32xf32>) outs(%e : tensor<64x32xf32>) -> tensor<64x32xf32>
  %dw2 = linalg.mul ins(%d3, %h1 : tensor<64x32xf32>, tensor<64x32xf32>) outs(%e : tensor<64x32xf32>) -> tensor<64x32xf32>
  %d2 = linalg.mul ins(%d3, %w2 : tensor<64x32xf32>, tensor<64x32xf32>) outs(%e : tensor<64x32xf32>) -> tensor<64x32xf32>
  %dw1 = linalg.mul ins(%d2, %h0 : tensor<64x32xf32>, tensor<64x32xf32>) outs(%e : tensor<64x32xf32>) -> tensor<64x32xf32>
  %d1 = linalg.mul ins(%d2, %w1 : tensor<64x32xf32>, tensor<64x32xf32>) outs(%e : tensor<64x32xf32>) -> tensor<64x32xf32>
  %dw0 = linalg.mul ins(%d1, %x : tensor<64x32xf32>, tensor<64x32xf32>) outs(%e : tensor<64x32xf32>) -> tensor<64x32xf32>
  %d0 = linalg.mul ins(%d1, %w0 : tensor<64x32xf32>, tensor<64x32xf32>) outs(%e : tensor<64x32xf32>) -> tensor<64x32xf32>
  %n0 = linalg.sub ins(%w0, %dw0 : tensor<64x32xf32>, tensor<64x32xf32>) outs(%e : tensor<64x32xf32>) -> tensor<64x32xf32>
  %n1 = linalg.sub ins(%w1, %dw1 : tensor<64x32xf32>, tensor<64x32xf32>) outs(%e : tensor<64x32xf32>) -> tensor<64x32xf32>
  %n2 = linalg.sub ins(%w2, %dw2 : tensor<64x32xf32>, tensor<64x32xf32>) outs(%e : tensor<64x32xf32>) -> tensor<64x32xf32>
  %n3 = linalg.sub ins(%w3, %dw3 : tensor<64x32xf32>, tensor<64x32xf32>) outs(%e : tensor<64x32xf32>) -> tensor<64x32xf32>
  %n4 = linalg.sub ins(%w4, %dw4 : tensor<64x32xf32>, tensor<64x32xf32>) outs(%e : tensor<64x32xf32>) -> tensor<64x32xf32>
  %n5 = linalg.sub ins(%w5, %dw5 : tensor<64x32xf32>, tensor<64x32xf32>) outs(%e : tensor<64x32xf32>) -> tensor<64x32xf32>
  return %n0, %n1, %n2, %n3, %n4, %n5, %out, %d0 : tensor<64x32xf32>, tensor<64x32xf32>, tensor<64x32xf32>, tensor<64x32xf32>, tensor<64x32xf32>, tensor<64x32xf32>, tensor<64x32xf32>, tensor<64x32xf32>
}
