// JAX's sharding annotations (`with_sharding_constraint` as a Sharding custom call) pass values
// through: the schedule decides, with one warning per op name.
// RUN: mlir-opt %plugin --allow-unregistered-dialect -p 'builtin.module(partir-mesh{axes=batch=4}, partir-tile{value=x dim=0 axis=batch}, partir-propagate)' %s 2>&1 | FileCheck %s

// CHECK: warning: partir-propagate: 'stablehlo.custom_call @Sharding' is a sharding annotation; partir passes values through it and the schedule decides
// CHECK: partir.loop "batch" [#partir.tile<0>]
// CHECK: "stablehlo.custom_call"(%{{.*}}) <{call_target_name = "Sharding"}> {{.*}} : (tensor<8x16xf32>) -> tensor<8x16xf32>
// CHECK: partir.loop "batch" [#partir.tile<0>]
// CHECK: "stablehlo.exponential"(%{{.*}}) : (tensor<8x16xf32>) -> tensor<8x16xf32>

"builtin.module"() ({
  "func.func"() <{arg_attrs = [{partir.name = "x"}], function_type = (tensor<32x16xf32>) -> tensor<32x16xf32>, sym_name = "main"}> ({
  ^bb0(%x: tensor<32x16xf32>):
    %a = "stablehlo.custom_call"(%x) <{call_target_name = "Sharding"}> {mhlo.sharding = "{replicated}"} : (tensor<32x16xf32>) -> tensor<32x16xf32>
    %e = "stablehlo.exponential"(%a) : (tensor<32x16xf32>) -> tensor<32x16xf32>
    "func.return"(%e) : (tensor<32x16xf32>) -> ()
  }) : () -> ()
}) : () -> ()
