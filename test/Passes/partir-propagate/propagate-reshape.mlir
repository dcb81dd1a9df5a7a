// Reshapes: tiling the major-most dim of a merged (collapse) or split (expand) group maps
// across when the sizes divide; a minor dim of a group, or a major dim too small for the
// axis, is a conflict, reported as a remark, and the reshape stays whole.
// RUN: mlir-opt %plugin -verify-diagnostics -p 'builtin.module(partir-mesh{axes=batch=4,model=2}, partir-tile{value=x dim=0 axis=batch}, partir-tile{value=y dim=0 axis=batch}, partir-tile{value=z dim=1 axis=batch}, partir-tile{value=c dim=0 axis=batch}, partir-tile{value=e dim=1 axis=batch}, partir-propagate{axis=batch})' %s | FileCheck %s

// Collapse 8x4 -> 32: dim 0 (the group's major dim) tiled 4 ways is dim 0 of the result.
// CHECK-LABEL: func.func @collapse_major
// CHECK: %[[L:.*]] = partir.loop "batch" [#partir.tile<0>] (%[[R:.*]]: !partir.range<4>) {
// CHECK-NEXT: %[[S:.*]] = partir.slice 0 %arg0[%[[R]]] : tensor<8x4x16xf32> -> tensor<2x4x16xf32>
// CHECK-NEXT: %[[C:.*]] = tensor.collapse_shape %[[S]] {{\[}}[0, 1], [2]] : tensor<2x4x16xf32> into tensor<8x16xf32>
// CHECK-NEXT: partir.yield %[[C]] : tensor<8x16xf32>
// CHECK-NEXT: } : tensor<32x16xf32>
// CHECK-NEXT: return %[[L]]
func.func @collapse_major(%x: tensor<8x4x16xf32> {partir.name = "x"}) -> tensor<32x16xf32> {
  %c = tensor.collapse_shape %x [[0, 1], [2]] : tensor<8x4x16xf32> into tensor<32x16xf32>
  return %c : tensor<32x16xf32>
}

// Expand 32 -> 8x4: dim 0 tiled is the major dim 0 of the result, output_shape follows.
// CHECK-LABEL: func.func @expand_major
// CHECK: %[[L:.*]] = partir.loop "batch" [#partir.tile<0>] (%[[R:.*]]: !partir.range<4>) {
// CHECK-NEXT: %[[S:.*]] = partir.slice 0 %arg0[%[[R]]] : tensor<32x16xf32> -> tensor<8x16xf32>
// CHECK-NEXT: %[[E:.*]] = tensor.expand_shape %[[S]] {{\[}}[0, 1], [2]] output_shape [2, 4, 16] : tensor<8x16xf32> into tensor<2x4x16xf32>
// CHECK-NEXT: partir.yield %[[E]] : tensor<2x4x16xf32>
// CHECK-NEXT: } : tensor<8x4x16xf32>
// CHECK-NEXT: return %[[L]]
func.func @expand_major(%y: tensor<32x16xf32> {partir.name = "y"}) -> tensor<8x4x16xf32> {
  %e = tensor.expand_shape %y [[0, 1], [2]] output_shape [8, 4, 16] : tensor<32x16xf32> into tensor<8x4x16xf32>
  return %e : tensor<8x4x16xf32>
}

// The minor dim of a merged group cannot be tiled through the collapse.
// CHECK-LABEL: func.func @collapse_minor
// CHECK: %[[V:.*]] = partir.loop "batch" [#partir.tile<1>]
// CHECK: %[[C:.*]] = tensor.collapse_shape %[[V]] {{\[}}[0, 1], [2]] : tensor<8x4x16xf32> into tensor<32x16xf32>
// CHECK-NEXT: return %[[C]]
func.func @collapse_minor(%z: tensor<8x4x16xf32> {partir.name = "z"}) -> tensor<32x16xf32> {
  // expected-remark @below {{partir-propagate: stopped at 'tensor.collapse_shape' on axis 'batch': factor j must be replicated}}
  %c = tensor.collapse_shape %z [[0, 1], [2]] : tensor<8x4x16xf32> into tensor<32x16xf32>
  return %c : tensor<32x16xf32>
}

// Backward: the collapse's result tiled on dim 0 needs its group's major dim (size 2) tiled
// 4 ways, which does not divide.
// CHECK-LABEL: func.func @collapse_indivisible
// CHECK: tensor.collapse_shape %arg0 {{\[}}[0, 1], [2]] {partir.name = "c"} : tensor<2x16x8xf32> into tensor<32x8xf32>
func.func @collapse_indivisible(%w: tensor<2x16x8xf32>) -> tensor<32x8xf32> {
  // expected-remark @below {{partir-propagate: stopped at 'tensor.collapse_shape' on axis 'batch': factor i of size 2 is not divisible by 4}}
  %c = tensor.collapse_shape %w [[0, 1], [2]] {partir.name = "c"} : tensor<2x16x8xf32> into tensor<32x8xf32>
  return %c : tensor<32x8xf32>
}

// Backward: the expand's result tiled on dim 1, the minor dim of the split group.
// CHECK-LABEL: func.func @expand_minor
// CHECK: tensor.expand_shape %arg0 {{\[}}[0, 1], [2]] output_shape [8, 4, 16] {partir.name = "e"} : tensor<32x16xf32> into tensor<8x4x16xf32>
func.func @expand_minor(%v: tensor<32x16xf32>) -> tensor<8x4x16xf32> {
  // expected-remark @below {{partir-propagate: stopped at 'tensor.expand_shape' on axis 'batch': factor j must be replicated}}
  %e = tensor.expand_shape %v [[0, 1], [2]] output_shape [8, 4, 16] {partir.name = "e"} : tensor<32x16xf32> into tensor<8x4x16xf32>
  return %e : tensor<8x4x16xf32>
}
