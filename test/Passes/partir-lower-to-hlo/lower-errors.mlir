// Programs lowering cannot handle are rejected with a located diagnostic, not a crash.
// RUN: mlir-opt %plugin -p 'builtin.module(partir-lower-to-hlo)' %s --split-input-file -verify-diagnostics

// Without a mesh there is nothing to lower to (the error points at the first function).
module {
  // expected-error @+1 {{partir-lower-to-hlo: the module declares no partir.mesh}}
  func.func @no_mesh(%x: tensor<8x6xf32>) -> tensor<8x6xf32> {
    return %x : tensor<8x6xf32>
  }
}

// -----

// A loop inside another op's region (an scf.for, say after inlining) has no device-local form.
module {
  partir.mesh @mesh ["a"=2]
  func.func @in_scf_for(%x: tensor<8xf32>) -> tensor<8xf32> {
    %c0 = arith.constant 0 : index
    %c1 = arith.constant 1 : index
    %r = scf.for %i = %c0 to %c1 step %c1 iter_args(%acc = %x) -> (tensor<8xf32>) {
      // expected-error @+1 {{partir-lower-to-hlo: 'partir.loop' inside 'scf.for' cannot be lowered: partitioned ops must sit in a function body or in partir.loop bodies}}
      %y = partir.loop "a" [#partir.tile<0>] (%q: !partir.range<2>) {
        %s = partir.slice 0 %acc[%q] : tensor<8xf32> -> tensor<4xf32>
        partir.yield %s : tensor<4xf32>
      } : tensor<8xf32>
      scf.yield %y : tensor<8xf32>
    }
    return %r : tensor<8xf32>
  }
}
