// End to end on 4 MPI ranks (a 2x2 mesh): every PartIR:HLO collective lowered by partir-to-mpi,
// compiled to LLVM and run with mpiexec + mlir-runner; rank 0 prints known numbers.
// The dlti.map that the MPI lowering needs is stripped before mlir-runner (docs/design.md#mlir-22-gaps).
// RUN: mlir-opt %plugin -p 'builtin.module(partir-to-mpi)' %s \
// RUN:   | mlir-opt --pass-pipeline='builtin.module(one-shot-bufferize{bufferize-function-boundaries},func.func(convert-linalg-to-loops),convert-scf-to-cf,expand-strided-metadata,lower-affine,finalize-memref-to-llvm,convert-to-llvm,reconcile-unrealized-casts)' \
// RUN:   | sed -e 's/ attributes {dlti.map = [^}]*}//' > %t.ll.mlir
// RUN: FileCheck %s --check-prefix=LOWERED --input-file=%t.ll.mlir
// RUN: mpiexec.mpich -n 4 mlir-runner %t.ll.mlir -e entry -entry-point-result=void -shared-libs=/usr/lib/x86_64-linux-gnu/libmpich.so.12,/usr/lib/llvm-22/lib/libmlir_c_runner_utils.so,/usr/lib/llvm-22/lib/libmlir_runner_utils.so | FileCheck %s

// Fully lowered: no mpi, partir or cast left, and no dlti.map for mlir-runner.
// LOWERED-NOT: mpi.
// LOWERED-NOT: partir
// LOWERED-NOT: unrealized_conversion_cast
// LOWERED-NOT: dlti.map
// LOWERED: llvm.func @entry

// Rank r = 2 * batch + model. c = [[1, 2, 3, 4], [5, 6, 7, 8]] on every rank.
partir.mesh @mesh ["batch"=2, "model"=2]

func.func @entry() {
  %init = mpi.init : !mpi.retval
  %c = arith.constant dense<[[1.0, 2.0, 3.0, 4.0], [5.0, 6.0, 7.0, 8.0]]> : tensor<2x4xf32>
  // all_slice (local): rank r keeps column r.
  %col = partir_hlo.all_slice %c dim 1 axes ["batch", "model"] : tensor<2x4xf32> -> tensor<2x1xf32>
  // all_reduce sum over model: batch 0 sums columns 0 and 1: [3, 11]; batch 1: [7, 15].
  %sum = partir_hlo.all_reduce sum %col axes ["model"] : tensor<2x1xf32>
  // all_gather over batch on dim 1: [[3, 7], [11, 15]] everywhere.
  %gathered = partir_hlo.all_gather %sum dim 1 axes ["batch"] : tensor<2x1xf32> -> tensor<2x2xf32>
  // all_reduce max over both axes: the last column, [4, 8].
  %max = partir_hlo.all_reduce max %col axes ["batch", "model"] : tensor<2x1xf32>
  // reduce_scatter sum over model on dim 0: 2c, model 0 keeps row 0: [2, 4, 6, 8].
  %scattered = partir_hlo.reduce_scatter sum %c dim 0 axes ["model"] : tensor<2x4xf32> -> tensor<1x4xf32>
  // all_to_all over batch: from rows (batch b has row b) to columns (batch b has columns
  // 2b, 2b+1 of both rows): rank 0 has [[1, 2], [5, 6]].
  %row = partir_hlo.all_slice %c dim 0 axes ["batch"] : tensor<2x4xf32> -> tensor<1x4xf32>
  %a2a = partir_hlo.all_to_all %row split 1 concat 0 axes ["batch"] : tensor<1x4xf32> -> tensor<2x2xf32>
  // A combined all_reduce sum over batch (one packed MPI call): 2c, and on rank 0 (batch 0,
  // model 0) its column 0 plus rank 2's column 2: [1 + 3, 5 + 7] = [4, 12].
  %both:2 = partir_hlo.all_reduce sum %c, %col axes ["batch"] : tensor<2x4xf32>, tensor<2x1xf32>

  %world = mpi.comm_world : !mpi.comm
  %rank = mpi.comm_rank(%world) : i32
  %c0 = arith.constant 0 : i32
  %is0 = arith.cmpi eq, %rank, %c0 : i32
  scf.if %is0 {
    %u0 = tensor.cast %gathered : tensor<2x2xf32> to tensor<*xf32>
    %b0 = bufferization.to_buffer %u0 : tensor<*xf32> to memref<*xf32>
    func.call @printMemrefF32(%b0) : (memref<*xf32>) -> ()
    %u1 = tensor.cast %max : tensor<2x1xf32> to tensor<*xf32>
    %b1 = bufferization.to_buffer %u1 : tensor<*xf32> to memref<*xf32>
    func.call @printMemrefF32(%b1) : (memref<*xf32>) -> ()
    %u2 = tensor.cast %scattered : tensor<1x4xf32> to tensor<*xf32>
    %b2 = bufferization.to_buffer %u2 : tensor<*xf32> to memref<*xf32>
    func.call @printMemrefF32(%b2) : (memref<*xf32>) -> ()
    %u3 = tensor.cast %a2a : tensor<2x2xf32> to tensor<*xf32>
    %b3 = bufferization.to_buffer %u3 : tensor<*xf32> to memref<*xf32>
    func.call @printMemrefF32(%b3) : (memref<*xf32>) -> ()
    %u4 = tensor.cast %both#0 : tensor<2x4xf32> to tensor<*xf32>
    %b4 = bufferization.to_buffer %u4 : tensor<*xf32> to memref<*xf32>
    func.call @printMemrefF32(%b4) : (memref<*xf32>) -> ()
    %u5 = tensor.cast %both#1 : tensor<2x1xf32> to tensor<*xf32>
    %b5 = bufferization.to_buffer %u5 : tensor<*xf32> to memref<*xf32>
    func.call @printMemrefF32(%b5) : (memref<*xf32>) -> ()
  }
  %fin = mpi.finalize : !mpi.retval
  return
}
func.func private @printMemrefF32(memref<*xf32>) attributes {llvm.emit_c_interface}

// CHECK:      sizes = [2, 2]
// CHECK-NEXT: [3,   7]
// CHECK-NEXT: [11,   15]
// CHECK:      sizes = [2, 1]
// CHECK-NEXT: [4]
// CHECK-NEXT: [8]
// CHECK:      sizes = [1, 4]
// CHECK-NEXT: [2,   4,   6,   8]
// CHECK:      sizes = [2, 2]
// CHECK-NEXT: [1,   2]
// CHECK-NEXT: [5,   6]
// CHECK:      sizes = [2, 4]
// CHECK-NEXT: [2,   4,   6,   8]
// CHECK-NEXT: [10,   12,   14,   16]
// CHECK:      sizes = [2, 1]
// CHECK-NEXT: [4]
// CHECK-NEXT: [12]
