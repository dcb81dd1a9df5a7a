//! Names read where they live: an op's name and a string attribute's text, as bytes in the
//! context, compared without the checked UTF-8 copy that melior's `as_str` makes (walks that
//! ask every op its name spent a twentieth of a search's time in those checks).

use melior::ir::{Attribute, AttributeLike, OperationRef};

/// True when `op` is named `name`.
pub fn op_is(op: OperationRef, name: &str) -> bool {
    op_name_bytes(op, |text| text == name.as_bytes())
}

/// True when `op`'s name starts with `prefix` (`partir_hlo.`: an op of that dialect).
pub fn op_name_starts_with(op: OperationRef, prefix: &str) -> bool {
    op_name_bytes(op, |text| text.starts_with(prefix.as_bytes()))
}

fn op_name_bytes(op: OperationRef, test: impl FnOnce(&[u8]) -> bool) -> bool {
    // SAFETY: a live operation's name is an identifier whose string lives in the context.
    let text = unsafe {
        let string = mlir_sys::mlirIdentifierStr(mlir_sys::mlirOperationGetName(op.to_raw()));
        if string.data.is_null() {
            &[]
        } else {
            std::slice::from_raw_parts(string.data as *const u8, string.length)
        }
    };
    test(text)
}

/// True when `attr` is a string attribute holding `expected` (no copy).
pub fn string_attribute_is(attr: Attribute, expected: &str) -> bool {
    string_attribute_bytes(attr, |text| text == expected.as_bytes()).unwrap_or(false)
}

/// The text of a string attribute; None for any other attribute. (melior's
/// `StringAttribute::value` builds a slice from MLIR's pointer, which is null for "": undefined
/// behaviour that aborts in debug builds.)
pub fn string_attribute(attr: Attribute) -> Option<String> {
    string_attribute_bytes(attr, |text| String::from_utf8_lossy(text).into_owned())
}

fn string_attribute_bytes<T>(attr: Attribute, read: impl FnOnce(&[u8]) -> T) -> Option<T> {
    // SAFETY: checked cast; the bytes are read only when the pointer is non-null.
    unsafe {
        let raw = attr.to_raw();
        if !mlir_sys::mlirAttributeIsAString(raw) {
            return None;
        }
        let text = mlir_sys::mlirStringAttrGetValue(raw);
        if text.data.is_null() || text.length == 0 {
            return Some(read(&[]));
        }
        Some(read(std::slice::from_raw_parts(
            text.data as *const u8,
            text.length,
        )))
    }
}
