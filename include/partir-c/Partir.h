/*===- partir-c/Partir.h - C API for embedding partir -------------------===*\
|*                                                                          *|
|* For compilers that embed partir (an XLA-style build with its own MLIR    *|
|* context and pass manager): register the PartIR dialects into a registry, *|
|* register the passes, and get dialect handles. Link libpartir.so, which   *|
|* uses the same shared libMLIR as the host.                                *|
|*                                                                          *|
|*   MlirDialectRegistry registry = mlirDialectRegistryCreate();            *|
|*   partirRegisterAllDialects(registry);                                   *|
|*   mlirContextAppendDialectRegistry(context, registry);                   *|
|*   partirRegisterAllPasses();                                             *|
|*   mlirParsePassPipeline(opm, mlirStringRefCreateFromCString(             *|
|*       "builtin.module(partir-mesh{axes=batch=4},"                       *|
|*       "partir-tile{value=x dim=0 axis=batch})"), onError, NULL);         *|
|*                                                                          *|
\*===----------------------------------------------------------------------===*/

#ifndef PARTIR_C_PARTIR_H
#define PARTIR_C_PARTIR_H

#include "mlir-c/IR.h"

#ifdef __cplusplus
extern "C" {
#endif

/// PartIR:Core (`partir`): loops, slices, the mesh, replicate pins.
MLIR_DECLARE_CAPI_DIALECT_REGISTRATION(Partir, partir);

/// PartIR:HLO (`partir_hlo`): device-local programs with collectives.
MLIR_DECLARE_CAPI_DIALECT_REGISTRATION(PartirHlo, partir_hlo);

/// Inserts both partir dialects into `registry`.
MLIR_CAPI_EXPORTED void partirRegisterAllDialects(MlirDialectRegistry registry);

/// Registers every partir pass (partir-mesh, partir-tile, ...) with MLIR's global pass
/// registry, so textual pipelines can name them. Safe to call more than once.
MLIR_CAPI_EXPORTED void partirRegisterAllPasses(void);

/// Registers the Tile Mapping Registry rule of `opName` in einsum notation, for every later
/// propagation: `partirRegisterEinsumRule(name("my.matmul"), name("ik,kj->ij reduction={k:sum}"))`.
/// Factor sizes come from each op's operand and result shapes; `replicate={x}` marks factors
/// that must never be tiled. Fails (and says why on stderr) on malformed notation.
MLIR_CAPI_EXPORTED MlirLogicalResult partirRegisterEinsumRule(MlirStringRef opName,
                                                             MlirStringRef einsum);

#ifdef __cplusplus
}
#endif

#endif /* PARTIR_C_PARTIR_H */
