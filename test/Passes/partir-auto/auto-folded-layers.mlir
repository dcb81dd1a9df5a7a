// partir-auto on a training step of 4 repeated layers (h = h * w, its backward, an SGD
// update) whose ops say their layer in JAX's name-stack locations: plans are priced on two
// cuts of the program, its first layer and its first two, and the price is extrapolated to 4
// layers (passes/auto/fold.rs). It prices the base program exactly, and the search finds
// what it finds priced whole: the same program without locations (re-printed by a plain
// mlir-opt, which drops them) is priced whole, and says why: found from the dataflow, the
// cuts would keep the last layer too (auto-folded-layers-from-dataflow.mlir), 5 of its 4. The step is memory bound, and
// the elementwise chain fuses (passes/simulate/fusion.rs): only what leaves a fusion moves
// (52.4 ns; 122.9 ns when every op read and wrote memory).
// RUN: mlir-opt %plugin -p 'builtin.module(partir-mesh{axes=batch=4,model=2}, partir-auto{axis=batch})' %s 2>&1 | FileCheck %s --check-prefix=FOLDED
// FOLDED: remark: partir-auto: axis 'batch': 18 raw actions, 4 after analysis, 10 plans priced (+6 probes) in {{.*}} (all of them), 4 layers folded into cuts of 1 and 2 (step 0.00% and peak 0.0% off on the base, calibrated to it); step 52.4 ns, peak 26.00 KiB
// FOLDED: remark: partir-auto: tactic 'auto' on 'batch': tile { x = 0 }
// FOLDED: partir.loop "batch"
// RUN: mlir-opt %s | mlir-opt %plugin -p 'builtin.module(partir-mesh{axes=batch=4,model=2}, partir-auto{axis=batch})' 2>&1 | FileCheck %s --check-prefix=WHOLE
// WHOLE: remark: partir-auto: axis 'batch': 18 raw actions, 4 after analysis, 10 plans priced (+6 probes) in {{.*}} (all of them), whole program (not folded: no op is located in a layer, and 4 layers found from the dataflow are fewer than the 6 its cuts would pay for); step 52.4 ns, peak 26.00 KiB
// WHOLE: remark: partir-auto: tactic 'auto' on 'batch': tile { x = 0 }
func.func @main(%x: tensor<64x32xf32> {partir.name = "x"}, %w0: tensor<64x32xf32> {partir.name = "params/layers/0/w"}, %w1: tensor<64x32xf32> {partir.name = "params/layers/1/w"}, %w2: tensor<64x32xf32> {partir.name = "params/layers/2/w"}, %w3: tensor<64x32xf32> {partir.name = "params/layers/3/w"}, %head: tensor<64x32xf32> {partir.name = "params/head"}) -> (tensor<64x32xf32> {partir.name = "params/layers/0/w"}, tensor<64x32xf32> {partir.name = "params/layers/1/w"}, tensor<64x32xf32> {partir.name = "params/layers/2/w"}, tensor<64x32xf32> {partir.name = "params/layers/3/w"}, tensor<64x32xf32> {partir.name = "out"}, tensor<64x32xf32> {partir.name = "dx"}) {
  %e = tensor.empty() : tensor<64x32xf32>
  %h0 = linalg.mul ins(%x, %w0 : tensor<64x32xf32>, tensor<64x32xf32>) outs(%e : tensor<64x32xf32>) -> tensor<64x32xf32> loc("jit(step)/jvp(layers/0)/mul")
  %h1 = linalg.mul ins(%h0, %w1 : tensor<64x32xf32>, tensor<64x32xf32>) outs(%e : tensor<64x32xf32>) -> tensor<64x32xf32> loc("jit(step)/jvp(layers/1)/mul")
  %h2 = linalg.mul ins(%h1, %w2 : tensor<64x32xf32>, tensor<64x32xf32>) outs(%e : tensor<64x32xf32>) -> tensor<64x32xf32> loc("jit(step)/jvp(layers/2)/mul")
  %h3 = linalg.mul ins(%h2, %w3 : tensor<64x32xf32>, tensor<64x32xf32>) outs(%e : tensor<64x32xf32>) -> tensor<64x32xf32> loc("jit(step)/jvp(layers/3)/mul")
  %out = linalg.mul ins(%h3, %head : tensor<64x32xf32>, tensor<64x32xf32>) outs(%e : tensor<64x32xf32>) -> tensor<64x32xf32> loc("jit(step)/jvp()/mul")
  %d4 = linalg.mul ins(%out, %head : tensor<64x32xf32>, tensor<64x32xf32>) outs(%e : tensor<64x32xf32>) -> tensor<64x32xf32> loc("jit(step)/transpose(jvp())/mul")
  %dw3 = linalg.mul ins(%d4, %h2 : tensor<64x32xf32>, tensor<64x32xf32>) outs(%e : tensor<64x32xf32>) -> tensor<64x32xf32> loc("jit(step)/transpose(jvp(layers/3))/mul")
  %d3 = linalg.mul ins(%d4, %w3 : tensor<64x32xf32>, tensor<64x32xf32>) outs(%e : tensor<64x32xf32>) -> tensor<64x32xf32> loc("jit(step)/transpose(jvp(layers/3))/mul")
  %dw2 = linalg.mul ins(%d3, %h1 : tensor<64x32xf32>, tensor<64x32xf32>) outs(%e : tensor<64x32xf32>) -> tensor<64x32xf32> loc("jit(step)/transpose(jvp(layers/2))/mul")
  %d2 = linalg.mul ins(%d3, %w2 : tensor<64x32xf32>, tensor<64x32xf32>) outs(%e : tensor<64x32xf32>) -> tensor<64x32xf32> loc("jit(step)/transpose(jvp(layers/2))/mul")
  %dw1 = linalg.mul ins(%d2, %h0 : tensor<64x32xf32>, tensor<64x32xf32>) outs(%e : tensor<64x32xf32>) -> tensor<64x32xf32> loc("jit(step)/transpose(jvp(layers/1))/mul")
  %d1 = linalg.mul ins(%d2, %w1 : tensor<64x32xf32>, tensor<64x32xf32>) outs(%e : tensor<64x32xf32>) -> tensor<64x32xf32> loc("jit(step)/transpose(jvp(layers/1))/mul")
  %dw0 = linalg.mul ins(%d1, %x : tensor<64x32xf32>, tensor<64x32xf32>) outs(%e : tensor<64x32xf32>) -> tensor<64x32xf32> loc("jit(step)/transpose(jvp(layers/0))/mul")
  %d0 = linalg.mul ins(%d1, %w0 : tensor<64x32xf32>, tensor<64x32xf32>) outs(%e : tensor<64x32xf32>) -> tensor<64x32xf32> loc("jit(step)/transpose(jvp(layers/0))/mul")
  %n0 = linalg.sub ins(%w0, %dw0 : tensor<64x32xf32>, tensor<64x32xf32>) outs(%e : tensor<64x32xf32>) -> tensor<64x32xf32> loc("jit(step)/sub")
  %n1 = linalg.sub ins(%w1, %dw1 : tensor<64x32xf32>, tensor<64x32xf32>) outs(%e : tensor<64x32xf32>) -> tensor<64x32xf32> loc("jit(step)/sub")
  %n2 = linalg.sub ins(%w2, %dw2 : tensor<64x32xf32>, tensor<64x32xf32>) outs(%e : tensor<64x32xf32>) -> tensor<64x32xf32> loc("jit(step)/sub")
  %n3 = linalg.sub ins(%w3, %dw3 : tensor<64x32xf32>, tensor<64x32xf32>) outs(%e : tensor<64x32xf32>) -> tensor<64x32xf32> loc("jit(step)/sub")
  return %n0, %n1, %n2, %n3, %out, %d0 : tensor<64x32xf32>, tensor<64x32xf32>, tensor<64x32xf32>, tensor<64x32xf32>, tensor<64x32xf32>, tensor<64x32xf32>
}
