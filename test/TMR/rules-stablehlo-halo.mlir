// Slice (stride 1), edge pad, concatenate and reverse move rows between devices along the dims
// they change: those factors are `moved` (tiled with a halo, src/rules/stablehlo/halo.rs), of
// the size that divides every dim they index. A strided slice and interior padding stay whole.
// RUN: mlir-opt %plugin --allow-unregistered-dialect -p 'builtin.module(partir-print-rules)' %s -o /dev/null 2>&1 | FileCheck %s

// CHECK: stablehlo.slice: ([i,j]) -> ([i,j]) moved={i} sizes={i=4,j=4}
// CHECK: stablehlo.slice: ([i,j]) -> ([i,j]) replicate={i} sizes={i=12,j=4}
// CHECK: stablehlo.pad: ([i,j],[]) -> ([i,j]) moved={i} sizes={i=8,j=4}
// CHECK: stablehlo.pad: ([i,j],[]) -> ([i,j]) replicate={i} sizes={i=16,j=4}
// CHECK: stablehlo.concatenate: ([i,j],[i,j]) -> ([i,j]) moved={i} sizes={i=4,j=4}
// CHECK: stablehlo.reverse: ([i,j]) -> ([i,j]) moved={i} sizes={i=12,j=4}
// CHECK-NOT: warning

"builtin.module"() ({
  "func.func"() <{function_type = (tensor<12x4xf32>, tensor<8x4xf32>, tensor<f32>) -> (), sym_name = "main"}> ({
  ^bb0(%x: tensor<12x4xf32>, %y: tensor<8x4xf32>, %v: tensor<f32>):
    %a = "stablehlo.slice"(%x) <{start_indices = array<i64: 2, 0>, limit_indices = array<i64: 10, 4>, strides = array<i64: 1, 1>}> : (tensor<12x4xf32>) -> tensor<8x4xf32>
    %b = "stablehlo.slice"(%x) <{start_indices = array<i64: 0, 0>, limit_indices = array<i64: 12, 4>, strides = array<i64: 2, 1>}> : (tensor<12x4xf32>) -> tensor<6x4xf32>
    %c = "stablehlo.pad"(%y, %v) <{edge_padding_low = array<i64: 4, 0>, edge_padding_high = array<i64: 4, 0>, interior_padding = array<i64: 0, 0>}> : (tensor<8x4xf32>, tensor<f32>) -> tensor<16x4xf32>
    %d = "stablehlo.pad"(%y, %v) <{edge_padding_low = array<i64: 4, 0>, edge_padding_high = array<i64: 4, 0>, interior_padding = array<i64: 1, 0>}> : (tensor<8x4xf32>, tensor<f32>) -> tensor<23x4xf32>
    %e = "stablehlo.concatenate"(%x, %y) <{dimension = 0 : i64}> : (tensor<12x4xf32>, tensor<8x4xf32>) -> tensor<20x4xf32>
    %f = "stablehlo.reverse"(%x) <{dimensions = array<i64: 0>}> : (tensor<12x4xf32>) -> tensor<12x4xf32>
    "func.return"() : () -> ()
  }) : () -> ()
}) : () -> ()
