// What the export cannot express is one clear error at a location, and a failing exit code.
// RUN: mlir-opt %plugin -p 'builtin.module(partir-export-shard)' %s -split-input-file -verify-diagnostics

// No mesh: nothing to make a grid of.
// expected-error @+1 {{partir-export-shard: the module declares no partir.mesh; export a partir-lower-to-hlo program}}
func.func @main(%x: tensor<8xf32>) -> tensor<8xf32> {
  return %x : tensor<8xf32>
}

// -----

// A Core program: its loops have no shard counterpart until partir-lower-to-hlo.
partir.mesh @mesh ["batch"=4]
func.func @core(%x: tensor<32x64xf32>) -> tensor<32x64xf32> {
  // expected-error @+1 {{partir-export-shard: cannot export PartIR:Core op 'partir.loop'; run partir-lower-to-hlo first}}
  %y = partir.loop "batch" [#partir.tile<0>] (%r: !partir.range<4>) {
    %xs = partir.slice 0 %x[%r] : tensor<32x64xf32> -> tensor<8x64xf32>
    partir.yield %xs : tensor<8x64xf32>
  } : tensor<32x64xf32>
  return %y : tensor<32x64xf32>
}

// -----

// A partir attribute the export does not know (here a sharding used as a plain value).
partir.mesh @mesh ["batch"=4]
// expected-error @+1 {{partir-export-shard: cannot express attribute 's' = #partir_hlo.sharding<[{"batch"}]> of 'func.func' in upstream MLIR}}
func.func private @opaque() attributes {s = #partir_hlo.sharding<[{"batch"}]>}

// -----

// An unknown partir discardable attribute on an op.
partir.mesh @mesh ["batch"=4]
func.func @tagged(%x: tensor<4xf32>) -> tensor<4xf32> {
  // expected-error @+1 {{partir-export-shard: cannot express attribute 'partir.tag' = 1 : i64 of 'arith.addf' in upstream MLIR}}
  %y = arith.addf %x, %x {partir.tag = 1 : i64} : tensor<4xf32>
  return %y : tensor<4xf32>
}

// -----

// Names that merely contain "partir" are no partir attributes: no error.
partir.mesh @mesh ["batch"=4]
func.func @partir_main(%x: tensor<4xf32>) -> tensor<4xf32> attributes {note = "partir"} {
  return %x : tensor<4xf32>
}
