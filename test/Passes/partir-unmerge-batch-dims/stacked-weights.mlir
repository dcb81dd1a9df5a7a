// RUN: mlir-opt %plugin -p 'builtin.module(partir-unmerge-batch-dims, partir-mesh{axes=batch=4,model=2}, partir-tile{value=x dim=0 axis=batch}, partir-tile{value=params/wkv dim=2 axis=model}, partir-propagate, partir-lower-to-hlo)' %s 2>%t.err | FileCheck %s
// RUN: FileCheck %s --check-prefix=NOSTOP --input-file=%t.err
// Without the pass, the heads stop at the flattening collapse_shape.
// RUN: mlir-opt %plugin -p 'builtin.module(partir-mesh{axes=batch=4,model=2}, partir-tile{value=x dim=0 axis=batch}, partir-tile{value=params/wkv dim=2 axis=model}, partir-propagate)' %s 2>&1 >/dev/null | FileCheck %s --check-prefix=STOPPED
//
// A stacked key/value kernel [2, K, H, D] (k and v in one weight, as published JAX models write
// it), flattened by the linalg path into the matmul's N = 2*H*D: heads (Megatron's dim) are not the
// major factor of the merged group. Unmerged, the matmul runs over [batch, 2, H, D].
// Column-parallel Megatron on the stacked kernel: each device holds its batch rows and its 2 of
// the 4 heads of both k and v, the matmul runs over [batch, 2, heads, dim], and nothing is
// communicated (the result stays split on batch and heads).
// CHECK-LABEL: func.func @kv(
// CHECK-SAME:      tensor<8x64xf32> {partir.name = "x", partir_hlo.sharding = #partir_hlo.sharding<[{"batch"}, {}]>}
// CHECK-SAME:      tensor<2x64x2x16xf32> {partir.name = "params/wkv", partir_hlo.sharding = #partir_hlo.sharding<[{}, {}, {"model"}, {}]>}
// CHECK-SAME:      -> (tensor<8x2x2x16xf32> {partir_hlo.sharding = #partir_hlo.sharding<[{"batch"}, {}, {"model"}, {}]>})
// CHECK:         linalg.generic {{.*}} ins(%{{.*}}, %{{.*}} : tensor<8x64xf32>, tensor<64x2x2x16xf32>) outs(%{{.*}} : tensor<8x2x2x16xf32>)
// CHECK-NOT:     partir_hlo.all_
// NOSTOP-NOT: stopped at
// STOPPED: remark: partir-propagate: stopped at 'tensor.collapse_shape' on axis 'model': factor k must be replicated — operand 0 (64x2x4x16 from params/wkv) is split on dim 2 (size 4)
func.func @kv(%x: tensor<32x64xf32> {partir.name = "x"}, %w: tensor<2x64x4x16xf32> {partir.name = "params/wkv"}) -> tensor<32x2x4x16xf32> {
  %cst = arith.constant 0.0 : f32
  %e = tensor.empty() : tensor<64x2x4x16xf32>
  %t = linalg.transpose ins(%w : tensor<2x64x4x16xf32>) outs(%e : tensor<64x2x4x16xf32>) permutation = [1, 0, 2, 3]
  %flat = tensor.collapse_shape %t [[0], [1, 2, 3]] : tensor<64x2x4x16xf32> into tensor<64x128xf32>
  %z = tensor.empty() : tensor<32x128xf32>
  %zero = linalg.fill ins(%cst : f32) outs(%z : tensor<32x128xf32>) -> tensor<32x128xf32>
  %y = linalg.matmul ins(%x, %flat : tensor<32x64xf32>, tensor<64x128xf32>) outs(%zero : tensor<32x128xf32>) -> tensor<32x128xf32>
  %r = tensor.expand_shape %y [[0], [1, 2, 3]] output_shape [32, 2, 4, 16] : tensor<32x128xf32> into tensor<32x2x4x16xf32>
  return %r : tensor<32x2x4x16xf32>
}
