// partir-auto on a forward MLP large enough that compute, not link latency, decides (4096
// tokens, 1024 -> 4096 -> 1024, f32) on a 4x2 mesh of tpu-v3.
//
// Expected plan, by hand: splitting the tokens (x on dim 0) needs no communication and divides
// every op's work by the axis size; Megatron (w1 on dim 1, w2 on dim 0) divides the matmuls too
// but ends in an all_reduce of y (16 MiB). So: x on dim 0 along batch, then along model too
// (4096 divides by 8). Per axis, the compute search has 9 raw actions (6 tiles on dims the axis
// divides, 3 replicates), the memory search 4 (w1 and w2 stored split, gathered for the matmuls);
// 26 plans is every plan of both reduced spaces (each group decided at most once, a replicate
// only with a tile that would reach its group), and neither sharding pays here.
// RUN: mlir-opt %plugin -p 'builtin.module(partir-mesh{axes=batch=4,model=2}, partir-auto{axis=batch}, partir-auto{axis=model})' %s 2>&1 | FileCheck %s
// CHECK: remark: partir-auto: axis 'batch': 13 raw actions, 10 after analysis, 26 plans priced (+{{[0-9]+}} probes) in {{.*}} (all of them); step 200.3 us, peak 68.00 MiB
// CHECK: remark: partir-auto: tactic 'auto' on 'batch': tile { x = 0 }
// CHECK: remark: partir-auto: axis 'model': {{.*}} step 100.1 us, peak 50.00 MiB
// CHECK: remark: partir-auto: tactic 'auto' on 'model': tile { x = 0 }
// The partitioned program: every op in loops over both axes, no collective but the result's.
// CHECK: partir.loop "batch"
// CHECK: partir.loop "model"
//
// The same search through a schedule's auto tactic gives the same program.
// RUN: mlir-opt %plugin -p 'builtin.module(partir-mesh{axes=batch=4,model=2}, partir-auto{axis=batch}, partir-auto{axis=model})' %s -o %t.auto.mlir
// RUN: mlir-opt %plugin -p 'builtin.module(partir-schedule{file=%S/Inputs/auto-both.toml})' %s -o %t.schedule.mlir
// RUN: diff %t.auto.mlir %t.schedule.mlir
//
// A budget the fast plan (68 MiB) does not meet: the memory phase keeps it and stores w1 split
// along the axis, gathered for the matmul (ZeRO-3): 56 MiB, within the budget.
// RUN: mlir-opt %plugin -p 'builtin.module(partir-mesh{axes=batch=4,model=2}, partir-auto{axis=batch memory=60MiB})' %s -o /dev/null 2>&1 | FileCheck %s --check-prefix=BUDGET
// BUDGET: remark: partir-auto: axis 'batch': {{.*}}; step 356.7 us, peak 56.00 MiB
// BUDGET: remark: partir-auto: tactic 'auto' on 'batch': tile { x = 0 }
// BUDGET: remark: partir-auto: tactic 'auto-zero' on 'batch': tile { w1 = 0 } propagate elementwise
//
// A budget nothing meets: an error naming the smallest peak found and the budget; exit 1.
// RUN: not mlir-opt %plugin -p 'builtin.module(partir-mesh{axes=batch=4,model=2}, partir-auto{axis=batch memory=1MiB})' %s 2>&1 | FileCheck %s --check-prefix=TOO-SMALL
// TOO-SMALL: error: partir-auto: no plan found fits the memory budget of 1.00 MiB per device on axis 'batch': the smallest peak found is 48.00 MiB
//
// Bad options.
// RUN: not mlir-opt %plugin -p 'builtin.module(partir-mesh{axes=batch=4,model=2}, partir-auto)' %s 2>&1 | FileCheck %s --check-prefix=NO-AXIS
// RUN: not mlir-opt %plugin -p 'builtin.module(partir-mesh{axes=batch=4,model=2}, partir-auto{axis=nope})' %s 2>&1 | FileCheck %s --check-prefix=UNKNOWN
// RUN: not mlir-opt %plugin -p 'builtin.module(partir-mesh{axes=batch=4,model=2}, partir-auto{axis=batch memory=lots})' %s 2>&1 | FileCheck %s --check-prefix=SIZE
// RUN: not mlir-opt %plugin -p 'builtin.module(partir-auto{axis=batch})' %s 2>&1 | FileCheck %s --check-prefix=NO-MESH
// NO-AXIS: error: partir-auto: no axis given (axis=NAME)
// UNKNOWN: error: partir-auto: axis 'nope' is not in mesh @mesh [batch=4, model=2]
// SIZE: error: partir-auto: 'lots' is not a size; write it with a unit, e.g. 16GiB or 512MiB
// NO-MESH: error: partir-auto: the module declares no partir.mesh
func.func @main(%x: tensor<4096x1024xf32> {partir.name = "x"}, %w1: tensor<1024x4096xf32> {partir.name = "w1"}, %w2: tensor<4096x1024xf32> {partir.name = "w2"}) -> tensor<4096x1024xf32> {
  %zero = arith.constant 0.0 : f32
  %e1 = tensor.empty() : tensor<4096x4096xf32>
  %f1 = linalg.fill ins(%zero : f32) outs(%e1 : tensor<4096x4096xf32>) -> tensor<4096x4096xf32>
  %h = linalg.matmul ins(%x, %w1 : tensor<4096x1024xf32>, tensor<1024x4096xf32>) outs(%f1 : tensor<4096x4096xf32>) -> tensor<4096x4096xf32>
  %r = linalg.generic {indexing_maps = [affine_map<(i, j) -> (i, j)>, affine_map<(i, j) -> (i, j)>], iterator_types = ["parallel", "parallel"]} ins(%h : tensor<4096x4096xf32>) outs(%e1 : tensor<4096x4096xf32>) {
  ^bb0(%a: f32, %o: f32):
    %m = arith.maximumf %a, %zero : f32
    linalg.yield %m : f32
  } -> tensor<4096x4096xf32>
  %e2 = tensor.empty() : tensor<4096x1024xf32>
  %f2 = linalg.fill ins(%zero : f32) outs(%e2 : tensor<4096x1024xf32>) -> tensor<4096x1024xf32>
  %y = linalg.matmul ins(%r, %w2 : tensor<4096x4096xf32>, tensor<4096x1024xf32>) outs(%f2 : tensor<4096x1024xf32>) -> tensor<4096x1024xf32>
  return %y : tensor<4096x1024xf32>
}
