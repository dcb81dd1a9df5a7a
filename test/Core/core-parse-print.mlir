// Every PartIR:Core op, type and attribute prints back in its custom form, and the generic form
// (--mlir-print-op-generic) parses back to the same custom form.
// RUN: mlir-opt %plugin %s | FileCheck %s
// RUN: mlir-opt %plugin %s | mlir-opt %plugin | FileCheck %s
// RUN: mlir-opt %plugin %s --mlir-print-op-generic | mlir-opt %plugin | FileCheck %s
// RUN: mlir-opt %plugin %s --mlir-print-op-generic | FileCheck %s --check-prefix=GENERIC

// CHECK: partir.mesh @mesh ["batch"=4, "model"=2]{{$}}
// GENERIC: "partir.mesh"() <{axis_names = ["batch", "model"], axis_sizes = array<i64: 4, 2>, sym_name = "mesh"}> : () -> ()
partir.mesh @mesh ["batch"=4, "model"=2]

// CHECK-LABEL: func.func @tile_loop(
// CHECK-SAME:      %[[X:.*]]: tensor<32x64xf32>) -> tensor<32x64xf32>
// CHECK-NEXT:    %[[Y:.*]] = partir.loop "batch" [#partir.tile<0>] (%[[R:.*]]: !partir.range<4>) {
// CHECK-NEXT:      %[[S:.*]] = partir.slice 0 %[[X]][%[[R]]] : tensor<32x64xf32> -> tensor<8x64xf32>
// CHECK-NEXT:      partir.yield %[[S]] : tensor<8x64xf32>
// CHECK-NEXT:    } : tensor<32x64xf32>
// CHECK-NEXT:    return %[[Y]] : tensor<32x64xf32>
// GENERIC-LABEL: "func.func"() <{function_type = (tensor<32x64xf32>) -> tensor<32x64xf32>, sym_name = "tile_loop"}>
// GENERIC:         "partir.loop"() <{actions = [#partir.tile<0>], axis = "batch"}> ({
// GENERIC-NEXT:    ^bb0(%{{.*}}: !partir.range<4>):
// GENERIC-NEXT:      "partir.slice"(%{{.*}}, %{{.*}}) <{dim = 0 : i64}> : (tensor<32x64xf32>, !partir.range<4>) -> tensor<8x64xf32>
// GENERIC-NEXT:      "partir.yield"(%{{.*}}) : (tensor<8x64xf32>) -> ()
// GENERIC-NEXT:    }) : () -> tensor<32x64xf32>
func.func @tile_loop(%x: tensor<32x64xf32>) -> tensor<32x64xf32> {
  %y = partir.loop "batch" [#partir.tile<0>] (%r: !partir.range<4>) {
    %xs = partir.slice 0 %x[%r] : tensor<32x64xf32> -> tensor<8x64xf32>
    partir.yield %xs : tensor<8x64xf32>
  } : tensor<32x64xf32>
  return %y : tensor<32x64xf32>
}

// Tiling along a non-leading dim, on the second axis.
// CHECK-LABEL: func.func @tile_dim1(
// CHECK-SAME:      %[[X:.*]]: tensor<64x256xf32>)
// CHECK-NEXT:    partir.loop "model" [#partir.tile<1>] (%[[R:.*]]: !partir.range<2>) {
// CHECK-NEXT:      %[[S:.*]] = partir.slice 1 %[[X]][%[[R]]] : tensor<64x256xf32> -> tensor<64x128xf32>
// CHECK-NEXT:      partir.yield %[[S]] : tensor<64x128xf32>
// CHECK-NEXT:    } : tensor<64x256xf32>
func.func @tile_dim1(%x: tensor<64x256xf32>) -> tensor<64x256xf32> {
  %y = partir.loop "model" [#partir.tile<1>] (%r: !partir.range<2>) {
    %xs = partir.slice 1 %x[%r] : tensor<64x256xf32> -> tensor<64x128xf32>
    partir.yield %xs : tensor<64x128xf32>
  } : tensor<64x256xf32>
  return %y : tensor<64x256xf32>
}

// One result per action; every reduction kind. `#partir.sum<sum>` is the default and prints
// as `#partir.sum`.
// CHECK-LABEL: func.func @multi_result(
// CHECK-SAME:      %[[X:.*]]: tensor<32x64xf32>, %[[W:.*]]: tensor<64xf32>)
// CHECK-NEXT:    %[[Y:.*]]:5 = partir.loop "batch" [#partir.tile<0>, #partir.sum, #partir.sum<max>, #partir.sum<min>, #partir.sum<mul>] (%[[R:.*]]: !partir.range<4>) {
// CHECK-NEXT:      %[[S:.*]] = partir.slice 0 %[[X]][%[[R]]] : tensor<32x64xf32> -> tensor<8x64xf32>
// CHECK-NEXT:      partir.yield %[[S]], %[[W]], %[[W]], %[[W]], %[[W]] : tensor<8x64xf32>, tensor<64xf32>, tensor<64xf32>, tensor<64xf32>, tensor<64xf32>
// CHECK-NEXT:    } : tensor<32x64xf32>, tensor<64xf32>, tensor<64xf32>, tensor<64xf32>, tensor<64xf32>
// CHECK-NEXT:    return %[[Y]]#0, %[[Y]]#1, %[[Y]]#2, %[[Y]]#3, %[[Y]]#4 :
// GENERIC-LABEL: sym_name = "multi_result"
// GENERIC:         "partir.loop"() <{actions = [#partir.tile<0>, #partir.sum, #partir.sum<max>, #partir.sum<min>, #partir.sum<mul>], axis = "batch"}>
func.func @multi_result(%x: tensor<32x64xf32>, %w: tensor<64xf32>)
    -> (tensor<32x64xf32>, tensor<64xf32>, tensor<64xf32>, tensor<64xf32>, tensor<64xf32>) {
  %y:5 = partir.loop "batch" [#partir.tile<0>, #partir.sum<sum>, #partir.sum<max>, #partir.sum<min>, #partir.sum<mul>] (%r: !partir.range<4>) {
    %xs = partir.slice 0 %x[%r] : tensor<32x64xf32> -> tensor<8x64xf32>
    partir.yield %xs, %w, %w, %w, %w : tensor<8x64xf32>, tensor<64xf32>, tensor<64xf32>, tensor<64xf32>, tensor<64xf32>
  } : tensor<32x64xf32>, tensor<64xf32>, tensor<64xf32>, tensor<64xf32>, tensor<64xf32>
  return %y#0, %y#1, %y#2, %y#3, %y#4 : tensor<32x64xf32>, tensor<64xf32>, tensor<64xf32>, tensor<64xf32>, tensor<64xf32>
}

// Loops over two different axes nest; the inner loop slices with the outer range too.
// CHECK-LABEL: func.func @nested(
// CHECK-SAME:      %[[X:.*]]: tensor<32x64xf32>)
// CHECK-NEXT:    partir.loop "batch" [#partir.tile<0>] (%[[RB:.*]]: !partir.range<4>) {
// CHECK-NEXT:      %[[XB:.*]] = partir.slice 0 %[[X]][%[[RB]]] : tensor<32x64xf32> -> tensor<8x64xf32>
// CHECK-NEXT:      %[[IN:.*]] = partir.loop "model" [#partir.tile<1>] (%[[RM:.*]]: !partir.range<2>) {
// CHECK-NEXT:        %[[XM:.*]] = partir.slice 1 %[[XB]][%[[RM]]] : tensor<8x64xf32> -> tensor<8x32xf32>
// CHECK-NEXT:        partir.yield %[[XM]] : tensor<8x32xf32>
// CHECK-NEXT:      } : tensor<8x64xf32>
// CHECK-NEXT:      partir.yield %[[IN]] : tensor<8x64xf32>
// CHECK-NEXT:    } : tensor<32x64xf32>
func.func @nested(%x: tensor<32x64xf32>) -> tensor<32x64xf32> {
  %y = partir.loop "batch" [#partir.tile<0>] (%rb: !partir.range<4>) {
    %xb = partir.slice 0 %x[%rb] : tensor<32x64xf32> -> tensor<8x64xf32>
    %in = partir.loop "model" [#partir.tile<1>] (%rm: !partir.range<2>) {
      %xm = partir.slice 1 %xb[%rm] : tensor<8x64xf32> -> tensor<8x32xf32>
      partir.yield %xm : tensor<8x32xf32>
    } : tensor<8x64xf32>
    partir.yield %in : tensor<8x64xf32>
  } : tensor<32x64xf32>
  return %y : tensor<32x64xf32>
}

// An inner loop may slice with the range of an outer loop.
// CHECK-LABEL: func.func @outer_range(
// CHECK-SAME:      %[[X:.*]]: tensor<32x64xf32>)
// CHECK-NEXT:    partir.loop "batch" [#partir.tile<0>] (%[[RB:.*]]: !partir.range<4>) {
// CHECK-NEXT:      partir.loop "model" [#partir.sum] (%{{.*}}: !partir.range<2>) {
// CHECK-NEXT:        %[[XB:.*]] = partir.slice 0 %[[X]][%[[RB]]] : tensor<32x64xf32> -> tensor<8x64xf32>
func.func @outer_range(%x: tensor<32x64xf32>) -> tensor<32x64xf32> {
  %y = partir.loop "batch" [#partir.tile<0>] (%rb: !partir.range<4>) {
    %in = partir.loop "model" [#partir.sum] (%rm: !partir.range<2>) {
      %xb = partir.slice 0 %x[%rb] : tensor<32x64xf32> -> tensor<8x64xf32>
      partir.yield %xb : tensor<8x64xf32>
    } : tensor<8x64xf32>
    partir.yield %in : tensor<8x64xf32>
  } : tensor<32x64xf32>
  return %y : tensor<32x64xf32>
}

// Dynamic dims are allowed in loop results and slices on other dims.
// CHECK-LABEL: func.func @dynamic(
// CHECK:         partir.slice 0 %{{.*}}[%{{.*}}] : tensor<32x?xf32> -> tensor<8x?xf32>
// CHECK:         } : tensor<32x?xf32>
func.func @dynamic(%x: tensor<32x?xf32>) -> tensor<32x?xf32> {
  %y = partir.loop "batch" [#partir.tile<0>] (%r: !partir.range<4>) {
    %xs = partir.slice 0 %x[%r] : tensor<32x?xf32> -> tensor<8x?xf32>
    partir.yield %xs : tensor<8x?xf32>
  } : tensor<32x?xf32>
  return %y : tensor<32x?xf32>
}

// Discardable attributes on a loop and a slice survive the round trip.
// CHECK-LABEL: func.func @attrs(
// CHECK:         partir.slice 0 %{{.*}}[%{{.*}}] {note = "s"} : tensor<32x64xf32> -> tensor<8x64xf32>
// CHECK:         } {note = "l"} : tensor<32x64xf32>
func.func @attrs(%x: tensor<32x64xf32>) -> tensor<32x64xf32> {
  %y = partir.loop "batch" [#partir.tile<0>] (%r: !partir.range<4>) {
    %xs = partir.slice 0 %x[%r] {note = "s"} : tensor<32x64xf32> -> tensor<8x64xf32>
    partir.yield %xs : tensor<8x64xf32>
  } {note = "l"} : tensor<32x64xf32>
  return %y : tensor<32x64xf32>
}

// CHECK-LABEL: func.func @replicate(
// CHECK-SAME:      %[[W:.*]]: tensor<64x256xf32>)
// CHECK-NEXT:    %[[P:.*]] = partir.replicate "model" %[[W]] : tensor<64x256xf32>
// CHECK-NEXT:    return %[[P]]
// GENERIC-LABEL: sym_name = "replicate"
// GENERIC:         "partir.replicate"(%{{.*}}) <{axis = "model"}> : (tensor<64x256xf32>) -> tensor<64x256xf32>
func.func @replicate(%w: tensor<64x256xf32>) -> tensor<64x256xf32> {
  %p = partir.replicate "model" %w : tensor<64x256xf32>
  return %p : tensor<64x256xf32>
}

// Types and attributes on their own, as attribute values and function argument types.
// CHECK-LABEL: func.func private @types(!partir.range<4>, !partir.range<1>)
// CHECK-SAME:    attributes {a = #partir.tile<0>, b = #partir.tile<3>, c = #partir.sum, d = #partir.sum<max>, e = #partir.sum<min>, f = #partir.sum<mul>, g = #partir.sum}
func.func private @types(!partir.range<4>, !partir.range<1>)
  attributes {a = #partir.tile<0>, b = #partir.tile<3>, c = #partir.sum, d = #partir.sum<max>,
              e = #partir.sum<min>, f = #partir.sum<mul>, g = #partir.sum<sum>}

// CHECK-LABEL: func.func @permute(
// CHECK:         partir.permute 0 %{{.*}}[%{{.*}}] from [3, 2, -1, 0] : tensor<32x64xf32> -> tensor<8x64xf32>
// GENERIC-LABEL: sym_name = "permute"
// GENERIC:         "partir.permute"(%{{.*}}, %{{.*}}) <{dim = 0 : i64, sources = array<i64: 3, 2, -1, 0>}> : (tensor<32x64xf32>, !partir.range<4>) -> tensor<8x64xf32>
func.func @permute(%x: tensor<32x64xf32>) -> tensor<32x64xf32> {
  %y = partir.loop "batch" [#partir.tile<0>] (%r: !partir.range<4>) {
    %c = partir.permute 0 %x[%r] from [3, 2, -1, 0] : tensor<32x64xf32> -> tensor<8x64xf32>
    partir.yield %c : tensor<8x64xf32>
  } : tensor<32x64xf32>
  return %y : tensor<32x64xf32>
}
