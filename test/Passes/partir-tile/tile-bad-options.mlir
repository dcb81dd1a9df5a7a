// Malformed partir-tile options: one error each, exit code 1, nothing printed on stdout.
// RUN: not mlir-opt %plugin -p 'builtin.module(partir-mesh{axes=batch=4}, partir-tile{value=x axis=batch})' %s 2>&1 | FileCheck %s --check-prefix=NO-DIM
// RUN: not mlir-opt %plugin -p 'builtin.module(partir-mesh{axes=batch=4}, partir-tile{value=x dim=0})' %s 2>&1 | FileCheck %s --check-prefix=NO-AXIS
// RUN: not mlir-opt %plugin -p 'builtin.module(partir-mesh{axes=batch=4}, partir-tile{dim=0 axis=batch})' %s 2>&1 | FileCheck %s --check-prefix=NO-VALUE
// RUN: mlir-opt %plugin -p 'builtin.module(partir-mesh{axes=batch=4}, partir-tile{value=x dim=0 axis=nope})' %s > %t.out 2> %t.err; test $? -eq 1
// RUN: FileCheck %s --check-prefix=EXIT-ONE < %t.err
// RUN: test ! -s %t.out

// NO-DIM: tile-bad-options.mlir:[[@LINE+4]]:1: error: partir-tile: no dim given (dim=N, N >= 0)
// NO-AXIS: tile-bad-options.mlir:[[@LINE+3]]:1: error: partir-tile: no axis given (axis=NAME)
// NO-VALUE: tile-bad-options.mlir:[[@LINE+2]]:1: error: partir-tile: empty selector; name a value, e.g. value=x or value=*w1
// EXIT-ONE: error: partir-tile: axis 'nope' is not in mesh @mesh [batch=4]
func.func @main(%x: tensor<8x8xf32> {partir.name = "x"}) -> tensor<8x8xf32> {
  return %x : tensor<8x8xf32>
}
