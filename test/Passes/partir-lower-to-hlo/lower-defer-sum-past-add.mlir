// Partial sums added together are reduced once, after the add: a sum distributes over
// addition, add(Σa, Σb) = Σ(a + b) (and sub alike). Megatron's backward reduces the attention
// block's input gradient dQ·wqᵀ + dK·wkᵀ + dV·wvᵀ with one all_reduce, not one per matmul.
// Only adds/subs whose operands are all sum reductions over the same axes, each used only
// there: a replicated operand (x + Σa ≠ Σ(x + a)), a non-linear op, a reduce used elsewhere or
// over other axes keep the reduces where they are.
// RUN: mlir-opt %plugin -p 'builtin.module(partir-lower-to-hlo)' %s | FileCheck %s --implicit-check-not=partir.loop --implicit-check-not=partir.slice

#id = affine_map<(d0, d1) -> (d0, d1)>
partir.mesh @mesh ["batch"=4, "model"=2]

// Three matmuls contracting a model-split dim, added (a linalg.generic add, then an arith.subf):
// the per-device partials are combined locally and reduced once at the end.
// CHECK-LABEL: func.func @chain(
// CHECK-NOT:     partir_hlo.all_reduce
// CHECK:         %[[A:.*]] = linalg.matmul
// CHECK-NOT:     partir_hlo.all_reduce
// CHECK:         %[[B:.*]] = linalg.matmul
// CHECK-NOT:     partir_hlo.all_reduce
// CHECK:         %[[S:.*]] = linalg.generic {{.*}} ins(%[[A]], %[[B]] : tensor<8x6xf32>, tensor<8x6xf32>)
// CHECK-NOT:     partir_hlo.all_reduce
// CHECK:         %[[C:.*]] = linalg.matmul
// CHECK-NOT:     partir_hlo.all_reduce
// CHECK:         %[[T:.*]] = arith.subf %[[S]], %[[C]] : tensor<8x6xf32>
// CHECK-NEXT:    %[[R:.*]] = partir_hlo.all_reduce sum %[[T]] axes ["model"] : tensor<8x6xf32>
// CHECK-NEXT:    return %[[R]]
func.func @chain(%x: tensor<8x4xf32>, %w: tensor<4x6xf32>, %v: tensor<4x6xf32>, %u: tensor<4x6xf32>, %z: tensor<8x6xf32>) -> tensor<8x6xf32> {
  %a = partir.loop "model" [#partir.sum] (%r: !partir.range<2>) {
    %xs = partir.slice 1 %x[%r] : tensor<8x4xf32> -> tensor<8x2xf32>
    %ws = partir.slice 0 %w[%r] : tensor<4x6xf32> -> tensor<2x6xf32>
    %m = linalg.matmul ins(%xs, %ws : tensor<8x2xf32>, tensor<2x6xf32>) outs(%z : tensor<8x6xf32>) -> tensor<8x6xf32>
    partir.yield %m : tensor<8x6xf32>
  } : tensor<8x6xf32>
  %b = partir.loop "model" [#partir.sum] (%r: !partir.range<2>) {
    %xs = partir.slice 1 %x[%r] : tensor<8x4xf32> -> tensor<8x2xf32>
    %vs = partir.slice 0 %v[%r] : tensor<4x6xf32> -> tensor<2x6xf32>
    %m = linalg.matmul ins(%xs, %vs : tensor<8x2xf32>, tensor<2x6xf32>) outs(%z : tensor<8x6xf32>) -> tensor<8x6xf32>
    partir.yield %m : tensor<8x6xf32>
  } : tensor<8x6xf32>
  %e = tensor.empty() : tensor<8x6xf32>
  %s = linalg.generic {indexing_maps = [#id, #id, #id], iterator_types = ["parallel", "parallel"]} ins(%a, %b : tensor<8x6xf32>, tensor<8x6xf32>) outs(%e : tensor<8x6xf32>) {
  ^bb0(%in: f32, %in_1: f32, %out: f32):
    %0 = arith.addf %in, %in_1 : f32
    linalg.yield %0 : f32
  } -> tensor<8x6xf32>
  %c = partir.loop "model" [#partir.sum] (%r: !partir.range<2>) {
    %xs = partir.slice 1 %x[%r] : tensor<8x4xf32> -> tensor<8x2xf32>
    %us = partir.slice 0 %u[%r] : tensor<4x6xf32> -> tensor<2x6xf32>
    %m = linalg.matmul ins(%xs, %us : tensor<8x2xf32>, tensor<2x6xf32>) outs(%z : tensor<8x6xf32>) -> tensor<8x6xf32>
    partir.yield %m : tensor<8x6xf32>
  } : tensor<8x6xf32>
  %t = arith.subf %s, %c : tensor<8x6xf32>
  return %t : tensor<8x6xf32>
}

// One operand replicated: Σa is reduced before the add (x must be added once, not twice).
// CHECK-LABEL: func.func @replicated_operand(
// CHECK:         %[[A:.*]] = linalg.matmul
// CHECK-NEXT:    %[[R:.*]] = partir_hlo.all_reduce sum %[[A]] axes ["model"]
// CHECK-NEXT:    %[[T:.*]] = arith.addf %[[R]], %{{.*}} : tensor<8x6xf32>
// CHECK-NEXT:    return %[[T]]
func.func @replicated_operand(%x: tensor<8x4xf32>, %w: tensor<4x6xf32>, %y: tensor<8x6xf32>, %z: tensor<8x6xf32>) -> tensor<8x6xf32> {
  %a = partir.loop "model" [#partir.sum] (%r: !partir.range<2>) {
    %xs = partir.slice 1 %x[%r] : tensor<8x4xf32> -> tensor<8x2xf32>
    %ws = partir.slice 0 %w[%r] : tensor<4x6xf32> -> tensor<2x6xf32>
    %m = linalg.matmul ins(%xs, %ws : tensor<8x2xf32>, tensor<2x6xf32>) outs(%z : tensor<8x6xf32>) -> tensor<8x6xf32>
    partir.yield %m : tensor<8x6xf32>
  } : tensor<8x6xf32>
  %t = arith.addf %a, %y : tensor<8x6xf32>
  return %t : tensor<8x6xf32>
}

// A product of partial sums is not their sum's product: both reduces stay. So do reduces
// with another use, and reduces over different axes.
// CHECK-LABEL: func.func @stays(
// CHECK:         %[[A:.*]] = linalg.matmul
// CHECK-NEXT:    %[[RA:.*]] = partir_hlo.all_reduce sum %[[A]] axes ["model"]
// CHECK:         %[[B:.*]] = linalg.matmul
// CHECK-NEXT:    %[[RB:.*]] = partir_hlo.all_reduce sum %[[B]] axes ["model"]
// CHECK:         %[[C:.*]] = linalg.matmul
// CHECK-NEXT:    %[[RC:.*]] = partir_hlo.all_reduce sum %[[C]] axes ["batch"]
// CHECK-NEXT:    %[[P:.*]] = arith.mulf %[[RA]], %[[RB]] : tensor<8x6xf32>
// CHECK-NEXT:    %[[Q:.*]] = arith.addf %[[RA]], %[[RB]] : tensor<8x6xf32>
// CHECK-NEXT:    %[[D:.*]] = arith.addf %[[RA]], %[[RC]] : tensor<8x6xf32>
// CHECK-NEXT:    return %[[P]], %[[Q]], %[[D]]
func.func @stays(%x: tensor<8x4xf32>, %w: tensor<4x6xf32>, %v: tensor<4x6xf32>, %z: tensor<8x6xf32>) -> (tensor<8x6xf32>, tensor<8x6xf32>, tensor<8x6xf32>) {
  %a = partir.loop "model" [#partir.sum] (%r: !partir.range<2>) {
    %xs = partir.slice 1 %x[%r] : tensor<8x4xf32> -> tensor<8x2xf32>
    %ws = partir.slice 0 %w[%r] : tensor<4x6xf32> -> tensor<2x6xf32>
    %m = linalg.matmul ins(%xs, %ws : tensor<8x2xf32>, tensor<2x6xf32>) outs(%z : tensor<8x6xf32>) -> tensor<8x6xf32>
    partir.yield %m : tensor<8x6xf32>
  } : tensor<8x6xf32>
  %b = partir.loop "model" [#partir.sum] (%r: !partir.range<2>) {
    %xs = partir.slice 1 %x[%r] : tensor<8x4xf32> -> tensor<8x2xf32>
    %vs = partir.slice 0 %v[%r] : tensor<4x6xf32> -> tensor<2x6xf32>
    %m = linalg.matmul ins(%xs, %vs : tensor<8x2xf32>, tensor<2x6xf32>) outs(%z : tensor<8x6xf32>) -> tensor<8x6xf32>
    partir.yield %m : tensor<8x6xf32>
  } : tensor<8x6xf32>
  %c = partir.loop "batch" [#partir.sum] (%r: !partir.range<4>) {
    %xs = partir.slice 1 %x[%r] : tensor<8x4xf32> -> tensor<8x1xf32>
    %ws = partir.slice 0 %w[%r] : tensor<4x6xf32> -> tensor<1x6xf32>
    %m = linalg.matmul ins(%xs, %ws : tensor<8x1xf32>, tensor<1x6xf32>) outs(%z : tensor<8x6xf32>) -> tensor<8x6xf32>
    partir.yield %m : tensor<8x6xf32>
  } : tensor<8x6xf32>
  %p = arith.mulf %a, %b : tensor<8x6xf32>
  %q = arith.addf %a, %b : tensor<8x6xf32>
  %d = arith.addf %a, %c : tensor<8x6xf32>
  return %p, %q, %d : tensor<8x6xf32>, tensor<8x6xf32>, tensor<8x6xf32>
}

// Through reshapes (as the Transformer's expand_shape from the collapsed [batch*seq] rows): the
// reshapes act on the partials, and the one reduce has the add's type.
// CHECK-LABEL: func.func @through_reshape(
// CHECK-NOT:     partir_hlo.all_reduce
// CHECK:         %[[EA:.*]] = tensor.expand_shape %{{.*}} {{\[\[}}0, 1], [2]] output_shape [2, 4, 6] : tensor<8x6xf32> into tensor<2x4x6xf32>
// CHECK-NOT:     partir_hlo.all_reduce
// CHECK:         %[[EB:.*]] = tensor.expand_shape %{{.*}} {{\[\[}}0, 1], [2]] output_shape [2, 4, 6] : tensor<8x6xf32> into tensor<2x4x6xf32>
// CHECK-NEXT:    %[[S:.*]] = arith.addf %[[EA]], %[[EB]] : tensor<2x4x6xf32>
// CHECK-NEXT:    %[[R:.*]] = partir_hlo.all_reduce sum %[[S]] axes ["model"] : tensor<2x4x6xf32>
// CHECK-NEXT:    return %[[R]]
func.func @through_reshape(%x: tensor<8x4xf32>, %w: tensor<4x6xf32>, %v: tensor<4x6xf32>, %z: tensor<8x6xf32>) -> tensor<2x4x6xf32> {
  %a = partir.loop "model" [#partir.sum] (%r: !partir.range<2>) {
    %xs = partir.slice 1 %x[%r] : tensor<8x4xf32> -> tensor<8x2xf32>
    %ws = partir.slice 0 %w[%r] : tensor<4x6xf32> -> tensor<2x6xf32>
    %m = linalg.matmul ins(%xs, %ws : tensor<8x2xf32>, tensor<2x6xf32>) outs(%z : tensor<8x6xf32>) -> tensor<8x6xf32>
    partir.yield %m : tensor<8x6xf32>
  } : tensor<8x6xf32>
  %ea = tensor.expand_shape %a [[0, 1], [2]] output_shape [2, 4, 6] : tensor<8x6xf32> into tensor<2x4x6xf32>
  %b = partir.loop "model" [#partir.sum] (%r: !partir.range<2>) {
    %xs = partir.slice 1 %x[%r] : tensor<8x4xf32> -> tensor<8x2xf32>
    %vs = partir.slice 0 %v[%r] : tensor<4x6xf32> -> tensor<2x6xf32>
    %m = linalg.matmul ins(%xs, %vs : tensor<8x2xf32>, tensor<2x6xf32>) outs(%z : tensor<8x6xf32>) -> tensor<8x6xf32>
    partir.yield %m : tensor<8x6xf32>
  } : tensor<8x6xf32>
  %eb = tensor.expand_shape %b [[0, 1], [2]] output_shape [2, 4, 6] : tensor<8x6xf32> into tensor<2x4x6xf32>
  %s = arith.addf %ea, %eb : tensor<2x4x6xf32>
  return %s : tensor<2x4x6xf32>
}
