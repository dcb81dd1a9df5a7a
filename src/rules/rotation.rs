//! A value rotated along a dim, as `jnp.roll` writes it and JAX transposes it: the shift of a
//! pipeline's state buffer by one stage (docs/design.md, "Pipelining: the chosen form").
//!
//! ```text
//! roll(x, 1) of x: [S, ...]      concatenate(slice x [S-1, S), slice x [0, S-1)) along 0
//! its transpose (roll by -1)     add(pad(slice x [1, S), high 1), pad(slice x [0, 1), low 1))
//! ```
//!
//! Split on that dim with chunks the shift is a multiple of, a rotation moves whole chunks:
//! one permute (`partir.permute`, a `collective_permute`), where the pieces one at a time
//! (slices of 1 row of a dim 2 devices split) would stop propagation and gather.

use super::model::registered_rotation;
use melior::ir::{OperationRef, Value};

/// Result row `i` (along `dim`) is `source` row `(i - shift) mod n`, `n` the dim's size. The
/// ops that compute it (`parts`, the op itself first) are dead once its result is replaced.
#[derive(Clone, Debug)]
pub struct Rotated<'c, 'a> {
    pub source: Value<'c, 'a>,
    pub dim: usize,
    pub shift: i64,
    pub parts: Vec<OperationRef<'c, 'a>>,
}

/// Reads an op as a rotation (None: it is none).
pub type RotationOf = for<'c, 'a> fn(OperationRef<'c, 'a>) -> Option<Rotated<'c, 'a>>;

/// `op` read as a rotation by its family (None: it is none, or the family does not say).
pub fn rotation<'c, 'a>(op: OperationRef<'c, 'a>) -> Option<Rotated<'c, 'a>> {
    registered_rotation(op)?(op)
}

/// Rows `[from, from + rows)` of a source placed at rows `[to, to + rows)` of the result.
#[derive(Clone, Copy, Debug, PartialEq)]
pub(super) struct Piece {
    pub from: i64,
    pub to: i64,
    pub rows: i64,
}

/// The shift when `pieces` of an `n`-row source fill an `n`-row result exactly once and all
/// move rows by the same amount modulo `n`: `[1, 2) -> 0` and `[0, 1) -> 1` of 2 rows is a
/// shift of 1. None otherwise (rows missing or repeated, different shifts).
pub(super) fn shift_of(pieces: &[Piece], n: i64) -> Option<i64> {
    if n <= 0 || pieces.is_empty() {
        return None;
    }
    let mut covered = vec![false; n as usize];
    let mut shift = None;
    for piece in pieces {
        if piece.rows <= 0 || piece.from < 0 || piece.from + piece.rows > n {
            return None;
        }
        if piece.to < 0 || piece.to + piece.rows > n {
            return None;
        }
        let here = (piece.to - piece.from).rem_euclid(n);
        if shift.is_some_and(|shift| shift != here) {
            return None;
        }
        shift = Some(here);
        for row in piece.to..piece.to + piece.rows {
            if std::mem::replace(&mut covered[row as usize], true) {
                return None;
            }
        }
    }
    covered.iter().all(|&row| row).then_some(shift?)
}

#[cfg(test)]
mod tests {
    use super::{shift_of, Piece};

    fn piece(from: i64, to: i64, rows: i64) -> Piece {
        Piece { from, to, rows }
    }

    #[test]
    fn roll_by_one_of_two_rows() {
        assert_eq!(shift_of(&[piece(1, 0, 1), piece(0, 1, 1)], 2), Some(1));
    }

    #[test]
    fn roll_back_of_eight_rows() {
        // roll(x, -3): rows 3..8 first, then rows 0..3.
        assert_eq!(shift_of(&[piece(3, 0, 5), piece(0, 5, 3)], 8), Some(5));
    }

    #[test]
    fn a_missing_or_repeated_row_is_no_rotation() {
        assert_eq!(shift_of(&[piece(1, 0, 1)], 2), None);
        assert_eq!(shift_of(&[piece(0, 0, 2), piece(0, 0, 2)], 2), None);
        // Different shifts: rows 0 and 1 swapped in 4 rows is not a rotation.
        assert_eq!(
            shift_of(&[piece(1, 0, 1), piece(0, 1, 1), piece(2, 2, 2)], 4),
            None
        );
    }
}
