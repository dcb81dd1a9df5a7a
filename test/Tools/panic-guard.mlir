// A Rust panic inside a pass never aborts the host mlir-opt: it becomes an error diagnostic at
// the operation and a pass failure (exit code 1, not a crash; `not` fails on a crash).
// RUN: env PARTIR_INJECT_PANIC=partir-tile not mlir-opt %plugin -p 'builtin.module(partir-mesh{axes=batch=4}, partir-tile{value=x dim=0 axis=batch})' %s 2>&1 | FileCheck %s
// RUN: env PARTIR_INJECT_PANIC=partir-tile mlir-opt %plugin -p 'builtin.module(partir-mesh{axes=batch=4}, partir-tile{value=x dim=0 axis=batch})' %s > /dev/null 2>&1; test $? -eq 1

// CHECK: error: partir internal error: injected panic in partir-tile (PARTIR_INJECT_PANIC)
func.func @main(%x: tensor<8xf32> {partir.name = "x"}) -> tensor<8xf32> {
  return %x : tensor<8xf32>
}
