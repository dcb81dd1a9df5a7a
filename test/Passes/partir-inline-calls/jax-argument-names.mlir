// Without `partir.name`, an argument is named by the pytree path JAX's lowering leaves as its
// location (`jax.jit(step).lower(...)` printed with debug info): schedules address
// `params/w` and `batch/x` in a program exactly as JAX emits it.
// RUN: partir args %s | FileCheck %s
// CHECK: params/w
// CHECK: batch/x
// CHECK: arg2
func.func public @main(%arg0: tensor<8x4xf32> loc("params['w']"), %arg1: tensor<16x8xf32> loc("batch['x']"), %arg2: tensor<f32> loc("not a path")) -> tensor<16x4xf32> {
  %0 = "stablehlo.dot_general"(%arg1, %arg0) <{dot_dimension_numbers = #stablehlo.dot<lhs_contracting_dimensions = [1], rhs_contracting_dimensions = [0]>}> : (tensor<16x8xf32>, tensor<8x4xf32>) -> tensor<16x4xf32>
  return %0 : tensor<16x4xf32>
}
