// partir-to-mpi: each collective runs on an MPI communicator split off COMM_WORLD per set of
// axes. Rank r sits at coord(a) = (r / stride(a)) % size(a); for axes S the color numbers the
// coordinates off S and the key those on S. On ["batch"=4, "model"=2], rank = 2 * batch + model.
// RUN: mlir-opt %plugin -p 'builtin.module(partir-to-mpi)' %s | FileCheck %s --implicit-check-not=partir
// RUN: mlir-opt %plugin -p 'builtin.module(partir-to-mpi)' %s | mlir-opt --verify-each | FileCheck %s --check-prefix=VALID

// The mesh and the sharding attributes are gone; the module carries the dlti.map MPI needs.
// CHECK: module attributes {dlti.map = #dlti.map<"MPI:Implementation" = "MPICH">}
// VALID: module attributes {dlti.map
partir.mesh @mesh ["batch"=4, "model"=2]

// CHECK-LABEL: func.func @all_reduce_then_slice(
// CHECK-SAME:      %[[X:.*]]: tensor<8x6xf32>) -> tensor<8x3xf32>
// Communicators first, once per axis set. ["batch"]: key = batch = (rank / 2) % 4,
// color = model = (rank / 1) % 2.
// CHECK:         %[[W:.*]] = mpi.comm_world : !mpi.comm
// CHECK-NEXT:    %[[RANK:.*]] = mpi.comm_rank(%[[W]]) : i32
// CHECK:         %[[C2:.*]] = arith.constant 2 : i32
// CHECK-NEXT:    %[[BD:.*]] = arith.divsi %[[RANK]], %[[C2]] : i32
// CHECK-NEXT:    %[[C4:.*]] = arith.constant 4 : i32
// CHECK-NEXT:    %[[B:.*]] = arith.remsi %[[BD]], %[[C4]] : i32
// CHECK-NEXT:    %[[KEY:.*]] = arith.addi %{{.*}}, %[[B]] : i32
// CHECK:         %[[C1:.*]] = arith.constant 1 : i32
// CHECK-NEXT:    %[[MD:.*]] = arith.divsi %[[RANK]], %[[C1]] : i32
// CHECK-NEXT:    %[[C2B:.*]] = arith.constant 2 : i32
// CHECK-NEXT:    %[[M:.*]] = arith.remsi %[[MD]], %[[C2B]] : i32
// CHECK-NEXT:    %[[COLOR:.*]] = arith.addi %{{.*}}, %[[M]] : i32
// CHECK-NEXT:    %[[BATCH:.*]] = mpi.comm_split(%[[W]], %[[COLOR]], %[[KEY]]) : !mpi.comm
// ["model"]: key = model, color = batch.
// CHECK:         %[[MODEL:.*]] = mpi.comm_split(%[[W]], %{{.*}}, %{{.*}}) : !mpi.comm
// CHECK-NEXT:    %[[POS:.*]] = arith.index_cast %{{.*}} : i32 to index
// all_reduce: a flattened buffer (MPI's lowering counts dim 0 only), MPI_SUM on the batch comm.
// CHECK:         %[[BUF:.*]] = bufferization.to_buffer %[[X]] : tensor<8x6xf32> to memref<8x6xf32>
// CHECK-NEXT:    %[[FLAT:.*]] = memref.collapse_shape %[[BUF]] {{\[\[}}0, 1]] : memref<8x6xf32> into memref<48xf32>
// CHECK-NEXT:    %[[OUT:.*]] = memref.alloc() : memref<48xf32>
// CHECK-NEXT:    mpi.allreduce(%[[FLAT]], %[[OUT]], MPI_SUM, %[[BATCH]]) : memref<48xf32>, memref<48xf32>
// CHECK-NEXT:    %[[SHAPED:.*]] = memref.expand_shape %[[OUT]] {{\[\[}}0, 1]] output_shape [8, 6] : memref<48xf32> into memref<8x6xf32>
// CHECK-NEXT:    %[[SUM:.*]] = bufferization.to_tensor %[[SHAPED]]
// all_slice: no communication, the chunk at model position * 3.
// CHECK-NEXT:    %[[C3:.*]] = arith.constant 3 : index
// CHECK-NEXT:    %[[OFF:.*]] = arith.muli %[[POS]], %[[C3]] : index
// CHECK-NEXT:    %[[S:.*]] = tensor.extract_slice %[[SUM]][0, %[[OFF]]] [8, 3] [1, 1] : tensor<8x6xf32> to tensor<8x3xf32>
// CHECK-NEXT:    return %[[S]]
// (A function that starts with a collective and has no mpi.init: communicators are built
// before any collective is replaced. This used to crash.)
func.func @all_reduce_then_slice(%x: tensor<8x6xf32> {partir_hlo.sharding = #partir_hlo.sharding<[{}, {}]>})
    -> (tensor<8x3xf32> {partir_hlo.sharding = #partir_hlo.sharding<[{}, {"model"}]>}) {
  %s = partir_hlo.all_reduce sum %x axes ["batch"] : tensor<8x6xf32>
  %l = partir_hlo.all_slice %s dim 1 axes ["model"] : tensor<8x6xf32> -> tensor<8x3xf32>
  return %l : tensor<8x3xf32>
}

// all_gather: the local chunk placed at key * chunk in a zero buffer, then an allreduce sum;
// max maps to MPI_MAX; one communicator per distinct axis list (["batch", "model"] is world-sized).
// CHECK-LABEL: func.func @gather_and_max(
// CHECK:         mpi.comm_split
// CHECK:         mpi.comm_split
// CHECK-NOT:     mpi.comm_split
// CHECK:         tensor.insert_slice %{{.*}} into %{{.*}}[%{{.*}}, 0] [2, 6] [1, 1] : tensor<2x6xf32> into tensor<8x6xf32>
// CHECK:         mpi.allreduce(%{{.*}}, %{{.*}}, MPI_SUM, %{{.*}}) : memref<48xf32>, memref<48xf32>
// CHECK:         mpi.allreduce(%{{.*}}, %{{.*}}, MPI_MAX, %{{.*}}) : memref<12xf32>, memref<12xf32>
func.func @gather_and_max(%x: tensor<2x6xf32>) -> (tensor<8x6xf32>, tensor<2x6xf32>) {
  %g = partir_hlo.all_gather %x dim 0 axes ["batch"] : tensor<2x6xf32> -> tensor<8x6xf32>
  %m = partir_hlo.all_reduce max %x axes ["batch", "model"] : tensor<2x6xf32>
  return %g, %m : tensor<8x6xf32>, tensor<2x6xf32>
}
