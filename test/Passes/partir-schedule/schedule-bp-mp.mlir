// A schedule applies its tactics in order: BP tiles x along batch and propagates, then MP
// tiles w1 by columns and w2 by rows along model (b1 pinned) and propagates. Each tactic
// reports a summary remark at its [[tactic]] line in the schedule; the model loops nest inside
// the batch loops.
// RUN: mlir-opt %plugin -p 'builtin.module(partir-schedule{file=%S/Inputs/bp_mp.toml})' %s 2>%t.remarks | FileCheck %s
// RUN: FileCheck %s --check-prefix=REMARK < %t.remarks
// RUN: mlir-opt %plugin -p 'builtin.module(partir-schedule{file=%S/Inputs/bp_mp.toml})' %s 2>/dev/null | mlir-opt %plugin -verify-roundtrip
// The same as the actions run by hand, tactic by tactic.
// RUN: mlir-opt %plugin -p 'builtin.module(partir-schedule{file=%S/Inputs/bp_mp.toml})' %s -o %t.schedule.mlir 2>/dev/null
// RUN: mlir-opt %plugin -p 'builtin.module(partir-mesh{axes=batch=4,model=2}, partir-tile{value=x dim=0 axis=batch}, partir-propagate{axis=batch}, partir-replicate{value=*b1 axis=model}, partir-tile{value=*w1 dim=1 axis=model}, partir-tile{value=*w2 dim=0 axis=model}, partir-propagate{axis=model})' %s -o %t.actions.mlir
// RUN: diff %t.schedule.mlir %t.actions.mlir

// REMARK: bp_mp.toml:[[BP:[0-9]+]]:1: remark: partir-schedule: tactic 'BP' on axis 'batch': 1 values tiled, 0 pinned, 7 ops partitioned, 0 conflicts
// REMARK-NEXT: {{^\[\[tactic\]\]$}}
// REMARK: bp_mp.toml:{{[0-9]+}}:1: remark: partir-schedule: tactic 'MP' on axis 'model': 2 values tiled, 1 pinned, 5 ops partitioned, 0 conflicts
// REMARK-NOT: func.func

// CHECK: partir.mesh @mesh ["batch"=4, "model"=2]
// CHECK-LABEL: func.func @mlp
// CHECK-SAME: (%[[X:[^:]*]]: tensor<32x64xf32> {partir.name = "x"}, %[[W1:[^:]*]]: tensor<64x16xf32> {partir.name = "params/w1"}, %[[B1:[^:]*]]: tensor<16xf32> {partir.name = "params/b1"}, %[[W2:[^:]*]]: tensor<16x8xf32> {partir.name = "params/w2"})
// CHECK: %[[PIN:.*]] = partir.replicate "model" %[[B1]] : tensor<16xf32>
// First matmul (after its accumulator's empty and fill): batch (x rows) outside, model (w1
// columns) inside.
// CHECK: linalg.fill ins(%{{.*}} : f32) outs(%{{.*}} : tensor<8x8xf32>)
// CHECK: %[[H:.*]] = partir.loop "batch" [#partir.tile<0>] (%[[RB:.*]]: !partir.range<4>) {
// CHECK-NEXT: %[[XS:.*]] = partir.slice 0 %[[X]][%[[RB]]] : tensor<32x64xf32> -> tensor<8x64xf32>
// CHECK-NEXT: partir.slice 0
// CHECK-NEXT: partir.loop "model" [#partir.tile<1>] (%[[RM:.*]]: !partir.range<2>) {
// CHECK-NEXT: %[[W1S:.*]] = partir.slice 1 %[[W1]][%[[RM]]] : tensor<64x16xf32> -> tensor<64x8xf32>
// CHECK-NEXT: partir.slice 1
// CHECK-NEXT: linalg.matmul ins(%[[XS]], %[[W1S]] : tensor<8x64xf32>, tensor<64x8xf32>)
// Bias + relu: the pinned bias is read (sliced locally) from the pin, never tiled itself.
// CHECK: partir.loop "batch" [#partir.tile<0>]
// CHECK: partir.loop "model" [#partir.tile<1>]
// CHECK: partir.slice 0 %[[PIN]][%{{.*}}] : tensor<16xf32> -> tensor<8xf32>
// CHECK: linalg.generic
// Second matmul (after its accumulator's fill): partial sums over model inside the batch loop.
// CHECK: linalg.fill ins(%{{.*}} : f32) outs(%{{.*}} : tensor<8x8xf32>)
// CHECK: %[[Y:.*]] = partir.loop "batch" [#partir.tile<0>]
// CHECK-NEXT: partir.slice 0
// CHECK-NEXT: partir.slice 0
// CHECK-NEXT: partir.loop "model" [#partir.sum]
// CHECK: partir.slice 0 %[[W2]][%{{.*}}] : tensor<16x8xf32> -> tensor<8x8xf32>
// CHECK: linalg.matmul
// CHECK: return %[[Y]]

#map = affine_map<(d0, d1) -> (d0, d1)>
#bias = affine_map<(d0, d1) -> (d1)>
func.func @mlp(%x: tensor<32x64xf32> {partir.name = "x"}, %w1: tensor<64x16xf32> {partir.name = "params/w1"}, %b1: tensor<16xf32> {partir.name = "params/b1"}, %w2: tensor<16x8xf32> {partir.name = "params/w2"}) -> tensor<32x8xf32> {
  %zero = arith.constant 0.0 : f32
  %e1 = tensor.empty() : tensor<32x16xf32>
  %f1 = linalg.fill ins(%zero : f32) outs(%e1 : tensor<32x16xf32>) -> tensor<32x16xf32>
  %h = linalg.matmul ins(%x, %w1 : tensor<32x64xf32>, tensor<64x16xf32>) outs(%f1 : tensor<32x16xf32>) -> tensor<32x16xf32>
  %hb = linalg.generic {indexing_maps = [#map, #bias, #map], iterator_types = ["parallel", "parallel"]} ins(%h, %b1 : tensor<32x16xf32>, tensor<16xf32>) outs(%e1 : tensor<32x16xf32>) {
  ^bb0(%in: f32, %b: f32, %out: f32):
    %s = arith.addf %in, %b : f32
    %r = arith.maximumf %s, %zero : f32
    linalg.yield %r : f32
  } -> tensor<32x16xf32>
  %e2 = tensor.empty() : tensor<32x8xf32>
  %f2 = linalg.fill ins(%zero : f32) outs(%e2 : tensor<32x8xf32>) -> tensor<32x8xf32>
  %y = linalg.matmul ins(%hb, %w2 : tensor<32x16xf32>, tensor<16x8xf32>) outs(%f2 : tensor<32x8xf32>) -> tensor<32x8xf32>
  return %y : tensor<32x8xf32>
}
