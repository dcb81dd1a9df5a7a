// The C API, as another compiler would use it: register dialects and passes, load a dialect
// by handle, run a partir pipeline, and see that a failing pass leaves the module untouched.
// RUN: %cc %capi_cflags -c %s -o %t.o
// RUN: %cxx %t.o %capi_libs -o %t.exe
// RUN: %t.exe 2>&1 | FileCheck %s

#include "mlir-c/Diagnostics.h"
#include "mlir-c/Dialect/Arith.h"
#include "mlir-c/Dialect/Func.h"
#include "mlir-c/Dialect/Linalg.h"
#include "mlir-c/Dialect/Tensor.h"
#include "mlir-c/IR.h"
#include "mlir-c/Pass.h"
#include "partir-c/Partir.h"

#include <stdio.h>
#include <string.h>

static void printToStdout(MlirStringRef text, void *userData) {
  (void)userData;
  fwrite(text.data, 1, text.length, stdout);
}

static MlirLogicalResult printDiagnostic(MlirDiagnostic diagnostic, void *userData) {
  (void)userData;
  printf("diagnostic: ");
  mlirDiagnosticPrint(diagnostic, printToStdout, NULL);
  printf("\n");
  return mlirLogicalResultSuccess();
}

static const char *kProgram =
    "func.func @main(%x: tensor<32x64xf32> {partir.name = \"x\"},\n"
    "                %w: tensor<64x16xf32> {partir.name = \"w\"}) -> tensor<32x16xf32> {\n"
    "  %zero = arith.constant 0.0 : f32\n"
    "  %e = tensor.empty() : tensor<32x16xf32>\n"
    "  %f = linalg.fill ins(%zero : f32) outs(%e : tensor<32x16xf32>) -> tensor<32x16xf32>\n"
    "  %y = linalg.matmul ins(%x, %w : tensor<32x64xf32>, tensor<64x16xf32>)\n"
    "                     outs(%f : tensor<32x16xf32>) -> tensor<32x16xf32>\n"
    "  return %y : tensor<32x16xf32>\n"
    "}\n";

static MlirLogicalResult runPipeline(MlirContext context, MlirModule module,
                                     const char *pipeline) {
  MlirPassManager pm = mlirPassManagerCreate(context);
  MlirLogicalResult parsed = mlirParsePassPipeline(
      mlirPassManagerGetAsOpPassManager(pm), mlirStringRefCreateFromCString(pipeline),
      printToStdout, NULL);
  MlirLogicalResult result = mlirLogicalResultIsSuccess(parsed)
                                 ? mlirPassManagerRunOnOp(pm, mlirModuleGetOperation(module))
                                 : parsed;
  mlirPassManagerDestroy(pm);
  return result;
}

int main(void) {
  MlirContext context = mlirContextCreate();
  MlirDialectRegistry registry = mlirDialectRegistryCreate();
  partirRegisterAllDialects(registry);
  mlirDialectHandleInsertDialect(mlirGetDialectHandle__func__(), registry);
  mlirDialectHandleInsertDialect(mlirGetDialectHandle__arith__(), registry);
  mlirDialectHandleInsertDialect(mlirGetDialectHandle__tensor__(), registry);
  mlirDialectHandleInsertDialect(mlirGetDialectHandle__linalg__(), registry);
  mlirContextAppendDialectRegistry(context, registry);
  mlirDialectRegistryDestroy(registry);
  mlirContextAttachDiagnosticHandler(context, printDiagnostic, NULL, NULL);

  // CHECK: loaded dialect: partir
  // CHECK: loaded dialect: partir_hlo
  MlirDialect core = mlirDialectHandleLoadDialect(mlirGetDialectHandle__partir__(), context);
  MlirDialect hlo = mlirDialectHandleLoadDialect(mlirGetDialectHandle__partir_hlo__(), context);
  MlirStringRef coreName = mlirDialectGetNamespace(core), hloName = mlirDialectGetNamespace(hlo);
  printf("loaded dialect: %.*s\n", (int)coreName.length, coreName.data);
  printf("loaded dialect: %.*s\n", (int)hloName.length, hloName.data);

  partirRegisterAllPasses();
  partirRegisterAllPasses(); // idempotent

  // CHECK-LABEL: tiled:
  // CHECK: partir.mesh @mesh ["batch"=4, "model"=2]
  // CHECK: partir.loop "batch" [#partir.tile<0>]
  // CHECK: partir.slice 0 %arg0[%{{.*}}] : tensor<32x64xf32> -> tensor<8x64xf32>
  MlirModule module = mlirModuleCreateParse(context, mlirStringRefCreateFromCString(kProgram));
  if (mlirModuleIsNull(module))
    return 1;
  MlirLogicalResult tiled = runPipeline(
      context, module,
      "builtin.module(partir-mesh{axes=batch=4,model=2},partir-tile{value=x dim=0 axis=batch})");
  printf("tiled: %s\n", mlirLogicalResultIsSuccess(tiled) ? "ok" : "failed");
  mlirOperationPrint(mlirModuleGetOperation(module), printToStdout, NULL);
  mlirModuleDestroy(module);

  // A failing action reports a diagnostic, fails, and changes nothing: with `*`, `x` could be
  // tiled 32 ways but `w`, pinned whole on `batch` first, cannot, so neither is tiled.
  // CHECK-LABEL: failing:
  // CHECK: diagnostic: partir-tile: 'w' is pinned to stay whole along axis 'batch'
  // CHECK: failing: failed
  // CHECK-NOT: partir.loop
  // CHECK: linalg.matmul ins(%arg0, %
  module = mlirModuleCreateParse(context, mlirStringRefCreateFromCString(kProgram));
  printf("failing:\n");
  MlirLogicalResult failing = runPipeline(
      context, module, "builtin.module(partir-mesh{axes=batch=32},partir-replicate{value=w axis=batch},"
      "partir-tile{value=* dim=0 axis=batch})");
  printf("failing: %s\n", mlirLogicalResultIsSuccess(failing) ? "ok" : "failed");
  mlirOperationPrint(mlirModuleGetOperation(module), printToStdout, NULL);
  mlirModuleDestroy(module);

  // A rule registered from C for an op partir has never heard of: propagation then partitions
  // through it (and partir-print-rules shows it). Malformed notation is refused.
  // CHECK-LABEL: custom rule:
  // CHECK: register bad: failed
  // CHECK: diagnostic: partir-print-rules: test.mymatmul: ([i,k],[k,j]) -> ([i,j]) reduction={k:sum} sizes={i=32,k=64,j=16}
  // CHECK: partir.loop "batch" [#partir.tile<0>]
  // CHECK-NEXT: partir.slice 0 %arg0
  // CHECK-NEXT: "test.mymatmul"
  printf("custom rule:\n");
  MlirLogicalResult good = partirRegisterEinsumRule(mlirStringRefCreateFromCString("test.mymatmul"),
                                                    mlirStringRefCreateFromCString("ik,kj->ij reduction={k:sum}"));
  MlirLogicalResult bad = partirRegisterEinsumRule(mlirStringRefCreateFromCString("test.bad"),
                                                   mlirStringRefCreateFromCString("ik,kj"));
  printf("register good: %s\n", mlirLogicalResultIsSuccess(good) ? "ok" : "failed");
  printf("register bad: %s\n", mlirLogicalResultIsSuccess(bad) ? "ok" : "failed");
  mlirContextSetAllowUnregisteredDialects(context, true);
  module = mlirModuleCreateParse(
      context, mlirStringRefCreateFromCString(
                   "func.func @main(%x: tensor<32x64xf32> {partir.name = \"x\"}, %w: tensor<64x16xf32>)"
                   " -> tensor<32x16xf32> {\n"
                   "  %y = \"test.mymatmul\"(%x, %w) : (tensor<32x64xf32>, tensor<64x16xf32>) -> tensor<32x16xf32>\n"
                   "  return %y : tensor<32x16xf32>\n}\n"));
  MlirLogicalResult custom = runPipeline(
      context, module,
      "builtin.module(partir-print-rules,partir-mesh{axes=batch=4},partir-tile{value=x dim=0 axis=batch},"
      "partir-propagate)");
  printf("custom: %s\n", mlirLogicalResultIsSuccess(custom) ? "ok" : "failed");
  mlirOperationPrint(mlirModuleGetOperation(module), printToStdout, NULL);
  mlirModuleDestroy(module);

  mlirContextDestroy(context);
  return 0;
}
