#map = affine_map<(d0, d1) -> (d1)>
#map1 = affine_map<(d0, d1) -> (d0, d1)>
#map2 = affine_map<(d0, d1) -> (d0)>
#map3 = affine_map<(d0, d1) -> (d0, 0)>
#map4 = affine_map<(d0) -> (d0)>
#map5 = affine_map<(d0) -> ()>
#map6 = affine_map<() -> ()>
#map7 = affine_map<(d0, d1) -> ()>
#map8 = affine_map<(d0, d1) -> (d1, d0)>
module @jit_step {
  partir.mesh @mesh ["batch"=4, "model"=2]
  func.func public @main(%arg0: tensor<256xf32> {partir.name = "params/b1"}, %arg1: tensor<10xf32> {partir.name = "params/b2"}, %arg2: tensor<64x256xf32> {partir.name = "params/w1"}, %arg3: tensor<256x10xf32> {partir.name = "params/w2"}, %arg4: tensor<256xf32> {partir.name = "opt/momentum/b1"}, %arg5: tensor<10xf32> {partir.name = "opt/momentum/b2"}, %arg6: tensor<64x256xf32> {partir.name = "opt/momentum/w1"}, %arg7: tensor<256x10xf32> {partir.name = "opt/momentum/w2"}, %arg8: tensor<32x64xf32> {partir.name = "x"}, %arg9: tensor<32xi32> {partir.name = "y"}) -> (tensor<256xf32> {partir.name = "params/b1"}, tensor<10xf32> {partir.name = "params/b2"}, tensor<64x256xf32> {partir.name = "params/w1"}, tensor<256x10xf32> {partir.name = "params/w2"}, tensor<256xf32> {partir.name = "opt/momentum/b1"}, tensor<10xf32> {partir.name = "opt/momentum/b2"}, tensor<64x256xf32> {partir.name = "opt/momentum/w1"}, tensor<256x10xf32> {partir.name = "opt/momentum/w2"}, tensor<f32> {partir.name = "loss"}) {
    %0 = partir.loop "batch" [#partir.tile<0>] (%arg10: !partir.range<4>) {
      %93 = partir.slice 0 %arg8[%arg10] : tensor<32x64xf32> -> tensor<8x64xf32>
      partir.yield %93 : tensor<8x64xf32>
    } : tensor<32x64xf32>
    %cst = arith.constant -1.000000e+00 : f32
    %cst_0 = arith.constant 5.000000e-02 : f32
    %cst_1 = arith.constant 0.899999976 : f32
    %cst_2 = arith.constant 3.200000e+01 : f32
    %cst_3 = arith.constant 1.000000e+00 : f32
    %cst_4 = arith.constant 0xFF800000 : f32
    %cst_5 = arith.constant 0.000000e+00 : f32
    %1 = tensor.empty() : tensor<32x256xf32>
    %2 = linalg.fill ins(%cst_5 : f32) outs(%1 : tensor<32x256xf32>) -> tensor<32x256xf32>
    %3 = linalg.matmul ins(%0, %arg2 : tensor<32x64xf32>, tensor<64x256xf32>) outs(%2 : tensor<32x256xf32>) -> tensor<32x256xf32>
    %4 = linalg.generic {indexing_maps = [#map, #map1], iterator_types = ["parallel", "parallel"]} ins(%arg0 : tensor<256xf32>) outs(%1 : tensor<32x256xf32>) {
    ^bb0(%in: f32, %out: f32):
      linalg.yield %in : f32
    } -> tensor<32x256xf32>
    %5 = linalg.generic {indexing_maps = [#map1, #map1, #map1], iterator_types = ["parallel", "parallel"]} ins(%3, %4 : tensor<32x256xf32>, tensor<32x256xf32>) outs(%1 : tensor<32x256xf32>) {
    ^bb0(%in: f32, %in_9: f32, %out: f32):
      %93 = arith.addf %in, %in_9 : f32
      linalg.yield %93 : f32
    } -> tensor<32x256xf32>
    %6 = linalg.generic {indexing_maps = [#map1, #map1], iterator_types = ["parallel", "parallel"]} ins(%5 : tensor<32x256xf32>) outs(%1 : tensor<32x256xf32>) {
    ^bb0(%in: f32, %out: f32):
      %93 = arith.maximumf %in, %cst_5 : f32
      linalg.yield %93 : f32
    } -> tensor<32x256xf32>
    %7 = tensor.empty() : tensor<32x256xi1>
    %8 = linalg.generic {indexing_maps = [#map1, #map1], iterator_types = ["parallel", "parallel"]} ins(%5 : tensor<32x256xf32>) outs(%7 : tensor<32x256xi1>) {
    ^bb0(%in: f32, %out: i1):
      %93 = arith.cmpf ogt, %in, %cst_5 : f32
      linalg.yield %93 : i1
    } -> tensor<32x256xi1>
    %9 = tensor.empty() : tensor<32x10xf32>
    %10 = linalg.fill ins(%cst_5 : f32) outs(%9 : tensor<32x10xf32>) -> tensor<32x10xf32>
    %11 = linalg.matmul ins(%6, %arg3 : tensor<32x256xf32>, tensor<256x10xf32>) outs(%10 : tensor<32x10xf32>) -> tensor<32x10xf32>
    %12 = linalg.generic {indexing_maps = [#map, #map1], iterator_types = ["parallel", "parallel"]} ins(%arg1 : tensor<10xf32>) outs(%9 : tensor<32x10xf32>) {
    ^bb0(%in: f32, %out: f32):
      linalg.yield %in : f32
    } -> tensor<32x10xf32>
    %13 = linalg.generic {indexing_maps = [#map1, #map1, #map1], iterator_types = ["parallel", "parallel"]} ins(%11, %12 : tensor<32x10xf32>, tensor<32x10xf32>) outs(%9 : tensor<32x10xf32>) {
    ^bb0(%in: f32, %in_9: f32, %out: f32):
      %93 = arith.addf %in, %in_9 : f32
      linalg.yield %93 : f32
    } -> tensor<32x10xf32>
    %14 = tensor.empty() : tensor<32xf32>
    %15 = linalg.fill ins(%cst_4 : f32) outs(%14 : tensor<32xf32>) -> tensor<32xf32>
    %16 = linalg.generic {indexing_maps = [#map1, #map2], iterator_types = ["parallel", "reduction"]} ins(%13 : tensor<32x10xf32>) outs(%15 : tensor<32xf32>) {
    ^bb0(%in: f32, %out: f32):
      %93 = arith.maximumf %out, %in : f32
      linalg.yield %93 : f32
    } -> tensor<32xf32>
    %17 = linalg.generic {indexing_maps = [#map2, #map1], iterator_types = ["parallel", "parallel"]} ins(%16 : tensor<32xf32>) outs(%9 : tensor<32x10xf32>) {
    ^bb0(%in: f32, %out: f32):
      linalg.yield %in : f32
    } -> tensor<32x10xf32>
    %18 = linalg.generic {indexing_maps = [#map1, #map1, #map1], iterator_types = ["parallel", "parallel"]} ins(%13, %17 : tensor<32x10xf32>, tensor<32x10xf32>) outs(%9 : tensor<32x10xf32>) {
    ^bb0(%in: f32, %in_9: f32, %out: f32):
      %93 = arith.subf %in, %in_9 : f32
      linalg.yield %93 : f32
    } -> tensor<32x10xf32>
    %19 = linalg.generic {indexing_maps = [#map1, #map1], iterator_types = ["parallel", "parallel"]} ins(%18 : tensor<32x10xf32>) outs(%9 : tensor<32x10xf32>) {
    ^bb0(%in: f32, %out: f32):
      %93 = math.exp %in : f32
      linalg.yield %93 : f32
    } -> tensor<32x10xf32>
    %20 = linalg.fill ins(%cst_5 : f32) outs(%14 : tensor<32xf32>) -> tensor<32xf32>
    %21 = linalg.generic {indexing_maps = [#map1, #map2], iterator_types = ["parallel", "reduction"]} ins(%19 : tensor<32x10xf32>) outs(%20 : tensor<32xf32>) {
    ^bb0(%in: f32, %out: f32):
      %93 = arith.addf %out, %in : f32
      linalg.yield %93 : f32
    } -> tensor<32xf32>
    %expanded = tensor.expand_shape %21 [[0, 1]] output_shape [32, 1] : tensor<32xf32> into tensor<32x1xf32>
    %22 = tensor.empty() : tensor<32x1xf32>
    %23 = linalg.generic {indexing_maps = [#map1, #map1], iterator_types = ["parallel", "parallel"]} ins(%expanded : tensor<32x1xf32>) outs(%22 : tensor<32x1xf32>) {
    ^bb0(%in: f32, %out: f32):
      %93 = math.log %in : f32
      linalg.yield %93 : f32
    } -> tensor<32x1xf32>
    %24 = linalg.generic {indexing_maps = [#map3, #map1], iterator_types = ["parallel", "parallel"]} ins(%23 : tensor<32x1xf32>) outs(%9 : tensor<32x10xf32>) {
    ^bb0(%in: f32, %out: f32):
      linalg.yield %in : f32
    } -> tensor<32x10xf32>
    %25 = linalg.generic {indexing_maps = [#map1, #map1, #map1], iterator_types = ["parallel", "parallel"]} ins(%18, %24 : tensor<32x10xf32>, tensor<32x10xf32>) outs(%9 : tensor<32x10xf32>) {
    ^bb0(%in: f32, %in_9: f32, %out: f32):
      %93 = arith.subf %in, %in_9 : f32
      linalg.yield %93 : f32
    } -> tensor<32x10xf32>
    %26 = tensor.empty() : tensor<10xi32>
    %27 = linalg.generic {indexing_maps = [#map4], iterator_types = ["parallel"]} outs(%26 : tensor<10xi32>) {
    ^bb0(%out: i32):
      %93 = linalg.index 0 : index
      %94 = arith.index_cast %93 : index to i32
      linalg.yield %94 : i32
    } -> tensor<10xi32>
    %28 = tensor.empty() : tensor<32x10xi32>
    %29 = linalg.generic {indexing_maps = [#map2, #map1], iterator_types = ["parallel", "parallel"]} ins(%arg9 : tensor<32xi32>) outs(%28 : tensor<32x10xi32>) {
    ^bb0(%in: i32, %out: i32):
      linalg.yield %in : i32
    } -> tensor<32x10xi32>
    %30 = linalg.generic {indexing_maps = [#map, #map1], iterator_types = ["parallel", "parallel"]} ins(%27 : tensor<10xi32>) outs(%28 : tensor<32x10xi32>) {
    ^bb0(%in: i32, %out: i32):
      linalg.yield %in : i32
    } -> tensor<32x10xi32>
    %31 = tensor.empty() : tensor<32x10xi1>
    %32 = linalg.generic {indexing_maps = [#map1, #map1, #map1], iterator_types = ["parallel", "parallel"]} ins(%29, %30 : tensor<32x10xi32>, tensor<32x10xi32>) outs(%31 : tensor<32x10xi1>) {
    ^bb0(%in: i32, %in_9: i32, %out: i1):
      %93 = arith.cmpi eq, %in, %in_9 : i32
      linalg.yield %93 : i1
    } -> tensor<32x10xi1>
    %33 = linalg.generic {indexing_maps = [#map1, #map1], iterator_types = ["parallel", "parallel"]} ins(%32 : tensor<32x10xi1>) outs(%9 : tensor<32x10xf32>) {
    ^bb0(%in: i1, %out: f32):
      %93 = arith.select %in, %cst_3, %cst_5 : f32
      linalg.yield %93 : f32
    } -> tensor<32x10xf32>
    %34 = linalg.generic {indexing_maps = [#map1, #map1, #map1], iterator_types = ["parallel", "parallel"]} ins(%33, %25 : tensor<32x10xf32>, tensor<32x10xf32>) outs(%9 : tensor<32x10xf32>) {
    ^bb0(%in: f32, %in_9: f32, %out: f32):
      %93 = arith.mulf %in, %in_9 : f32
      linalg.yield %93 : f32
    } -> tensor<32x10xf32>
    %35 = linalg.generic {indexing_maps = [#map1, #map2], iterator_types = ["parallel", "reduction"]} ins(%34 : tensor<32x10xf32>) outs(%20 : tensor<32xf32>) {
    ^bb0(%in: f32, %out: f32):
      %93 = arith.addf %out, %in : f32
      linalg.yield %93 : f32
    } -> tensor<32xf32>
    %36 = tensor.empty() : tensor<f32>
    %37 = linalg.fill ins(%cst_5 : f32) outs(%36 : tensor<f32>) -> tensor<f32>
    %38 = linalg.generic {indexing_maps = [#map4, #map5], iterator_types = ["reduction"]} ins(%35 : tensor<32xf32>) outs(%37 : tensor<f32>) {
    ^bb0(%in: f32, %out: f32):
      %93 = arith.addf %out, %in : f32
      linalg.yield %93 : f32
    } -> tensor<f32>
    %39 = linalg.generic {indexing_maps = [#map6, #map6], iterator_types = []} ins(%38 : tensor<f32>) outs(%36 : tensor<f32>) {
    ^bb0(%in: f32, %out: f32):
      %93 = arith.divf %in, %cst_2 : f32
      linalg.yield %93 : f32
    } -> tensor<f32>
    %40 = linalg.generic {indexing_maps = [#map6, #map6], iterator_types = []} ins(%39 : tensor<f32>) outs(%36 : tensor<f32>) {
    ^bb0(%in: f32, %out: f32):
      %93 = arith.negf %in : f32
      linalg.yield %93 : f32
    } -> tensor<f32>
    %41 = linalg.generic {indexing_maps = [#map6], iterator_types = []} outs(%36 : tensor<f32>) {
    ^bb0(%out: f32):
      linalg.yield %cst : f32
    } -> tensor<f32>
    %42 = linalg.generic {indexing_maps = [#map6, #map6], iterator_types = []} ins(%41 : tensor<f32>) outs(%36 : tensor<f32>) {
    ^bb0(%in: f32, %out: f32):
      %93 = arith.divf %in, %cst_2 : f32
      linalg.yield %93 : f32
    } -> tensor<f32>
    %43 = linalg.generic {indexing_maps = [#map7, #map1], iterator_types = ["parallel", "parallel"]} ins(%42 : tensor<f32>) outs(%9 : tensor<32x10xf32>) {
    ^bb0(%in: f32, %out: f32):
      linalg.yield %in : f32
    } -> tensor<32x10xf32>
    %44 = linalg.generic {indexing_maps = [#map1, #map1, #map1], iterator_types = ["parallel", "parallel"]} ins(%33, %43 : tensor<32x10xf32>, tensor<32x10xf32>) outs(%9 : tensor<32x10xf32>) {
    ^bb0(%in: f32, %in_9: f32, %out: f32):
      %93 = arith.mulf %in, %in_9 : f32
      linalg.yield %93 : f32
    } -> tensor<32x10xf32>
    %45 = linalg.generic {indexing_maps = [#map1, #map1], iterator_types = ["parallel", "parallel"]} ins(%44 : tensor<32x10xf32>) outs(%9 : tensor<32x10xf32>) {
    ^bb0(%in: f32, %out: f32):
      %93 = arith.negf %in : f32
      linalg.yield %93 : f32
    } -> tensor<32x10xf32>
    %46 = linalg.generic {indexing_maps = [#map1, #map2], iterator_types = ["parallel", "reduction"]} ins(%45 : tensor<32x10xf32>) outs(%20 : tensor<32xf32>) {
    ^bb0(%in: f32, %out: f32):
      %93 = arith.addf %out, %in : f32
      linalg.yield %93 : f32
    } -> tensor<32xf32>
    %expanded_6 = tensor.expand_shape %46 [[0, 1]] output_shape [32, 1] : tensor<32xf32> into tensor<32x1xf32>
    %47 = linalg.generic {indexing_maps = [#map1, #map1, #map1], iterator_types = ["parallel", "parallel"]} ins(%expanded_6, %expanded : tensor<32x1xf32>, tensor<32x1xf32>) outs(%22 : tensor<32x1xf32>) {
    ^bb0(%in: f32, %in_9: f32, %out: f32):
      %93 = arith.divf %in, %in_9 : f32
      linalg.yield %93 : f32
    } -> tensor<32x1xf32>
    %48 = linalg.generic {indexing_maps = [#map1, #map2], iterator_types = ["parallel", "reduction"]} ins(%47 : tensor<32x1xf32>) outs(%20 : tensor<32xf32>) {
    ^bb0(%in: f32, %out: f32):
      %93 = arith.addf %out, %in : f32
      linalg.yield %93 : f32
    } -> tensor<32xf32>
    %49 = linalg.generic {indexing_maps = [#map2, #map1], iterator_types = ["parallel", "parallel"]} ins(%48 : tensor<32xf32>) outs(%9 : tensor<32x10xf32>) {
    ^bb0(%in: f32, %out: f32):
      linalg.yield %in : f32
    } -> tensor<32x10xf32>
    %50 = linalg.generic {indexing_maps = [#map1, #map1, #map1], iterator_types = ["parallel", "parallel"]} ins(%49, %19 : tensor<32x10xf32>, tensor<32x10xf32>) outs(%9 : tensor<32x10xf32>) {
    ^bb0(%in: f32, %in_9: f32, %out: f32):
      %93 = arith.mulf %in, %in_9 : f32
      linalg.yield %93 : f32
    } -> tensor<32x10xf32>
    %51 = linalg.generic {indexing_maps = [#map1, #map1, #map1], iterator_types = ["parallel", "parallel"]} ins(%44, %50 : tensor<32x10xf32>, tensor<32x10xf32>) outs(%9 : tensor<32x10xf32>) {
    ^bb0(%in: f32, %in_9: f32, %out: f32):
      %93 = arith.addf %in, %in_9 : f32
      linalg.yield %93 : f32
    } -> tensor<32x10xf32>
    %52 = tensor.empty() : tensor<10xf32>
    %53 = linalg.fill ins(%cst_5 : f32) outs(%52 : tensor<10xf32>) -> tensor<10xf32>
    %54 = linalg.generic {indexing_maps = [#map8, #map2], iterator_types = ["parallel", "reduction"]} ins(%51 : tensor<32x10xf32>) outs(%53 : tensor<10xf32>) {
    ^bb0(%in: f32, %out: f32):
      %93 = arith.addf %out, %in : f32
      linalg.yield %93 : f32
    } -> tensor<10xf32>
    %expanded_7 = tensor.expand_shape %54 [[0, 1]] output_shape [1, 10] : tensor<10xf32> into tensor<1x10xf32>
    %55 = linalg.generic {indexing_maps = [#map8, #map2], iterator_types = ["parallel", "reduction"]} ins(%expanded_7 : tensor<1x10xf32>) outs(%53 : tensor<10xf32>) {
    ^bb0(%in: f32, %out: f32):
      %93 = arith.addf %out, %in : f32
      linalg.yield %93 : f32
    } -> tensor<10xf32>
    %56 = tensor.empty() : tensor<10x32xf32>
    %57 = linalg.generic {indexing_maps = [#map8, #map1], iterator_types = ["parallel", "parallel"]} ins(%51 : tensor<32x10xf32>) outs(%56 : tensor<10x32xf32>) {
    ^bb0(%in: f32, %out: f32):
      linalg.yield %in : f32
    } -> tensor<10x32xf32>
    %58 = tensor.empty() : tensor<10x256xf32>
    %59 = linalg.fill ins(%cst_5 : f32) outs(%58 : tensor<10x256xf32>) -> tensor<10x256xf32>
    %60 = linalg.matmul ins(%57, %6 : tensor<10x32xf32>, tensor<32x256xf32>) outs(%59 : tensor<10x256xf32>) -> tensor<10x256xf32>
    %61 = tensor.empty() : tensor<256x10xf32>
    %62 = linalg.generic {indexing_maps = [#map8, #map1], iterator_types = ["parallel", "parallel"]} ins(%60 : tensor<10x256xf32>) outs(%61 : tensor<256x10xf32>) {
    ^bb0(%in: f32, %out: f32):
      linalg.yield %in : f32
    } -> tensor<256x10xf32>
    %63 = linalg.generic {indexing_maps = [#map8, #map1], iterator_types = ["parallel", "parallel"]} ins(%arg3 : tensor<256x10xf32>) outs(%58 : tensor<10x256xf32>) {
    ^bb0(%in: f32, %out: f32):
      linalg.yield %in : f32
    } -> tensor<10x256xf32>
    %64 = linalg.matmul ins(%51, %63 : tensor<32x10xf32>, tensor<10x256xf32>) outs(%2 : tensor<32x256xf32>) -> tensor<32x256xf32>
    %65 = linalg.generic {indexing_maps = [#map1, #map1, #map1], iterator_types = ["parallel", "parallel"]} ins(%8, %64 : tensor<32x256xi1>, tensor<32x256xf32>) outs(%1 : tensor<32x256xf32>) {
    ^bb0(%in: i1, %in_9: f32, %out: f32):
      %93 = arith.select %in, %in_9, %cst_5 : f32
      linalg.yield %93 : f32
    } -> tensor<32x256xf32>
    %66 = tensor.empty() : tensor<256xf32>
    %67 = linalg.fill ins(%cst_5 : f32) outs(%66 : tensor<256xf32>) -> tensor<256xf32>
    %68 = linalg.generic {indexing_maps = [#map8, #map2], iterator_types = ["parallel", "reduction"]} ins(%65 : tensor<32x256xf32>) outs(%67 : tensor<256xf32>) {
    ^bb0(%in: f32, %out: f32):
      %93 = arith.addf %out, %in : f32
      linalg.yield %93 : f32
    } -> tensor<256xf32>
    %expanded_8 = tensor.expand_shape %68 [[0, 1]] output_shape [1, 256] : tensor<256xf32> into tensor<1x256xf32>
    %69 = linalg.generic {indexing_maps = [#map8, #map2], iterator_types = ["parallel", "reduction"]} ins(%expanded_8 : tensor<1x256xf32>) outs(%67 : tensor<256xf32>) {
    ^bb0(%in: f32, %out: f32):
      %93 = arith.addf %out, %in : f32
      linalg.yield %93 : f32
    } -> tensor<256xf32>
    %70 = tensor.empty() : tensor<256x32xf32>
    %71 = linalg.generic {indexing_maps = [#map8, #map1], iterator_types = ["parallel", "parallel"]} ins(%65 : tensor<32x256xf32>) outs(%70 : tensor<256x32xf32>) {
    ^bb0(%in: f32, %out: f32):
      linalg.yield %in : f32
    } -> tensor<256x32xf32>
    %72 = tensor.empty() : tensor<256x64xf32>
    %73 = linalg.fill ins(%cst_5 : f32) outs(%72 : tensor<256x64xf32>) -> tensor<256x64xf32>
    %74 = linalg.matmul ins(%71, %0 : tensor<256x32xf32>, tensor<32x64xf32>) outs(%73 : tensor<256x64xf32>) -> tensor<256x64xf32>
    %75 = tensor.empty() : tensor<64x256xf32>
    %76 = linalg.generic {indexing_maps = [#map8, #map1], iterator_types = ["parallel", "parallel"]} ins(%74 : tensor<256x64xf32>) outs(%75 : tensor<64x256xf32>) {
    ^bb0(%in: f32, %out: f32):
      linalg.yield %in : f32
    } -> tensor<64x256xf32>
    %77 = linalg.generic {indexing_maps = [#map4, #map4], iterator_types = ["parallel"]} ins(%arg4 : tensor<256xf32>) outs(%66 : tensor<256xf32>) {
    ^bb0(%in: f32, %out: f32):
      %93 = arith.mulf %in, %cst_1 : f32
      linalg.yield %93 : f32
    } -> tensor<256xf32>
    %78 = linalg.generic {indexing_maps = [#map4, #map4, #map4], iterator_types = ["parallel"]} ins(%77, %69 : tensor<256xf32>, tensor<256xf32>) outs(%66 : tensor<256xf32>) {
    ^bb0(%in: f32, %in_9: f32, %out: f32):
      %93 = arith.addf %in, %in_9 : f32
      linalg.yield %93 : f32
    } -> tensor<256xf32>
    %79 = linalg.generic {indexing_maps = [#map4, #map4], iterator_types = ["parallel"]} ins(%arg5 : tensor<10xf32>) outs(%52 : tensor<10xf32>) {
    ^bb0(%in: f32, %out: f32):
      %93 = arith.mulf %in, %cst_1 : f32
      linalg.yield %93 : f32
    } -> tensor<10xf32>
    %80 = linalg.generic {indexing_maps = [#map4, #map4, #map4], iterator_types = ["parallel"]} ins(%79, %55 : tensor<10xf32>, tensor<10xf32>) outs(%52 : tensor<10xf32>) {
    ^bb0(%in: f32, %in_9: f32, %out: f32):
      %93 = arith.addf %in, %in_9 : f32
      linalg.yield %93 : f32
    } -> tensor<10xf32>
    %81 = linalg.generic {indexing_maps = [#map1, #map1], iterator_types = ["parallel", "parallel"]} ins(%arg6 : tensor<64x256xf32>) outs(%75 : tensor<64x256xf32>) {
    ^bb0(%in: f32, %out: f32):
      %93 = arith.mulf %in, %cst_1 : f32
      linalg.yield %93 : f32
    } -> tensor<64x256xf32>
    %82 = linalg.generic {indexing_maps = [#map1, #map1, #map1], iterator_types = ["parallel", "parallel"]} ins(%81, %76 : tensor<64x256xf32>, tensor<64x256xf32>) outs(%75 : tensor<64x256xf32>) {
    ^bb0(%in: f32, %in_9: f32, %out: f32):
      %93 = arith.addf %in, %in_9 : f32
      linalg.yield %93 : f32
    } -> tensor<64x256xf32>
    %83 = linalg.generic {indexing_maps = [#map1, #map1], iterator_types = ["parallel", "parallel"]} ins(%arg7 : tensor<256x10xf32>) outs(%61 : tensor<256x10xf32>) {
    ^bb0(%in: f32, %out: f32):
      %93 = arith.mulf %in, %cst_1 : f32
      linalg.yield %93 : f32
    } -> tensor<256x10xf32>
    %84 = linalg.generic {indexing_maps = [#map1, #map1, #map1], iterator_types = ["parallel", "parallel"]} ins(%83, %62 : tensor<256x10xf32>, tensor<256x10xf32>) outs(%61 : tensor<256x10xf32>) {
    ^bb0(%in: f32, %in_9: f32, %out: f32):
      %93 = arith.addf %in, %in_9 : f32
      linalg.yield %93 : f32
    } -> tensor<256x10xf32>
    %85 = linalg.generic {indexing_maps = [#map4, #map4], iterator_types = ["parallel"]} ins(%78 : tensor<256xf32>) outs(%66 : tensor<256xf32>) {
    ^bb0(%in: f32, %out: f32):
      %93 = arith.mulf %in, %cst_0 : f32
      linalg.yield %93 : f32
    } -> tensor<256xf32>
    %86 = linalg.generic {indexing_maps = [#map4, #map4, #map4], iterator_types = ["parallel"]} ins(%arg0, %85 : tensor<256xf32>, tensor<256xf32>) outs(%66 : tensor<256xf32>) {
    ^bb0(%in: f32, %in_9: f32, %out: f32):
      %93 = arith.subf %in, %in_9 : f32
      linalg.yield %93 : f32
    } -> tensor<256xf32>
    %87 = linalg.generic {indexing_maps = [#map4, #map4], iterator_types = ["parallel"]} ins(%80 : tensor<10xf32>) outs(%52 : tensor<10xf32>) {
    ^bb0(%in: f32, %out: f32):
      %93 = arith.mulf %in, %cst_0 : f32
      linalg.yield %93 : f32
    } -> tensor<10xf32>
    %88 = linalg.generic {indexing_maps = [#map4, #map4, #map4], iterator_types = ["parallel"]} ins(%arg1, %87 : tensor<10xf32>, tensor<10xf32>) outs(%52 : tensor<10xf32>) {
    ^bb0(%in: f32, %in_9: f32, %out: f32):
      %93 = arith.subf %in, %in_9 : f32
      linalg.yield %93 : f32
    } -> tensor<10xf32>
    %89 = linalg.generic {indexing_maps = [#map1, #map1], iterator_types = ["parallel", "parallel"]} ins(%82 : tensor<64x256xf32>) outs(%75 : tensor<64x256xf32>) {
    ^bb0(%in: f32, %out: f32):
      %93 = arith.mulf %in, %cst_0 : f32
      linalg.yield %93 : f32
    } -> tensor<64x256xf32>
    %90 = linalg.generic {indexing_maps = [#map1, #map1, #map1], iterator_types = ["parallel", "parallel"]} ins(%arg2, %89 : tensor<64x256xf32>, tensor<64x256xf32>) outs(%75 : tensor<64x256xf32>) {
    ^bb0(%in: f32, %in_9: f32, %out: f32):
      %93 = arith.subf %in, %in_9 : f32
      linalg.yield %93 : f32
    } -> tensor<64x256xf32>
    %91 = linalg.generic {indexing_maps = [#map1, #map1], iterator_types = ["parallel", "parallel"]} ins(%84 : tensor<256x10xf32>) outs(%61 : tensor<256x10xf32>) {
    ^bb0(%in: f32, %out: f32):
      %93 = arith.mulf %in, %cst_0 : f32
      linalg.yield %93 : f32
    } -> tensor<256x10xf32>
    %92 = linalg.generic {indexing_maps = [#map1, #map1, #map1], iterator_types = ["parallel", "parallel"]} ins(%arg3, %91 : tensor<256x10xf32>, tensor<256x10xf32>) outs(%61 : tensor<256x10xf32>) {
    ^bb0(%in: f32, %in_9: f32, %out: f32):
      %93 = arith.subf %in, %in_9 : f32
      linalg.yield %93 : f32
    } -> tensor<256x10xf32>
    return %86, %88, %90, %92, %78, %80, %82, %84, %40 : tensor<256xf32>, tensor<10xf32>, tensor<64x256xf32>, tensor<256x10xf32>, tensor<256xf32>, tensor<10xf32>, tensor<64x256xf32>, tensor<256x10xf32>, tensor<f32>
  }
}

