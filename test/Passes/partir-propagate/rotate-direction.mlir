// A rotation by one stage of 4, both ways (jnp.roll(x, 1) as a concatenate of slices, and
// jnp.roll(x, -1) as JAX transposes the first: a sum of zero-padded slices), on a dim split 4
// ways: one partir.permute each. Device r takes chunk r - 1 for roll(x, 1) and chunk r + 1 for
// roll(x, -1). A rotation whose shift is not whole chunks (roll by 1 of 8 rows in chunks of 2)
// is not one: it stays as its slices (partitioned by their halos).
// RUN: mlir-opt %plugin --allow-unregistered-dialect -p 'builtin.module(partir-mesh{axes=stage=4}, partir-tile{value=x dim=0 axis=stage}, partir-propagate{axis=stage})' %s | FileCheck %s

// CHECK-LABEL: func.func @roll_forward
// CHECK: partir.loop "stage" [#partir.tile<0>]
// CHECK: partir.permute 0 %{{.*}} from [3, 0, 1, 2] : tensor<4x8xf32> -> tensor<1x8xf32>
// CHECK-NOT: stablehlo.concatenate
func.func @roll_forward(%x: tensor<4x8xf32> {partir.name = "x"}) -> tensor<4x8xf32> {
  %a = "stablehlo.slice"(%x) <{start_indices = array<i64: 3, 0>, limit_indices = array<i64: 4, 8>, strides = array<i64: 1, 1>}> : (tensor<4x8xf32>) -> tensor<1x8xf32>
  %b = "stablehlo.slice"(%x) <{start_indices = array<i64: 0, 0>, limit_indices = array<i64: 3, 8>, strides = array<i64: 1, 1>}> : (tensor<4x8xf32>) -> tensor<3x8xf32>
  %r = "stablehlo.concatenate"(%a, %b) <{dimension = 0 : i64}> : (tensor<1x8xf32>, tensor<3x8xf32>) -> tensor<4x8xf32>
  %e = "stablehlo.exponential"(%r) : (tensor<4x8xf32>) -> tensor<4x8xf32>
  return %e : tensor<4x8xf32>
}

// CHECK-LABEL: func.func @roll_back
// CHECK: partir.permute 0 %{{.*}} from [1, 2, 3, 0] : tensor<4x8xf32> -> tensor<1x8xf32>
// CHECK-NOT: stablehlo.pad
func.func @roll_back(%x: tensor<4x8xf32> {partir.name = "x"}) -> tensor<4x8xf32> {
  %z = "stablehlo.constant"() <{value = dense<0.000000e+00> : tensor<f32>}> : () -> tensor<f32>
  %a = "stablehlo.slice"(%x) <{start_indices = array<i64: 1, 0>, limit_indices = array<i64: 4, 8>, strides = array<i64: 1, 1>}> : (tensor<4x8xf32>) -> tensor<3x8xf32>
  %b = "stablehlo.slice"(%x) <{start_indices = array<i64: 0, 0>, limit_indices = array<i64: 1, 8>, strides = array<i64: 1, 1>}> : (tensor<4x8xf32>) -> tensor<1x8xf32>
  %pa = "stablehlo.pad"(%a, %z) <{edge_padding_low = array<i64: 0, 0>, edge_padding_high = array<i64: 1, 0>, interior_padding = array<i64: 0, 0>}> : (tensor<3x8xf32>, tensor<f32>) -> tensor<4x8xf32>
  %pb = "stablehlo.pad"(%b, %z) <{edge_padding_low = array<i64: 3, 0>, edge_padding_high = array<i64: 0, 0>, interior_padding = array<i64: 0, 0>}> : (tensor<1x8xf32>, tensor<f32>) -> tensor<4x8xf32>
  %r = "stablehlo.add"(%pa, %pb) : (tensor<4x8xf32>, tensor<4x8xf32>) -> tensor<4x8xf32>
  %e = "stablehlo.exponential"(%r) : (tensor<4x8xf32>) -> tensor<4x8xf32>
  return %e : tensor<4x8xf32>
}

// CHECK-LABEL: func.func @roll_part_of_a_chunk
// CHECK-NOT: from [3, 0, 1, 2]
// CHECK: stablehlo.concatenate
func.func @roll_part_of_a_chunk(%x: tensor<8x8xf32> {partir.name = "x"}) -> tensor<8x8xf32> {
  %a = "stablehlo.slice"(%x) <{start_indices = array<i64: 7, 0>, limit_indices = array<i64: 8, 8>, strides = array<i64: 1, 1>}> : (tensor<8x8xf32>) -> tensor<1x8xf32>
  %b = "stablehlo.slice"(%x) <{start_indices = array<i64: 0, 0>, limit_indices = array<i64: 7, 8>, strides = array<i64: 1, 1>}> : (tensor<8x8xf32>) -> tensor<7x8xf32>
  %r = "stablehlo.concatenate"(%a, %b) <{dimension = 0 : i64}> : (tensor<1x8xf32>, tensor<7x8xf32>) -> tensor<8x8xf32>
  return %r : tensor<8x8xf32>
}
