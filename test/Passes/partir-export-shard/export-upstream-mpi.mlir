// Upstream passes accept the export. MLIR 22's convert-shard-to-mpi lowers all_reduce only
// (docs/design.md#mlir-22-gaps): an all_reduce program exported and piped into stock mlir-opt (no plugin) becomes
// mpi.allreduce on comm_split communicators, and symbol-dce then drops the private grid, so no
// shard op is left (only the shard.split_axes argument attributes, which are plain data).
// RUN: mlir-opt %plugin -p 'builtin.module(partir-export-shard)' %s \
// RUN:   | mlir-opt --verify-each --convert-shard-to-mpi --symbol-dce \
// RUN:   | FileCheck %s --implicit-check-not=partir --implicit-check-not='= shard.' \
// RUN:       --implicit-check-not=shard.grid --implicit-check-not=unrealized_conversion_cast
// Canonicalisation, CSE and symbol-dce keep the exported form valid (the grid is used).
// RUN: mlir-opt %plugin -p 'builtin.module(partir-export-shard)' %s \
// RUN:   | mlir-opt --verify-each --canonicalize --cse --symbol-dce | FileCheck %s --check-prefix=CANON

// CHECK-LABEL: func.func @grads(
// CHECK-SAME:      {shard.split_axes = #shard<axisarray{{\[\[}}], []]>}
// CHECK:         mpi.comm_split
// CHECK:         mpi.allreduce(%{{.*}}, %{{.*}}, MPI_SUM, %{{.*}}) : memref<16384xf32>, memref<16384xf32>
// CHECK:         mpi.comm_split
// CHECK:         mpi.allreduce(%{{.*}}, %{{.*}}, MPI_MAX, %{{.*}}) : memref<16384xf32>, memref<16384xf32>
// CHECK:         return
// CANON:       shard.grid @mesh(shape = 4x2)
// CANON-LABEL: func.func @grads(
// CANON:         shard.all_reduce %{{.*}} on @mesh grid_axes = [0] : tensor<64x256xf32> -> tensor<64x256xf32>
// CANON:         shard.all_reduce %{{.*}} on @mesh grid_axes = [1, 0] reduction = max : tensor<64x256xf32> -> tensor<64x256xf32>
partir.mesh @mesh ["batch"=4, "model"=2]
func.func @grads(%w: tensor<64x256xf32> {partir_hlo.sharding = #partir_hlo.sharding<[{}, {}]>})
    -> (tensor<64x256xf32> {partir_hlo.sharding = #partir_hlo.sharding<[{}, {}]>}) {
  %s = partir_hlo.all_reduce sum %w axes ["batch"] : tensor<64x256xf32>
  %m = partir_hlo.all_reduce max %s axes ["model", "batch"] : tensor<64x256xf32>
  return %m : tensor<64x256xf32>
}
