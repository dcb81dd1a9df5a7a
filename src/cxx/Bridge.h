//===- Bridge.h - the C ABI between the C++ glue and the Rust crate ------===//
//
// C++ → Rust: `partir_rust_run_pass` runs a pass implemented in Rust (src/passes/).
// Rust → C++: `partir_cxx_*` register dialects and passes, fill plugin info, emit diagnostics,
// and read/build PartIR attributes and types that the MLIR C API cannot see.
// Mirrored on the Rust side in src/ffi.rs; keep both in step.
//
//===----------------------------------------------------------------------===//
#ifndef PARTIR_CXX_BRIDGE_H
#define PARTIR_CXX_BRIDGE_H

#include "mlir-c/IR.h"
#include "mlir-c/Support.h"
#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
namespace mlir {
struct DialectPluginLibraryInfo;
struct PassPluginLibraryInfo;
} // namespace mlir
extern "C" {
#endif

/// Implemented in Rust. Runs pass `name` on `op` with `count` option key/value pairs; returns
/// false after emitting a diagnostic when the pass fails. Never unwinds.
bool partir_rust_run_pass(MlirStringRef name, MlirOperation op, const MlirStringRef *keys,
                          const MlirStringRef *values, size_t count);

void partir_cxx_register_dialects(MlirDialectRegistry registry);
void partir_cxx_register_passes(void);
MlirDialectHandle partir_cxx_core_dialect_handle(void);
MlirDialectHandle partir_cxx_hlo_dialect_handle(void);
#ifdef __cplusplus
void partir_cxx_fill_dialect_plugin_info(mlir::DialectPluginLibraryInfo *info);
void partir_cxx_fill_pass_plugin_info(mlir::PassPluginLibraryInfo *info);
#endif
int partir_cxx_opt_main(int argc, char **argv);

/// severity: 0 error, 1 warning, 2 remark, 3 note.
void partir_cxx_emit_diagnostic(MlirLocation location, int severity, MlirStringRef message);

MlirAttribute partir_cxx_tile_attr_get(MlirContext context, int64_t dim);
bool partir_cxx_attr_is_tile(MlirAttribute attr);
int64_t partir_cxx_tile_attr_dim(MlirAttribute attr);
/// kind: 0 sum, 1 max, 2 min, 3 mul (mlir::partir::ReductionKind).
MlirAttribute partir_cxx_sum_attr_get(MlirContext context, int32_t kind);
bool partir_cxx_attr_is_sum(MlirAttribute attr);
int32_t partir_cxx_sum_attr_kind(MlirAttribute attr);
MlirType partir_cxx_range_type_get(MlirContext context, int64_t size);
bool partir_cxx_type_is_range(MlirType type);
int64_t partir_cxx_range_type_size(MlirType type);

/// For an op implementing linalg's LinalgOp interface: its indexing maps (an ArrayAttr of
/// AffineMapAttr, inputs then inits), and through the out-params the number of inputs, the
/// iterator types ('p' parallel, 'r' reduction, anything else 'o'; NUL-terminated into a
/// buffer of `capacity` bytes) and the combiner of its first result: 0 sum, 1 max, 2 min,
/// 3 mul, -1 unknown (as ReductionKind). Returns a null attribute for any other op.
/// `indexedDims` gets a bit per loop dim the body reads with `linalg.index` (such a dim cannot
/// be split: each device would count from 0).
MlirAttribute partir_cxx_linalg_info(MlirOperation op, int64_t *numInputs, char *iterators,
                                     size_t capacity, int32_t *combiner, uint64_t *indexedDims);

/// `#partir_hlo.sharding` from an ArrayAttr (per dim) of ArrayAttrs of StringAttrs (axes).
MlirAttribute partir_cxx_sharding_attr_get(MlirAttribute dims);

/// Rewrites every f32 type and attribute under `op` to f64; false when the result does not
/// verify.
bool partir_cxx_widen_f32_to_f64(MlirOperation op);

#ifdef __cplusplus
}
#endif
#endif
