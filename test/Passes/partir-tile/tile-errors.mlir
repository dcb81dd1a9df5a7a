// Every bad input to partir-tile is one clear error at a location, and the pass fails.
// RUN: mlir-opt %plugin -split-input-file -verify-diagnostics -p 'builtin.module(partir-tile{value=x dim=1 axis=batch})' %s

// expected-error @below {{partir-tile: the module declares no partir.mesh; run partir-mesh{axes=...} first}}
func.func @no_mesh(%x: tensor<8x8xf32> {partir.name = "x"}) -> tensor<8x8xf32> {
  return %x : tensor<8x8xf32>
}

// -----

// expected-error @below {{partir-tile: axis 'batch' is not in mesh @mesh [model=2]}}
partir.mesh @mesh ["model"=2]
func.func @unknown_axis(%x: tensor<8x8xf32> {partir.name = "x"}) -> tensor<8x8xf32> {
  return %x : tensor<8x8xf32>
}

// -----

partir.mesh @mesh ["batch"=4]
// expected-error @below {{partir-tile: selector 'x' matches no function argument or named value (nearest names: params/w, arg0 (2 in all; `partir args MODEL` lists them)}}
func.func @matches_nothing(%a: tensor<8x8xf32>, %w: tensor<8x8xf32> {partir.name = "params/w"}) -> tensor<8x8xf32> {
  return %a : tensor<8x8xf32>
}

// -----

partir.mesh @mesh ["batch"=4]
// expected-error @below {{partir-tile: dim 1 is out of range for 'x' of type tensor<8xf32> (rank 1)}}
func.func @dim_out_of_range(%x: tensor<8xf32> {partir.name = "x"}) -> tensor<8xf32> {
  return %x : tensor<8xf32>
}

// -----

partir.mesh @mesh ["batch"=4]
// expected-error @below {{partir-tile: dim 1 of 'x' (size 255) is not divisible by axis 'batch' (size 4), and it cannot be padded to 256: partir pads StableHLO and linalg programs so far}}
func.func @not_divisible(%x: tensor<8x255xf32> {partir.name = "x"}) -> tensor<8x255xf32> {
  return %x : tensor<8x255xf32>
}

// -----

partir.mesh @mesh ["batch"=4]
// expected-error @below {{partir-tile: 'x' has type tensor<8x?xf32>; only statically shaped tensors can be tiled}}
func.func @dynamic(%x: tensor<8x?xf32> {partir.name = "x"}) -> tensor<8x?xf32> {
  return %x : tensor<8x?xf32>
}

// -----

partir.mesh @mesh ["batch"=4]
// expected-error @below {{partir-tile: 'x' is pinned to stay whole along axis 'batch' (partir.replicate)}}
func.func @pinned(%x: tensor<8x8xf32> {partir.name = "x"}) -> tensor<8x8xf32> {
  %p = partir.replicate "batch" %x : tensor<8x8xf32>
  return %p : tensor<8x8xf32>
}

// -----

partir.mesh @mesh ["batch"=4]
// expected-error @below {{partir-tile: 'x' is already tiled along axis 'batch'}}
func.func @already_tiled(%x: tensor<8x8xf32> {partir.name = "x"}) -> tensor<8x8xf32> {
  %t = partir.loop "batch" [#partir.tile<0>] (%r: !partir.range<4>) {
    %s = partir.slice 0 %x[%r] : tensor<8x8xf32> -> tensor<2x8xf32>
    partir.yield %s : tensor<2x8xf32>
  } : tensor<8x8xf32>
  return %t : tensor<8x8xf32>
}
