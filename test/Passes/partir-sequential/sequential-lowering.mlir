// partir-sequential reads Core loops sequentially with upstream ops only: a #partir.tile<d>
// loop is an scf.for over the axis inserting each chunk into an empty tensor at offset r*chunk,
// a partir.slice is a tensor.extract_slice at that offset, and a #partir.sum<kind> loop
// starts from a fill of the kind's identity and combines each iteration with linalg.add
// (sum), linalg.max (max), linalg.min (min) or linalg.mul (mul). The mesh is dropped.
// RUN: mlir-opt %plugin -p 'builtin.module(partir-sequential)' %s | FileCheck %s
// RUN: mlir-opt %plugin -p 'builtin.module(partir-sequential)' %s | FileCheck %s --check-prefix=UPSTREAM
// RUN: mlir-opt %plugin -p 'builtin.module(partir-sequential)' %s | mlir-opt -verify-roundtrip

// UPSTREAM-NOT: partir.{{loop|slice|yield|mesh|range}}

partir.mesh @mesh ["batch"=4, "model"=2]

// CHECK-LABEL: func.func @tile
// CHECK-SAME: (%[[X:[^:]*]]: tensor<32x64xf32>, %[[W:[^:]*]]: tensor<64x16xf32>, %[[F:[^:]*]]: tensor<32x16xf32>)
// CHECK-DAG: %[[EMPTY:.*]] = tensor.empty() : tensor<32x16xf32>
// CHECK-DAG: %[[C0:.*]] = arith.constant 0 : index
// CHECK-DAG: %[[C4:.*]] = arith.constant 4 : index
// CHECK-DAG: %[[C1:.*]] = arith.constant 1 : index
// CHECK: %[[FOR:.*]] = scf.for %[[I:.*]] = %[[C0]] to %[[C4]] step %[[C1]] iter_args(%[[ACC:.*]] = %[[EMPTY]]) -> (tensor<32x16xf32>) {
// CHECK: %[[OX:.*]] = arith.muli %[[I]], %{{.*}} : index
// CHECK: %[[XS:.*]] = tensor.extract_slice %[[X]][%[[OX]], 0] [8, 64] [1, 1] : tensor<32x64xf32> to tensor<8x64xf32>
// CHECK: %[[FS:.*]] = tensor.extract_slice %[[F]][%{{.*}}, 0] [8, 16] [1, 1] : tensor<32x16xf32> to tensor<8x16xf32>
// CHECK: %[[M:.*]] = linalg.matmul ins(%[[XS]], %[[W]] : tensor<8x64xf32>, tensor<64x16xf32>) outs(%[[FS]] : tensor<8x16xf32>)
// CHECK: %[[OY:.*]] = arith.muli %[[I]], %{{.*}} : index
// CHECK: %[[INS:.*]] = tensor.insert_slice %[[M]] into %[[ACC]][%[[OY]], 0] [8, 16] [1, 1] : tensor<8x16xf32> into tensor<32x16xf32>
// CHECK-NEXT: scf.yield %[[INS]] : tensor<32x16xf32>
// CHECK: return %[[FOR]]
func.func @tile(%x: tensor<32x64xf32>, %w: tensor<64x16xf32>, %f: tensor<32x16xf32>) -> tensor<32x16xf32> {
  %y = partir.loop "batch" [#partir.tile<0>] (%r: !partir.range<4>) {
    %xs = partir.slice 0 %x[%r] : tensor<32x64xf32> -> tensor<8x64xf32>
    %fs = partir.slice 0 %f[%r] : tensor<32x16xf32> -> tensor<8x16xf32>
    %m = linalg.matmul ins(%xs, %w : tensor<8x64xf32>, tensor<64x16xf32>) outs(%fs : tensor<8x16xf32>) -> tensor<8x16xf32>
    partir.yield %m : tensor<8x16xf32>
  } : tensor<32x16xf32>
  return %y : tensor<32x16xf32>
}

// CHECK-LABEL: func.func @sum
// CHECK: %[[ZERO:.*]] = arith.constant 0.000000e+00 : f32
// CHECK: %[[E:.*]] = tensor.empty() : tensor<32x16xf32>
// CHECK: %[[ID:.*]] = linalg.fill ins(%[[ZERO]] : f32) outs(%[[E]] : tensor<32x16xf32>) -> tensor<32x16xf32>
// CHECK: %[[FOR:.*]] = scf.for %[[I:.*]] = %{{.*}} to %{{.*}} step %{{.*}} iter_args(%[[ACC:.*]] = %[[ID]]) -> (tensor<32x16xf32>) {
// CHECK: tensor.extract_slice %arg0[0, %{{.*}}] [32, 16] [1, 1] : tensor<32x64xf32> to tensor<32x16xf32>
// CHECK: tensor.extract_slice %arg1[%{{.*}}, 0] [16, 16] [1, 1] : tensor<64x16xf32> to tensor<16x16xf32>
// CHECK: %[[P:.*]] = linalg.matmul
// CHECK: %[[ADD:.*]] = linalg.add ins(%[[ACC]], %[[P]] : tensor<32x16xf32>, tensor<32x16xf32>) outs(%[[ACC]] : tensor<32x16xf32>) -> tensor<32x16xf32>
// CHECK-NEXT: scf.yield %[[ADD]] : tensor<32x16xf32>
// CHECK: return %[[FOR]]
func.func @sum(%x: tensor<32x64xf32>, %w: tensor<64x16xf32>, %f: tensor<32x16xf32>) -> tensor<32x16xf32> {
  %y = partir.loop "batch" [#partir.sum] (%r: !partir.range<4>) {
    %xs = partir.slice 1 %x[%r] : tensor<32x64xf32> -> tensor<32x16xf32>
    %ws = partir.slice 0 %w[%r] : tensor<64x16xf32> -> tensor<16x16xf32>
    %m = linalg.matmul ins(%xs, %ws : tensor<32x16xf32>, tensor<16x16xf32>) outs(%f : tensor<32x16xf32>) -> tensor<32x16xf32>
    partir.yield %m : tensor<32x16xf32>
  } : tensor<32x16xf32>
  return %y : tensor<32x16xf32>
}

// CHECK-LABEL: func.func @kinds
// CHECK: %[[NINF:.*]] = arith.constant 0xFF800000 : f32
// CHECK: %[[IDMAX:.*]] = linalg.fill ins(%[[NINF]] : f32)
// CHECK: scf.for {{.*}} iter_args(%[[AMAX:.*]] = %[[IDMAX]]) -> (tensor<16xf32>) {
// CHECK: linalg.max ins(%[[AMAX]], %{{.*}} : tensor<16xf32>, tensor<16xf32>) outs(%[[AMAX]] : tensor<16xf32>)
// CHECK: %[[PINF:.*]] = arith.constant 0x7F800000 : f32
// CHECK: %[[IDMIN:.*]] = linalg.fill ins(%[[PINF]] : f32)
// CHECK: scf.for {{.*}} iter_args(%[[AMIN:.*]] = %[[IDMIN]]) -> (tensor<16xf32>) {
// CHECK: linalg.min ins(%[[AMIN]], %{{.*}} : tensor<16xf32>, tensor<16xf32>) outs(%[[AMIN]] : tensor<16xf32>)
// CHECK: %[[ONE:.*]] = arith.constant 1.000000e+00 : f32
// CHECK: %[[IDMUL:.*]] = linalg.fill ins(%[[ONE]] : f32)
// CHECK: scf.for {{.*}} iter_args(%[[AMUL:.*]] = %[[IDMUL]]) -> (tensor<16xf32>) {
// CHECK: linalg.mul ins(%[[AMUL]], %{{.*}} : tensor<16xf32>, tensor<16xf32>) outs(%[[AMUL]] : tensor<16xf32>)
func.func @kinds(%x: tensor<16x32xf32>) -> (tensor<16xf32>, tensor<16xf32>, tensor<16xf32>) {
  %max = partir.loop "batch" [#partir.sum<max>] (%r: !partir.range<4>) {
    %xs = partir.slice 1 %x[%r] : tensor<16x32xf32> -> tensor<16x8xf32>
    %c = tensor.extract_slice %xs[0, 0] [16, 1] [1, 1] : tensor<16x8xf32> to tensor<16xf32>
    partir.yield %c : tensor<16xf32>
  } : tensor<16xf32>
  %min = partir.loop "batch" [#partir.sum<min>] (%r: !partir.range<4>) {
    %xs = partir.slice 1 %x[%r] : tensor<16x32xf32> -> tensor<16x8xf32>
    %c = tensor.extract_slice %xs[0, 0] [16, 1] [1, 1] : tensor<16x8xf32> to tensor<16xf32>
    partir.yield %c : tensor<16xf32>
  } : tensor<16xf32>
  %mul = partir.loop "batch" [#partir.sum<mul>] (%r: !partir.range<4>) {
    %xs = partir.slice 1 %x[%r] : tensor<16x32xf32> -> tensor<16x8xf32>
    %c = tensor.extract_slice %xs[0, 0] [16, 1] [1, 1] : tensor<16x8xf32> to tensor<16xf32>
    partir.yield %c : tensor<16xf32>
  } : tensor<16xf32>
  return %max, %min, %mul : tensor<16xf32>, tensor<16xf32>, tensor<16xf32>
}

// Nested loops (batch outside, model inside) become nested scf.for: the inner loop's result
// is inserted into the outer accumulator, and the inner slice reads the outer chunk.
// CHECK-LABEL: func.func @nested
// CHECK: %[[OUTER:.*]] = scf.for %[[B:.*]] = %{{.*}} to %{{.*}} step %{{.*}} iter_args(%[[OACC:.*]] = %{{.*}}) -> (tensor<32x16xf32>) {
// CHECK: %[[XB:.*]] = tensor.extract_slice %arg0[%{{.*}}, 0] [8, 16] [1, 1] : tensor<32x16xf32> to tensor<8x16xf32>
// CHECK: %[[INNER:.*]] = scf.for %[[M:.*]] = %{{.*}} to %{{.*}} step %{{.*}} iter_args(%[[IACC:.*]] = %{{.*}}) -> (tensor<8x16xf32>) {
// CHECK: %[[XM:.*]] = tensor.extract_slice %[[XB]][0, %{{.*}}] [8, 8] [1, 1] : tensor<8x16xf32> to tensor<8x8xf32>
// CHECK: %[[N:.*]] = linalg.negf ins(%[[XM]] : tensor<8x8xf32>)
// CHECK: tensor.insert_slice %[[N]] into %[[IACC]][0, %{{.*}}] [8, 8] [1, 1] : tensor<8x8xf32> into tensor<8x16xf32>
// CHECK: tensor.insert_slice %[[INNER]] into %[[OACC]][%{{.*}}, 0] [8, 16] [1, 1] : tensor<8x16xf32> into tensor<32x16xf32>
// CHECK: return %[[OUTER]]
func.func @nested(%x: tensor<32x16xf32>, %e: tensor<8x8xf32>) -> tensor<32x16xf32> {
  %y = partir.loop "batch" [#partir.tile<0>] (%rb: !partir.range<4>) {
    %xb = partir.slice 0 %x[%rb] : tensor<32x16xf32> -> tensor<8x16xf32>
    %ym = partir.loop "model" [#partir.tile<1>] (%rm: !partir.range<2>) {
      %xm = partir.slice 1 %xb[%rm] : tensor<8x16xf32> -> tensor<8x8xf32>
      %n = linalg.negf ins(%xm : tensor<8x8xf32>) outs(%e : tensor<8x8xf32>) -> tensor<8x8xf32>
      partir.yield %n : tensor<8x8xf32>
    } : tensor<8x16xf32>
    partir.yield %ym : tensor<8x16xf32>
  } : tensor<32x16xf32>
  return %y : tensor<32x16xf32>
}
