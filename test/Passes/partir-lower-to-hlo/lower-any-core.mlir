// Lowering takes any PartIR:Core, not only one op per loop nest as propagation builds it: what
// upstream passes (cse, linalg-fuse-elementwise-ops, canonicalize, ...) leave is lowered too.
// RUN: mlir-opt %plugin -p 'builtin.module(partir-lower-to-hlo)' %s | FileCheck %s --implicit-check-not=partir.loop --implicit-check-not=partir.slice

partir.mesh @mesh ["batch"=4, "model"=2]

// A body with several ops (as linalg-fuse-elementwise-ops leaves one): each op moves out in
// order, on the local chunk.
// CHECK-LABEL: func.func @two_payloads(
// CHECK-SAME:      %[[X:.*]]: tensor<2x6xf32> {partir_hlo.sharding = #partir_hlo.sharding<[{"batch"}, {}]>})
// CHECK-NEXT:    %[[E:.*]] = math.exp %[[X]] : tensor<2x6xf32>
// CHECK-NEXT:    %[[T:.*]] = math.tanh %[[E]] : tensor<2x6xf32>
// CHECK-NEXT:    return %[[T]]
func.func @two_payloads(%x: tensor<8x6xf32>) -> tensor<8x6xf32> {
  %y = partir.loop "batch" [#partir.tile<0>] (%r: !partir.range<4>) {
    %xs = partir.slice 0 %x[%r] : tensor<8x6xf32> -> tensor<2x6xf32>
    %e = math.exp %xs : tensor<2x6xf32>
    %t = math.tanh %e : tensor<2x6xf32>
    partir.yield %t : tensor<2x6xf32>
  } : tensor<8x6xf32>
  return %y : tensor<8x6xf32>
}

// No op in the body (cse merged it with an identical one above): a tile loop yielding a value
// from above holds one copy per device; a sum loop over it is the all_reduce of the copies.
// CHECK-LABEL: func.func @yield_captured(
// CHECK-SAME:      -> (tensor<2x6xf32> {partir_hlo.sharding = #partir_hlo.sharding<[{"batch"}, {}]>}, tensor<2x6xf32> {partir_hlo.sharding = #partir_hlo.sharding<[{}, {}]>})
// CHECK-NEXT:    %[[E:.*]] = tensor.empty() : tensor<2x6xf32>
// CHECK-NEXT:    %[[S:.*]] = partir_hlo.all_reduce sum %arg0 axes ["batch"] : tensor<2x6xf32>
// CHECK-NEXT:    return %[[E]], %[[S]]
func.func @yield_captured(%x: tensor<2x6xf32>) -> (tensor<8x6xf32>, tensor<2x6xf32>) {
  %e = tensor.empty() : tensor<2x6xf32>
  %y = partir.loop "batch" [#partir.tile<0>] (%r: !partir.range<4>) {
    partir.yield %e : tensor<2x6xf32>
  } : tensor<8x6xf32>
  %s = partir.loop "batch" [#partir.sum] (%r: !partir.range<4>) {
    partir.yield %x : tensor<2x6xf32>
  } : tensor<2x6xf32>
  return %y, %s : tensor<8x6xf32>, tensor<2x6xf32>
}

// A tiled value read inside a payload's own region (tensor.extract in a linalg.generic body)
// is gathered whole in front of the op and the region reads that.
// CHECK-LABEL: func.func @extract_in_body(
// CHECK:         %[[T:.*]] = math.exp %arg1 : tensor<2xf32>
// CHECK-NEXT:    %[[W:.*]] = partir_hlo.all_gather %[[T]] dim 0 axes ["batch"] : tensor<2xf32> -> tensor<8xf32>
// CHECK-NEXT:    linalg.generic
// CHECK:           tensor.extract %[[W]][%{{.*}}] : tensor<8xf32>
func.func @extract_in_body(%x: tensor<8x6xf32>, %t: tensor<8xf32>) -> tensor<8x6xf32> {
  %tt = partir.loop "batch" [#partir.tile<0>] (%r: !partir.range<4>) {
    %ts = partir.slice 0 %t[%r] : tensor<8xf32> -> tensor<2xf32>
    %n = math.exp %ts : tensor<2xf32>
    partir.yield %n : tensor<2xf32>
  } : tensor<8xf32>
  %y = partir.loop "batch" [#partir.tile<0>] (%r: !partir.range<4>) {
    %xs = partir.slice 0 %x[%r] : tensor<8x6xf32> -> tensor<2x6xf32>
    %g = linalg.generic {indexing_maps = [affine_map<(i, j) -> (i, j)>], iterator_types = ["parallel", "parallel"]} outs(%xs : tensor<2x6xf32>) {
    ^bb0(%o: f32):
      %c0 = arith.constant 0 : index
      %v = tensor.extract %tt[%c0] : tensor<8xf32>
      %a = arith.addf %o, %v : f32
      linalg.yield %a : f32
    } -> tensor<2x6xf32>
    partir.yield %g : tensor<2x6xf32>
  } : tensor<8x6xf32>
  return %y : tensor<8x6xf32>
}

// An scf.for outside any loop reading a tiled value in its body: gathered before the for.
// CHECK-LABEL: func.func @scf_capture(
// CHECK:         %[[E:.*]] = math.exp
// CHECK:         %[[W:.*]] = partir_hlo.all_gather %[[E]] dim 0 axes ["batch"] : tensor<2x6xf32> -> tensor<8x6xf32>
// CHECK-NEXT:    scf.for
// CHECK-NEXT:      arith.addf %{{.*}}, %[[W]] : tensor<8x6xf32>
func.func @scf_capture(%x: tensor<8x6xf32>) -> tensor<8x6xf32> {
  %y = partir.loop "batch" [#partir.tile<0>] (%r: !partir.range<4>) {
    %xs = partir.slice 0 %x[%r] : tensor<8x6xf32> -> tensor<2x6xf32>
    %e = math.exp %xs : tensor<2x6xf32>
    partir.yield %e : tensor<2x6xf32>
  } : tensor<8x6xf32>
  %c0 = arith.constant 0 : index
  %c2 = arith.constant 2 : index
  %c1 = arith.constant 1 : index
  %z = scf.for %i = %c0 to %c2 step %c1 iter_args(%acc = %x) -> (tensor<8x6xf32>) {
    %s = arith.addf %acc, %y : tensor<8x6xf32>
    scf.yield %s : tensor<8x6xf32>
  }
  return %z : tensor<8x6xf32>
}

// An inner loop slicing a value computed in the outer body: a local slice of that value.
// CHECK-LABEL: func.func @nested_slice_of_body_value(
// CHECK-SAME:      -> (tensor<2x3xf32> {partir_hlo.sharding = #partir_hlo.sharding<[{"batch"}, {"model"}]>})
// CHECK-NEXT:    %[[E:.*]] = math.exp %arg0 : tensor<2x6xf32>
// CHECK-NEXT:    %[[S:.*]] = partir_hlo.all_slice %[[E]] dim 1 axes ["model"] : tensor<2x6xf32> -> tensor<2x3xf32>
// CHECK-NEXT:    %[[T:.*]] = math.tanh %[[S]] : tensor<2x3xf32>
// CHECK-NEXT:    return %[[T]]
func.func @nested_slice_of_body_value(%x: tensor<8x6xf32>) -> tensor<8x6xf32> {
  %y = partir.loop "batch" [#partir.tile<0>] (%r: !partir.range<4>) {
    %xs = partir.slice 0 %x[%r] : tensor<8x6xf32> -> tensor<2x6xf32>
    %e = math.exp %xs : tensor<2x6xf32>
    %z = partir.loop "model" [#partir.tile<1>] (%q: !partir.range<2>) {
      %es = partir.slice 1 %e[%q] : tensor<2x6xf32> -> tensor<2x3xf32>
      %t = math.tanh %es : tensor<2x3xf32>
      partir.yield %t : tensor<2x3xf32>
    } : tensor<2x6xf32>
    partir.yield %z : tensor<2x6xf32>
  } : tensor<8x6xf32>
  return %y : tensor<8x6xf32>
}

// A broadcast of replicated scalars is built in the layout its user needs (no slice), but an
// iota (a body reading linalg.index) depends on where its chunk is: it is built whole and
// sliced (found by tools/verify_zoo.py --ranks on the MQA EMB schedule).
// CHECK-LABEL: func.func @recompute_broadcast_not_iota(
// CHECK:         %[[IOTA:.*]] = linalg.generic {{.*}} outs(%{{.*}} : tensor<8xi32>)
// CHECK:         linalg.fill ins(%{{.*}} : f32) outs(%{{.*}} : tensor<2x6xf32>)
// CHECK:         partir_hlo.all_slice %[[IOTA]] dim 0 axes ["batch"] : tensor<8xi32> -> tensor<2xi32>
func.func @recompute_broadcast_not_iota(%x: tensor<8x6xf32>) -> (tensor<8x6xf32>, tensor<8xi32>) {
  %z = arith.constant 0.0 : f32
  %e = tensor.empty() : tensor<8x6xf32>
  %f = linalg.fill ins(%z : f32) outs(%e : tensor<8x6xf32>) -> tensor<8x6xf32>
  %ei = tensor.empty() : tensor<8xi32>
  %iota = linalg.generic {indexing_maps = [affine_map<(i) -> (i)>], iterator_types = ["parallel"]} outs(%ei : tensor<8xi32>) {
  ^bb0(%out: i32):
    %i = linalg.index 0 : index
    %n = arith.index_cast %i : index to i32
    linalg.yield %n : i32
  } -> tensor<8xi32>
  %y = partir.loop "batch" [#partir.tile<0>] (%r: !partir.range<4>) {
    %xs = partir.slice 0 %x[%r] : tensor<8x6xf32> -> tensor<2x6xf32>
    %fs = partir.slice 0 %f[%r] : tensor<8x6xf32> -> tensor<2x6xf32>
    %a = arith.addf %xs, %fs : tensor<2x6xf32>
    partir.yield %a : tensor<2x6xf32>
  } : tensor<8x6xf32>
  %j = partir.loop "batch" [#partir.tile<0>] (%r: !partir.range<4>) {
    %is = partir.slice 0 %iota[%r] : tensor<8xi32> -> tensor<2xi32>
    %k = arith.addi %is, %is : tensor<2xi32>
    partir.yield %k : tensor<2xi32>
  } : tensor<8xi32>
  return %y, %j : tensor<8x6xf32>, tensor<8xi32>
}
