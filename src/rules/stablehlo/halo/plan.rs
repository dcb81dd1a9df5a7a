//! Which rows move where when a slice, pad or concatenate is split on the dim it changes:
//! the pieces of each device's result chunk and the rounds (permutes) that bring them
//! (worked example in `../halo.rs`). Pure arithmetic, tested here.

/// Where an operand's rows sit along the result's dim: operand row `s` is result row
/// `s + offset` (a slice from row 2: -2; a pad of 4 below: 4; the second of two concatenated
/// 8-row operands: 8).
#[derive(Clone, Copy, Debug, PartialEq)]
pub(super) struct Placed {
    pub offset: i64,
    pub rows: i64,
}

/// Device `to` fills its result rows `[lo, hi)` (local) from operand `operand`'s chunk on
/// device `from`, result row `i` being chunk row `i + shift`.
#[derive(Clone, Copy, Debug, PartialEq)]
pub(super) struct Piece {
    pub operand: usize,
    pub from: i64,
    pub to: i64,
    pub lo: i64,
    pub hi: i64,
    pub shift: i64,
}

/// The pieces of every device's result chunk.
pub(super) fn pieces(placed: &[Placed], result_rows: i64, parts: i64) -> Vec<Piece> {
    let m = result_rows / parts;
    let mut found = Vec::new();
    for to in 0..parts {
        for (operand, place) in placed.iter().enumerate() {
            let n = place.rows / parts;
            let first = (to * m).max(place.offset);
            let last = (to * m + m).min(place.offset + place.rows);
            let mut row = first;
            while row < last {
                let source = row - place.offset;
                let from = source / n;
                let end = last.min(place.offset + (from + 1) * n);
                found.push(Piece {
                    operand,
                    from,
                    to,
                    lo: row - to * m,
                    hi: end - to * m,
                    shift: (source - from * n) - (row - to * m),
                });
                row = end;
            }
        }
    }
    found
}

/// Pieces of one operand that move together: every device receives at most one and sends at
/// most one (a permute), or they are the devices' own chunks (`local`).
#[derive(Clone, Debug, PartialEq)]
pub(super) struct Round {
    pub operand: usize,
    pub local: bool,
    /// By receiving device.
    pub pieces: Vec<Option<Piece>>,
}

impl Round {
    /// The permute's `from` list: per device the device it receives from, -1 for none.
    pub fn sources(&self) -> Vec<i64> {
        self.pieces
            .iter()
            .map(|piece| piece.map_or(-1, |piece| piece.from))
            .collect()
    }
}

/// Pieces grouped greedily into rounds (an edge colouring of the transfer graph: at most
/// 2Δ-1 rounds for Δ pieces per device; the examples in the tests need Δ).
pub(super) fn rounds(pieces: &[Piece], parts: i64) -> Vec<Round> {
    let mut rounds: Vec<Round> = Vec::new();
    for piece in pieces {
        let local = piece.from == piece.to;
        let to = piece.to as usize;
        let free = rounds.iter_mut().find(|round| {
            round.operand == piece.operand
                && round.local == local
                && round.pieces[to].is_none()
                && (local || round.pieces.iter().flatten().all(|p| p.from != piece.from))
        });
        match free {
            Some(round) => round.pieces[to] = Some(*piece),
            None => {
                let mut round = Round {
                    operand: piece.operand,
                    local,
                    pieces: vec![None; parts as usize],
                };
                round.pieces[to] = Some(*piece);
                rounds.push(round);
            }
        }
    }
    rounds
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn padding_eight_rows_by_four_on_eight_devices_takes_two_permutes() {
        let placed = [Placed { offset: 4, rows: 8 }];
        let rounds = rounds(&pieces(&placed, 16, 8), 8);
        let permutes: Vec<Vec<i64>> = rounds
            .iter()
            .filter(|round| !round.local)
            .map(Round::sources)
            .collect();
        assert_eq!(
            permutes,
            [
                vec![-1, -1, 0, 2, 5, 6, -1, -1],
                vec![-1, -1, 1, -1, -1, 7, -1, -1]
            ]
        );
        let local: Vec<Vec<i64>> = rounds
            .iter()
            .filter(|round| round.local)
            .map(Round::sources)
            .collect();
        assert_eq!(local, [vec![-1, -1, -1, 3, 4, -1, -1, -1]]);
    }

    #[test]
    fn every_result_row_is_covered_once_with_the_right_source_row() {
        // A concatenation of 8 and 16 rows, a slice and a pad, on 4 and 8 devices.
        let cases: [(&[Placed], i64); 3] = [
            (
                &[
                    Placed { offset: 0, rows: 8 },
                    Placed {
                        offset: 8,
                        rows: 16,
                    },
                ],
                24,
            ),
            (
                &[Placed {
                    offset: -4,
                    rows: 16,
                }],
                8,
            ),
            (&[Placed { offset: 3, rows: 8 }], 16),
        ];
        for (placed, result_rows) in cases {
            for parts in [4, 8] {
                let m = result_rows / parts;
                let mut covered = vec![0; result_rows as usize];
                for piece in pieces(placed, result_rows, parts) {
                    let place = placed[piece.operand];
                    let n = place.rows / parts;
                    for i in piece.lo..piece.hi {
                        let row = piece.to * m + i;
                        covered[row as usize] += 1;
                        // The chunk row read is the operand row this result row holds.
                        let read = piece.from * n + i + piece.shift;
                        assert_eq!(read + place.offset, row, "{placed:?} on {parts}");
                        assert!((0..n).contains(&(i + piece.shift)));
                    }
                }
                for (row, count) in covered.iter().enumerate() {
                    let inside = placed
                        .iter()
                        .any(|p| (p.offset..p.offset + p.rows).contains(&(row as i64)));
                    assert_eq!(*count, usize::from(inside), "row {row} of {placed:?}");
                }
                let rounds = rounds(&pieces(placed, result_rows, parts), parts);
                for round in rounds.iter().filter(|round| !round.local) {
                    let mut senders: Vec<i64> =
                        round.sources().into_iter().filter(|&s| s >= 0).collect();
                    let count = senders.len();
                    senders.sort_unstable();
                    senders.dedup();
                    assert_eq!(senders.len(), count, "a device sends twice in {round:?}");
                }
            }
        }
    }
}
