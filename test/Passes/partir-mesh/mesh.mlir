// partir-mesh declares the mesh once, at the top of the module; declaring it again is a no-op.
// RUN: mlir-opt %plugin -p 'builtin.module(partir-mesh{axes=batch=4,model=2})' %s | FileCheck %s
// RUN: mlir-opt %plugin -p 'builtin.module(partir-mesh{axes=batch=4,model=2}, partir-mesh{axes=batch=4,model=2})' %s | FileCheck %s
// RUN: mlir-opt %plugin -p 'builtin.module(partir-mesh{axes=x=2,y=2,z=2})' %s | FileCheck %s --check-prefix=THREE

// CHECK: module {
// CHECK-NEXT: partir.mesh @mesh ["batch"=4, "model"=2]
// CHECK-NOT: partir.mesh
// THREE: partir.mesh @mesh ["x"=2, "y"=2, "z"=2]
func.func @main(%x: tensor<8xf32>) -> tensor<8xf32> {
  return %x : tensor<8xf32>
}
