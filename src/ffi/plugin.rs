//! The plugin entry points `mlir-opt --load-dialect-plugin/--load-pass-plugin` look up.
//!
//! A Rust cdylib exports only Rust `#[no_mangle]` symbols, so these are defined here with
//! `#[repr(C)]` mirrors of MLIR's `DialectPluginLibraryInfo` / `PassPluginLibraryInfo`
//! (mlir/Tools/Plugins/*.h) and filled by the C++ side, which knows the API version.

use std::ffi::{c_char, c_void};

#[repr(C)]
pub struct DialectPluginLibraryInfo {
    api_version: u32,
    plugin_name: *const c_char,
    plugin_version: *const c_char,
    register_dialect_registry_callbacks: Option<unsafe extern "C" fn(*mut c_void)>,
}

#[repr(C)]
pub struct PassPluginLibraryInfo {
    api_version: u32,
    plugin_name: *const c_char,
    plugin_version: *const c_char,
    register_pass_registry_callbacks: Option<unsafe extern "C" fn()>,
}

#[no_mangle]
pub extern "C" fn mlirGetDialectPluginInfo() -> DialectPluginLibraryInfo {
    let mut info = DialectPluginLibraryInfo {
        api_version: 0,
        plugin_name: std::ptr::null(),
        plugin_version: std::ptr::null(),
        register_dialect_registry_callbacks: None,
    };
    // SAFETY: the C++ side writes a complete struct of this layout.
    unsafe { super::partir_cxx_fill_dialect_plugin_info(&mut info) };
    info
}

#[no_mangle]
pub extern "C" fn mlirGetPassPluginInfo() -> PassPluginLibraryInfo {
    let mut info = PassPluginLibraryInfo {
        api_version: 0,
        plugin_name: std::ptr::null(),
        plugin_version: std::ptr::null(),
        register_pass_registry_callbacks: None,
    };
    // SAFETY: the C++ side writes a complete struct of this layout.
    unsafe { super::partir_cxx_fill_pass_plugin_info(&mut info) };
    info
}
