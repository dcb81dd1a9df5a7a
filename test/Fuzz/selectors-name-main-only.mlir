// Fuzz class 5: selectors also matched a helper function's arguments (`arg0`, `arg*`), so
// lowering changed the helper's signature but not its callers (`func.call` operand type
// mismatch). Selectors name @main's values (or every public function's, without a @main).
// RUN: mlir-opt %plugin -p 'builtin.module(partir-mesh{axes=a=2}, partir-tile{value=arg* dim=0 axis=a}, partir-propagate, partir-lower-to-hlo)' %s | FileCheck %s

// The helper keeps its whole-tensor signature; @main gathers its chunk to call it.
// CHECK-LABEL: func.func private @helper(
// CHECK-SAME:      %{{.*}}: tensor<8xf32> {partir_hlo.sharding = #partir_hlo.sharding<[{}]>}) -> (tensor<8xf32>
// CHECK-LABEL: func.func @main(
// CHECK-SAME:      %[[X:.*]]: tensor<4xf32> {partir_hlo.sharding = #partir_hlo.sharding<[{"a"}]>}
// CHECK:         %[[W:.*]] = partir_hlo.all_gather %[[X]] dim 0 axes ["a"] : tensor<4xf32> -> tensor<8xf32>
// CHECK:         call @helper(%[[W]]) : (tensor<8xf32>) -> tensor<8xf32>
func.func private @helper(%h: tensor<8xf32>) -> tensor<8xf32> {
  %e = tensor.empty() : tensor<8xf32>
  %r = linalg.generic {indexing_maps = [affine_map<(i) -> (i)>, affine_map<(i) -> (i)>], iterator_types = ["parallel"]} ins(%h : tensor<8xf32>) outs(%e : tensor<8xf32>) {
  ^bb0(%in: f32, %out: f32):
    %t = math.tanh %in : f32
    linalg.yield %t : f32
  } -> tensor<8xf32>
  return %r : tensor<8xf32>
}

func.func @main(%x: tensor<8xf32>) -> tensor<8xf32> {
  %r = func.call @helper(%x) : (tensor<8xf32>) -> tensor<8xf32>
  return %r : tensor<8xf32>
}
