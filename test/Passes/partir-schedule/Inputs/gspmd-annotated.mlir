// The same program with GSPMD's annotations (jax.jit with Shardy off): x split on batch by
// in_shardings (a device list: 4 tiles of dim 0, each on 2 devices), the hidden layer
// constrained to [batch, model] by a Sharding custom call; w on one device (`maximal`), which
// no mesh axis expresses.
module @jit_f attributes {mhlo.num_partitions = 8 : i32, mhlo.num_replicas = 1 : i32} {
  func.func public @main(%x: tensor<32x64xf32> {mhlo.sharding = "{devices=[4,1,2]<=[8] last_tile_dim_replicate}"}, %w: tensor<64x128xf32> {mhlo.sharding = "{maximal device=0}"}) -> tensor<32x128xf32> {
    %h = "stablehlo.dot_general"(%x, %w) <{dot_dimension_numbers = #stablehlo.dot<lhs_contracting_dimensions = [1], rhs_contracting_dimensions = [0]>}> : (tensor<32x64xf32>, tensor<64x128xf32>) -> tensor<32x128xf32>
    %c = "stablehlo.custom_call"(%h) <{call_target_name = "Sharding"}> {mhlo.sharding = "{devices=[4,2]<=[8]}"} : (tensor<32x128xf32>) -> tensor<32x128xf32>
    %t = "stablehlo.tanh"(%c) : (tensor<32x128xf32>) -> tensor<32x128xf32>
    return %t : tensor<32x128xf32>
  }
}
