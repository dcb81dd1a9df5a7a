//! The C API of `include/partir-c/Partir.h`, for compilers that embed partir.

use mlir_sys::{MlirDialectHandle, MlirDialectRegistry};

/// Inserts the `partir` and `partir_hlo` dialects into `registry`.
#[no_mangle]
pub extern "C" fn partirRegisterAllDialects(registry: MlirDialectRegistry) {
    super::register_dialects(registry);
}

/// Registers every partir pass (and its pipeline name) with MLIR's global registry.
#[no_mangle]
pub extern "C" fn partirRegisterAllPasses() {
    super::register_passes();
}

/// The dialect handle of PartIR:Core (`partir`).
#[no_mangle]
pub extern "C" fn mlirGetDialectHandle__partir__() -> MlirDialectHandle {
    // SAFETY: returns a pointer to static hooks.
    unsafe { super::partir_cxx_core_dialect_handle() }
}

/// The dialect handle of PartIR:HLO (`partir_hlo`).
#[no_mangle]
pub extern "C" fn mlirGetDialectHandle__partir_hlo__() -> MlirDialectHandle {
    // SAFETY: returns a pointer to static hooks.
    unsafe { super::partir_cxx_hlo_dialect_handle() }
}
