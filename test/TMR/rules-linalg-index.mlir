// A loop dim a linalg body reads with linalg.index (an iota, e.g. the counter of a one-hot
// embedding) must not be split: each device would count from 0 instead of its own offset.
// RUN: mlir-opt %plugin -verify-diagnostics -p 'builtin.module(partir-print-rules)' %s
// RUN: mlir-opt %plugin -p 'builtin.module(partir-mesh{axes=model=2}, partir-tile{value=t dim=0 axis=model}, partir-propagate)' %s 2>&1 | FileCheck %s

#id = affine_map<(d0) -> (d0)>
// CHECK: remark: partir-propagate: stopped at 'linalg.generic' on axis 'model': factor i must be replicated
func.func @iota(%t: tensor<64xi32> {partir.name = "t"}) -> tensor<64xi32> {
  // expected-remark @below {{partir-print-rules: tensor.empty: () -> ([i]) sizes={i=64}}}
  %e = tensor.empty() : tensor<64xi32>
  // expected-remark @below {{partir-print-rules: linalg.generic: ([i],[i]) -> ([i]) replicate={i} sizes={i=64}}}
  %iota = linalg.generic {indexing_maps = [#id, #id], iterator_types = ["parallel"]} ins(%t : tensor<64xi32>) outs(%e : tensor<64xi32>) {
  ^bb0(%in: i32, %out: i32):
    %i = linalg.index 0 : index
    %c = arith.index_cast %i : index to i32
    %r = arith.addi %in, %c : i32
    linalg.yield %r : i32
  } -> tensor<64xi32>
  // expected-remark @below {{partir-print-rules: func.return: ([i]) -> () sizes={i=64}}}
  return %iota : tensor<64xi32>
}
