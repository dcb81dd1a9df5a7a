// partir-unmerge-batch-dims folds the collapse_shape that merges [batch, heads] in front of a
// batch_matmul into the op: it runs over [batch, heads, q, k] and the reshapes fold away, so
// Megatron can split heads on one axis while batch is split on another.
// RUN: mlir-opt %plugin -p 'builtin.module(partir-unmerge-batch-dims)' %s 2>%t.err | FileCheck %s
// RUN: FileCheck %s --check-prefix=REMARK --input-file=%t.err
// After it, BP on batch and heads on model propagate through attention without a conflict.
// RUN: mlir-opt %plugin -p 'builtin.module(partir-unmerge-batch-dims, partir-mesh{axes=batch=4,model=2}, partir-tile{value=q dim=0 axis=batch}, partir-tile{value=q dim=1 axis=model}, partir-propagate)' %s 2>&1 >/dev/null | FileCheck %s --check-prefix=PROPAGATED
// Without it, heads (the minor factor of the merge) cannot be split.
// RUN: mlir-opt %plugin -p 'builtin.module(partir-mesh{axes=batch=4,model=2}, partir-tile{value=q dim=0 axis=batch}, partir-tile{value=q dim=1 axis=model}, partir-propagate)' %s 2>&1 >/dev/null | FileCheck %s --check-prefix=STOPPED
// Partitioned programs are refused.
// RUN: not mlir-opt %plugin -p 'builtin.module(partir-mesh{axes=batch=4}, partir-tile{value=q dim=0 axis=batch}, partir-unmerge-batch-dims)' %s 2>&1 | FileCheck %s --check-prefix=LOOPS

// CHECK-LABEL: func.func @attention(
// CHECK-SAME:      %[[Q:[a-z0-9]+]]: tensor<8x4x16x16xf32> {partir.name = "q"}, %[[K:[a-z0-9]+]]: tensor<8x4x16x16xf32> {partir.name = "k"})
// CHECK-NOT:     tensor.collapse_shape
// CHECK-NOT:     tensor.expand_shape
// CHECK:         %[[INIT:.*]] = linalg.fill ins(%{{.*}} : f32) outs(%{{.*}} : tensor<8x4x16x16xf32>)
// CHECK:         %[[S:.*]] = linalg.generic {{.*}} iterator_types = ["parallel", "parallel", "parallel", "parallel", "reduction"]} ins(%[[Q]], %[[K]] : tensor<8x4x16x16xf32>, tensor<8x4x16x16xf32>) outs(%[[INIT]] : tensor<8x4x16x16xf32>)
// CHECK:           arith.mulf
// CHECK:           arith.addf
// CHECK:         return %[[S]]

// A matmul on values that are not collapsed is left alone.
// CHECK-LABEL: func.func private @plain(
// CHECK:         linalg.matmul

// REMARK: remark: partir-unmerge-batch-dims: 1 batched ops now run over their separate batch dims
// PROPAGATED-NOT: stopped at
// STOPPED: remark: partir-propagate: stopped at 'tensor.collapse_shape' on axis 'model'
// LOOPS: error: partir-unmerge-batch-dims: expects a program before partitioning, but this one has 'partir.loop'; run it before partir-schedule
func.func @attention(%q: tensor<8x4x16x16xf32> {partir.name = "q"}, %k: tensor<8x4x16x16xf32> {partir.name = "k"}) -> tensor<8x4x16x16xf32> {
  %cst = arith.constant 0.0 : f32
  %a = tensor.collapse_shape %q [[0, 1], [2], [3]] : tensor<8x4x16x16xf32> into tensor<32x16x16xf32>
  %b = tensor.collapse_shape %k [[0, 1], [2], [3]] : tensor<8x4x16x16xf32> into tensor<32x16x16xf32>
  %e = tensor.empty() : tensor<32x16x16xf32>
  %zero = linalg.fill ins(%cst : f32) outs(%e : tensor<32x16x16xf32>) -> tensor<32x16x16xf32>
  %s = linalg.batch_matmul ins(%a, %b : tensor<32x16x16xf32>, tensor<32x16x16xf32>) outs(%zero : tensor<32x16x16xf32>) -> tensor<32x16x16xf32>
  %r = tensor.expand_shape %s [[0, 1], [2], [3]] output_shape [8, 4, 16, 16] : tensor<32x16x16xf32> into tensor<8x4x16x16xf32>
  return %r : tensor<8x4x16x16xf32>
}

func.func private @plain(%x: tensor<16x8xf32>, %w: tensor<8x4xf32>, %z: tensor<16x4xf32>) -> tensor<16x4xf32> {
  %y = linalg.matmul ins(%x, %w : tensor<16x8xf32>, tensor<8x4xf32>) outs(%z : tensor<16x4xf32>) -> tensor<16x4xf32>
  return %y : tensor<16x4xf32>
}

// A reshape pair that only moves unit dims (a conv kernel's gradient 16x1x1x4 -> 64 -> 1x1x16x4)
// keeps each non-unit dim in its own group, so the 4 can be split (ZeRO's output channels).
// CHECK-LABEL: func.func private @unit_pair(
// CHECK:         %[[C:.*]] = tensor.collapse_shape %{{.*}} {{\[\[}}0], [1, 2, 3]] : tensor<16x1x1x4xf32> into tensor<16x4xf32>
// CHECK:         %[[E:.*]] = tensor.expand_shape %[[C]] {{\[\[}}0, 1, 2], [3]] output_shape [1, 1, 16, 4] : tensor<16x4xf32> into tensor<1x1x16x4xf32>
// CHECK:         return %[[E]]
func.func private @unit_pair(%g: tensor<16x1x1x4xf32>) -> tensor<1x1x16x4xf32> {
  %c = tensor.collapse_shape %g [[0, 1, 2, 3]] : tensor<16x1x1x4xf32> into tensor<64xf32>
  %e = tensor.expand_shape %c [[0, 1, 2, 3]] output_shape [1, 1, 16, 4] : tensor<64xf32> into tensor<1x1x16x4xf32>
  return %e : tensor<1x1x16x4xf32>
}
