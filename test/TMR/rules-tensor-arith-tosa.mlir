// TMR rules of elementwise arith/math ops, constants, tensor ops (sliced, concatenated and padded
// dims must replicate; a reshape group maps only its major dim) and tosa ops.
// RUN: mlir-opt %plugin -verify-diagnostics -p 'builtin.module(partir-print-rules)' %s

func.func @tensor_ops(%a: tensor<8x16xf32>, %b: tensor<8x16xf32>, %c: tensor<4x8x16xf32>) -> tensor<8x16xf32> {
  // expected-remark @below {{partir-print-rules: arith.addf: ([i,j],[i,j]) -> ([i,j]) sizes={i=8,j=16}}}
  %sum = arith.addf %a, %b : tensor<8x16xf32>
  // expected-remark @below {{partir-print-rules: math.exp: ([i,j]) -> ([i,j]) sizes={i=8,j=16}}}
  %e = math.exp %sum : tensor<8x16xf32>
  // expected-remark @below {{partir-print-rules: arith.cmpf: ([i,j],[i,j]) -> ([i,j]) sizes={i=8,j=16}}}
  %cmp = arith.cmpf ogt, %a, %b : tensor<8x16xf32>
  // expected-remark @below {{partir-print-rules: arith.select: ([i,j],[i,j],[i,j]) -> ([i,j]) sizes={i=8,j=16}}}
  %sel = arith.select %cmp, %a, %b : tensor<8x16xi1>, tensor<8x16xf32>
  // expected-remark @below {{partir-print-rules: arith.constant: () -> ([i,j]) sizes={i=8,j=16}}}
  %splat = arith.constant dense<1.0> : tensor<8x16xf32>
  // expected-remark @below {{partir-print-rules: tensor.expand_shape: ([i,k]) -> ([i,j,k]) replicate={j} sizes={i=2,j=4,k=16}}}
  %x = tensor.expand_shape %a [[0, 1], [2]] output_shape [2, 4, 16] : tensor<8x16xf32> into tensor<2x4x16xf32>
  // expected-remark @below {{partir-print-rules: tensor.collapse_shape: ([i,j,k]) -> ([i,k]) replicate={j} sizes={i=4,j=8,k=16}}}
  %y = tensor.collapse_shape %c [[0, 1], [2]] : tensor<4x8x16xf32> into tensor<32x16xf32>
  // expected-remark @below {{partir-print-rules: tensor.extract_slice: ([i,j]) -> ([i,j]) replicate={j} sizes={i=8,j=16}}}
  %s = tensor.extract_slice %a[0, 0] [8, 8] [1, 1] : tensor<8x16xf32> to tensor<8x8xf32>
  // expected-remark @below {{partir-print-rules: tensor.insert_slice: ([i,j],[i,j]) -> ([i,j]) replicate={j} sizes={i=8,j=16}}}
  %i = tensor.insert_slice %s into %b[0, 8] [8, 8] [1, 1] : tensor<8x8xf32> into tensor<8x16xf32>
  // expected-remark @below {{partir-print-rules: tensor.concat: ([i,j],[i,j]) -> ([i,j]) replicate={j} sizes={i=8,j=32}}}
  %cc = tensor.concat dim(1) %a, %b : (tensor<8x16xf32>, tensor<8x16xf32>) -> tensor<8x32xf32>
  // expected-remark @below {{partir-print-rules: arith.constant: () -> ([]) sizes={}}}
  %zero = arith.constant 0.0 : f32
  // expected-remark @below {{partir-print-rules: tensor.pad: ([i,j]) -> ([i,j]) replicate={j} sizes={i=8,j=18}}}
  %p = tensor.pad %a low[0, 1] high[0, 1] {
  ^bb0(%i0: index, %i1: index):
    tensor.yield %zero : f32
  } : tensor<8x16xf32> to tensor<8x18xf32>
  // expected-remark @below {{partir-print-rules: func.return: ([i,j]) -> () sizes={i=8,j=16}}}
  return %e : tensor<8x16xf32>
}
func.func @tosa_ops(%a: tensor<2x8x16xf32>, %b: tensor<2x16x4xf32>, %z: tensor<1xf32>) -> tensor<2x8x4xf32> {
  // expected-remark @below {{partir-print-rules: tosa.matmul: ([b,i,k],[b,k,j],[_],[_]) -> ([b,i,j]) reduction={k:sum} sizes={b=2,i=8,k=16,j=4}}}
  %m = tosa.matmul %a, %b, %z, %z : (tensor<2x8x16xf32>, tensor<2x16x4xf32>, tensor<1xf32>, tensor<1xf32>) -> tensor<2x8x4xf32>
  // expected-remark @below {{partir-print-rules: tosa.add: ([i,j,k],[i,j,k]) -> ([i,j,k]) sizes={i=2,j=8,k=16}}}
  %add = tosa.add %a, %a : (tensor<2x8x16xf32>, tensor<2x8x16xf32>) -> tensor<2x8x16xf32>
  // expected-remark @below {{partir-print-rules: tosa.transpose: ([i,j,k]) -> ([i,k,j]) sizes={i=2,j=8,k=16}}}
  %t = tosa.transpose %a {perms = array<i32: 0, 2, 1>} : (tensor<2x8x16xf32>) -> tensor<2x16x8xf32>
  // expected-remark @below {{partir-print-rules: tosa.reduce_sum: ([i,j,k]) -> ([i,j,_]) reduction={k:sum} sizes={i=2,j=8,k=16}}}
  %r = tosa.reduce_sum %a {axis = 2 : i32} : (tensor<2x8x16xf32>) -> tensor<2x8x1xf32>
  // expected-remark @below {{partir-print-rules: func.return: ([i,j,k]) -> () sizes={i=2,j=8,k=4}}}
  return %m : tensor<2x8x4xf32>
}
