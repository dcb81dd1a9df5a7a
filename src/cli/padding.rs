//! The caller's arrays and a padded program's (docs/design.md#uneven-dims): the runtime side of
//! `partir.padding`, for `verify --ranks` (`tools/partir_jax/xla_run.py` is XLA's). Each step
//! `[dim, chunks, from, to]` reads the dim as `chunks` chunks of `from` and grows each to `to`
//! with zeros at its end; results undo the steps, last first.
//!
//! ```text
//! [a b c d e f] (dim 0, 2 chunks of 3 to 4)  ->  [a b c 0 d e f 0]
//! ```

/// The steps `[dim, chunks, from, to]` of a `partir.padding` array.
fn steps(padding: &[i64]) -> impl DoubleEndedIterator<Item = (usize, usize, usize, usize)> + '_ {
    padding.chunks_exact(4).map(|step| {
        let [dim, chunks, from, to] = [step[0], step[1], step[2], step[3]].map(|v| v as usize);
        (dim, chunks, from, to)
    })
}

/// The program's shape of an array of `shape` padded as `padding` says.
pub fn padded_shape(shape: &[usize], padding: &[i64]) -> Vec<usize> {
    let mut shape = shape.to_vec();
    for (dim, chunks, _, to) in steps(padding) {
        if let Some(size) = shape.get_mut(dim) {
            *size = chunks * to;
        }
    }
    shape
}

/// `values` (row-major, `unit` items per element: 4 bytes of an f32, 1 printed value) of an
/// array of `shape`, padded with `zero` as `padding` says.
pub fn pad<T: Copy>(
    values: &[T],
    shape: &[usize],
    unit: usize,
    zero: T,
    padding: &[i64],
) -> Vec<T> {
    let mut shape = shape.to_vec();
    let mut values = values.to_vec();
    for (dim, chunks, from, to) in steps(padding) {
        let inner: usize = shape[dim + 1..].iter().product::<usize>() * unit;
        let mut out = Vec::with_capacity(values.len() / from.max(1) * to);
        for block in values.chunks_exact((from * inner).max(1)) {
            out.extend_from_slice(block);
            out.extend(std::iter::repeat_n(zero, (to - from) * inner));
        }
        shape[dim] = chunks * to;
        values = out;
    }
    values
}

/// `values` of the program's array of `padded` (its padded shape) without the padding: the
/// caller's array.
pub fn unpad<T: Copy>(values: &[T], padded: &[usize], unit: usize, padding: &[i64]) -> Vec<T> {
    let mut shape = padded.to_vec();
    let mut values = values.to_vec();
    for (dim, chunks, from, to) in steps(padding).rev() {
        let inner: usize = shape[dim + 1..].iter().product::<usize>() * unit;
        values = values
            .chunks_exact((to * inner).max(1))
            .flat_map(|block| block[..from * inner].iter().copied())
            .collect();
        shape[dim] = chunks * from;
    }
    values
}

/// `input` (the caller's array) padded as `padding` says, typed with its padded shape.
pub fn pad_input(input: &crate::cli::runner::Input, padding: &[i64]) -> crate::cli::runner::Input {
    let unit = input.bytes.len() / input.ty.len().max(1);
    crate::cli::runner::Input {
        bytes: pad(&input.bytes, &input.ty.shape, unit, 0, padding),
        ty: crate::cli::runner::TensorType {
            shape: padded_shape(&input.ty.shape, padding),
            elem: input.ty.elem,
        },
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn each_chunk_pads_at_its_end_and_unpads_back() {
        // 2 rows of 6, dim 1 as 2 chunks of 3 grown to 4.
        let values: Vec<i64> = (1..=12).collect();
        let padding = [1, 2, 3, 4];
        let padded = pad(&values, &[2, 6], 1, 0, &padding);
        assert_eq!(
            padded,
            vec![1, 2, 3, 0, 4, 5, 6, 0, 7, 8, 9, 0, 10, 11, 12, 0]
        );
        assert_eq!(padded_shape(&[2, 6], &padding), vec![2, 8]);
        assert_eq!(unpad(&padded, &[2, 8], 1, &padding), values);
    }

    #[test]
    fn steps_apply_in_order_and_undo_last_first() {
        // 5 rows padded to 6 (one chunk), then as 2 chunks of 3 grown to 4: 8 rows of 2 bytes.
        let values: Vec<u8> = (1..=10).collect();
        let padding = [0, 1, 5, 6, 0, 2, 3, 4];
        let padded = pad(&values, &[5], 2, 0, &padding);
        assert_eq!(
            padded,
            vec![1, 2, 3, 4, 5, 6, 0, 0, 7, 8, 9, 10, 0, 0, 0, 0]
        );
        assert_eq!(unpad(&padded, &[8], 2, &padding), values);
    }
}
