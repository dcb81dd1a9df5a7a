//! The ops that carry padding from their operands to their results without running on it as
//! payload: PartIR:Core's slices and loops, loops that carry values (`stablehlo.while`), and
//! row-major reshapes. Each says where the padded dim lands on its other side, or leaves the
//! value to be padded or sliced back where it is read.

use super::{Place, Plan};
use crate::{
    ffi,
    ir::{attrs::Action, core},
    passes::propagate::view::slice_dim,
    rules::{self, expand::Port},
};
use melior::ir::{
    block::BlockLike, operation::OperationLike, OperationRef, RegionLike, Value, ValueLike,
};

impl<'c, 'a> Plan<'c, 'a> {
    /// A loop carries padding through (`stablehlo.while`, `lax.scan`'s loop): carry `i`'s
    /// operand, each region's argument, what the body yields and the result pad together, on
    /// the same dim; the body's ops then run padded, masked or on the value sliced back as any.
    /// True when `op` carries a body (its carry padded, if its values agree).
    pub(super) fn accept_carry(
        &mut self,
        op: OperationRef<'c, 'a>,
        port: Port,
        place: Place,
    ) -> bool {
        let Some(terminator) = carry_yield(op) else {
            return false;
        };
        let (Port::Operand(i) | Port::Result(i)) = port;
        let mut carried: Vec<Value<'c, 'a>> = Vec::new();
        carried.extend(op.operand(i).ok());
        carried.extend(op.result(i).ok().map(Value::from));
        for region in 0..op.region_count() {
            let argument = op
                .region(region)
                .ok()
                .and_then(|region| region.first_block())
                .and_then(|block| block.argument(i).ok());
            carried.extend(argument.map(Value::from));
        }
        carried.extend(terminator.operand(i).ok());
        let size = |value: &Value| {
            core::static_shape(value.r#type()).and_then(|shape| shape.get(place.dim).copied())
        };
        let agree = carried.len() == 3 + op.region_count()
            && carried.iter().all(|value| {
                size(value) == Some(place.chunks * self.from * place.scale)
                    && self.place(*value).is_none_or(|known| known == place)
            });
        if !agree {
            return true;
        }
        self.padded_uses.insert((ffi::operation_id(op), i));
        self.padded_uses.insert((ffi::operation_id(terminator), i));
        // [operand, result, the regions' arguments.., yielded]: the result and the arguments
        // change type in place (a body may yield its argument unchanged: by position, not value).
        let last = carried.len() - 1;
        for (at, value) in carried.into_iter().enumerate() {
            if at != 0 && at != last {
                self.in_place.insert(ffi::value_id(value));
            }
            if self.place(value).is_none() {
                self.add(value, place);
            }
        }
        true
    }

    /// A row-major reshape carries padding through by the shapes alone ([`reshaped`]): a
    /// padded batch merged with the sequence pads the merged dim. True when `op` is such a
    /// reshape (its result or operand padded, if the padded dim lands on one dim).
    pub(super) fn accept_reshape(
        &mut self,
        op: OperationRef<'c, 'a>,
        port: Port,
        place: Place,
    ) -> bool {
        if !rules::is_row_major_reshape(op) {
            return false;
        }
        let (Ok(source), Ok(result)) = (op.operand(0), op.result(0)) else {
            return true;
        };
        let result = Value::from(result);
        let (Some(from_shape), Some(to_shape)) = (
            core::static_shape(source.r#type()),
            core::static_shape(result.r#type()),
        ) else {
            return true;
        };
        let (source_place, result_place) = match port {
            Port::Operand(_) => (
                Some(place),
                reshaped(&from_shape, &to_shape, place, self.from),
            ),
            Port::Result(_) => (
                reshaped(&to_shape, &from_shape, place, self.from),
                Some(place),
            ),
        };
        let (Some(source_place), Some(result_place)) = (source_place, result_place) else {
            return true;
        };
        self.carry_across((op, 0, source, source_place), (result, result_place));
        true
    }

    /// PartIR:Core's ops carry padding through: a slice of a padded value is padded, a
    /// loop's result is padded where its body yields a padded value. On the padded dim a
    /// slice into `p` tiles takes `p` of the value's chunks to one, a tile loop makes one
    /// into `p`. True when `op` is a Core op (its padded values added, if it can carry them).
    pub(super) fn accept_core(
        &mut self,
        op: OperationRef<'c, 'a>,
        port: Port,
        place: Place,
    ) -> bool {
        let size = |value: Value| {
            core::static_shape(value.r#type()).and_then(|shape| shape.get(place.dim).copied())
        };
        // (operand use, result) pairs the padding flows between, with the result's chunks
        // from the operand's: (use's op, operand index, operand, result, parts, on padded dim).
        let carried = if ffi::op_is(op, core::SLICE_OP) {
            let (Ok(source), Ok(result)) = (op.operand(0), op.result(0)) else {
                return true;
            };
            let result = Value::from(result);
            let on_dim = slice_dim(op) == Some(place.dim);
            Some((op, 0, source, result, on_dim))
        } else if ffi::op_is(op, core::YIELD_OP) || ffi::op_is(op, core::LOOP_OP) {
            let (loop_op, yield_op, index) = if ffi::op_is(op, core::LOOP_OP) {
                let Port::Result(i) = port else { return true };
                let terminator = op
                    .region(0)
                    .ok()
                    .and_then(|region| region.first_block())
                    .and_then(|block| block.terminator());
                let Some(terminator) = terminator else {
                    return true;
                };
                (op, terminator, i)
            } else {
                let Port::Operand(i) = port else { return true };
                let Some(loop_op) = op
                    .parent_operation()
                    .filter(|parent| ffi::op_is(*parent, core::LOOP_OP))
                else {
                    return true;
                };
                (loop_op, op, i)
            };
            let (Ok(yielded), Ok(result)) = (yield_op.operand(index), loop_op.result(index)) else {
                return true;
            };
            let on_dim = core::actions(loop_op).get(index) == Some(&Action::Tile(place.dim));
            // A loop concatenates what its body yields: the yield is the "operand".
            Some((yield_op, index, yielded, Value::from(result), on_dim))
        } else {
            None
        };
        let Some((user, operand, source, result, on_dim)) = carried else {
            return false;
        };
        let (Some(source_size), Some(result_size)) = (size(source), size(result)) else {
            return true;
        };
        // A slice's operand and a yield's are the source side; a loop's result is not.
        let is_source = matches!(port, Port::Operand(_));
        // The chunks each side holds, from the side the padding came in by.
        let (source_chunks, result_chunks) = match (on_dim, is_source) {
            (false, _) => (place.chunks, place.chunks),
            // A slice cuts the dim into `parts`; a loop's result is `parts` yields.
            (true, from_source) => {
                let slicing = ffi::op_is(op, core::SLICE_OP);
                let (big, small) = if slicing {
                    (source_size, result_size)
                } else {
                    (result_size, source_size)
                };
                if small == 0 || big % small != 0 {
                    return true;
                }
                let parts = big / small;
                let known = place.chunks;
                match (slicing, from_source) {
                    (true, true) if known % parts == 0 => (known, known / parts),
                    (true, false) => (known * parts, known),
                    (false, true) => (known, known * parts),
                    (false, false) if known % parts == 0 => (known / parts, known),
                    _ => return true,
                }
            }
        };
        let source_place = Place {
            chunks: source_chunks,
            ..place
        };
        let result_place = Place {
            chunks: result_chunks,
            ..place
        };
        let per = self.from * place.scale;
        if source_size != source_chunks * per || result_size != result_chunks * per {
            return true;
        }
        self.carry_across(
            (user, operand, source, source_place),
            (result, result_place),
        );
        true
    }

    /// Pads `source` (read by `user` at `operand`) and `result` (retyped in place) as placed,
    /// unless either is placed otherwise already: then both are left to be padded or sliced
    /// back where they are read.
    fn carry_across(
        &mut self,
        (user, operand, source, source_place): (OperationRef<'c, 'a>, usize, Value<'c, 'a>, Place),
        (result, result_place): (Value<'c, 'a>, Place),
    ) {
        if self
            .place(source)
            .is_some_and(|known| known != source_place)
            || self
                .place(result)
                .is_some_and(|known| known != result_place)
        {
            return;
        }
        self.padded_uses.insert((ffi::operation_id(user), operand));
        self.in_place.insert(ffi::value_id(result));
        for (value, at) in [(source, source_place), (result, result_place)] {
            if self.place(value).is_none() {
                self.add(value, at);
            }
        }
    }
}

/// Where a padded dim of `shape` at `place` lands in `other`, `shape` reshaped row-major (None:
/// nowhere one dim holds it). The dims reshape in groups of equal products; the group holding
/// the padded dim is seen as one dim, its dims before the padded one multiplying its chunks and
/// those after its scale, and split again on the dim of `other` that holds `from` positions
/// between them.
///
/// ```text
/// [8, 16, 64] -> [128, 64], dim 0 (8 padded to 9) -> dim 0, scale 16 (128 grows to 144)
/// [128, 64] -> [8, 16, 64], dim 0, scale 16       -> dim 0, scale 1
/// [16, 8] -> [128], dim 1 (8 to 9)                -> dim 0, 16 chunks of 8 (to 16 of 9)
/// ```
fn reshaped(shape: &[i64], other: &[i64], place: Place, from: i64) -> Option<Place> {
    let prefix = |dims: &[i64]| -> Vec<i64> {
        std::iter::once(1)
            .chain(dims.iter().scan(1i64, |product, &size| {
                *product *= size;
                Some(*product)
            }))
            .collect()
    };
    let (ours, theirs) = (prefix(shape), prefix(other));
    let d = place.dim;
    // The group: the nearest boundaries both shapes share around dim d.
    let start = (0..=d).rev().find(|&a| theirs.contains(&ours[a]))?;
    let end = (d + 1..ours.len()).find(|&b| theirs.contains(&ours[b]))?;
    let first = theirs.iter().rposition(|&p| p == ours[start])?;
    let last = theirs.iter().position(|&p| p == ours[end])?;
    let chunks = place.chunks * ours[d] / ours[start];
    let scale = place.scale * ours[end] / ours[d + 1];
    (first..last).find_map(|r| {
        let (major, minor) = (theirs[r] / theirs[first], theirs[last] / theirs[r + 1]);
        (chunks % major == 0
            && scale % minor == 0
            && other[r] == (chunks / major) * from * (scale / minor))
            .then_some(Place {
                dim: r,
                chunks: chunks / major,
                scale: scale / minor,
            })
    })
}

/// The op ending the body of a loop that carries values (`stablehlo.while`): what it yields
/// is the next iteration's carry. None for other ops.
fn carry_yield<'c, 'a>(op: OperationRef<'c, 'a>) -> Option<OperationRef<'c, 'a>> {
    let body = rules::carried_body(op)?;
    crate::ir::last_op(op.region(body).ok()?.first_block()?)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn place(dim: usize, chunks: i64, scale: i64) -> Place {
        Place { dim, chunks, scale }
    }

    #[test]
    fn a_padded_dim_merged_as_the_major_one_scales() {
        // [8, 16, 64] -> [128, 64]: the batch (8, padded) merged with the sequence.
        let merged = reshaped(&[8, 16, 64], &[128, 64], place(0, 1, 1), 8);
        assert!(merged == Some(place(0, 1, 16)));
        // ... and split back.
        let split = reshaped(&[128, 64], &[8, 16, 64], place(0, 1, 16), 8);
        assert!(split == Some(place(0, 1, 1)));
        // Unit dims around it: [1, 8, 16] -> [8, 16] and back.
        assert!(reshaped(&[1, 8, 16], &[8, 16], place(1, 1, 1), 8) == Some(place(0, 1, 1)));
        assert!(reshaped(&[8, 16], &[1, 8, 16], place(0, 1, 1), 8) == Some(place(1, 1, 1)));
    }

    #[test]
    fn a_padded_dim_merged_as_a_minor_one_makes_chunks() {
        // [16, 8] -> [128]: 16 chunks of 8, each padded at its end.
        let merged = reshaped(&[16, 8], &[128], place(1, 1, 1), 8);
        assert!(merged == Some(place(0, 16, 1)));
        assert!(reshaped(&[128], &[16, 8], place(0, 16, 1), 8) == Some(place(1, 1, 1)));
        // [128] -> [4, 32]: each row of 32 holds 4 of the chunks.
        assert!(reshaped(&[128], &[4, 32], place(0, 16, 1), 8) == Some(place(1, 4, 1)));
        // [6, 4] -> [4, 6], the 6 padded: the padding would land inside rows of the result.
        assert!(reshaped(&[6, 4], &[4, 6], place(0, 1, 1), 6).is_none());
    }
}
