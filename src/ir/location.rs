//! Locations as people read them.

use melior::ir::Location;

/// `file:line:col` of a location (the first file location inside names, call sites and fused
/// locations); buffer locations (no file name) get `source`.
pub fn describe(location: Location, source: &str) -> String {
    if location.is_file_line_col_range() {
        let name = location.file_line_col_range_filename();
        let file = crate::ffi::string_ref_text(name.as_string_ref());
        let file = if file.is_empty() || file == "-" {
            source.to_string()
        } else {
            file
        };
        format!(
            "{file}:{}:{}",
            location.file_line_col_range_start_line(),
            location.file_line_col_range_start_column()
        )
    } else if location.is_name() {
        describe(location.name_child_location(), source)
    } else if location.is_call_site() {
        describe(location.call_site_callee(), source)
    } else if location.is_fused() && location.fused_num_locations() > 0 {
        describe(location.fused_location(0), source)
    } else {
        source.to_string()
    }
}
