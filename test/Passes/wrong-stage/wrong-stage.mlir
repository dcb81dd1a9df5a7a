// A pass given the other program form (partir-export-shard: export-errors.mlir) says so at a location and fails, instead of leaving IR
// the verifier rejects (or, for a second lowering, silently resetting every sharding).
// RUN: mlir-opt %plugin -p 'builtin.module(partir-mesh{axes=batch=4}, partir-tile{value=x dim=0 axis=batch}, partir-propagate)' %s -o %t.core.mlir
// RUN: mlir-opt %plugin -p 'builtin.module(partir-lower-to-hlo)' %t.core.mlir -o %t.hlo.mlir
// RUN: not mlir-opt %plugin -p 'builtin.module(partir-lower-to-hlo)' %t.hlo.mlir -o /dev/null 2>&1 | FileCheck %s --check-prefix=TWICE
// RUN: not mlir-opt %plugin -p 'builtin.module(partir-sequential)' %t.hlo.mlir -o /dev/null 2>&1 | FileCheck %s --check-prefix=SEQ
// RUN: not mlir-opt %plugin -p 'builtin.module(partir-to-mpi)' %t.core.mlir -o /dev/null 2>&1 | FileCheck %s --check-prefix=MPI
// The right forms still pass.
// RUN: mlir-opt %plugin -p 'builtin.module(partir-sequential)' %t.core.mlir -o /dev/null
// RUN: mlir-opt %plugin -p 'builtin.module(partir-to-mpi)' %t.hlo.mlir -o /dev/null

// TWICE: error: partir-lower-to-hlo: expects a PartIR:Core (global shapes) program, but this module is PartIR:HLO (device-local, with partir_hlo collectives or shardings); it was lowered already (lower a program once)
// SEQ: error: partir-sequential: expects a PartIR:Core (global shapes) program, but this module is PartIR:HLO {{.*}}; a PartIR:HLO program runs on MPI ranks (partir-to-mpi)
// MPI: error: partir-to-mpi: expects a PartIR:HLO program, but this module still has 'partir.loop' (PartIR:Core): lower it first with partir-lower-to-hlo

func.func @main(%x: tensor<32x64xf32> {partir.name = "x"}, %w: tensor<64x16xf32> {partir.name = "w"}) -> tensor<32x16xf32> {
  %zero = arith.constant 0.0 : f32
  %e = tensor.empty() : tensor<32x16xf32>
  %f = linalg.fill ins(%zero : f32) outs(%e : tensor<32x16xf32>) -> tensor<32x16xf32>
  %h = linalg.matmul ins(%x, %w : tensor<32x64xf32>, tensor<64x16xf32>) outs(%f : tensor<32x16xf32>) -> tensor<32x16xf32>
  return %h : tensor<32x16xf32>
}
