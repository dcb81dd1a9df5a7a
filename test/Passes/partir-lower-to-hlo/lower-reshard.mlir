// Where a consumer's slice chain asks for another sharding than its operand has, lowering
// moves the value with a collective (one behaviour per function):
// RUN: mlir-opt %plugin -p 'builtin.module(partir-lower-to-hlo)' %s | FileCheck %s --implicit-check-not=partir.loop --implicit-check-not=partir.slice

partir.mesh @mesh ["batch"=4, "model"=2]

// A replicated value sliced inside a loop is an all_slice (local, no communication). %w is
// also used whole (outside any loop), so the argument stays replicated.
// CHECK-LABEL: func.func @all_slice(
// CHECK-SAME:      %[[W:.*]]: tensor<8x6xf32> {partir_hlo.sharding = #partir_hlo.sharding<[{}, {}]>})
// CHECK-SAME:    -> (tensor<8x3xf32> {partir_hlo.sharding = #partir_hlo.sharding<[{}, {"model"}]>}, tensor<8x6xf32> {partir_hlo.sharding = #partir_hlo.sharding<[{}, {}]>})
// CHECK-NEXT:    %[[S:.*]] = partir_hlo.all_slice %[[W]] dim 1 axes ["model"] : tensor<8x6xf32> -> tensor<8x3xf32>
// CHECK-NEXT:    %[[N:.*]] = math.exp %[[S]] : tensor<8x3xf32>
// CHECK-NEXT:    %[[T:.*]] = math.tanh %[[W]] : tensor<8x6xf32>
// CHECK-NEXT:    return %[[N]], %[[T]]
func.func @all_slice(%w: tensor<8x6xf32>) -> (tensor<8x6xf32>, tensor<8x6xf32>) {
  %y = partir.loop "model" [#partir.tile<1>] (%r: !partir.range<2>) {
    %ws = partir.slice 1 %w[%r] : tensor<8x6xf32> -> tensor<8x3xf32>
    %e = math.exp %ws : tensor<8x3xf32>
    partir.yield %e : tensor<8x3xf32>
  } : tensor<8x6xf32>
  %t = math.tanh %w : tensor<8x6xf32>
  return %y, %t : tensor<8x6xf32>, tensor<8x6xf32>
}

// A sharded value used whole (by an op outside any loop) is all-gathered.
// CHECK-LABEL: func.func @all_gather(
// CHECK-SAME:      %[[X:.*]]: tensor<2x6xf32> {partir_hlo.sharding = #partir_hlo.sharding<[{"batch"}, {}]>})
// CHECK-SAME:    -> (tensor<8x6xf32> {partir_hlo.sharding = #partir_hlo.sharding<[{}, {}]>})
// CHECK-NEXT:    %[[E:.*]] = math.exp %[[X]] : tensor<2x6xf32>
// CHECK-NEXT:    %[[G:.*]] = partir_hlo.all_gather %[[E]] dim 0 axes ["batch"] : tensor<2x6xf32> -> tensor<8x6xf32>
// CHECK-NEXT:    %[[T:.*]] = math.tanh %[[G]] : tensor<8x6xf32>
// CHECK-NEXT:    return %[[T]]
func.func @all_gather(%x: tensor<8x6xf32>) -> tensor<8x6xf32> {
  %y = partir.loop "batch" [#partir.tile<0>] (%r: !partir.range<4>) {
    %xs = partir.slice 0 %x[%r] : tensor<8x6xf32> -> tensor<2x6xf32>
    %e = math.exp %xs : tensor<2x6xf32>
    partir.yield %e : tensor<2x6xf32>
  } : tensor<8x6xf32>
  %t = math.tanh %y : tensor<8x6xf32>
  return %t : tensor<8x6xf32>
}

// A value split on dim 0 sliced on dim 1 along the same axis is one all_to_all.
// CHECK-LABEL: func.func @all_to_all(
// CHECK-SAME:      %[[X:.*]]: tensor<2x8xf32> {partir_hlo.sharding = #partir_hlo.sharding<[{"batch"}, {}]>})
// CHECK-SAME:    -> (tensor<8x2xf32> {partir_hlo.sharding = #partir_hlo.sharding<[{}, {"batch"}]>})
// CHECK-NEXT:    %[[E:.*]] = math.exp %[[X]] : tensor<2x8xf32>
// CHECK-NEXT:    %[[A:.*]] = partir_hlo.all_to_all %[[E]] split 1 concat 0 axes ["batch"] : tensor<2x8xf32> -> tensor<8x2xf32>
// CHECK-NEXT:    %[[T:.*]] = math.tanh %[[A]] : tensor<8x2xf32>
// CHECK-NEXT:    return %[[T]]
func.func @all_to_all(%x: tensor<8x8xf32>) -> tensor<8x8xf32> {
  %y = partir.loop "batch" [#partir.tile<0>] (%r: !partir.range<4>) {
    %xs = partir.slice 0 %x[%r] : tensor<8x8xf32> -> tensor<2x8xf32>
    %e = math.exp %xs : tensor<2x8xf32>
    partir.yield %e : tensor<2x8xf32>
  } : tensor<8x8xf32>
  %z = partir.loop "batch" [#partir.tile<1>] (%r: !partir.range<4>) {
    %ys = partir.slice 1 %y[%r] : tensor<8x8xf32> -> tensor<8x2xf32>
    %t = math.tanh %ys : tensor<8x2xf32>
    partir.yield %t : tensor<8x2xf32>
  } : tensor<8x8xf32>
  return %z : tensor<8x8xf32>
}

// A value split on dim 0 along batch, consumed split on dim 1 along model: slice first (local),
// then gather the smaller buffer (2x3 -> 8x3, not 2x6 -> 8x6).
// CHECK-LABEL: func.func @slice_then_gather(
// CHECK-SAME:      %[[X:.*]]: tensor<2x6xf32> {partir_hlo.sharding = #partir_hlo.sharding<[{"batch"}, {}]>})
// CHECK-NEXT:    %[[E:.*]] = math.exp %[[X]] : tensor<2x6xf32>
// CHECK-NEXT:    %[[S:.*]] = partir_hlo.all_slice %[[E]] dim 1 axes ["model"] : tensor<2x6xf32> -> tensor<2x3xf32>
// CHECK-NEXT:    %[[G:.*]] = partir_hlo.all_gather %[[S]] dim 0 axes ["batch"] : tensor<2x3xf32> -> tensor<8x3xf32>
// CHECK-NEXT:    %[[T:.*]] = math.tanh %[[G]] : tensor<8x3xf32>
func.func @slice_then_gather(%x: tensor<8x6xf32>) -> tensor<8x6xf32> {
  %y = partir.loop "batch" [#partir.tile<0>] (%r: !partir.range<4>) {
    %xs = partir.slice 0 %x[%r] : tensor<8x6xf32> -> tensor<2x6xf32>
    %e = math.exp %xs : tensor<2x6xf32>
    partir.yield %e : tensor<2x6xf32>
  } : tensor<8x6xf32>
  %z = partir.loop "model" [#partir.tile<1>] (%r: !partir.range<2>) {
    %ys = partir.slice 1 %y[%r] : tensor<8x6xf32> -> tensor<8x3xf32>
    %t = math.tanh %ys : tensor<8x3xf32>
    partir.yield %t : tensor<8x3xf32>
  } : tensor<8x6xf32>
  return %z : tensor<8x6xf32>
}

// A value split along batch on dim 0, consumed split along model on the same dim: gather
// batch, then slice model (slicing first would pick the wrong rows).
// CHECK-LABEL: func.func @gather_then_slice(
// CHECK:         %[[E:.*]] = math.exp %{{.*}} : tensor<2x6xf32>
// CHECK-NEXT:    %[[G:.*]] = partir_hlo.all_gather %[[E]] dim 0 axes ["batch"] : tensor<2x6xf32> -> tensor<8x6xf32>
// CHECK-NEXT:    %[[S:.*]] = partir_hlo.all_slice %[[G]] dim 0 axes ["model"] : tensor<8x6xf32> -> tensor<4x6xf32>
// CHECK-NEXT:    math.tanh %[[S]] : tensor<4x6xf32>
func.func @gather_then_slice(%x: tensor<8x6xf32>) -> tensor<8x6xf32> {
  %y = partir.loop "batch" [#partir.tile<0>] (%r: !partir.range<4>) {
    %xs = partir.slice 0 %x[%r] : tensor<8x6xf32> -> tensor<2x6xf32>
    %e = math.exp %xs : tensor<2x6xf32>
    partir.yield %e : tensor<2x6xf32>
  } : tensor<8x6xf32>
  %z = partir.loop "model" [#partir.tile<0>] (%r: !partir.range<2>) {
    %ys = partir.slice 0 %y[%r] : tensor<8x6xf32> -> tensor<4x6xf32>
    %t = math.tanh %ys : tensor<4x6xf32>
    partir.yield %t : tensor<4x6xf32>
  } : tensor<8x6xf32>
  return %z : tensor<8x6xf32>
}
