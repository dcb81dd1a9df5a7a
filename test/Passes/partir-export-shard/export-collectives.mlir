// Every PartIR:HLO collective exported to upstream's shard dialect, on one and several axes:
// the mesh becomes a private shard.grid keeping the axis names, axes become grid indices in the
// collective's order, dims and reduction kinds carry over, shardings become shard.split_axes.
// RUN: mlir-opt %plugin -p 'builtin.module(partir-export-shard)' %s | FileCheck %s --implicit-check-not=partir
// The result is plain upstream MLIR: stock mlir-opt (no plugin) parses and verifies it, and the
// printed form round-trips.
// RUN: mlir-opt %plugin -p 'builtin.module(partir-export-shard)' %s | mlir-opt --verify-each | FileCheck %s --implicit-check-not=partir
// RUN: mlir-opt %plugin -p 'builtin.module(partir-export-shard)' %s --mlir-print-op-generic | mlir-opt --verify-each | FileCheck %s --implicit-check-not=partir

// CHECK-NOT:   partir.mesh
// CHECK:       shard.grid @mesh(shape = 4x2) {shard.axis_names = ["batch", "model"], sym_visibility = "private"}
partir.mesh @mesh ["batch"=4, "model"=2]

// CHECK-LABEL: func.func @shardings(
// CHECK-SAME:      %{{.*}}: tensor<8x64xf32> {shard.split_axes = #shard<axisarray{{\[\[}}0], []]>},
// CHECK-SAME:      %{{.*}}: tensor<4x64xf32> {shard.split_axes = #shard<axisarray{{\[\[}}0, 1], []]>},
// CHECK-SAME:      %{{.*}}: tensor<8x32xf32> {shard.split_axes = #shard<axisarray{{\[\[}}0], [1]]>},
// CHECK-SAME:      %{{.*}}: tensor<32x64xf32> {shard.split_axes = #shard<axisarray{{\[\[}}1, 0], []]>},
// CHECK-SAME:      %{{.*}}: tensor<64x256xf32> {shard.split_axes = #shard<axisarray{{\[\[}}], []]>},
// CHECK-SAME:      %{{.*}}: tensor<f32> {shard.split_axes = #shard<axisarray{{\[\[}}]]>},
// CHECK-SAME:      %{{.*}}: tensor<4xf32>)
// CHECK-SAME:    -> (tensor<8x64xf32> {shard.split_axes = #shard<axisarray{{\[\[}}0], []]>}, tensor<f32> {shard.split_axes = #shard<axisarray{{\[\[}}]]>})
func.func @shardings(%a: tensor<8x64xf32> {partir_hlo.sharding = #partir_hlo.sharding<[{"batch"}, {}]>},
                     %b: tensor<4x64xf32> {partir_hlo.sharding = #partir_hlo.sharding<[{"batch", "model"}, {}]>, partir.name = "b"},
                     %c: tensor<8x32xf32> {partir_hlo.sharding = #partir_hlo.sharding<[{"batch"}, {"model"}]>},
                     %d: tensor<32x64xf32> {partir_hlo.sharding = #partir_hlo.sharding<[{"model", "batch"}, {}]>},
                     %e: tensor<64x256xf32> {partir_hlo.sharding = #partir_hlo.sharding<[{}, {}]>},
                     %f: tensor<f32> {partir_hlo.sharding = #partir_hlo.sharding<[]>},
                     %g: tensor<4xf32> {partir.name = "g"})
    -> (tensor<8x64xf32> {partir_hlo.sharding = #partir_hlo.sharding<[{"batch"}, {}]>, partir.name = "out"},
        tensor<f32> {partir_hlo.sharding = #partir_hlo.sharding<[]>}) {
  return %a, %f : tensor<8x64xf32>, tensor<f32>
}

// CHECK-LABEL: func.func @all_gather(
// CHECK-SAME:      %[[X:.*]]: tensor<8x64xf32>)
// CHECK-NEXT:    %[[A:.*]] = shard.all_gather %[[X]] on @mesh grid_axes = [0] gather_axis = 0 : tensor<8x64xf32> -> tensor<32x64xf32>
// CHECK-NEXT:    %[[B:.*]] = shard.all_gather %[[X]] on @mesh grid_axes = [0, 1] gather_axis = 1 : tensor<8x64xf32> -> tensor<8x512xf32>
// CHECK-NEXT:    %[[C:.*]] = shard.all_gather %[[X]] on @mesh grid_axes = [1] gather_axis = 1 : tensor<8x64xf32> -> tensor<8x128xf32>
// CHECK-NEXT:    return %[[A]], %[[B]], %[[C]]
func.func @all_gather(%x: tensor<8x64xf32>) -> (tensor<32x64xf32>, tensor<8x512xf32>, tensor<8x128xf32>) {
  %a = partir_hlo.all_gather %x dim 0 axes ["batch"] : tensor<8x64xf32> -> tensor<32x64xf32>
  %b = partir_hlo.all_gather %x dim 1 axes ["batch", "model"] : tensor<8x64xf32> -> tensor<8x512xf32>
  %c = partir_hlo.all_gather %x dim 1 axes ["model"] : tensor<8x64xf32> -> tensor<8x128xf32>
  return %a, %b, %c : tensor<32x64xf32>, tensor<8x512xf32>, tensor<8x128xf32>
}

// CHECK-LABEL: func.func @all_reduce(
// CHECK-SAME:      %[[X:.*]]: tensor<64x256xf32>, %[[S0:.*]]: tensor<f32>)
// CHECK-NEXT:    %[[S:.*]] = shard.all_reduce %[[X]] on @mesh grid_axes = [0] : tensor<64x256xf32> -> tensor<64x256xf32>
// CHECK-NEXT:    %[[M:.*]] = shard.all_reduce %[[S]] on @mesh grid_axes = [1] reduction = max : tensor<64x256xf32> -> tensor<64x256xf32>
// CHECK-NEXT:    %[[N:.*]] = shard.all_reduce %[[M]] on @mesh grid_axes = [0, 1] reduction = min : tensor<64x256xf32> -> tensor<64x256xf32>
// CHECK-NEXT:    %[[P:.*]] = shard.all_reduce %[[N]] on @mesh grid_axes = [1, 0] reduction = product : tensor<64x256xf32> -> tensor<64x256xf32>
// CHECK-NEXT:    %[[L:.*]] = shard.all_reduce %[[S0]] on @mesh grid_axes = [0] : tensor<f32> -> tensor<f32>
// CHECK-NEXT:    return %[[P]], %[[L]]
func.func @all_reduce(%x: tensor<64x256xf32>, %loss: tensor<f32>) -> (tensor<64x256xf32>, tensor<f32>) {
  %s = partir_hlo.all_reduce sum %x axes ["batch"] : tensor<64x256xf32>
  %m = partir_hlo.all_reduce max %s axes ["model"] : tensor<64x256xf32>
  %n = partir_hlo.all_reduce min %m axes ["batch", "model"] : tensor<64x256xf32>
  %p = partir_hlo.all_reduce mul %n axes ["model", "batch"] : tensor<64x256xf32>
  %l = partir_hlo.all_reduce sum %loss axes ["batch"] : tensor<f32>
  return %p, %l : tensor<64x256xf32>, tensor<f32>
}

// A combined all_reduce: shard.all_reduce takes one operand, so one per operand.
// CHECK-LABEL: func.func @combined(
// CHECK-SAME:      %[[A:.*]]: tensor<64x256xf32>, %[[B:.*]]: tensor<f32>)
// CHECK-NEXT:    %[[RA:.*]] = shard.all_reduce %[[A]] on @mesh grid_axes = [0] : tensor<64x256xf32> -> tensor<64x256xf32>
// CHECK-NEXT:    %[[RB:.*]] = shard.all_reduce %[[B]] on @mesh grid_axes = [0] : tensor<f32> -> tensor<f32>
// CHECK-NEXT:    return %[[RA]], %[[RB]]
func.func @combined(%a: tensor<64x256xf32>, %b: tensor<f32>) -> (tensor<64x256xf32>, tensor<f32>) {
  %r:2 = partir_hlo.all_reduce sum %a, %b axes ["batch"] : tensor<64x256xf32>, tensor<f32>
  return %r#0, %r#1 : tensor<64x256xf32>, tensor<f32>
}

// CHECK-LABEL: func.func @reduce_scatter(
// CHECK-SAME:      %[[X:.*]]: tensor<64x256xf32>)
// CHECK-NEXT:    %[[A:.*]] = shard.reduce_scatter %[[X]] on @mesh grid_axes = [0] scatter_axis = 0 : tensor<64x256xf32> -> tensor<16x256xf32>
// CHECK-NEXT:    %[[B:.*]] = shard.reduce_scatter %[[X]] on @mesh grid_axes = [0, 1] reduction = max scatter_axis = 1 : tensor<64x256xf32> -> tensor<64x32xf32>
// CHECK-NEXT:    return %[[A]], %[[B]]
func.func @reduce_scatter(%x: tensor<64x256xf32>) -> (tensor<16x256xf32>, tensor<64x32xf32>) {
  %a = partir_hlo.reduce_scatter sum %x dim 0 axes ["batch"] : tensor<64x256xf32> -> tensor<16x256xf32>
  %b = partir_hlo.reduce_scatter max %x dim 1 axes ["batch", "model"] : tensor<64x256xf32> -> tensor<64x32xf32>
  return %a, %b : tensor<16x256xf32>, tensor<64x32xf32>
}

// CHECK-LABEL: func.func @all_slice(
// CHECK-SAME:      %[[W:.*]]: tensor<64x256xf32>)
// CHECK-NEXT:    %[[A:.*]] = shard.all_slice %[[W]] on @mesh grid_axes = [1] slice_axis = 1 : tensor<64x256xf32> -> tensor<64x128xf32>
// CHECK-NEXT:    %[[B:.*]] = shard.all_slice %[[W]] on @mesh grid_axes = [0, 1] slice_axis = 0 : tensor<64x256xf32> -> tensor<8x256xf32>
// CHECK-NEXT:    return %[[A]], %[[B]]
func.func @all_slice(%w: tensor<64x256xf32>) -> (tensor<64x128xf32>, tensor<8x256xf32>) {
  %a = partir_hlo.all_slice %w dim 1 axes ["model"] : tensor<64x256xf32> -> tensor<64x128xf32>
  %b = partir_hlo.all_slice %w dim 0 axes ["batch", "model"] : tensor<64x256xf32> -> tensor<8x256xf32>
  return %a, %b : tensor<64x128xf32>, tensor<8x256xf32>
}

// CHECK-LABEL: func.func @all_to_all(
// CHECK-SAME:      %[[X:.*]]: tensor<8x64xf32>)
// CHECK-NEXT:    %[[A:.*]] = shard.all_to_all %[[X]] on @mesh grid_axes = [0] split_axis = 1 concat_axis = 0 : tensor<8x64xf32> -> tensor<32x16xf32>
// CHECK-NEXT:    %[[B:.*]] = shard.all_to_all %[[X]] on @mesh grid_axes = [0, 1] split_axis = 1 concat_axis = 0 : tensor<8x64xf32> -> tensor<64x8xf32>
// CHECK-NEXT:    return %[[A]], %[[B]]
func.func @all_to_all(%x: tensor<8x64xf32>) -> (tensor<32x16xf32>, tensor<64x8xf32>) {
  %a = partir_hlo.all_to_all %x split 1 concat 0 axes ["batch"] : tensor<8x64xf32> -> tensor<32x16xf32>
  %b = partir_hlo.all_to_all %x split 1 concat 0 axes ["batch", "model"] : tensor<8x64xf32> -> tensor<64x8xf32>
  return %a, %b : tensor<32x16xf32>, tensor<64x8xf32>
}

// Collectives inside regions are exported too, and ops keep their other attributes (minus
// partir.name).
// CHECK-LABEL: func.func @nested(
// CHECK:         scf.for
// CHECK:           shard.all_reduce %{{.*}} on @mesh grid_axes = [0] : tensor<4xf32> -> tensor<4xf32>
// CHECK:         arith.addf %{{.*}}, %{{.*}} {keep} : tensor<4xf32>
func.func @nested(%x: tensor<4xf32>, %n: index) -> tensor<4xf32> {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %r = scf.for %i = %c0 to %n step %c1 iter_args(%acc = %x) -> tensor<4xf32> {
    %s = partir_hlo.all_reduce sum %acc axes ["batch"] : tensor<4xf32>
    scf.yield %s : tensor<4xf32>
  }
  %y = arith.addf %r, %r {keep, partir.name = "y"} : tensor<4xf32>
  return %y : tensor<4xf32>
}
