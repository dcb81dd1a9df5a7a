//! How many iterations of an op do work: a padded convolution skips the taps on its zero
//! padding (as XLA's cost analysis counts), and a convolution's FLOPs per output feature.

use crate::{
    ffi,
    rules::{zero_padding, Padding},
};
use melior::ir::{operation::OperationLike, OperationRef, Value, ValueLike};

/// The iterations of a linalg op that do useful work: all of them, except that a window over a
/// zero `tensor.pad` (a padded convolution) skips the taps that land on the padding, as XLA's
/// cost analysis and any real convolution kernel do. Per padded input dim read as
/// `s·d_out + t·d_tap` (a strided, dilated window), count the (out, tap) pairs inside the
/// unpadded source:
/// ```text
/// 3x3 conv, 16 outputs, pad 1 each side: of 16·3 = 48 pairs per spatial dim, 46 are inside
/// → 2-D: (46/48)² of the iterations.
/// ```
pub(super) fn useful_iterations(
    op: OperationRef,
    info: &ffi::LinalgInfo,
    loop_sizes: &[i64],
) -> f64 {
    let all: f64 = loop_sizes.iter().map(|&size| size as f64).product();
    let mut windowed = vec![false; loop_sizes.len()];
    let mut factor = 1.0;
    for (index, map) in info.indexing_maps.iter().enumerate().take(info.num_inputs) {
        let Some(pad) = op.operand(index).ok().and_then(zero_pad) else {
            continue;
        };
        for (dim, expr) in map.results.iter().enumerate() {
            let (Some(&low), Some(&source)) = (pad.low.get(dim), pad.source.get(dim)) else {
                continue;
            };
            if low == 0 && pad.high.get(dim) == Some(&0) {
                continue;
            }
            let Some([(out_stride, out), (tap_stride, tap)]) = window(expr) else {
                continue;
            };
            if windowed[out] || windowed[tap] || out == tap {
                continue;
            }
            let (Some(&outs), Some(&taps)) = (loop_sizes.get(out), loop_sizes.get(tap)) else {
                continue;
            };
            let inside = (0..outs)
                .flat_map(|o| (0..taps).map(move |t| out_stride * o + tap_stride * t))
                .filter(|&at| at >= low && at < low + source)
                .count();
            windowed[out] = true;
            windowed[tap] = true;
            factor *= inside as f64 / (outs * taps) as f64;
        }
    }
    all * factor
}

/// `s·d_a + t·d_b` as [(s, a), (t, b)].
fn window(expr: &crate::tmr::AffineExprLite) -> Option<[(i64, usize); 2]> {
    use crate::tmr::AffineExprLite::{Add, Dim, Mul};
    let term = |term: &crate::tmr::AffineExprLite| match term {
        Dim(dim) => Some((1, *dim)),
        Mul(scale, inner) => match inner.as_ref() {
            Dim(dim) => Some((*scale, *dim)),
            _ => None,
        },
        _ => None,
    };
    match expr {
        Add(terms) if terms.len() == 2 => Some([term(&terms[0])?, term(&terms[1])?]),
        _ => None,
    }
}

/// The zero padding of the op that makes `value` (a padded convolution's input).
fn zero_pad(value: Value) -> Option<Padding> {
    ffi::result_owner(value).and_then(zero_padding)
}

/// 2 FLOPs per result element and kernel element of one output feature: the output feature
/// is the factor the kernel (operand 1) and the result share.
pub(super) fn convolution_flops(op: OperationRef, rule: &crate::tmr::Rule) -> f64 {
    let elements = |value: Option<Value>| {
        value
            .and_then(|value| ffi::shaped_dims(value.r#type()))
            .map_or(0.0, |dims| dims.iter().map(|&d| d.max(0) as f64).product())
    };
    let result = elements(op.result(0).ok().map(Value::from));
    let kernel = elements(op.operand(1).ok());
    let shared = rule
        .operands()
        .get(1)
        .zip(rule.results().first())
        .and_then(|(kernel, result)| {
            kernel
                .0
                .iter()
                .flatten()
                .find(|factor| result.0.contains(&Some(**factor)))
                .map(|&factor| rule.factor(factor).size.max(1) as f64)
        });
    2.0 * result * kernel / shared.unwrap_or(1.0)
}
