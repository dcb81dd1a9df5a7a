// See case-captured-gather.test (partir-fuzz --dialect stablehlo, seed 207700).
"builtin.module"() <{sym_name = "jit_step"}> ({
  "func.func"() <{arg_attrs = [{partir.name = "y0"}, {}, {}, {partir.name = "y3"}, {}, {}, {partir.name = "opt_state/6/count"}, {}], function_type = (tensor<4xf32>, tensor<4x8x8xf32>, tensor<4x8xf32>, tensor<8x4xf32>, tensor<2x16xi32>, tensor<2x6x8xf32>, tensor<i32>, tensor<6x16x4xf32>) -> (tensor<4x8x8xf32>, tensor<2x16xi32>, tensor<4x8x8xf32>), res_attrs = [{jax.result_info = "result[0]"}, {jax.result_info = "result[1]"}, {jax.result_info = "result[2]"}], sym_name = "main", sym_visibility = "public"}> ({
  ^bb0(%arg1: tensor<4xf32> loc("y0"), %arg2: tensor<4x8x8xf32> loc("params['embed1']"), %arg3: tensor<4x8xf32> loc("params['w2']"), %arg6: tensor<8x4xf32> loc("y3"), %arg7: tensor<2x16xi32> loc("labels4"), %arg17: tensor<2x6x8xf32> loc("params['embed5']"), %arg24: tensor<i32> loc("opt_state[6].count"), %arg33: tensor<6x16x4xf32>):
    %4 = "stablehlo.dot_general"(%arg2, %arg3) <{dot_dimension_numbers = #stablehlo.dot<lhs_contracting_dimensions = [0, 1], rhs_contracting_dimensions = [0, 1]>, precision_config = [#stablehlo<precision DEFAULT>, #stablehlo<precision DEFAULT>]}> : (tensor<4x8x8xf32>, tensor<4x8xf32>) -> tensor<8xf32>
    %5 = "stablehlo.maximum"(%arg2, %arg2) : (tensor<4x8x8xf32>, tensor<4x8x8xf32>) -> tensor<4x8x8xf32>
    %8 = "stablehlo.constant"() <{value = dense<0> : tensor<i32>}> : () -> tensor<i32>
    %9 = "stablehlo.broadcast_in_dim"(%8) <{broadcast_dimensions = array<i64>}> : (tensor<i32>) -> tensor<2x16xi32>
    %10 = "stablehlo.constant"() <{value = dense<8> : tensor<i32>}> : () -> tensor<i32>
    %11 = "stablehlo.broadcast_in_dim"(%10) <{broadcast_dimensions = array<i64>}> : (tensor<i32>) -> tensor<2x16xi32>
    %12 = "stablehlo.compare"(%arg7, %9) <{compare_type = #stablehlo<comparison_type SIGNED>, comparison_direction = #stablehlo<comparison_direction LT>}> : (tensor<2x16xi32>, tensor<2x16xi32>) -> tensor<2x16xi1>
    %13 = "stablehlo.add"(%arg7, %11) : (tensor<2x16xi32>, tensor<2x16xi32>) -> tensor<2x16xi32>
    %14 = "stablehlo.select"(%12, %13, %arg7) : (tensor<2x16xi1>, tensor<2x16xi32>, tensor<2x16xi32>) -> tensor<2x16xi32>
    %15 = "stablehlo.broadcast_in_dim"(%14) <{broadcast_dimensions = array<i64: 0, 1>}> : (tensor<2x16xi32>) -> tensor<2x16x1xi32>
    %16 = "stablehlo.gather"(%arg6, %15) <{dimension_numbers = #stablehlo.gather<offset_dims = [2], collapsed_slice_dims = [0], start_index_map = [0], index_vector_dim = 2>, indices_are_sorted = false, slice_sizes = array<i64: 1, 4>}> : (tensor<8x4xf32>, tensor<2x16x1xi32>) -> tensor<2x16x4xf32>
    %22:2 = "func.call"(%arg17, %5) <{callee = @silu_1}> : (tensor<2x6x8xf32>, tensor<4x8x8xf32>) -> (tensor<2x6x8xf32>, tensor<4x8x8xf32>)
    %23 = "stablehlo.broadcast_in_dim"(%arg3) <{broadcast_dimensions = array<i64: 0, 2>}> : (tensor<4x8xf32>) -> tensor<4x16x8xf32>
    %25 = "stablehlo.constant"() <{value = dense<0> : tensor<i32>}> : () -> tensor<i32>
    %26 = "stablehlo.constant"() <{value = dense<2> : tensor<i32>}> : () -> tensor<i32>
    %27 = "stablehlo.clamp"(%25, %arg24, %26) : (tensor<i32>, tensor<i32>, tensor<i32>) -> tensor<i32>
    %32 = "stablehlo.case"(%27) ({
      %28 = "stablehlo.reshape"(%arg7) : (tensor<2x16xi32>) -> tensor<2x16x1xi32>
      %29 = "stablehlo.gather"(%arg6, %28) <{dimension_numbers = #stablehlo.gather<offset_dims = [2], collapsed_slice_dims = [0], start_index_map = [0], index_vector_dim = 2>, indices_are_sorted = false, slice_sizes = array<i64: 1, 4>}> : (tensor<8x4xf32>, tensor<2x16x1xi32>) -> tensor<2x16x4xf32>
      %30 = "stablehlo.maximum"(%arg6, %arg6) : (tensor<8x4xf32>, tensor<8x4xf32>) -> tensor<8x4xf32>
      "stablehlo.return"(%30) : (tensor<8x4xf32>) -> ()
    }, {
      %31 = "stablehlo.negate"(%arg6) : (tensor<8x4xf32>) -> tensor<8x4xf32>
      "stablehlo.return"(%31) : (tensor<8x4xf32>) -> ()
    }, {
      "stablehlo.return"(%arg6) : (tensor<8x4xf32>) -> ()
    }) : (tensor<i32>) -> tensor<8x4xf32>
    %34 = "stablehlo.compare"(%arg33, %arg33) <{compare_type = #stablehlo<comparison_type FLOAT>, comparison_direction = #stablehlo<comparison_direction GE>}> : (tensor<6x16x4xf32>, tensor<6x16x4xf32>) -> tensor<6x16x4xi1>
    %35 = "stablehlo.select"(%34, %arg33, %arg33) {partir.name = "t35"} : (tensor<6x16x4xi1>, tensor<6x16x4xf32>, tensor<6x16x4xf32>) -> tensor<6x16x4xf32>
    %36 = "stablehlo.constant"() <{value = dense<5.000000e-01> : tensor<f32>}> : () -> tensor<f32>
    %37 = "stablehlo.broadcast_in_dim"(%36) <{broadcast_dimensions = array<i64>}> {partir.name = "t37"} : (tensor<f32>) -> tensor<4x8x8xf32>
    %38 = "stablehlo.subtract"(%arg2, %37) : (tensor<4x8x8xf32>, tensor<4x8x8xf32>) -> tensor<4x8x8xf32>
    "func.return"(%38, %14, %5) : (tensor<4x8x8xf32>, tensor<2x16xi32>, tensor<4x8x8xf32>) -> ()
  }) : () -> ()
  "func.func"() <{arg_attrs = [{}, {}], function_type = (tensor<2x6x8xf32>, tensor<4x8x8xf32>) -> (tensor<2x6x8xf32>, tensor<4x8x8xf32>), res_attrs = [{}, {}], sym_name = "silu_1", sym_visibility = "private"}> ({
  ^bb0(%arg18: tensor<2x6x8xf32>, %arg19: tensor<4x8x8xf32>):
      %20 = "stablehlo.compare"(%arg18, %arg18) <{compare_type = #stablehlo<comparison_type FLOAT>, comparison_direction = #stablehlo<comparison_direction LE>}> : (tensor<2x6x8xf32>, tensor<2x6x8xf32>) -> tensor<2x6x8xi1>
      %21 = "stablehlo.select"(%20, %arg18, %arg18) : (tensor<2x6x8xi1>, tensor<2x6x8xf32>, tensor<2x6x8xf32>) -> tensor<2x6x8xf32>
    "func.return"(%21, %arg19) : (tensor<2x6x8xf32>, tensor<4x8x8xf32>) -> ()
  }) : () -> ()
}) {mhlo.num_partitions = 1 : i32, mhlo.num_replicas = 1 : i32} : () -> ()
