// partir-combine-collectives: independent all_reduces of one kind, axes and element type become
// one variadic all_reduce where the last of them was; users of the earlier ones move after it.
// RUN: mlir-opt %plugin -p 'builtin.module(partir-combine-collectives)' %s 2>%t.err | FileCheck %s
// RUN: FileCheck %s --check-prefix=REMARK --input-file=%t.err
// With a 1 KiB threshold, the 1 KiB gradient fits alone and the rest combine after it.
// RUN: mlir-opt %plugin -p 'builtin.module(partir-combine-collectives{threshold=1KiB})' %s 2>/dev/null | FileCheck %s --check-prefix=SMALL
// At most one operand per collective: nothing changes.
// RUN: mlir-opt %plugin -p 'builtin.module(partir-combine-collectives{count=1})' %s 2>/dev/null | FileCheck %s --check-prefix=ONE

partir.mesh @mesh ["batch"=4, "model"=2]

// A BP step's gradients: dw (1 KiB), db and the loss are independent; the SGD update of w used
// dw before db was reduced and now follows the combined op. The max over batch and the sum over
// model are other keys; %chained reads the combined result, so it cannot join it.
// CHECK-LABEL: func.func @step
// CHECK:         %[[DW:.*]] = arith.mulf %arg0, %arg0 : tensor<16x16xf32>
// CHECK-NEXT:    %[[DB:.*]] = arith.addf %arg1, %arg1 : tensor<16xf32>
// CHECK-NEXT:    %[[MAX:.*]] = partir_hlo.all_reduce max %[[DB]] axes ["batch"] : tensor<16xf32>
// CHECK-NEXT:    %[[M:.*]] = partir_hlo.all_reduce sum %[[DB]] axes ["model"] : tensor<16xf32>
// CHECK-NEXT:    %[[G:.*]]:3 = partir_hlo.all_reduce sum %[[DW]], %[[DB]], %arg2 axes ["batch"] : tensor<16x16xf32>, tensor<16xf32>, tensor<f32>
// CHECK-NEXT:    %[[W:.*]] = arith.subf %arg0, %[[G]]#0 : tensor<16x16xf32>
// CHECK-NEXT:    %[[CHAINED:.*]] = partir_hlo.all_reduce sum %[[G]]#1 axes ["batch"] : tensor<16xf32>
// CHECK-NEXT:    return %[[W]], %[[G]]#1, %[[G]]#2, %[[MAX]], %[[M]], %[[CHAINED]]

// SMALL-LABEL: func.func @step
// SMALL:         %[[DW:.*]] = partir_hlo.all_reduce sum %{{.*}} axes ["batch"] : tensor<16x16xf32>
// SMALL:         partir_hlo.all_reduce sum %{{.*}}, %arg2 axes ["batch"] : tensor<16xf32>, tensor<f32>

// ONE-LABEL: func.func @step
// ONE-NOT:       all_reduce sum %{{[a-z0-9_#]+}}, %
// ONE-COUNT-5:   partir_hlo.all_reduce sum %{{[a-z0-9_#]+}} axes
// ONE-NOT:       partir_hlo.all_reduce sum
// ONE:           return

// The update of w now waits for the combined op, holding dw's partial longer.
// REMARK: remark: partir-combine-collectives: combined 3 all_reduce into 1; peak memory 3.07 KiB -> 3.32 KiB
func.func @step(%w: tensor<16x16xf32>, %b: tensor<16xf32>, %loss: tensor<f32>)
    -> (tensor<16x16xf32>, tensor<16xf32>, tensor<f32>, tensor<16xf32>, tensor<16xf32>, tensor<16xf32>) {
  %dw_partial = arith.mulf %w, %w : tensor<16x16xf32>
  %dw = partir_hlo.all_reduce sum %dw_partial axes ["batch"] : tensor<16x16xf32>
  %new_w = arith.subf %w, %dw : tensor<16x16xf32>
  %db_partial = arith.addf %b, %b : tensor<16xf32>
  %db = partir_hlo.all_reduce sum %db_partial axes ["batch"] : tensor<16xf32>
  %max = partir_hlo.all_reduce max %db_partial axes ["batch"] : tensor<16xf32>
  %m = partir_hlo.all_reduce sum %db_partial axes ["model"] : tensor<16xf32>
  %l = partir_hlo.all_reduce sum %loss axes ["batch"] : tensor<f32>
  %chained = partir_hlo.all_reduce sum %db axes ["batch"] : tensor<16xf32>
  return %new_w, %db, %l, %max, %m, %chained : tensor<16x16xf32>, tensor<16xf32>, tensor<f32>, tensor<16xf32>, tensor<16xf32>, tensor<16xf32>
}

// Different element types are packed in different buffers: no combining.
// CHECK-LABEL: func.func @types
// CHECK-COUNT-2: partir_hlo.all_reduce sum %{{[a-z0-9_]+}} axes
func.func @types(%a: tensor<4xf32>, %b: tensor<4xi32>) -> (tensor<4xf32>, tensor<4xi32>) {
  %0 = partir_hlo.all_reduce sum %a axes ["batch"] : tensor<4xf32>
  %1 = partir_hlo.all_reduce sum %b axes ["batch"] : tensor<4xi32>
  return %0, %1 : tensor<4xf32>, tensor<4xi32>
}
