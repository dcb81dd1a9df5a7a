// The MLP partitioned with BP+MP+Z3 (examples/mlp/schedules/BP_MP_Z3.toml), lowered to HLO and
// exported: stock mlir-opt (no plugin) parses and verifies it, no partir is left, and the
// collectives are the expected shard ops: ZeRO-3 all_gathers of the parameters over "batch"
// (grid axis 0), Megatron's all_reduce over "model" (grid axis 1) and reduce_scatters of the
// gradients.
// RUN: mlir-opt %plugin -p 'builtin.module(partir-schedule{file=%examples/mlp/schedules/BP_MP_Z3.toml}, partir-lower-to-hlo, cse, partir-export-shard)' %examples/mlp/mlp.mlir 2>/dev/null \
// RUN:   | mlir-opt --verify-each | FileCheck %s --implicit-check-not=partir
// Upstream canonicalisation and CSE accept it too.
// RUN: mlir-opt %plugin -p 'builtin.module(partir-schedule{file=%examples/mlp/schedules/BP_MP_Z3.toml}, partir-lower-to-hlo, cse, partir-export-shard)' %examples/mlp/mlp.mlir 2>/dev/null \
// RUN:   | mlir-opt --verify-each --canonicalize --cse | FileCheck %s --check-prefix=CANON

// CHECK:       shard.grid @mesh(shape = 4x2) {shard.axis_names = ["batch", "model"], sym_visibility = "private"}
// CHECK-LABEL: func.func public @main(
// Arguments keep their local shapes: b1 (256) split on dim 0 over model then batch (grid axes
// [1, 0], major to minor), b2 whole, w1 (64x256) on dim 0 over batch and dim 1 over model.
// CHECK-SAME:      %{{.*}}: tensor<32xf32> {shard.split_axes = #shard<axisarray{{\[\[}}1, 0]]>},
// CHECK-SAME:      %{{.*}}: tensor<10xf32> {shard.split_axes = #shard<axisarray{{\[\[}}]]>},
// CHECK-SAME:      %{{.*}}: tensor<16x128xf32> {shard.split_axes = #shard<axisarray{{\[\[}}0], [1]]>},
// The collectives (any order; the lowering may move them):
// CHECK-DAG:     shard.all_gather %{{.*}} on @mesh grid_axes = [0] gather_axis = 0 : tensor<32x10xf32> -> tensor<128x10xf32>
// CHECK-DAG:     shard.all_gather %{{.*}} on @mesh grid_axes = [0] gather_axis = 0 : tensor<16x128xf32> -> tensor<64x128xf32>
// CHECK-DAG:     shard.all_reduce %{{.*}} on @mesh grid_axes = [1] : tensor<8x10xf32> -> tensor<8x10xf32>
// CHECK-DAG:     shard.all_reduce %{{.*}} on @mesh grid_axes = [0] : tensor<f32> -> tensor<f32>
// CHECK-DAG:     shard.reduce_scatter %{{.*}} on @mesh grid_axes = [0] scatter_axis = 1 : tensor<10x128xf32> -> tensor<10x32xf32>
// CHECK:         return
// CANON:       shard.grid @mesh(shape = 4x2)
// CANON-DAG:   shard.all_gather
// CANON-DAG:   shard.all_reduce
// CANON-DAG:   shard.reduce_scatter
