// The TMR rules of the op forms real JAX programs emit beyond the basics (generic form, the
// dialect unregistered): each keeps the dims it does not reach across tileable.
// RUN: mlir-opt %plugin --allow-unregistered-dialect -p 'builtin.module(partir-print-rules)' %s -o /dev/null 2>&1 | FileCheck %s

// argsort: values and indices sorted together along dim 1; rows pass.
// CHECK: stablehlo.sort: ([i,j],[i,j]) -> ([i,j],[i,j]) replicate={j} sizes={i=8,j=6}
// CHECK: chlo.top_k: ([i,j]) -> ([i,k],[i,k]) replicate={j,k} sizes={i=8,j=6,k=3}
// CHECK: stablehlo.reverse: ([i,j,k,l]) -> ([i,j,k,l]) moved={i,j} sizes={i=3,j=3,k=4,l=1}
// argmax: a value and its index reduced together; the kept dim passes.
// CHECK: stablehlo.reduce: ([i,j],[i,j],[],[]) -> ([i],[i]) replicate={j} sizes={i=8,j=6}
// A 2x2 pool: batch and channels pass, the pooled dims are used whole.
// CHECK: stablehlo.reduce_window: ([i,j,l,n],[]) -> ([i,k,m,n]) replicate={j,k,l,m} sizes={i=8,j=4,k=2,l=4,m=2,n=3}
// CHECK: stablehlo.select_and_scatter: ([i,j,l,n],[i,k,m,n],[]) -> ([i,j,l,n]) replicate={j,k,l,m} sizes={i=8,j=4,k=2,l=4,m=2,n=3}
// CHECK: stablehlo.bitcast_convert: ([i]) -> ([i]) sizes={i=8}
// jax.checkpoint's barrier: each value its own factors.
// CHECK: stablehlo.optimization_barrier: ([i,j],[k,l]) -> ([i,j],[k,l]) sizes={i=8,j=4,k=8,l=4}
// Random bits are drawn whole (from a whole state).
// CHECK: stablehlo.rng_bit_generator: ([_]) -> ([_],[i,j]) replicate={i,j} sizes={i=8,j=4}
// Neither a merge nor a split: dim 0 still passes.
// CHECK: stablehlo.reshape: ([i,j,k]) -> ([i,l,m]) replicate={j,k,l,m} sizes={i=8,j=4,k=6,l=2,m=12}
// Depthwise (4 groups of one feature): the features pass through to the outputs.
// CHECK: stablehlo.convolution: ([i,_,_,j],[_,_,_,j]) -> ([i,_,_,j]) sizes={i=8,j=4}
// An overwrite (`.at[:, pos].set`): the written position is used whole, the batch passes.
// CHECK: stablehlo.scatter: ([i,_],[_],[i]) -> ([i,_]) sizes={i=8}
// CHECK-NOT: warning

"builtin.module"() ({
  "func.func"() <{function_type = (tensor<8x6xf32>, tensor<3x3x4x1xf32>, tensor<8x4x4x3xf32>, tensor<8x2x2x3xf32>, tensor<8xi32>, tensor<8x4xf32>, tensor<2xui64>, tensor<8x4x6xf32>, tensor<8x5x5x4xf32>, tensor<8x16xf32>, tensor<8xf32>, tensor<1xi32>, tensor<3x3x1x4xf32>) -> (), sym_name = "main"}> ({
  ^bb0(%x: tensor<8x6xf32>, %k: tensor<3x3x4x1xf32>, %img: tensor<8x4x4x3xf32>, %src: tensor<8x2x2x3xf32>, %bits: tensor<8xi32>, %a: tensor<8x4xf32>, %state: tensor<2xui64>, %r: tensor<8x4x6xf32>, %conv_in: tensor<8x5x5x4xf32>, %cache: tensor<8x16xf32>, %new: tensor<8xf32>, %pos: tensor<1xi32>, %dk: tensor<3x3x1x4xf32>):
    %iota = "stablehlo.iota"() <{iota_dimension = 1 : i64}> : () -> tensor<8x6xi32>
    %s:2 = "stablehlo.sort"(%x, %iota) <{dimension = 1 : i64, is_stable = true}> ({
    ^bb0(%p: tensor<f32>, %q: tensor<f32>, %u: tensor<i32>, %v: tensor<i32>):
      %lt = "stablehlo.compare"(%p, %q) <{comparison_direction = #stablehlo<comparison_direction LT>}> : (tensor<f32>, tensor<f32>) -> tensor<i1>
      "stablehlo.return"(%lt) : (tensor<i1>) -> ()
    }) : (tensor<8x6xf32>, tensor<8x6xi32>) -> (tensor<8x6xf32>, tensor<8x6xi32>)
    %t:2 = "chlo.top_k"(%x) <{k = 3 : i64}> : (tensor<8x6xf32>) -> (tensor<8x3xf32>, tensor<8x3xi32>)
    %rev = "stablehlo.reverse"(%k) <{dimensions = array<i64: 0, 1>}> : (tensor<3x3x4x1xf32>) -> tensor<3x3x4x1xf32>
    %ninf = "stablehlo.constant"() <{value = dense<0xFF800000> : tensor<f32>}> : () -> tensor<f32>
    %zero = "stablehlo.constant"() <{value = dense<0> : tensor<i32>}> : () -> tensor<i32>
    %am:2 = "stablehlo.reduce"(%x, %iota, %ninf, %zero) <{dimensions = array<i64: 1>}> ({
    ^bb0(%p: tensor<f32>, %pi: tensor<i32>, %q: tensor<f32>, %qi: tensor<i32>):
      %gt = "stablehlo.compare"(%p, %q) <{comparison_direction = #stablehlo<comparison_direction GT>}> : (tensor<f32>, tensor<f32>) -> tensor<i1>
      %m = "stablehlo.select"(%gt, %p, %q) : (tensor<i1>, tensor<f32>, tensor<f32>) -> tensor<f32>
      %mi = "stablehlo.select"(%gt, %pi, %qi) : (tensor<i1>, tensor<i32>, tensor<i32>) -> tensor<i32>
      "stablehlo.return"(%m, %mi) : (tensor<f32>, tensor<i32>) -> ()
    }) : (tensor<8x6xf32>, tensor<8x6xi32>, tensor<f32>, tensor<i32>) -> (tensor<8xf32>, tensor<8xi32>)
    %fzero = "stablehlo.constant"() <{value = dense<0.0> : tensor<f32>}> : () -> tensor<f32>
    %pool = "stablehlo.reduce_window"(%img, %fzero) <{base_dilations = array<i64: 1, 1, 1, 1>, padding = dense<0> : tensor<4x2xi64>, window_dilations = array<i64: 1, 1, 1, 1>, window_dimensions = array<i64: 1, 2, 2, 1>, window_strides = array<i64: 1, 2, 2, 1>}> ({
    ^bb0(%p: tensor<f32>, %q: tensor<f32>):
      %sum = "stablehlo.add"(%p, %q) : (tensor<f32>, tensor<f32>) -> tensor<f32>
      "stablehlo.return"(%sum) : (tensor<f32>) -> ()
    }) : (tensor<8x4x4x3xf32>, tensor<f32>) -> tensor<8x2x2x3xf32>
    %grad = "stablehlo.select_and_scatter"(%img, %src, %fzero) <{padding = dense<0> : tensor<4x2xi64>, window_dimensions = array<i64: 1, 2, 2, 1>, window_strides = array<i64: 1, 2, 2, 1>}> ({
    ^bb0(%p: tensor<f32>, %q: tensor<f32>):
      %ge = "stablehlo.compare"(%p, %q) <{comparison_direction = #stablehlo<comparison_direction GE>}> : (tensor<f32>, tensor<f32>) -> tensor<i1>
      "stablehlo.return"(%ge) : (tensor<i1>) -> ()
    }, {
    ^bb0(%p: tensor<f32>, %q: tensor<f32>):
      %sum = "stablehlo.add"(%p, %q) : (tensor<f32>, tensor<f32>) -> tensor<f32>
      "stablehlo.return"(%sum) : (tensor<f32>) -> ()
    }) : (tensor<8x4x4x3xf32>, tensor<8x2x2x3xf32>, tensor<f32>) -> tensor<8x4x4x3xf32>
    %u = "stablehlo.bitcast_convert"(%bits) : (tensor<8xi32>) -> tensor<8xui32>
    %b:2 = "stablehlo.optimization_barrier"(%a, %a) : (tensor<8x4xf32>, tensor<8x4xf32>) -> (tensor<8x4xf32>, tensor<8x4xf32>)
    %rng:2 = "stablehlo.rng_bit_generator"(%state) <{rng_algorithm = #stablehlo<rng_algorithm DEFAULT>}> : (tensor<2xui64>) -> (tensor<2xui64>, tensor<8x4xui32>)
    %re = "stablehlo.reshape"(%r) : (tensor<8x4x6xf32>) -> tensor<8x2x12xf32>
    %dw = "stablehlo.convolution"(%conv_in, %dk) <{batch_group_count = 1 : i64, dimension_numbers = #stablehlo.conv<[b, 0, 1, f]x[0, 1, i, o]->[b, 0, 1, f]>, feature_group_count = 4 : i64, window = #stablehlo.conv<window = {}>}> : (tensor<8x5x5x4xf32>, tensor<3x3x1x4xf32>) -> tensor<8x3x3x4xf32>
    %w = "stablehlo.scatter"(%cache, %pos, %new) <{indices_are_sorted = true, scatter_dimension_numbers = #stablehlo.scatter<update_window_dims = [0], inserted_window_dims = [1], scatter_dims_to_operand_dims = [1]>, unique_indices = true}> ({
    ^bb0(%old: tensor<f32>, %upd: tensor<f32>):
      "stablehlo.return"(%upd) : (tensor<f32>) -> ()
    }) : (tensor<8x16xf32>, tensor<1xi32>, tensor<8xf32>) -> tensor<8x16xf32>
    "func.return"() : () -> ()
  }) : () -> ()
}) : () -> ()
