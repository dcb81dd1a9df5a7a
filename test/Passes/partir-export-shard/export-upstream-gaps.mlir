// The known gap of MLIR 22 (docs/design.md#mlir-22-gaps): convert-shard-to-mpi does not legalize the other
// collectives, even though stock mlir-opt verifies them; it reports the error yet exits 0 and
// leaves the op in place. (If this test starts failing, upstream grew the lowering: turn it
// into a positive test.)
// RUN: mlir-opt %plugin -p 'builtin.module(partir-export-shard)' %s | mlir-opt --verify-each | FileCheck %s --check-prefix=VALID
// RUN: mlir-opt %plugin -p 'builtin.module(partir-export-shard)' %s \
// RUN:   | mlir-opt --convert-shard-to-mpi 2>&1 | FileCheck %s

// VALID: shard.all_gather %{{.*}} on @mesh grid_axes = [0] gather_axis = 0 : tensor<8x64xf32> -> tensor<32x64xf32>
// CHECK: error: failed to legalize operation 'shard.all_gather'
// CHECK: shard.all_gather %{{.*}} on @mesh
partir.mesh @mesh ["batch"=4]
func.func @gather(%x: tensor<8x64xf32>) -> tensor<32x64xf32> {
  %a = partir_hlo.all_gather %x dim 0 axes ["batch"] : tensor<8x64xf32> -> tensor<32x64xf32>
  return %a : tensor<32x64xf32>
}
