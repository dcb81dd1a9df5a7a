// Two tactics in order, BP (batch) then MP (model): the model loops nest inside the batch
// loops (the earlier axis outside), the first matmul is tiled on both axes, and the second
// matmul, contracting over the model-tiled hidden dim, is a #partir.sum over model inside
// a tile<0> loop over batch.
// RUN: mlir-opt %plugin -p 'builtin.module(partir-mesh{axes=batch=4,model=2}, partir-tile{value=x dim=0 axis=batch}, partir-propagate{axis=batch}, partir-tile{value=w1 dim=1 axis=model}, partir-propagate{axis=model})' %s | FileCheck %s
// RUN: mlir-opt %plugin -p 'builtin.module(partir-mesh{axes=batch=4,model=2}, partir-tile{value=x dim=0 axis=batch}, partir-propagate{axis=batch}, partir-tile{value=w1 dim=1 axis=model}, partir-propagate{axis=model})' %s | mlir-opt %plugin -verify-roundtrip

// CHECK-LABEL: func.func @mlp
// CHECK-SAME: (%[[X:[^:]*]]: tensor<32x64xf32> {partir.name = "x"}, %[[W1:[^:]*]]: tensor<64x16xf32> {partir.name = "w1"}, %[[W2:[^:]*]]: tensor<16x8xf32> {partir.name = "w2"})
// The empty and the fill of the first accumulator come first (sliced through backward).
// CHECK: partir.loop "batch"
// CHECK-NEXT: partir.loop "model"
// CHECK-NEXT: tensor.empty() : tensor<8x8xf32>
// CHECK: linalg.fill
// First matmul: batch outside, model inside; x sliced by batch only, w1 by model only.
// CHECK: %[[H:.*]] = partir.loop "batch" [#partir.tile<0>] (%[[RB:.*]]: !partir.range<4>) {
// CHECK-NEXT: %[[XS:.*]] = partir.slice 0 %[[X]][%[[RB]]] : tensor<32x64xf32> -> tensor<8x64xf32>
// CHECK-NEXT: %[[FB:.*]] = partir.slice 0 %{{.*}}[%[[RB]]] : tensor<32x16xf32> -> tensor<8x16xf32>
// CHECK-NEXT: %[[HM:.*]] = partir.loop "model" [#partir.tile<1>] (%[[RM:.*]]: !partir.range<2>) {
// CHECK-NEXT: %[[WS:.*]] = partir.slice 1 %[[W1]][%[[RM]]] : tensor<64x16xf32> -> tensor<64x8xf32>
// CHECK-NEXT: %[[FM:.*]] = partir.slice 1 %[[FB]][%[[RM]]] : tensor<8x16xf32> -> tensor<8x8xf32>
// CHECK-NEXT: %[[MM:.*]] = linalg.matmul ins(%[[XS]], %[[WS]] : tensor<8x64xf32>, tensor<64x8xf32>) outs(%[[FM]] : tensor<8x8xf32>) -> tensor<8x8xf32>
// CHECK-NEXT: partir.yield %[[MM]] : tensor<8x8xf32>
// CHECK-NEXT: } : tensor<8x16xf32>
// CHECK-NEXT: partir.yield %[[HM]] : tensor<8x16xf32>
// CHECK-NEXT: } : tensor<32x16xf32>
// The activation follows on both axes.
// CHECK: %[[A:.*]] = partir.loop "batch" [#partir.tile<0>] (%[[RB2:.*]]: !partir.range<4>) {
// CHECK-NEXT: %[[AB:.*]] = partir.slice 0 %[[H]][%[[RB2]]] : tensor<32x16xf32> -> tensor<8x16xf32>
// CHECK: partir.loop "model" [#partir.tile<1>] (%[[RM2:.*]]: !partir.range<2>) {
// CHECK-NEXT: %[[AM:.*]] = partir.slice 1 %[[AB]][%[[RM2]]] : tensor<8x16xf32> -> tensor<8x8xf32>
// CHECK: linalg.exp ins(%[[AM]] : tensor<8x8xf32>)
// Second matmul: a sum over model inside the batch loop; w2 sliced on its rows by model
// (its accumulator, a fill of 0, is tiled by batch only).
// CHECK: tensor.empty() : tensor<8x8xf32>
// CHECK: linalg.fill ins(%{{.*}} : f32) outs(%{{.*}} : tensor<8x8xf32>)
// CHECK: %[[Y:.*]] = partir.loop "batch" [#partir.tile<0>] (%[[RB3:.*]]: !partir.range<4>) {
// CHECK-NEXT: %[[YB:.*]] = partir.slice 0 %[[A]][%[[RB3]]] : tensor<32x16xf32> -> tensor<8x16xf32>
// CHECK-NEXT: %[[YF:.*]] = partir.slice 0 %{{.*}}[%[[RB3]]] : tensor<32x8xf32> -> tensor<8x8xf32>
// CHECK-NEXT: %[[YM:.*]] = partir.loop "model" [#partir.sum] (%[[RM3:.*]]: !partir.range<2>) {
// CHECK-NEXT: %[[AS:.*]] = partir.slice 1 %[[YB]][%[[RM3]]] : tensor<8x16xf32> -> tensor<8x8xf32>
// CHECK-NEXT: %[[W2S:.*]] = partir.slice 0 %[[W2]][%[[RM3]]] : tensor<16x8xf32> -> tensor<8x8xf32>
// CHECK-NEXT: linalg.matmul ins(%[[AS]], %[[W2S]] : tensor<8x8xf32>, tensor<8x8xf32>) outs(%[[YF]] : tensor<8x8xf32>)
// CHECK: } : tensor<8x8xf32>
// CHECK-NEXT: partir.yield %[[YM]] : tensor<8x8xf32>
// CHECK-NEXT: } : tensor<32x8xf32>
// CHECK-NEXT: return %[[Y]]
// No model loop ever contains a batch loop.
// CHECK-NOT: partir.loop "model"
func.func @mlp(%x: tensor<32x64xf32> {partir.name = "x"}, %w1: tensor<64x16xf32> {partir.name = "w1"}, %w2: tensor<16x8xf32> {partir.name = "w2"}) -> tensor<32x8xf32> {
  %zero = arith.constant 0.0 : f32
  %e1 = tensor.empty() : tensor<32x16xf32>
  %f1 = linalg.fill ins(%zero : f32) outs(%e1 : tensor<32x16xf32>) -> tensor<32x16xf32>
  %h = linalg.matmul ins(%x, %w1 : tensor<32x64xf32>, tensor<64x16xf32>) outs(%f1 : tensor<32x16xf32>) -> tensor<32x16xf32>
  %a = linalg.exp ins(%h : tensor<32x16xf32>) outs(%e1 : tensor<32x16xf32>) -> tensor<32x16xf32>
  %e2 = tensor.empty() : tensor<32x8xf32>
  %f2 = linalg.fill ins(%zero : f32) outs(%e2 : tensor<32x8xf32>) -> tensor<32x8xf32>
  %y = linalg.matmul ins(%a, %w2 : tensor<32x16xf32>, tensor<16x8xf32>) outs(%f2 : tensor<32x8xf32>) -> tensor<32x8xf32>
  return %y : tensor<32x8xf32>
}
