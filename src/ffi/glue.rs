//! The C++ glue (`src/cxx/Glue.cpp`, `Registration.cpp`, `OptMain.cpp`) as one `cxx` bridge:
//! cxx generates the C++ declarations (`partir/src/ffi/glue.rs.h`) from this module and the C++
//! definitions are compiled against them, so a signature that drifts on either side is a
//! compile error rather than a silent ABI mismatch.
//!
//! MLIR's C API handles (`MlirOperation`, ...) cross as themselves: each is a struct of one
//! pointer, declared to cxx as a trivial extern type through a transparent newtype (cxx's
//! traits cannot be implemented on mlir-sys's types directly). The functions that take a
//! handle are `unsafe`: a handle carries no lifetime, so the caller promises it is live; the
//! safe wrappers in [`super`] take melior's typed references instead.

use cxx::{kind::Trivial, type_id, ExternType};
use std::ffi::{c_char, c_void};

macro_rules! mlir_handle {
    ($(#[$doc:meta])* $name:ident, $raw:ident) => {
        $(#[$doc])*
        #[repr(transparent)]
        #[derive(Clone, Copy)]
        pub struct $name(pub mlir_sys::$raw);

        // SAFETY: the C API's handle is a struct holding one pointer, the same layout on both
        // sides, trivially copied and destroyed.
        unsafe impl ExternType for $name {
            type Id = type_id!($raw);
            type Kind = Trivial;
        }
    };
}

mlir_handle!(
    /// `MlirOperation`.
    Operation,
    MlirOperation
);
mlir_handle!(
    /// `MlirAttribute`.
    Attribute,
    MlirAttribute
);
mlir_handle!(
    /// `MlirType`.
    Type,
    MlirType
);
mlir_handle!(
    /// `MlirContext`.
    Context,
    MlirContext
);
mlir_handle!(
    /// `MlirLocation`.
    Location,
    MlirLocation
);
mlir_handle!(
    /// `MlirDialectRegistry`.
    DialectRegistry,
    MlirDialectRegistry
);
mlir_handle!(
    /// `MlirDialectHandle`.
    DialectHandle,
    MlirDialectHandle
);

/// `mlir::DialectPluginLibraryInfo` (mlir/Tools/Plugins/DialectPlugin.h), what
/// `mlir-opt --load-dialect-plugin` reads from `mlirGetDialectPluginInfo`.
#[repr(C)]
pub struct DialectPluginInfo {
    pub api_version: u32,
    pub plugin_name: *const c_char,
    pub plugin_version: *const c_char,
    pub register_dialect_registry_callbacks: Option<unsafe extern "C" fn(*mut c_void)>,
}

// SAFETY: the layout of MLIR's struct (a u32, two C strings, a function pointer), which cxx
// checks to be trivially movable and destructible on the C++ side.
unsafe impl ExternType for DialectPluginInfo {
    type Id = type_id!("mlir::DialectPluginLibraryInfo");
    type Kind = Trivial;
}

/// `mlir::PassPluginLibraryInfo` (mlir/Tools/Plugins/PassPlugin.h), what
/// `mlir-opt --load-pass-plugin` reads from `mlirGetPassPluginInfo`.
#[repr(C)]
pub struct PassPluginInfo {
    pub api_version: u32,
    pub plugin_name: *const c_char,
    pub plugin_version: *const c_char,
    pub register_pass_registry_callbacks: Option<unsafe extern "C" fn()>,
}

// SAFETY: as for DialectPluginInfo.
unsafe impl ExternType for PassPluginInfo {
    type Id = type_id!("mlir::PassPluginLibraryInfo");
    type Kind = Trivial;
}

// One safety contract for every `unsafe fn` below, stated once: each MLIR handle passed is
// live (not destroyed, of a live context) for the duration of the call.
#[allow(clippy::missing_safety_doc)]
#[cxx::bridge(namespace = "partir::glue")]
pub mod bridge {
    /// How loud a diagnostic is; errors fail the pass.
    #[derive(Debug)]
    enum Severity {
        Error,
        Warning,
        Remark,
        Note,
    }

    /// What the TMR needs from an op implementing linalg's `LinalgOp` interface.
    struct LinalgFacts {
        /// False for any other op (then nothing else is set).
        is_linalg: bool,
        /// The indexing maps: an ArrayAttr of AffineMapAttr, inputs then inits.
        indexing_maps: MlirAttribute,
        num_inputs: usize,
        /// Per loop dim: 'p' parallel, 'r' reduction, 'o' anything else.
        iterators: String,
        /// The combiner of every result's reduction as `partir::ReductionKind` (0 sum, 1 max,
        /// 2 min, 3 mul) when recognised and common to all results, else -1.
        combiner: i32,
        /// A bit per loop dim the body reads with `linalg.index` (each device would count
        /// from 0, so such a dim cannot be split).
        indexed_dims: u64,
    }

    #[namespace = ""]
    extern "C++" {
        include!("mlir-c/IR.h");
        type MlirOperation = super::Operation;
        type MlirAttribute = super::Attribute;
        type MlirType = super::Type;
        type MlirContext = super::Context;
        type MlirLocation = super::Location;
        type MlirDialectRegistry = super::DialectRegistry;
        type MlirDialectHandle = super::DialectHandle;
    }

    #[namespace = "mlir"]
    extern "C++" {
        include!("mlir/Tools/Plugins/DialectPlugin.h");
        include!("mlir/Tools/Plugins/PassPlugin.h");
        type DialectPluginLibraryInfo = super::DialectPluginInfo;
        type PassPluginLibraryInfo = super::PassPluginInfo;
    }

    // Calls that take MLIR handles: the caller promises they are live.
    extern "C++" {
        include!("partir/src/cxx/Glue.h");

        /// Reports `message` at `location` through the context's diagnostic engine.
        unsafe fn emit_diagnostic(location: MlirLocation, severity: Severity, message: &str);

        unsafe fn tile_attr_get(context: MlirContext, dim: i64) -> MlirAttribute;
        unsafe fn attr_is_tile(attr: MlirAttribute) -> bool;
        unsafe fn tile_attr_dim(attr: MlirAttribute) -> i64;
        /// `kind` as `partir::ReductionKind`.
        unsafe fn sum_attr_get(context: MlirContext, kind: i32) -> MlirAttribute;
        unsafe fn attr_is_sum(attr: MlirAttribute) -> bool;
        unsafe fn sum_attr_kind(attr: MlirAttribute) -> i32;
        unsafe fn range_type_get(context: MlirContext, size: i64) -> MlirType;
        unsafe fn type_is_range(ty: MlirType) -> bool;
        unsafe fn range_type_size(ty: MlirType) -> i64;
        /// `#partir_hlo.sharding` from an ArrayAttr (per dim) of ArrayAttrs of StringAttrs.
        unsafe fn sharding_attr_get(dims: MlirAttribute) -> MlirAttribute;
        /// The dims of a `#partir_hlo.sharding` as `sharding_attr_get` takes them; a null
        /// attribute for any other attribute.
        unsafe fn sharding_attr_dims(attr: MlirAttribute) -> MlirAttribute;

        unsafe fn linalg_facts(op: MlirOperation) -> LinalgFacts;
        /// Rewrites every f32 type and attribute under `op` to f64; false when the result
        /// does not verify.
        unsafe fn widen_f32_to_f64(op: MlirOperation) -> bool;
        /// Folds collapse_shapes that merge batch dims into the batched linalg ops they feed
        /// (upstream's reshape-by-expansion); how many ops were expanded.
        unsafe fn unmerge_batch_dims(op: MlirOperation) -> i64;
        /// Inlines every `func.call` to a function with a body (any dialect, registered or
        /// not) and erases the private functions left unused; how many calls were inlined.
        unsafe fn inline_calls(op: MlirOperation) -> i64;
        /// Whether the context may be used from several threads at once (its uniquers lock).
        unsafe fn context_is_multithreaded(context: MlirContext) -> bool;
        /// Upstream CSE's hash of an op, locations aside.
        unsafe fn operation_hash(op: MlirOperation) -> u64;
        /// Upstream CSE's equivalence of two ops, locations aside.
        unsafe fn operations_equivalent(a: MlirOperation, b: MlirOperation) -> bool;

        unsafe fn register_dialects(registry: MlirDialectRegistry);
    }

    // Calls that take no handle: safe.
    unsafe extern "C++" {
        include!("partir/src/cxx/Glue.h");

        /// Registers every partir pass with MLIR's global registry (idempotent).
        fn register_passes();
        fn core_dialect_handle() -> MlirDialectHandle;
        fn hlo_dialect_handle() -> MlirDialectHandle;
        fn dialect_plugin_info() -> DialectPluginLibraryInfo;
        fn pass_plugin_info() -> PassPluginLibraryInfo;
        /// The partir-opt driver (`MlirOptMain` with every upstream and partir dialect and
        /// pass) on `args` (the program name first); its exit code.
        fn opt_main(args: &Vec<String>) -> i32;
    }
}
