// Programs lowering cannot handle are rejected with a located diagnostic, not a crash.
// RUN: mlir-opt %plugin -p 'builtin.module(partir-lower-to-hlo)' %s --split-input-file -verify-diagnostics

// Without a mesh there is nothing to lower to (the error points at the first function).
module {
  // expected-error @+1 {{partir-lower-to-hlo: the module declares no partir.mesh}}
  func.func @no_mesh(%x: tensor<8x6xf32>) -> tensor<8x6xf32> {
    return %x : tensor<8x6xf32>
  }
}
