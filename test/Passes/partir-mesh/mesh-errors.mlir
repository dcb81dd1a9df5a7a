// Bad meshes: one clear error with a location each, and a failing exit code.
// RUN: not mlir-opt %plugin -p 'builtin.module(partir-mesh{axes=batch})' %s 2>&1 | FileCheck %s --check-prefix=FORM
// RUN: not mlir-opt %plugin -p 'builtin.module(partir-mesh{axes=batch=0})' %s 2>&1 | FileCheck %s --check-prefix=ZERO
// RUN: not mlir-opt %plugin -p 'builtin.module(partir-mesh{axes=batch=two})' %s 2>&1 | FileCheck %s --check-prefix=NAN
// RUN: not mlir-opt %plugin -p 'builtin.module(partir-mesh{axes=a=2,a=2})' %s 2>&1 | FileCheck %s --check-prefix=TWICE
// RUN: not mlir-opt %plugin -p 'builtin.module(partir-mesh)' %s 2>&1 | FileCheck %s --check-prefix=NONE
// RUN: not mlir-opt %plugin -p 'builtin.module(partir-mesh{axes=batch=4}, partir-mesh{axes=batch=8})' %s 2>&1 | FileCheck %s --check-prefix=OTHER

// FORM: mesh-errors.mlir:[[@LINE+6]]:1: error: partir-mesh: mesh axis 'batch' must be written NAME=SIZE, e.g. batch=4
// ZERO: error: partir-mesh: mesh axis 'batch' must have a positive size, got 0
// NAN: error: partir-mesh: mesh axis 'batch' has size 'two', which is not an integer
// TWICE: error: partir-mesh: mesh axis 'a' is declared twice
// NONE: error: partir-mesh: no mesh axes given; write e.g. partir-mesh{axes=batch=4,model=2}
// OTHER: error: partir-mesh: the module already declares mesh @mesh [batch=4]; cannot declare @mesh [batch=8] too
func.func @main(%x: tensor<8xf32>) -> tensor<8xf32> {
  return %x : tensor<8xf32>
}
