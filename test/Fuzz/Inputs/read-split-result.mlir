// See read-split-result.test (partir-fuzz --dialect stablehlo, seed 205113).
"builtin.module"() <{sym_name = "jit_f"}> ({
  "func.func"() <{arg_attrs = [{}, {partir.name = "opt_state/0/mu/w1"}, {}], function_type = (tensor<8x8xf32>, tensor<16x8x16xf32>, tensor<4x16x8xf32>) -> (tensor<8x8xf32>, tensor<f32>), res_attrs = [{jax.result_info = "result[0]"}, {jax.result_info = "result[1]"}], sym_name = "main", sym_visibility = "public"}> ({
  ^bb0(%arg1: tensor<8x8xf32> loc("y0"), %arg2: tensor<16x8x16xf32> loc("opt_state[0].mu['w1']"), %arg3: tensor<4x16x8xf32> loc("x2")):
    %4 = "stablehlo.dot_general"(%arg2, %arg3) <{dot_dimension_numbers = #stablehlo.dot<lhs_batching_dimensions = [1], rhs_batching_dimensions = [2], lhs_contracting_dimensions = [0], rhs_contracting_dimensions = [1]>, precision_config = [#stablehlo<precision DEFAULT>, #stablehlo<precision DEFAULT>]}> {partir.name = "t4"} : (tensor<16x8x16xf32>, tensor<4x16x8xf32>) -> tensor<8x16x4xf32> loc("jit(step)/layers/0/dot_general"("/src/model.py":92:19))
    %5 = "stablehlo.add"(%arg1, %arg1) : (tensor<8x8xf32>, tensor<8x8xf32>) -> tensor<8x8xf32> loc("jit(step)/attn/add"("/src/model.py":287:16))
    %6 = "stablehlo.constant"() <{value = dense<5.000000e-01> : tensor<f32>}> : () -> tensor<f32> loc("jit(step)/constant"("/src/model.py":56:7))
    %7 = "stablehlo.pad"(%4, %6) <{edge_padding_high = array<i64: 6, 0, 0>, edge_padding_low = array<i64: 2, 0, 0>, interior_padding = array<i64: 0, 0, 0>}> : (tensor<8x16x4xf32>, tensor<f32>) -> tensor<16x16x4xf32> loc("jit(step)/pad"("/src/model.py":51:20))
    %8 = "stablehlo.logistic"(%5) : (tensor<8x8xf32>) -> tensor<8x8xf32> loc("jit(step)/logistic"("/src/model.py":39:32))
    "func.return"(%8, %6) : (tensor<8x8xf32>, tensor<f32>) -> ()
  }) : () -> ()
}) {mhlo.num_partitions = 1 : i32, mhlo.num_replicas = 1 : i32} : () -> ()
