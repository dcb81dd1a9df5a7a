// Passes declared by docs/design.md#5-passes but not built yet fail loudly, never succeed silently.
// RUN: not mlir-opt %plugin -p 'builtin.module(partir-auto{axis=batch})' %s 2>&1 | FileCheck %s --check-prefix=AUTO

// AUTO: error: partir-auto: not implemented yet
func.func @main(%x: tensor<8xf32>) -> tensor<8xf32> {
  return %x : tensor<8xf32>
}
