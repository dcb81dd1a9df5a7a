// End to end: the sequential reading of a partitioned program computes what the original
// computes. A small MLP (with a row max and a batch-contracting matmul, like a weight
// gradient) is partitioned BP (x rows over batch) then MP (w1 columns over model): tile,
// #sum, #sum<max> and nested loops. partir-sequential lowers it to scf.for, both programs
// are compiled to LLVM and run with constant inputs, and both must print the same numbers
// (the CHECK lines below are shared by the two runs; the inputs are exact in binary so
// summation order does not matter).
// RUN: mlir-opt --pass-pipeline='builtin.module(one-shot-bufferize{bufferize-function-boundaries},func.func(convert-linalg-to-loops),convert-scf-to-cf,expand-strided-metadata,lower-affine,finalize-memref-to-llvm,convert-to-llvm,reconcile-unrealized-casts)' %s | mlir-runner -e entry -entry-point-result=void -shared-libs=/usr/lib/llvm-22/lib/libmlir_c_runner_utils.so,/usr/lib/llvm-22/lib/libmlir_runner_utils.so | FileCheck %s
// RUN: mlir-opt %plugin -p 'builtin.module(partir-mesh{axes=batch=4,model=2}, partir-tile{value=x dim=0 axis=batch}, partir-propagate{axis=batch}, partir-tile{value=w1 dim=1 axis=model}, partir-propagate{axis=model}, partir-sequential)' %s | mlir-opt --pass-pipeline='builtin.module(one-shot-bufferize{bufferize-function-boundaries},func.func(convert-linalg-to-loops),convert-scf-to-cf,expand-strided-metadata,lower-affine,finalize-memref-to-llvm,convert-to-llvm,reconcile-unrealized-casts)' | mlir-runner -e entry -entry-point-result=void -shared-libs=/usr/lib/llvm-22/lib/libmlir_c_runner_utils.so,/usr/lib/llvm-22/lib/libmlir_runner_utils.so | FileCheck %s
// The partitioned program really is partitioned (else the comparison proves nothing).
// RUN: mlir-opt %plugin -p 'builtin.module(partir-mesh{axes=batch=4,model=2}, partir-tile{value=x dim=0 axis=batch}, partir-propagate{axis=batch}, partir-tile{value=w1 dim=1 axis=model}, partir-propagate{axis=model})' %s | FileCheck %s --check-prefix=CORE
// RUN: mlir-opt %plugin -p 'builtin.module(partir-mesh{axes=batch=4,model=2}, partir-tile{value=x dim=0 axis=batch}, partir-propagate{axis=batch}, partir-tile{value=w1 dim=1 axis=model}, partir-propagate{axis=model}, partir-sequential)' %s | FileCheck %s --check-prefix=SEQ --implicit-check-not=partir.loop --implicit-check-not=partir.slice --implicit-check-not=partir.mesh

// CORE-LABEL: func.func @mlp
// CORE: partir.slice 0 %arg0{{.*}} : tensor<8x4xf32> -> tensor<2x4xf32>
// CORE: partir.loop "model" [#partir.tile<1>]
// CORE-NEXT: partir.slice 1 %arg1{{.*}} : tensor<4x6xf32> -> tensor<4x3xf32>
// CORE: linalg.matmul ins(%{{.*}}, %{{.*}} : tensor<2x4xf32>, tensor<4x3xf32>)
// CORE: partir.loop "model" [#partir.sum]
// CORE: linalg.matmul ins(%{{.*}}, %{{.*}} : tensor<2x3xf32>, tensor<3x2xf32>)
// CORE: partir.loop "model" [#partir.sum<max>]
// CORE: partir.loop "batch" [#partir.sum]
// CORE: linalg.matmul ins(%{{.*}}, %{{.*}} : tensor<4x2xf32>, tensor<2x2xf32>)
// SEQ-LABEL: func.func @mlp
// SEQ: scf.for
// SEQ: linalg.add
// SEQ: linalg.max

// y = relu(x w1) w2
// CHECK: Unranked Memref base@ = {{.*}} rank = 2 offset = 0 sizes = [8, 2] strides = [2, 1] data =
// CHECK-NEXT: {{\[}}[-11.5,   1.875],
// CHECK-NEXT: [13.75,   -0.4375],
// CHECK-NEXT: [5.5,   1.125],
// CHECK-NEXT: [1.375,   2.25],
// CHECK-NEXT: [-17,   0.75],
// CHECK-NEXT: [7.75,   0.09375],
// CHECK-NEXT: [1.75,   2.5625],
// CHECK-NEXT: [-2,   -0.75]]
// m = row max of relu(x w1)
// CHECK: Unranked Memref base@ = {{.*}} rank = 1 offset = 0 sizes = [8] strides = [1] data =
// CHECK-NEXT: [6.25,  5.5,  6,  6.5,  10,  3.125,  2.5,  2.5]
// g = transpose(x) y
// CHECK: Unranked Memref base@ = {{.*}} rank = 2 offset = 0 sizes = [4, 2] strides = [2, 1] data =
// CHECK-NEXT: {{\[}}[-73.4375,   -0.976562],
// CHECK-NEXT: [67.75,   -6.61719],
// CHECK-NEXT: [-37.3125,   14.2031],
// CHECK-NEXT: [26.625,   4.84375]]

#map = affine_map<(d0, d1) -> (d0, d1)>
#row = affine_map<(d0, d1) -> (d0)>
func.func private @printMemrefF32(tensor<*xf32>)

func.func @mlp(%x: tensor<8x4xf32> {partir.name = "x"}, %w1: tensor<4x6xf32> {partir.name = "w1"}, %w2: tensor<6x2xf32> {partir.name = "w2"}) -> (tensor<8x2xf32>, tensor<8xf32>, tensor<4x2xf32>) {
  %zero = arith.constant 0.0 : f32
  %ninf = arith.constant 0xFF800000 : f32
  %e1 = tensor.empty() : tensor<8x6xf32>
  %f1 = linalg.fill ins(%zero : f32) outs(%e1 : tensor<8x6xf32>) -> tensor<8x6xf32>
  %h = linalg.matmul ins(%x, %w1 : tensor<8x4xf32>, tensor<4x6xf32>) outs(%f1 : tensor<8x6xf32>) -> tensor<8x6xf32>
  %a = linalg.generic {indexing_maps = [#map, #map], iterator_types = ["parallel", "parallel"]} ins(%h : tensor<8x6xf32>) outs(%e1 : tensor<8x6xf32>) {
  ^bb0(%in: f32, %out: f32):
    %r = arith.maximumf %in, %zero : f32
    linalg.yield %r : f32
  } -> tensor<8x6xf32>
  %e2 = tensor.empty() : tensor<8x2xf32>
  %f2 = linalg.fill ins(%zero : f32) outs(%e2 : tensor<8x2xf32>) -> tensor<8x2xf32>
  %y = linalg.matmul ins(%a, %w2 : tensor<8x6xf32>, tensor<6x2xf32>) outs(%f2 : tensor<8x2xf32>) -> tensor<8x2xf32>
  %e3 = tensor.empty() : tensor<8xf32>
  %f3 = linalg.fill ins(%ninf : f32) outs(%e3 : tensor<8xf32>) -> tensor<8xf32>
  %m = linalg.generic {indexing_maps = [#map, #row], iterator_types = ["parallel", "reduction"]} ins(%a : tensor<8x6xf32>) outs(%f3 : tensor<8xf32>) {
  ^bb0(%in: f32, %out: f32):
    %r = arith.maximumf %in, %out : f32
    linalg.yield %r : f32
  } -> tensor<8xf32>
  %et = tensor.empty() : tensor<4x8xf32>
  %xt = linalg.transpose ins(%x : tensor<8x4xf32>) outs(%et : tensor<4x8xf32>) permutation = [1, 0]
  %e4 = tensor.empty() : tensor<4x2xf32>
  %f4 = linalg.fill ins(%zero : f32) outs(%e4 : tensor<4x2xf32>) -> tensor<4x2xf32>
  %g = linalg.matmul ins(%xt, %y : tensor<4x8xf32>, tensor<8x2xf32>) outs(%f4 : tensor<4x2xf32>) -> tensor<4x2xf32>
  return %y, %m, %g : tensor<8x2xf32>, tensor<8xf32>, tensor<4x2xf32>
}

func.func @entry() {
  %x = arith.constant dense<[[1.0, -2.0, 3.0, 0.5], [0.0, 1.0, -1.0, 2.0], [2.0, 2.0, 2.0, 2.0], [-1.0, 0.5, 1.5, -3.0], [4.0, -1.0, 0.0, 1.0], [0.25, 0.75, -0.5, 1.0], [-2.0, -2.0, 1.0, 3.0], [1.0, 0.0, 0.0, -1.0]]> : tensor<8x4xf32>
  %w1 = arith.constant dense<[[0.5, -1.0, 2.0, 0.0, 1.0, -0.5], [1.0, 0.5, -1.0, 2.0, 0.0, 1.5], [-0.5, 1.0, 0.5, -1.0, 2.0, 0.25], [2.0, 0.0, 1.0, 0.5, -1.5, 1.0]]> : tensor<4x6xf32>
  %w2 = arith.constant dense<[[1.0, -1.0], [0.5, 2.0], [-2.0, 0.5], [1.5, 1.0], [0.0, -0.5], [1.0, 0.25]]> : tensor<6x2xf32>
  %y, %m, %g = call @mlp(%x, %w1, %w2) : (tensor<8x4xf32>, tensor<4x6xf32>, tensor<6x2xf32>) -> (tensor<8x2xf32>, tensor<8xf32>, tensor<4x2xf32>)
  %yu = tensor.cast %y : tensor<8x2xf32> to tensor<*xf32>
  %mu = tensor.cast %m : tensor<8xf32> to tensor<*xf32>
  call @printMemrefF32(%yu) : (tensor<*xf32>) -> ()
  call @printMemrefF32(%mu) : (tensor<*xf32>) -> ()
  %gu = tensor.cast %g : tensor<4x2xf32> to tensor<*xf32>
  call @printMemrefF32(%gu) : (tensor<*xf32>) -> ()
  return
}
