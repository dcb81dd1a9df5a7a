//! The plugin entry points `mlir-opt --load-dialect-plugin/--load-pass-plugin` look up.
//!
//! A Rust cdylib exports only Rust `#[no_mangle]` symbols, so these are defined here; the
//! C++ side (`src/cxx/Registration.cpp`) fills MLIR's structs, which cross the cxx bridge by
//! value (`ffi::glue::DialectPluginInfo` mirrors `mlir::DialectPluginLibraryInfo`).

use crate::ffi::glue::{bridge, DialectPluginInfo, PassPluginInfo};

#[no_mangle]
pub extern "C" fn mlirGetDialectPluginInfo() -> DialectPluginInfo {
    bridge::dialect_plugin_info()
}

#[no_mangle]
pub extern "C" fn mlirGetPassPluginInfo() -> PassPluginInfo {
    bridge::pass_plugin_info()
}
