//! What a value's type costs in memory: the simulator prices buffers with it, `partir args`
//! lists argument sizes with it.

use crate::ffi;
use melior::ir::Type;

/// Bytes of a ranked tensor (dynamic dims count as 0); 0 for anything else.
/// `tensor<8x128xbf16>` → 2048.
pub fn tensor_bytes(ty: Type) -> f64 {
    if !ffi::is_ranked_tensor(ty) {
        return 0.0;
    }
    let Some(dims) = ffi::shaped_dims(ty) else {
        return 0.0;
    };
    let elements: f64 = dims.iter().map(|&dim| dim.max(0) as f64).product();
    elements * element_bytes(ffi::shaped_element(ty))
}

/// Bytes of one element: f32 → 4, bf16 → 2, i1 → 1, index → 8 (4 for other types). Read from
/// the type's width, not its printed form: the simulator asks for every value of a step.
pub fn element_bytes(ty: Type) -> f64 {
    ffi::element_bits(ty).map_or(4.0, |bits| (f64::from(bits) / 8.0).ceil())
}
