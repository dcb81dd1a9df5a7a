// A tile-action view of a function argument (`loop A [tile<d>] { slice d %w }`, what a later
// tactic's tile leaves) asks for %w split on d along A nested *inside* the slicing every
// consumer of the view shares (docs/design.md#partirhlo: per dim, the axes major to minor), so an argument
// tiled by MP along model and then by Z3 along batch on the same dim arrives
// [{"model", "batch"}]: 1/8 of it per device, and the consumers that slice it that way use it
// as it is (see view_sharding in src/passes/lower_to_hlo/mod.rs).
// RUN: mlir-opt %plugin -p 'builtin.module(partir-lower-to-hlo)' %s | FileCheck %s --implicit-check-not=partir.loop --implicit-check-not=partir.slice

partir.mesh @mesh ["batch"=4, "model"=2]

// Both consumers slice the view on dim 0 along model; the second also along batch inside:
// the shared prefix is [{model}], the view adds batch minor. 16 rows / (2 x 4) = 2 per device.
// Only the model-only consumer gathers, over batch alone (2x4 -> 8x4).
// CHECK-LABEL: func.func @nested(
// CHECK-SAME:      %[[W:.*]]: tensor<2x4xf32> {partir_hlo.sharding = #partir_hlo.sharding<[{"model", "batch"}, {}]>})
// CHECK-SAME:    -> (tensor<8x4xf32> {partir_hlo.sharding = #partir_hlo.sharding<[{"model"}, {}]>}, tensor<2x4xf32> {partir_hlo.sharding = #partir_hlo.sharding<[{"model", "batch"}, {}]>})
// CHECK-NEXT:    %[[G:.*]] = partir_hlo.all_gather %[[W]] dim 0 axes ["batch"] : tensor<2x4xf32> -> tensor<8x4xf32>
// CHECK-NEXT:    %[[E:.*]] = math.exp %[[G]] : tensor<8x4xf32>
// CHECK-NEXT:    %[[T:.*]] = math.tanh %[[W]] : tensor<2x4xf32>
// CHECK-NEXT:    return %[[E]], %[[T]]
func.func @nested(%w: tensor<16x4xf32>) -> (tensor<16x4xf32>, tensor<16x4xf32>) {
  %v = partir.loop "batch" [#partir.tile<0>] (%r: !partir.range<4>) {
    %s = partir.slice 0 %w[%r] : tensor<16x4xf32> -> tensor<4x4xf32>
    partir.yield %s : tensor<4x4xf32>
  } : tensor<16x4xf32>
  %a = partir.loop "model" [#partir.tile<0>] (%rm: !partir.range<2>) {
    %s = partir.slice 0 %v[%rm] : tensor<16x4xf32> -> tensor<8x4xf32>
    %e = math.exp %s : tensor<8x4xf32>
    partir.yield %e : tensor<8x4xf32>
  } : tensor<16x4xf32>
  %b = partir.loop "model" [#partir.tile<0>] (%rm: !partir.range<2>) {
    %s = partir.slice 0 %v[%rm] : tensor<16x4xf32> -> tensor<8x4xf32>
    %c = partir.loop "batch" [#partir.tile<0>] (%rb: !partir.range<4>) {
      %t = partir.slice 0 %s[%rb] : tensor<8x4xf32> -> tensor<2x4xf32>
      %e = math.tanh %t : tensor<2x4xf32>
      partir.yield %e : tensor<2x4xf32>
    } : tensor<8x4xf32>
    partir.yield %c : tensor<8x4xf32>
  } : tensor<16x4xf32>
  return %a, %b : tensor<16x4xf32>, tensor<16x4xf32>
}

// One consumer uses the view whole: nothing is shared, and the argument is split as the view
// alone says, [{"batch"}] (4 rows per device), gathered for the whole use.
// CHECK-LABEL: func.func @no_shared_prefix(
// CHECK-SAME:      %[[W:.*]]: tensor<4x4xf32> {partir_hlo.sharding = #partir_hlo.sharding<[{"batch"}, {}]>})
// CHECK-NOT:     partir_hlo.sharding<[{"model", "batch"}
// CHECK:         return
func.func @no_shared_prefix(%w: tensor<16x4xf32>) -> (tensor<16x4xf32>, tensor<16x4xf32>) {
  %v = partir.loop "batch" [#partir.tile<0>] (%r: !partir.range<4>) {
    %s = partir.slice 0 %w[%r] : tensor<16x4xf32> -> tensor<4x4xf32>
    partir.yield %s : tensor<4x4xf32>
  } : tensor<16x4xf32>
  %a = partir.loop "model" [#partir.tile<0>] (%rm: !partir.range<2>) {
    %s = partir.slice 0 %v[%rm] : tensor<16x4xf32> -> tensor<8x4xf32>
    %e = math.exp %s : tensor<8x4xf32>
    partir.yield %e : tensor<8x4xf32>
  } : tensor<16x4xf32>
  %t = math.tanh %v : tensor<16x4xf32>
  return %a, %t : tensor<16x4xf32>, tensor<16x4xf32>
}
