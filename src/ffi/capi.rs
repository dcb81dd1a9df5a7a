//! The C API of `include/partir-c/Partir.h`, for compilers that embed partir.

use mlir_sys::{MlirDialectHandle, MlirDialectRegistry, MlirLogicalResult, MlirStringRef};

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
        let (op_name, einsum) = unsafe { (super::string_ref(op_name), super::string_ref(einsum)) };
        crate::ir::op_info::register_einsum_rule(&op_name, &einsum)
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
