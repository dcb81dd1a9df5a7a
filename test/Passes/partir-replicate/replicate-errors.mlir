// RUN: mlir-opt %plugin -split-input-file -verify-diagnostics -p 'builtin.module(partir-replicate{value=b axis=model})' %s

// expected-error @below {{partir-replicate: the module declares no partir.mesh; run partir-mesh{axes=...} first}}
func.func @no_mesh(%b: tensor<8xf32> {partir.name = "b"}) -> tensor<8xf32> {
  return %b : tensor<8xf32>
}

// -----

// expected-error @below {{partir-replicate: axis 'model' is not in mesh @mesh [batch=4]}}
partir.mesh @mesh ["batch"=4]
func.func @unknown_axis(%b: tensor<8xf32> {partir.name = "b"}) -> tensor<8xf32> {
  return %b : tensor<8xf32>
}

// -----

partir.mesh @mesh ["model"=2]
// expected-error @below {{partir-replicate: selector 'b' matches no function argument or named value (nearest names: c (1 in all; `partir args MODEL` lists them)}}
func.func @matches_nothing(%c: tensor<8xf32> {partir.name = "c"}) -> tensor<8xf32> {
  return %c : tensor<8xf32>
}

// -----

partir.mesh @mesh ["model"=2]
// expected-error @below {{partir-replicate: 'b' is already tiled along axis 'model'; it cannot also stay whole there}}
func.func @already_tiled(%b: tensor<8xf32> {partir.name = "b"}) -> tensor<8xf32> {
  %t = partir.loop "model" [#partir.tile<0>] (%r: !partir.range<2>) {
    %s = partir.slice 0 %b[%r] : tensor<8xf32> -> tensor<4xf32>
    partir.yield %s : tensor<4xf32>
  } : tensor<8xf32>
  return %t : tensor<8xf32>
}
