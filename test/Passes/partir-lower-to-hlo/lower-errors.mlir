// Programs lowering cannot handle are rejected with a located diagnostic, not a crash.
// RUN: mlir-opt %plugin -p 'builtin.module(partir-lower-to-hlo)' %s --split-input-file -verify-diagnostics

partir.mesh @mesh ["batch"=4, "model"=2]

// Every partitioned op must sit in its own loop nest (as propagation leaves it): a loop body
// with two payload ops has no single device-local op to move out.
func.func @two_payloads(%x: tensor<8x6xf32>) -> tensor<8x6xf32> {
  // expected-error @+1 {{partir-lower-to-hlo: a partir.loop must hold exactly one op (besides slices); this one holds 2}}
  %y = partir.loop "batch" [#partir.tile<0>] (%r: !partir.range<4>) {
    %xs = partir.slice 0 %x[%r] : tensor<8x6xf32> -> tensor<2x6xf32>
    %e = math.exp %xs : tensor<2x6xf32>
    %t = math.tanh %e : tensor<2x6xf32>
    partir.yield %t : tensor<2x6xf32>
  } : tensor<8x6xf32>
  return %y : tensor<8x6xf32>
}

// -----

// Without a mesh there is nothing to lower to (the error points at the first function).
module {
  // expected-error @+1 {{partir-lower-to-hlo: the module declares no partir.mesh}}
  func.func @no_mesh(%x: tensor<8x6xf32>) -> tensor<8x6xf32> {
    return %x : tensor<8x6xf32>
  }
}
