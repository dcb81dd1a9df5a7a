// partir-replicate routes every use of the selected values through a partir.replicate pin on
// the axis; pinning twice changes nothing; the result parses again.
// RUN: mlir-opt %plugin -p 'builtin.module(partir-mesh{axes=batch=4,model=2}, partir-replicate{value=*bias* axis=model})' %s | FileCheck %s
// RUN: mlir-opt %plugin -p 'builtin.module(partir-mesh{axes=batch=4,model=2}, partir-replicate{value=*bias* axis=model}, partir-replicate{value=*bias* axis=model})' %s | FileCheck %s
// RUN: mlir-opt %plugin -p 'builtin.module(partir-mesh{axes=batch=4,model=2}, partir-replicate{value=*bias* axis=model})' %s | mlir-opt %plugin -verify-roundtrip

// CHECK-LABEL: func.func @main
// CHECK-SAME: %[[B:[^:]*]]: tensor<16xf32> {partir.name = "params/bias"}
// CHECK-NEXT: %[[P:.*]] = partir.replicate "model" %[[B]] : tensor<16xf32>
// CHECK-NOT: partir.replicate
// CHECK: arith.addf %{{.*}}, %[[P]] : tensor<16xf32>
// CHECK: return %{{.*}}, %[[P]] :
func.func @main(%x: tensor<16xf32> {partir.name = "x"}, %b: tensor<16xf32> {partir.name = "params/bias"}) -> (tensor<16xf32>, tensor<16xf32>) {
  %y = arith.addf %x, %b : tensor<16xf32>
  return %y, %b : tensor<16xf32>, tensor<16xf32>
}
