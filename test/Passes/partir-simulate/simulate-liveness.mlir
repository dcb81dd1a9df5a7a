// RUN: mlir-opt %plugin -split-input-file -p 'builtin.module(partir-simulate{device=%S/Inputs/round.toml})' %s -o /dev/null 2>&1 | FileCheck %s
//
// Peak memory from buffer lifetimes (1024 f32 = 4 KiB each).

// A chain x → a → b → c with fresh destinations: x lives throughout, a dies at b, b at c:
// step 0 {x a}, step 1 {x a b}, step 2 {x b c} → peak 12 KiB, first at step 1.
// CHECK-LABEL: partir-simulate: round
// CHECK: peak memory  12.00 KiB
// CHECK-NEXT: peak at linalg.generic at {{.*}}simulate-liveness.mlir:[[@LINE+9]]:8
#id = affine_map<(d0) -> (d0)>
func.func @main(%x: tensor<1024xf32>) -> tensor<1024xf32> {
  %e = tensor.empty() : tensor<1024xf32>
  %a = linalg.generic {indexing_maps = [#id, #id], iterator_types = ["parallel"]} ins(%x : tensor<1024xf32>) outs(%e : tensor<1024xf32>) {
  ^bb0(%in: f32, %out: f32):
    %v = math.exp %in : f32
    linalg.yield %v : f32
  } -> tensor<1024xf32>
  %b = linalg.generic {indexing_maps = [#id, #id], iterator_types = ["parallel"]} ins(%a : tensor<1024xf32>) outs(%e : tensor<1024xf32>) {
  ^bb0(%in: f32, %out: f32):
    %v = math.exp %in : f32
    linalg.yield %v : f32
  } -> tensor<1024xf32>
  %c = linalg.generic {indexing_maps = [#id, #id], iterator_types = ["parallel"]} ins(%b : tensor<1024xf32>) outs(%e : tensor<1024xf32>) {
  ^bb0(%in: f32, %out: f32):
    %v = math.exp %in : f32
    linalg.yield %v : f32
  } -> tensor<1024xf32>
  return %c : tensor<1024xf32>
}

// -----

// The same chain written in place (each op's destination is its dying input): one buffer
// besides x → peak 8 KiB. An argument is never overwritten: a's destination x stays live.
// CHECK-LABEL: partir-simulate: round
// CHECK: {{^ +}}compute {{.*}}3.07 k transcendentals
// CHECK: peak memory  8.00 KiB
#id = affine_map<(d0) -> (d0)>
func.func @main(%x: tensor<1024xf32>) -> tensor<1024xf32> {
  %a = linalg.generic {indexing_maps = [#id, #id], iterator_types = ["parallel"]} ins(%x : tensor<1024xf32>) outs(%x : tensor<1024xf32>) {
  ^bb0(%in: f32, %out: f32):
    %v = math.exp %in : f32
    linalg.yield %v : f32
  } -> tensor<1024xf32>
  %b = linalg.generic {indexing_maps = [#id, #id], iterator_types = ["parallel"]} ins(%a : tensor<1024xf32>) outs(%a : tensor<1024xf32>) {
  ^bb0(%in: f32, %out: f32):
    %v = math.exp %in : f32
    linalg.yield %v : f32
  } -> tensor<1024xf32>
  %c = linalg.generic {indexing_maps = [#id, #id], iterator_types = ["parallel"]} ins(%b : tensor<1024xf32>) outs(%b : tensor<1024xf32>) {
  ^bb0(%in: f32, %out: f32):
    %v = math.exp %in : f32
    linalg.yield %v : f32
  } -> tensor<1024xf32>
  return %c : tensor<1024xf32>
}
