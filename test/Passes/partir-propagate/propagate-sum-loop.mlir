// Tiling a reduction factor gives a #partir.sum loop carrying the reduction's kind; a sum into
// an accumulator that is not the identity (a bias folded into a matmul's init by fusion) starts
// from the identity and adds the accumulator once, after the loop.
// RUN: mlir-opt %plugin -verify-diagnostics -p 'builtin.module(partir-mesh{axes=batch=4,model=2}, partir-tile{value=x dim=1 axis=batch}, partir-tile{value=m dim=1 axis=batch}, partir-tile{value=r dim=1 axis=batch}, partir-tile{value=y dim=1 axis=batch}, partir-propagate{axis=batch})' %s | FileCheck %s

// Contracting dim k of the matmul: both operands are sliced on k (w as the matmul rule says
// for its whole argument), the accumulator (a fill of 0) is used whole in every iteration.
// CHECK-LABEL: func.func @contract
// CHECK-SAME: (%[[X:.*]]: tensor<32x64xf32> {partir.name = "x"}, %[[W:.*]]: tensor<64x16xf32>)
// CHECK: %[[F:.*]] = linalg.fill ins(%{{.*}} : f32) outs(%{{.*}} : tensor<32x16xf32>)
// CHECK: %[[H:.*]] = partir.loop "batch" [#partir.sum] (%[[R:.*]]: !partir.range<4>) {
// CHECK-NEXT: %[[XS:.*]] = partir.slice 1 %[[X]][%[[R]]] : tensor<32x64xf32> -> tensor<32x16xf32>
// CHECK-NEXT: %[[WS:.*]] = partir.slice 0 %[[W]][%[[R]]] : tensor<64x16xf32> -> tensor<16x16xf32>
// CHECK-NEXT: %[[P:.*]] = linalg.matmul ins(%[[XS]], %[[WS]] : tensor<32x16xf32>, tensor<16x16xf32>) outs(%[[F]] : tensor<32x16xf32>) -> tensor<32x16xf32>
// CHECK-NEXT: partir.yield %[[P]] : tensor<32x16xf32>
// CHECK-NEXT: } : tensor<32x16xf32>
// CHECK-NEXT: return %[[H]]
func.func @contract(%x: tensor<32x64xf32> {partir.name = "x"}, %w: tensor<64x16xf32>) -> tensor<32x16xf32> {
  %zero = arith.constant 0.0 : f32
  %e = tensor.empty() : tensor<32x16xf32>
  %f = linalg.fill ins(%zero : f32) outs(%e : tensor<32x16xf32>) -> tensor<32x16xf32>
  %h = linalg.matmul ins(%x, %w : tensor<32x64xf32>, tensor<64x16xf32>) outs(%f : tensor<32x16xf32>) -> tensor<32x16xf32>
  return %h : tensor<32x16xf32>
}

// A max reduction (maximumf combiner, -inf accumulator) is a #partir.sum<max> loop.
// CHECK-LABEL: func.func @row_max
// CHECK: %[[MF:.*]] = linalg.fill ins(%{{.*}} : f32) outs(%{{.*}} : tensor<16xf32>)
// CHECK: %[[MX:.*]] = partir.loop "batch" [#partir.sum<max>] (%[[MR:.*]]: !partir.range<4>) {
// CHECK-NEXT: %[[MS:.*]] = partir.slice 1 %arg0[%[[MR]]] : tensor<16x32xf32> -> tensor<16x8xf32>
// CHECK-NEXT: linalg.generic {{.*}} ins(%[[MS]] : tensor<16x8xf32>) outs(%[[MF]] : tensor<16xf32>)
// CHECK: arith.maximumf
// CHECK: } : tensor<16xf32>
// CHECK-NEXT: return %[[MX]]
#id = affine_map<(d0, d1) -> (d0, d1)>
#row = affine_map<(d0, d1) -> (d0)>
func.func @row_max(%m: tensor<16x32xf32> {partir.name = "m"}) -> tensor<16xf32> {
  %ninf = arith.constant 0xFF800000 : f32
  %e = tensor.empty() : tensor<16xf32>
  %f = linalg.fill ins(%ninf : f32) outs(%e : tensor<16xf32>) -> tensor<16xf32>
  %max = linalg.generic {indexing_maps = [#id, #row], iterator_types = ["parallel", "reduction"]} ins(%m : tensor<16x32xf32>) outs(%f : tensor<16xf32>) {
  ^bb0(%in: f32, %out: f32):
    %v = arith.maximumf %in, %out : f32
    linalg.yield %v : f32
  } -> tensor<16xf32>
  return %max : tensor<16xf32>
}

// linalg.reduce with an addf combiner over the tiled dim: a plain #partir.sum loop.
// CHECK-LABEL: func.func @row_sum
// CHECK: %[[SM:.*]] = partir.loop "batch" [#partir.sum] (%[[SR:.*]]: !partir.range<4>) {
// CHECK-NEXT: partir.slice 1 %arg0[%[[SR]]] : tensor<16x32xf32> -> tensor<16x8xf32>
// CHECK-NEXT: linalg.reduce
// CHECK: arith.addf
// CHECK: return %[[SM]]
func.func @row_sum(%r: tensor<16x32xf32> {partir.name = "r"}) -> tensor<16xf32> {
  %zero = arith.constant 0.0 : f32
  %e = tensor.empty() : tensor<16xf32>
  %f = linalg.fill ins(%zero : f32) outs(%e : tensor<16xf32>) -> tensor<16xf32>
  %sum = linalg.reduce ins(%r : tensor<16x32xf32>) outs(%f : tensor<16xf32>) dimensions = [1]
    (%in: f32, %acc: f32) {
      %s = arith.addf %in, %acc : f32
      linalg.yield %s : f32
    }
  return %sum : tensor<16xf32>
}

// Accumulating into a fill of 1.0 inside the loop would add the 1 once per iteration: each
// iteration starts from 0 and the 1s are added once, after the sum (acc + Σ partials).
// CHECK-LABEL: func.func @nonzero_accumulator
// CHECK: %[[ONES:.*]] = linalg.fill ins(%{{.*}} : f32) outs(%{{.*}} : tensor<32x16xf32>)
// CHECK: %[[ZERO:.*]] = arith.constant 0.000000e+00 : f32
// CHECK: %[[ZEROS:.*]] = linalg.fill ins(%[[ZERO]] : f32) outs(%{{.*}} : tensor<32x16xf32>)
// CHECK: %[[P:.*]] = partir.loop "batch" [#partir.sum]
// CHECK: linalg.matmul ins(%{{.*}}, %{{.*}} : tensor<32x16xf32>, tensor<16x16xf32>) outs(%[[ZEROS]] : tensor<32x16xf32>)
// CHECK: %[[S:.*]] = linalg.add ins(%[[ONES]], %[[P]] : tensor<32x16xf32>, tensor<32x16xf32>)
// CHECK-NEXT: return %[[S]]
func.func @nonzero_accumulator(%y: tensor<32x64xf32> {partir.name = "y"}, %w: tensor<64x16xf32>) -> tensor<32x16xf32> {
  %one = arith.constant 1.0 : f32
  %e = tensor.empty() : tensor<32x16xf32>
  %f = linalg.fill ins(%one : f32) outs(%e : tensor<32x16xf32>) -> tensor<32x16xf32>
  %h = linalg.matmul ins(%y, %w : tensor<32x64xf32>, tensor<64x16xf32>) outs(%f : tensor<32x16xf32>) -> tensor<32x16xf32>
  return %h : tensor<32x16xf32>
}
