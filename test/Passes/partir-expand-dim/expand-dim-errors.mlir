// partir-expand-dim's errors: each a diagnostic at the value (or the module), exit code 1, and
// nothing written.
// RUN: not mlir-opt %plugin --allow-unregistered-dialect -p 'builtin.module(partir-expand-dim{value=w dim=1 sizes=3,5})' %s 2>&1 | FileCheck %s --check-prefix=SIZES
// RUN: not mlir-opt %plugin --allow-unregistered-dialect -p 'builtin.module(partir-expand-dim{value=w dim=2 sizes=3,4})' %s 2>&1 | FileCheck %s --check-prefix=RANGE
// RUN: not mlir-opt %plugin --allow-unregistered-dialect -p 'builtin.module(partir-expand-dim{value=w sizes=3,4})' %s 2>&1 | FileCheck %s --check-prefix=NO-DIM
// RUN: not mlir-opt %plugin --allow-unregistered-dialect -p 'builtin.module(partir-expand-dim{value=v dim=0 sizes=2,4})' %s 2>&1 | FileCheck %s --check-prefix=SELECTOR
// RUN: mlir-opt %plugin --allow-unregistered-dialect -p 'builtin.module(partir-expand-dim{value=w dim=1 sizes=12})' %s > %t.out 2> %t.err; test $? -eq 1
// RUN: FileCheck %s --check-prefix=ONE < %t.err
// RUN: test ! -s %t.out

// SIZES: error: partir-expand-dim: dim 1 of 'w' has size 12, which sizes [3, 5] do not make (give 2 or more positive sizes whose product is 12)
// RANGE: error: partir-expand-dim: dim 2 is out of range for 'w' of type tensor<8x12xf32>
// NO-DIM: error: partir-expand-dim: no dim given (dim=N, N >= 0)
// SELECTOR: error: partir-expand-dim: selector 'v' matches no function argument or named value
// ONE: error: partir-expand-dim: dim 1 of 'w' has size 12, which sizes [12] do not make
func.func @main(%x: tensor<4x8xf32> {partir.name = "x"}, %w: tensor<8x12xf32> {partir.name = "w"}) -> tensor<4x12xf32> {
  %y = "stablehlo.dot_general"(%x, %w) <{dot_dimension_numbers = #stablehlo.dot<lhs_contracting_dimensions = [1], rhs_contracting_dimensions = [0]>}> : (tensor<4x8xf32>, tensor<8x12xf32>) -> tensor<4x12xf32>
  return %y : tensor<4x12xf32>
}
