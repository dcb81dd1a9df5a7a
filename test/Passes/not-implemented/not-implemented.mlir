// Passes declared by DESIGN §5 but not built yet fail loudly, never succeed silently.
// RUN: not mlir-opt %plugin -p 'builtin.module(partir-mesh{axes=batch=4}, partir-propagate)' %s 2>&1 | FileCheck %s --check-prefix=PROPAGATE
// RUN: not mlir-opt %plugin -p 'builtin.module(partir-lower-to-hlo)' %s 2>&1 | FileCheck %s --check-prefix=LOWER
// RUN: not mlir-opt %plugin -p 'builtin.module(partir-simulate{device=tpu-v3})' %s 2>&1 | FileCheck %s --check-prefix=SIMULATE
// RUN: not mlir-opt %plugin -p 'builtin.module(partir-export-shard)' %s 2>&1 | FileCheck %s --check-prefix=EXPORT
// RUN: not mlir-opt %plugin -p 'builtin.module(partir-to-mpi)' %s 2>&1 | FileCheck %s --check-prefix=MPI
// RUN: not mlir-opt %plugin -p 'builtin.module(partir-auto{axis=batch})' %s 2>&1 | FileCheck %s --check-prefix=AUTO
// RUN: not mlir-opt %plugin -p 'builtin.module(partir-schedule{file=s.toml})' %s 2>&1 | FileCheck %s --check-prefix=SCHEDULE

// PROPAGATE: not-implemented.mlir:[[@LINE+7]]:1: error: partir-propagate: not implemented yet
// LOWER: error: partir-lower-to-hlo: not implemented yet
// SIMULATE: error: partir-simulate: not implemented yet
// EXPORT: error: partir-export-shard: not implemented yet
// MPI: error: partir-to-mpi: not implemented yet
// AUTO: error: partir-auto: not implemented yet
// SCHEDULE: error: partir-schedule: not implemented yet
func.func @main(%x: tensor<8xf32>) -> tensor<8xf32> {
  return %x : tensor<8xf32>
}
