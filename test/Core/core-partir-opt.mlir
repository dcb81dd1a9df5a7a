// partir-opt (the project's driver) knows the PartIR dialects without plugin flags, and the
// upstream dialects a loop body uses: pretty and generic forms both round trip through it.
// RUN: partir-opt %s | FileCheck %s
// RUN: partir-opt %s | partir-opt | FileCheck %s
// RUN: partir-opt %s --mlir-print-op-generic | partir-opt | FileCheck %s

// CHECK: partir.mesh @mesh ["batch"=4, "model"=2]{{$}}
partir.mesh @mesh ["batch"=4, "model"=2]

// The docs/design.md#partircore example: a linalg.matmul on a slice inside a batch loop, a replicated weight,
// and a reduction loop over the model axis with every action kind.
// CHECK-LABEL: func.func @matmul_in_loop(
// CHECK-SAME:      %[[X:.*]]: tensor<32x64xf32>, %[[W:.*]]: tensor<64x256xf32>) -> (tensor<32x256xf32>, tensor<64x256xf32>)
// CHECK-NEXT:    %[[WR:.*]] = partir.replicate "model" %[[W]] : tensor<64x256xf32>
// CHECK-NEXT:    %[[Y:.*]]:2 = partir.loop "batch" [#partir.tile<0>, #partir.sum<max>] (%[[R:.*]]: !partir.range<4>) {
// CHECK-NEXT:      %[[XS:.*]] = partir.slice 0 %[[X]][%[[R]]] : tensor<32x64xf32> -> tensor<8x64xf32>
// CHECK-NEXT:      %[[E:.*]] = tensor.empty() : tensor<8x256xf32>
// CHECK-NEXT:      %[[H:.*]] = linalg.matmul ins(%[[XS]], %[[WR]] : tensor<8x64xf32>, tensor<64x256xf32>) outs(%[[E]] : tensor<8x256xf32>) -> tensor<8x256xf32>
// CHECK-NEXT:      partir.yield %[[H]], %[[WR]] : tensor<8x256xf32>, tensor<64x256xf32>
// CHECK-NEXT:    } : tensor<32x256xf32>, tensor<64x256xf32>
// CHECK-NEXT:    return %[[Y]]#0, %[[Y]]#1 : tensor<32x256xf32>, tensor<64x256xf32>
func.func @matmul_in_loop(%x: tensor<32x64xf32>, %w: tensor<64x256xf32>) -> (tensor<32x256xf32>, tensor<64x256xf32>) {
  %wr = partir.replicate "model" %w : tensor<64x256xf32>
  %y:2 = partir.loop "batch" [#partir.tile<0>, #partir.sum<max>] (%r: !partir.range<4>) {
    %xs = partir.slice 0 %x[%r] : tensor<32x64xf32> -> tensor<8x64xf32>
    %e = tensor.empty() : tensor<8x256xf32>
    %h = linalg.matmul ins(%xs, %wr : tensor<8x64xf32>, tensor<64x256xf32>) outs(%e : tensor<8x256xf32>) -> tensor<8x256xf32>
    partir.yield %h, %wr : tensor<8x256xf32>, tensor<64x256xf32>
  } : tensor<32x256xf32>, tensor<64x256xf32>
  return %y#0, %y#1 : tensor<32x256xf32>, tensor<64x256xf32>
}

// Nested loops over both axes, with an arith op in the inner body and a #partir.sum result.
// CHECK-LABEL: func.func @nested(
// CHECK-SAME:      %[[X:.*]]: tensor<32x64xf32>) -> tensor<32x32xf32>
// CHECK-NEXT:    partir.loop "batch" [#partir.tile<0>] (%[[RB:.*]]: !partir.range<4>) {
// CHECK-NEXT:      %[[XB:.*]] = partir.slice 0 %[[X]][%[[RB]]] : tensor<32x64xf32> -> tensor<8x64xf32>
// CHECK-NEXT:      %[[IN:.*]] = partir.loop "model" [#partir.sum] (%[[RM:.*]]: !partir.range<2>) {
// CHECK-NEXT:        %[[XM:.*]] = partir.slice 1 %[[XB]][%[[RM]]] : tensor<8x64xf32> -> tensor<8x32xf32>
// CHECK-NEXT:        %[[A:.*]] = arith.addf %[[XM]], %[[XM]] : tensor<8x32xf32>
// CHECK-NEXT:        partir.yield %[[A]] : tensor<8x32xf32>
// CHECK-NEXT:      } : tensor<8x32xf32>
// CHECK-NEXT:      partir.yield %[[IN]] : tensor<8x32xf32>
// CHECK-NEXT:    } : tensor<32x32xf32>
func.func @nested(%x: tensor<32x64xf32>) -> tensor<32x32xf32> {
  %y = partir.loop "batch" [#partir.tile<0>] (%rb: !partir.range<4>) {
    %xb = partir.slice 0 %x[%rb] : tensor<32x64xf32> -> tensor<8x64xf32>
    %in = partir.loop "model" [#partir.sum] (%rm: !partir.range<2>) {
      %xm = partir.slice 1 %xb[%rm] : tensor<8x64xf32> -> tensor<8x32xf32>
      %a = arith.addf %xm, %xm : tensor<8x32xf32>
      partir.yield %a : tensor<8x32xf32>
    } : tensor<8x32xf32>
    partir.yield %in : tensor<8x32xf32>
  } : tensor<32x32xf32>
  return %y : tensor<32x32xf32>
}

// partir-opt also knows PartIR:HLO.
// CHECK-LABEL: func.func @hlo(
// CHECK-SAME:      %[[X:.*]]: tensor<8x64xf32> {partir_hlo.sharding = #partir_hlo.sharding<[{"batch"}, {}]>})
// CHECK-NEXT:    partir_hlo.all_gather %[[X]] dim 0 axes ["batch"] : tensor<8x64xf32> -> tensor<32x64xf32>
func.func @hlo(%x: tensor<8x64xf32> {partir_hlo.sharding = #partir_hlo.sharding<[{"batch"}, {}]>}) -> tensor<32x64xf32> {
  %y = partir_hlo.all_gather %x dim 0 axes ["batch"] : tensor<8x64xf32> -> tensor<32x64xf32>
  return %y : tensor<32x64xf32>
}
