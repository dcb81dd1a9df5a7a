// The TMR rule of every linalg family, derived from indexing maps and iterator types (named
// and generic ops; the reduction kind comes from the region's combiner: addf -> sum, maximumf -> max).
// RUN: mlir-opt %plugin -verify-diagnostics -p 'builtin.module(partir-print-rules)' %s

#id = affine_map<(d0, d1) -> (d0, d1)>
#row = affine_map<(d0, d1) -> (d0)>
func.func @linalg(%a: tensor<8x16xf32>, %b: tensor<16x4xf32>, %bb: tensor<2x8x16xf32>, %bc: tensor<2x16x4xf32>, %v: tensor<8xf32>) -> tensor<8x4xf32> {
  // expected-remark @below {{partir-print-rules: arith.constant: () -> ([]) sizes={}}}
  %zero = arith.constant 0.0 : f32
  // expected-remark @below {{partir-print-rules: tensor.empty: () -> ([i,j]) sizes={i=8,j=4}}}
  %e = tensor.empty() : tensor<8x4xf32>
  // expected-remark @below {{partir-print-rules: linalg.fill: ([],[i,j]) -> ([i,j]) sizes={i=8,j=4}}}
  %f = linalg.fill ins(%zero : f32) outs(%e : tensor<8x4xf32>) -> tensor<8x4xf32>
  // expected-remark @below {{partir-print-rules: linalg.matmul: ([i,k],[k,j],[i,j]) -> ([i,j]) reduction={k:sum} sizes={i=8,j=4,k=16}}}
  %m = linalg.matmul ins(%a, %b : tensor<8x16xf32>, tensor<16x4xf32>) outs(%f : tensor<8x4xf32>) -> tensor<8x4xf32>
  // expected-remark @below {{partir-print-rules: tensor.empty: () -> ([i,j,k]) sizes={i=2,j=8,k=4}}}
  %e3 = tensor.empty() : tensor<2x8x4xf32>
  // expected-remark @below {{partir-print-rules: linalg.batch_matmul: ([i,j,l],[i,l,k],[i,j,k]) -> ([i,j,k]) reduction={l:sum} sizes={i=2,j=8,k=4,l=16}}}
  %bm = linalg.batch_matmul ins(%bb, %bc : tensor<2x8x16xf32>, tensor<2x16x4xf32>) outs(%e3 : tensor<2x8x4xf32>) -> tensor<2x8x4xf32>
  // expected-remark @below {{partir-print-rules: tensor.empty: () -> ([i]) sizes={i=8}}}
  %e8 = tensor.empty() : tensor<8xf32>
  // expected-remark @below {{partir-print-rules: linalg.generic: ([i,j],[i]) -> ([i]) reduction={j:max} sizes={i=8,j=16}}}
  %mx = linalg.generic {indexing_maps = [#id, #row], iterator_types = ["parallel", "reduction"]} ins(%a : tensor<8x16xf32>) outs(%e8 : tensor<8xf32>) {
  ^bb0(%in: f32, %acc: f32):
    %r = arith.maximumf %in, %acc : f32
    linalg.yield %r : f32
  } -> tensor<8xf32>
  // expected-remark @below {{partir-print-rules: linalg.reduce: ([i,j],[i]) -> ([i]) reduction={j:sum} sizes={i=8,j=16}}}
  %sm = linalg.reduce ins(%a : tensor<8x16xf32>) outs(%e8 : tensor<8xf32>) dimensions = [1]
    (%in: f32, %acc: f32) {
      %r = arith.addf %in, %acc : f32
      linalg.yield %r : f32
    }
  // expected-remark @below {{partir-print-rules: linalg.generic: ([i,j],[i,j]) -> ([i,j]) sizes={i=8,j=16}}}
  %ex = linalg.generic {indexing_maps = [#id, #id], iterator_types = ["parallel", "parallel"]} ins(%a : tensor<8x16xf32>) outs(%a : tensor<8x16xf32>) {
  ^bb0(%in: f32, %out: f32):
    %r = math.exp %in : f32
    linalg.yield %r : f32
  } -> tensor<8x16xf32>
  // expected-remark @below {{partir-print-rules: tensor.empty: () -> ([i,j]) sizes={i=16,j=8}}}
  %et = tensor.empty() : tensor<16x8xf32>
  // expected-remark @below {{partir-print-rules: linalg.transpose: ([j,i],[i,j]) -> ([i,j]) sizes={i=16,j=8}}}
  %tr = linalg.transpose ins(%a : tensor<8x16xf32>) outs(%et : tensor<16x8xf32>) permutation = [1, 0]
  // expected-remark @below {{partir-print-rules: tensor.empty: () -> ([i,j]) sizes={i=8,j=16}}}
  %eb = tensor.empty() : tensor<8x16xf32>
  // expected-remark @below {{partir-print-rules: linalg.broadcast: ([i],[i,j]) -> ([i,j]) sizes={i=8,j=16}}}
  %br = linalg.broadcast ins(%v : tensor<8xf32>) outs(%eb : tensor<8x16xf32>) dimensions = [1]
  // expected-remark @below {{partir-print-rules: func.return: ([i,j]) -> () sizes={i=8,j=4}}}
  return %m : tensor<8x4xf32>
}
