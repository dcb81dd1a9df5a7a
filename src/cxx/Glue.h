//===- Glue.h - the C++ functions Rust calls (src/ffi/glue.rs) -----------===//
//
// cxx generates `partir/src/ffi/glue.rs.h` from the bridge in src/ffi/glue.rs: the shared
// types (Severity, LinalgFacts) and a check, compiled into the bridge, that each function
// declared here has exactly the signature the bridge gives it. A mismatch on either side is a
// compile error. Definitions: Glue.cpp, Registration.cpp, OptMain.cpp, Passes.cpp.
//
//===----------------------------------------------------------------------===//
#ifndef PARTIR_CXX_GLUE_H
#define PARTIR_CXX_GLUE_H

#include "mlir-c/IR.h"
#include "mlir/Tools/Plugins/DialectPlugin.h"
#include "mlir/Tools/Plugins/PassPlugin.h"
#include "rust/cxx.h"

#include <cstdint>

namespace partir::glue {
// Defined by cxx in glue.rs.h, which includes this header first.
enum class Severity : std::uint8_t;
struct LinalgFacts;

void emit_diagnostic(MlirLocation location, Severity severity, rust::Str message);

MlirAttribute tile_attr_get(MlirContext context, std::int64_t dim);
bool attr_is_tile(MlirAttribute attr);
std::int64_t tile_attr_dim(MlirAttribute attr);
MlirAttribute sum_attr_get(MlirContext context, std::int32_t kind);
bool attr_is_sum(MlirAttribute attr);
std::int32_t sum_attr_kind(MlirAttribute attr);
MlirType range_type_get(MlirContext context, std::int64_t size);
bool type_is_range(MlirType type);
std::int64_t range_type_size(MlirType type);
MlirAttribute sharding_attr_get(MlirAttribute dims);
MlirAttribute sharding_attr_dims(MlirAttribute attr);

LinalgFacts linalg_facts(MlirOperation op);
bool widen_f32_to_f64(MlirOperation op);
std::int64_t unmerge_batch_dims(MlirOperation op);
std::int64_t inline_calls(MlirOperation op);
bool context_is_multithreaded(MlirContext context);
std::uint64_t operation_hash(MlirOperation op);
bool operations_equivalent(MlirOperation a, MlirOperation b);

void register_dialects(MlirDialectRegistry registry);
void register_passes();
MlirDialectHandle core_dialect_handle();
MlirDialectHandle hlo_dialect_handle();
mlir::DialectPluginLibraryInfo dialect_plugin_info();
mlir::PassPluginLibraryInfo pass_plugin_info();
std::int32_t opt_main(const rust::Vec<rust::String> &args);
} // namespace partir::glue

#endif
