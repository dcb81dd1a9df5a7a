// Bad options and the wrong program form are located errors; the input is not rewritten.
// RUN: not mlir-opt %plugin -p 'builtin.module(partir-combine-collectives{threshold=lots})' %s 2>&1 | FileCheck %s --check-prefix=SIZE
// RUN: not mlir-opt %plugin -p 'builtin.module(partir-combine-collectives{count=0})' %s 2>&1 | FileCheck %s --check-prefix=COUNT
// RUN: not mlir-opt %plugin -p 'builtin.module(partir-mesh{axes=batch=4},partir-tile{value=x dim=0 axis=batch},partir-combine-collectives)' %S/../../Inputs/mlp.mlir 2>&1 | FileCheck %s --check-prefix=CORE

// SIZE: error: partir-combine-collectives: threshold 'lots' is not a size (e.g. 30MiB, 512KiB, 4096B)
// COUNT: error: partir-combine-collectives: count must be at least 1, got 0
// CORE: error: partir-combine-collectives: expects a PartIR:HLO program, but this module still has 'partir.loop'
partir.mesh @mesh ["batch"=4]
func.func @f(%a: tensor<4xf32>) -> tensor<4xf32> {
  %0 = partir_hlo.all_reduce sum %a axes ["batch"] : tensor<4xf32>
  return %0 : tensor<4xf32>
}
