// A JAX-style program with its own Shardy annotations: x split on batch by in_shardings, the
// hidden layer constrained to [batch, model] by with_sharding_constraint.
module @jit_f attributes {mhlo.num_partitions = 8 : i32, mhlo.num_replicas = 1 : i32} {
  "sdy.mesh"() <{sym_name = "mesh", mesh = #sdy.mesh<["batch"=4, "model"=2]>}> : () -> ()
  func.func public @main(%x: tensor<32x64xf32> {sdy.sharding = #sdy.sharding<@mesh, [{"batch"}, {}]>}, %w: tensor<64x128xf32>) -> tensor<32x128xf32> {
    %h = "stablehlo.dot_general"(%x, %w) <{dot_dimension_numbers = #stablehlo.dot<lhs_contracting_dimensions = [1], rhs_contracting_dimensions = [0]>}> : (tensor<32x64xf32>, tensor<64x128xf32>) -> tensor<32x128xf32>
    %c = "sdy.sharding_constraint"(%h) <{sharding = #sdy.sharding<@mesh, [{"batch"}, {"model"}]>}> : (tensor<32x128xf32>) -> tensor<32x128xf32>
    %t = "stablehlo.tanh"(%c) : (tensor<32x128xf32>) -> tensor<32x128xf32>
    return %t : tensor<32x128xf32>
  }
}
