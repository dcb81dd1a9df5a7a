//! The C API of `include/partir-c/Partir.h`, for compilers that embed partir.

use crate::ffi::{self, glue};
use mlir_sys::{MlirDialectHandle, MlirDialectRegistry, MlirLogicalResult, MlirStringRef};

/// Inserts the `partir` and `partir_hlo` dialects into `registry`.
#[no_mangle]
pub extern "C" fn partirRegisterAllDialects(registry: MlirDialectRegistry) {
    // SAFETY: the C caller hands a live registry (Partir.h's contract).
    unsafe { glue::bridge::register_dialects(glue::DialectRegistry(registry)) }
}

/// Registers every partir pass (and its pipeline name) with MLIR's global registry.
#[no_mangle]
pub extern "C" fn partirRegisterAllPasses() {
    ffi::register_passes();
}

/// The dialect handle of PartIR:Core (`partir`).
#[no_mangle]
pub extern "C" fn mlirGetDialectHandle__partir__() -> MlirDialectHandle {
    glue::bridge::core_dialect_handle().0
}

/// The dialect handle of PartIR:HLO (`partir_hlo`).
#[no_mangle]
pub extern "C" fn mlirGetDialectHandle__partir_hlo__() -> MlirDialectHandle {
    glue::bridge::hlo_dialect_handle().0
}

/// Registers a Tile Mapping Registry rule for `op_name` in einsum notation
/// (`"ik,kj->ij reduction={k:sum}"`); failure (bad notation) is reported on stderr.
///
/// # Safety
/// Both string refs must point to readable bytes for the duration of the call.
#[no_mangle]
pub unsafe extern "C" fn partirRegisterEinsumRule(
    op_name: MlirStringRef,
    einsum: MlirStringRef,
) -> MlirLogicalResult {
    let outcome = std::panic::catch_unwind(|| {
        // SAFETY: the caller guarantees both refs are readable.
        let (op_name, einsum) = unsafe { (ffi::string_ref(op_name), ffi::string_ref(einsum)) };
        crate::rules::register_einsum_rule(&op_name, &einsum)
    });
    let value = match outcome {
        Ok(Ok(())) => 1,
        Ok(Err(message)) => {
            eprintln!("partir: {message}");
            0
        }
        Err(_) => 0,
    };
    MlirLogicalResult { value }
}
