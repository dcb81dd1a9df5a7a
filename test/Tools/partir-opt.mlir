// partir-opt: every upstream dialect and pass plus PartIR, with the flag form of pass options.
// RUN: partir-opt --partir-mesh=axes=batch=4,model=2 '--partir-tile=value=x dim=0 axis=batch' --canonicalize %s | FileCheck %s
// RUN: partir-opt --help | FileCheck %s --check-prefix=HELP

// CHECK: partir.mesh @mesh ["batch"=4, "model"=2]
// CHECK: partir.loop "batch" [#partir.tile<0>]
// CHECK: math.exp
// HELP-DAG: --partir-mesh
// HELP-DAG: --partir-tile
// HELP-DAG: --partir-replicate
// HELP-DAG: --partir-propagate
// HELP-DAG: --partir-schedule
// HELP-DAG: --partir-lower-to-hlo
// HELP-DAG: --partir-simulate
// HELP-DAG: --partir-export-shard
// HELP-DAG: --partir-to-mpi
// HELP-DAG: --partir-auto
// HELP-DAG: --sharding-propagation
func.func @main(%x: tensor<8xf32> {partir.name = "x"}) -> tensor<8xf32> {
  %y = math.exp %x : tensor<8xf32>
  return %y : tensor<8xf32>
}
