// partir-propagate needs a mesh, and an axis it names must be in it: one clear error at a
// location each, and the pass fails (exit code 1).
// RUN: mlir-opt %plugin -split-input-file -verify-diagnostics -p 'builtin.module(partir-propagate{axis=model})' %s
// RUN: not mlir-opt %plugin -split-input-file -p 'builtin.module(partir-propagate{axis=model})' %s -o /dev/null 2>&1 | FileCheck %s --check-prefix=EXIT

// EXIT: propagate-errors.mlir:[[# @LINE + 4]]:1: error: partir-propagate: the module declares no partir.mesh
// EXIT: propagate-errors.mlir:[[# @LINE + 10]]:1: error: partir-propagate: axis 'model' is not in mesh @mesh [batch=4]

// expected-error @below {{partir-propagate: the module declares no partir.mesh; run partir-mesh{axes=...} first}}
func.func @no_mesh(%x: tensor<8x8xf32>) -> tensor<8x8xf32> {
  return %x : tensor<8x8xf32>
}

// -----

// expected-error @below {{partir-propagate: axis 'model' is not in mesh @mesh [batch=4]}}
partir.mesh @mesh ["batch"=4]
func.func @unknown_axis(%x: tensor<8x8xf32>) -> tensor<8x8xf32> {
  return %x : tensor<8x8xf32>
}
