// The sharding attribute and every PartIR:HLO collective print back in their custom form, and
// the generic form (--mlir-print-op-generic) parses back to the same custom form.
// RUN: mlir-opt %plugin %s | FileCheck %s
// RUN: mlir-opt %plugin %s | mlir-opt %plugin | FileCheck %s
// RUN: mlir-opt %plugin %s --mlir-print-op-generic | mlir-opt %plugin | FileCheck %s
// RUN: mlir-opt %plugin %s --mlir-print-op-generic | FileCheck %s --check-prefix=GENERIC

partir.mesh @mesh ["batch"=4, "model"=2]

// Sharding as function argument and result attributes: one axis, several axes on one dim,
// axes on different dims, a replicated value, and a rank-0 value.
// CHECK-LABEL: func.func @shardings(
// CHECK-SAME:      %{{.*}}: tensor<8x64xf32> {partir_hlo.sharding = #partir_hlo.sharding<[{"batch"}, {}]>},
// CHECK-SAME:      %{{.*}}: tensor<4x64xf32> {partir_hlo.sharding = #partir_hlo.sharding<[{"batch", "model"}, {}]>},
// CHECK-SAME:      %{{.*}}: tensor<8x32xf32> {partir_hlo.sharding = #partir_hlo.sharding<[{"batch"}, {"model"}]>},
// CHECK-SAME:      %{{.*}}: tensor<64x256xf32> {partir_hlo.sharding = #partir_hlo.sharding<[{}, {}]>},
// CHECK-SAME:      %{{.*}}: tensor<f32> {partir_hlo.sharding = #partir_hlo.sharding<[]>})
// CHECK-SAME:    -> (tensor<8x64xf32> {partir_hlo.sharding = #partir_hlo.sharding<[{"batch"}, {}]>}, tensor<f32> {partir_hlo.sharding = #partir_hlo.sharding<[]>})
// GENERIC-LABEL: "func.func"() <{arg_attrs = [{partir_hlo.sharding = #partir_hlo.sharding<[{"batch"}, {}]>}, {partir_hlo.sharding = #partir_hlo.sharding<[{"batch", "model"}, {}]>},
// GENERIC-SAME:    res_attrs = [{partir_hlo.sharding = #partir_hlo.sharding<[{"batch"}, {}]>}, {partir_hlo.sharding = #partir_hlo.sharding<[]>}], sym_name = "shardings"}>
func.func @shardings(%a: tensor<8x64xf32> {partir_hlo.sharding = #partir_hlo.sharding<[{"batch"}, {}]>},
                     %b: tensor<4x64xf32> {partir_hlo.sharding = #partir_hlo.sharding<[{"batch", "model"}, {}]>},
                     %c: tensor<8x32xf32> {partir_hlo.sharding = #partir_hlo.sharding<[{"batch"}, {"model"}]>},
                     %d: tensor<64x256xf32> {partir_hlo.sharding = #partir_hlo.sharding<[{}, {}]>},
                     %e: tensor<f32> {partir_hlo.sharding = #partir_hlo.sharding<[]>})
    -> (tensor<8x64xf32> {partir_hlo.sharding = #partir_hlo.sharding<[{"batch"}, {}]>},
        tensor<f32> {partir_hlo.sharding = #partir_hlo.sharding<[]>}) {
  return %a, %e : tensor<8x64xf32>, tensor<f32>
}

// Sharding as a plain attribute value (with spaces in the input; printed without).
// CHECK-LABEL: func.func private @sharding_value()
// CHECK-SAME:    attributes {s = #partir_hlo.sharding<[{"model", "batch"}, {}, {}]>}
func.func private @sharding_value() attributes {s = #partir_hlo.sharding<[ { "model" , "batch" } , { } , {} ]>}

// CHECK-LABEL: func.func @all_gather(
// CHECK-SAME:      %[[X:.*]]: tensor<8x64xf32>)
// CHECK-NEXT:    %[[A:.*]] = partir_hlo.all_gather %[[X]] dim 0 axes ["batch"] : tensor<8x64xf32> -> tensor<32x64xf32>
// CHECK-NEXT:    %[[B:.*]] = partir_hlo.all_gather %[[X]] dim 1 axes ["batch", "model"] : tensor<8x64xf32> -> tensor<8x512xf32>
// CHECK-NEXT:    return %[[A]], %[[B]]
// GENERIC-LABEL: sym_name = "all_gather"
// GENERIC:         "partir_hlo.all_gather"(%{{.*}}) <{axes = ["batch"], dim = 0 : i64}> : (tensor<8x64xf32>) -> tensor<32x64xf32>
func.func @all_gather(%x: tensor<8x64xf32>) -> (tensor<32x64xf32>, tensor<8x512xf32>) {
  %a = partir_hlo.all_gather %x dim 0 axes ["batch"] : tensor<8x64xf32> -> tensor<32x64xf32>
  %b = partir_hlo.all_gather %x dim 1 axes ["batch", "model"] : tensor<8x64xf32> -> tensor<8x512xf32>
  return %a, %b : tensor<32x64xf32>, tensor<8x512xf32>
}

// CHECK-LABEL: func.func @all_reduce(
// CHECK-SAME:      %[[X:.*]]: tensor<64x256xf32>)
// CHECK-NEXT:    %[[S:.*]] = partir_hlo.all_reduce sum %[[X]] axes ["batch"] : tensor<64x256xf32>
// CHECK-NEXT:    %[[M:.*]] = partir_hlo.all_reduce max %[[S]] axes ["model"] : tensor<64x256xf32>
// CHECK-NEXT:    %[[N:.*]] = partir_hlo.all_reduce min %[[M]] axes ["batch", "model"] : tensor<64x256xf32>
// CHECK-NEXT:    %[[P:.*]] = partir_hlo.all_reduce mul %[[N]] axes ["model", "batch"] : tensor<64x256xf32>
// CHECK-NEXT:    return %[[P]]
// GENERIC-LABEL: sym_name = "all_reduce"
// GENERIC:         "partir_hlo.all_reduce"(%{{.*}}) <{axes = ["batch"], kind = 0 : i32}> : (tensor<64x256xf32>) -> tensor<64x256xf32>
// GENERIC:         "partir_hlo.all_reduce"(%{{.*}}) <{axes = ["model"], kind = 1 : i32}>
// GENERIC:         "partir_hlo.all_reduce"(%{{.*}}) <{axes = ["batch", "model"], kind = 2 : i32}>
// GENERIC:         "partir_hlo.all_reduce"(%{{.*}}) <{axes = ["model", "batch"], kind = 3 : i32}>
func.func @all_reduce(%x: tensor<64x256xf32>) -> tensor<64x256xf32> {
  %s = partir_hlo.all_reduce sum %x axes ["batch"] : tensor<64x256xf32>
  %m = partir_hlo.all_reduce max %s axes ["model"] : tensor<64x256xf32>
  %n = partir_hlo.all_reduce min %m axes ["batch", "model"] : tensor<64x256xf32>
  %p = partir_hlo.all_reduce mul %n axes ["model", "batch"] : tensor<64x256xf32>
  return %p : tensor<64x256xf32>
}

// CHECK-LABEL: func.func @reduce_scatter(
// CHECK-SAME:      %[[X:.*]]: tensor<64x256xf32>)
// CHECK-NEXT:    %[[A:.*]] = partir_hlo.reduce_scatter sum %[[X]] dim 0 axes ["batch"] : tensor<64x256xf32> -> tensor<16x256xf32>
// CHECK-NEXT:    %[[B:.*]] = partir_hlo.reduce_scatter max %[[X]] dim 1 axes ["batch", "model"] : tensor<64x256xf32> -> tensor<64x32xf32>
// CHECK-NEXT:    return %[[A]], %[[B]]
// GENERIC-LABEL: sym_name = "reduce_scatter"
// GENERIC:         "partir_hlo.reduce_scatter"(%{{.*}}) <{axes = ["batch"], dim = 0 : i64, kind = 0 : i32}> : (tensor<64x256xf32>) -> tensor<16x256xf32>
func.func @reduce_scatter(%x: tensor<64x256xf32>) -> (tensor<16x256xf32>, tensor<64x32xf32>) {
  %a = partir_hlo.reduce_scatter sum %x dim 0 axes ["batch"] : tensor<64x256xf32> -> tensor<16x256xf32>
  %b = partir_hlo.reduce_scatter max %x dim 1 axes ["batch", "model"] : tensor<64x256xf32> -> tensor<64x32xf32>
  return %a, %b : tensor<16x256xf32>, tensor<64x32xf32>
}

// CHECK-LABEL: func.func @all_slice(
// CHECK-SAME:      %[[W:.*]]: tensor<64x256xf32>)
// CHECK-NEXT:    %[[A:.*]] = partir_hlo.all_slice %[[W]] dim 1 axes ["model"] : tensor<64x256xf32> -> tensor<64x128xf32>
// CHECK-NEXT:    %[[B:.*]] = partir_hlo.all_slice %[[W]] dim 0 axes ["batch", "model"] : tensor<64x256xf32> -> tensor<8x256xf32>
// CHECK-NEXT:    return %[[A]], %[[B]]
// GENERIC-LABEL: sym_name = "all_slice"
// GENERIC:         "partir_hlo.all_slice"(%{{.*}}) <{axes = ["model"], dim = 1 : i64}> : (tensor<64x256xf32>) -> tensor<64x128xf32>
func.func @all_slice(%w: tensor<64x256xf32>) -> (tensor<64x128xf32>, tensor<8x256xf32>) {
  %a = partir_hlo.all_slice %w dim 1 axes ["model"] : tensor<64x256xf32> -> tensor<64x128xf32>
  %b = partir_hlo.all_slice %w dim 0 axes ["batch", "model"] : tensor<64x256xf32> -> tensor<8x256xf32>
  return %a, %b : tensor<64x128xf32>, tensor<8x256xf32>
}

// CHECK-LABEL: func.func @all_to_all(
// CHECK-SAME:      %[[X:.*]]: tensor<8x64xf32>)
// CHECK-NEXT:    %[[A:.*]] = partir_hlo.all_to_all %[[X]] split 1 concat 0 axes ["batch"] : tensor<8x64xf32> -> tensor<32x16xf32>
// CHECK-NEXT:    %[[B:.*]] = partir_hlo.all_to_all %[[X]] split 1 concat 0 axes ["batch", "model"] : tensor<8x64xf32> -> tensor<64x8xf32>
// CHECK-NEXT:    return %[[A]], %[[B]]
// GENERIC-LABEL: sym_name = "all_to_all"
// GENERIC:         "partir_hlo.all_to_all"(%{{.*}}) <{axes = ["batch"], concat_dim = 0 : i64, split_dim = 1 : i64}> : (tensor<8x64xf32>) -> tensor<32x16xf32>
func.func @all_to_all(%x: tensor<8x64xf32>) -> (tensor<32x16xf32>, tensor<64x8xf32>) {
  %a = partir_hlo.all_to_all %x split 1 concat 0 axes ["batch"] : tensor<8x64xf32> -> tensor<32x16xf32>
  %b = partir_hlo.all_to_all %x split 1 concat 0 axes ["batch", "model"] : tensor<8x64xf32> -> tensor<64x8xf32>
  return %a, %b : tensor<32x16xf32>, tensor<64x8xf32>
}

// CHECK-LABEL: func.func @collective_permute(
// CHECK:         partir_hlo.collective_permute %{{.*}} axes ["batch"] from [-1, 0, 1, 2] : tensor<8x64xf32>
// GENERIC-LABEL: sym_name = "collective_permute"
// GENERIC:         "partir_hlo.collective_permute"(%{{.*}}) <{axes = ["batch"], sources = array<i64: -1, 0, 1, 2>}> : (tensor<8x64xf32>) -> tensor<8x64xf32>
func.func @collective_permute(%x: tensor<8x64xf32>) -> tensor<8x64xf32> {
  %y = partir_hlo.collective_permute %x axes ["batch"] from [-1, 0, 1, 2] : tensor<8x64xf32>
  return %y : tensor<8x64xf32>
}

// Dynamic dims pass through untouched.
// CHECK-LABEL: func.func @dynamic(
// CHECK:         partir_hlo.all_gather %{{.*}} dim 0 axes ["batch"] : tensor<?x64xf32> -> tensor<?x64xf32>
// CHECK:         partir_hlo.all_slice %{{.*}} dim 0 axes ["batch"] : tensor<?x64xf32> -> tensor<?x64xf32>
func.func @dynamic(%x: tensor<?x64xf32>) -> (tensor<?x64xf32>, tensor<?x64xf32>) {
  %a = partir_hlo.all_gather %x dim 0 axes ["batch"] : tensor<?x64xf32> -> tensor<?x64xf32>
  %b = partir_hlo.all_slice %x dim 0 axes ["batch"] : tensor<?x64xf32> -> tensor<?x64xf32>
  return %a, %b : tensor<?x64xf32>, tensor<?x64xf32>
}
