//! What a value's type costs in memory: the simulator prices buffers with it, `partir args`
//! lists argument sizes with it.

use crate::ffi;
use melior::ir::Type;

/// Bytes of a ranked tensor (dynamic dims count as 0); 0 for anything else.
/// `tensor<8x128xbf16>` → 2048.
pub fn tensor_bytes(ty: Type) -> f64 {
    let Some(dims) = ffi::shaped_dims(ty) else {
        return 0.0;
    };
    if !ty.to_string().starts_with("tensor<") {
        return 0.0;
    }
    let elements: f64 = dims.iter().map(|&dim| dim.max(0) as f64).product();
    elements * element_bytes(ffi::shaped_element(ty))
}

/// Bytes of one element: f32 → 4, bf16 → 2, i1 → 1, index → 8.
pub fn element_bytes(ty: Type) -> f64 {
    let text = ty.to_string();
    match text.as_str() {
        "index" => 8.0,
        "bf16" | "f16" => 2.0,
        "f64" => 8.0,
        "f32" | "tf32" => 4.0,
        _ => text
            .strip_prefix('i')
            .or_else(|| text.strip_prefix("ui"))
            .or_else(|| text.strip_prefix("si"))
            .and_then(|bits| bits.parse::<f64>().ok())
            .map(|bits| (bits / 8.0).ceil())
            .unwrap_or(4.0),
    }
}
