//! Slice, pad, concatenate and reverse on a split dim: each device's result chunk is made of
//! rows other devices hold, fetched with `partir.permute` (one `collective_permute` each)
//! instead of gathering the whole operand.
//!
//! The rows a device needs are static. With the result's dim split `k` ways into chunks of
//! `m` rows and operand `q`'s into chunks of `n_q` rows, where operand row `s` is result row
//! `s + offset_q` ([`Placed`]), device `j`'s result rows `[j·m, (j+1)·m)` come in contiguous
//! *pieces*, one per (operand, source device). Pieces are grouped in *rounds* in which every
//! device receives at most one piece and sends at most one chunk: a round is one permute (or
//! the local chunk). Worked example, `jnp.pad(x, ((4, 4),))` on 8 rows split 8 ways
//! (`n = 1`, result 16 rows, `m = 2`, offset 4):
//!
//! ```text
//! device 2 <- rows 0, 1 (devices 0, 1)   device 3 <- rows 2 (device 2), 3 (its own)
//! device 4 <- rows 4 (own), 5 (device 5) device 5 <- rows 6, 7 (devices 6, 7)
//! round 1: permute from [-1, -1, 0, 2, 5, 6, -1, -1]
//! round 2: permute from [-1, -1, 1, -1, -1, 7, -1, -1]
//! local:   devices 3 and 4 keep their own row
//! ```
//!
//! Each round's chunk is padded by `m` rows on both sides and cut at this device's start
//! (`dynamic_slice`), and its rows are selected where the device's piece lies
//! (`iota`, `compare`, `select`); per-device numbers are `partir.slice`s of constant tables, as
//! in the vocab-parallel lookup (`lookup.rs`). The op then reads that chunk with the dim's
//! slice, padding or concatenation made the identity.

mod plan;

use plan::{pieces, rounds, Placed};

use crate::{
    ffi,
    ir::{attrs::RangeType, builder::Builder, core},
    rules::Shapes,
    tmr::{FactorId, Rule},
};
use melior::{
    ir::{
        attribute::{DenseI64ArrayAttribute, IntegerAttribute},
        operation::OperationLike,
        r#type::{IntegerType, RankedTensorType},
        Attribute, OperationRef, Type, Value, ValueLike,
    },
    Context,
};

/// Makes the factor of `dim` of operand 0 [`crate::tmr::FactorKind::Moved`], its size the
/// gcd of `sizes` (every dim it indexes).
pub(super) fn moved(rule: Rule, dim: usize, sizes: &[i64]) -> Rule {
    let Some(factor) = rule.operands().first().and_then(|dims| dims.get(dim)) else {
        return rule;
    };
    if sizes.iter().any(|&size| size <= 0) {
        return rule;
    }
    let size = sizes.iter().copied().fold(0, gcd);
    with_moved(rule, factor, size)
}

fn with_moved(rule: Rule, factor: FactorId, size: i64) -> Rule {
    rule.moved(factor, size)
}

fn gcd(a: i64, b: i64) -> i64 {
    if b == 0 {
        a
    } else {
        gcd(b, a % b)
    }
}

/// A chunk of a split operand: `partir.slice dim %whole[%range]`, as propagation's wrap
/// made it.
struct Chunk<'c, 'a> {
    value: Value<'c, 'a>,
    whole: Value<'c, 'a>,
    range: Value<'c, 'a>,
    parts: i64,
}

fn chunk<'c: 'a, 'a>(value: Value<'c, 'a>) -> Option<Chunk<'c, 'a>> {
    let slice = ffi::result_owner(value)?;
    if !ffi::op_is(slice, core::SLICE_OP) {
        return None;
    }
    let range = slice.operand(1).ok()?;
    Some(Chunk {
        value,
        whole: slice.operand(0).ok()?,
        range,
        parts: RangeType::try_from(range.r#type()).ok()?.size(),
    })
}

/// Builds the local form in front of the op.
struct Halo<'c, 'a> {
    context: &'c Context,
    at: Builder<'c, 'a>,
    range: Value<'c, 'a>,
    parts: i64,
}

impl<'c, 'a> Halo<'c, 'a> {
    fn tensor(&self, shape: &[i64], element: Type<'c>) -> Type<'c> {
        let dims: Vec<u64> = shape.iter().map(|&d| d as u64).collect();
        RankedTensorType::new(&dims, element, None).into()
    }

    fn i64_type(&self) -> Type<'c> {
        IntegerType::new(self.context, 64).into()
    }

    fn constant(&self, text: String, ty: Type<'c>) -> Option<Value<'c, 'a>> {
        let value = Attribute::parse(self.context, &format!("{text} : {ty}"))?;
        Some(
            self.at
                .value_of("stablehlo.constant", &[], &[("value", value)], ty),
        )
    }

    fn array(&self, values: &[i64]) -> Attribute<'c> {
        DenseI64ArrayAttribute::new(self.context, values).into()
    }

    /// This device's entry of `values` (one per device along the range's axis), a scalar.
    fn mine(&self, values: &[i64]) -> Option<Value<'c, 'a>> {
        let scalar = self.tensor(&[], self.i64_type());
        if values.iter().all(|&value| value == values[0]) {
            return self.constant(format!("dense<{}>", values[0]), scalar);
        }
        let listed: Vec<String> = values.iter().map(i64::to_string).collect();
        let table = self.constant(
            format!("dense<[{}]>", listed.join(", ")),
            self.tensor(&[self.parts], self.i64_type()),
        )?;
        let one = self.tensor(&[1], self.i64_type());
        let location = self.at.location();
        let entry = self.at.value(core::slice(
            self.context,
            table,
            self.range,
            0,
            one,
            location,
        ));
        Some(self.at.value_of("stablehlo.reshape", &[entry], &[], scalar))
    }

    /// A scalar zero of `element`.
    fn zero(&self, element: Type<'c>) -> Option<Value<'c, 'a>> {
        let scalar = self.tensor(&[], element);
        ["dense<0.0>", "dense<0>", "dense<false>"]
            .iter()
            .find_map(|text| self.constant(text.to_string(), scalar))
    }

    /// `value` padded with `rows` zero rows on both sides of `dim`.
    fn padded(&self, value: Value<'c, 'a>, dim: usize, rows: i64) -> Option<Value<'c, 'a>> {
        let mut shape = core::static_shape(value.r#type())?;
        let element = ffi::shaped_element(value.r#type());
        let mut edge = vec![0; shape.len()];
        edge[dim] = rows;
        shape[dim] += 2 * rows;
        let zero = self.zero(element)?;
        Some(self.at.value_of(
            "stablehlo.pad",
            &[value, zero],
            &[
                ("edge_padding_low", self.array(&edge)),
                ("edge_padding_high", self.array(&edge)),
                ("interior_padding", self.array(&vec![0; shape.len()])),
            ],
            self.tensor(&shape, element),
        ))
    }

    /// `value`'s `shape[dim]` rows from this device's `starts` entry on.
    fn cut(
        &self,
        value: Value<'c, 'a>,
        dim: usize,
        starts: &[i64],
        shape: &[i64],
    ) -> Option<Value<'c, 'a>> {
        let start = self.mine(starts)?;
        let zero = self.constant("dense<0>".into(), self.tensor(&[], self.i64_type()))?;
        let mut operands = vec![value];
        operands.extend((0..shape.len()).map(|d| if d == dim { start } else { zero }));
        let element = ffi::shaped_element(value.r#type());
        Some(self.at.value_of(
            "stablehlo.dynamic_slice",
            &operands,
            &[("slice_sizes", self.array(shape))],
            self.tensor(shape, element),
        ))
    }

    /// An `i1` mask of `shape`, true on rows `[lo, hi)` of `dim` (this device's entries).
    fn rows(&self, dim: usize, shape: &[i64], lo: &[i64], hi: &[i64]) -> Option<Value<'c, 'a>> {
        let m = shape[dim];
        let line = self.tensor(&[m], self.i64_type());
        let bit: Type = IntegerType::new(self.context, 1).into();
        let iota = self.at.value_of(
            "stablehlo.iota",
            &[],
            &[(
                "iota_dimension",
                IntegerAttribute::new(self.i64_type(), 0).into(),
            )],
            line,
        );
        let spread = |scalar: Value<'c, 'a>| {
            self.at.value_of(
                "stablehlo.broadcast_in_dim",
                &[scalar],
                &[("broadcast_dimensions", self.array(&[]))],
                line,
            )
        };
        let compare = |lhs: Value<'c, 'a>, direction: &str, rhs: Value<'c, 'a>| {
            let direction = Attribute::parse(
                self.context,
                &format!("#stablehlo<comparison_direction {direction}>"),
            )?;
            Some(self.at.value_of(
                "stablehlo.compare",
                &[lhs, rhs],
                &[("comparison_direction", direction)],
                self.tensor(&[m], bit),
            ))
        };
        let above = compare(iota, "GE", spread(self.mine(lo)?))?;
        let below = compare(iota, "LT", spread(self.mine(hi)?))?;
        let inside = self.at.value_of(
            "stablehlo.and",
            &[above, below],
            &[],
            self.tensor(&[m], bit),
        );
        Some(self.at.value_of(
            "stablehlo.broadcast_in_dim",
            &[inside],
            &[("broadcast_dimensions", self.array(&[dim as i64]))],
            self.tensor(shape, bit),
        ))
    }
}

/// This device's result rows along `dim` (shaped like operand 0's chunk with `m` rows there),
/// made from `chunks` (each operand's chunk) placed as `placed` says; rows no operand covers
/// are `fill` (a scalar), or must not exist when it is None.
fn assemble<'c, 'a>(
    context: &'c Context,
    op: OperationRef<'c, 'a>,
    chunks: &[Value<'c, 'a>],
    dim: usize,
    placed: &[Placed],
    result_rows: i64,
    fill: Option<Value<'c, 'a>>,
) -> Option<Value<'c, 'a>> {
    let chunks: Vec<Chunk> = chunks
        .iter()
        .map(|&value| chunk(value))
        .collect::<Option<_>>()?;
    let first = chunks.first()?;
    let parts = first.parts;
    if result_rows % parts != 0 || placed.iter().any(|place| place.rows % parts != 0) {
        return None;
    }
    let halo = Halo {
        context,
        at: Builder::before(context, op),
        range: first.range,
        parts,
    };
    let m = result_rows / parts;
    let mut shape = core::static_shape(first.value.r#type())?;
    shape[dim] = m;
    let element = ffi::shaped_element(first.value.r#type());
    let mut rows: Option<Value> = fill.map(|scalar| {
        halo.at.value_of(
            "stablehlo.broadcast_in_dim",
            &[scalar],
            &[("broadcast_dimensions", halo.array(&[]))],
            halo.tensor(&shape, element),
        )
    });
    for round in rounds(&pieces(placed, result_rows, parts), parts) {
        let source = &chunks[round.operand];
        let received = if round.local {
            source.value
        } else {
            halo.at.value(core::permute(
                context,
                source.whole,
                source.range,
                dim,
                &round.sources(),
                source.value.r#type(),
                op.location(),
            ))
        };
        let starts: Vec<i64> = round
            .pieces
            .iter()
            .map(|piece| m + piece.map_or(0, |piece| piece.shift))
            .collect();
        let mut piece_shape = core::static_shape(source.value.r#type())?;
        piece_shape[dim] = m;
        let cut = halo.cut(halo.padded(received, dim, m)?, dim, &starts, &piece_shape)?;
        let whole = round
            .pieces
            .iter()
            .all(|piece| piece.is_some_and(|piece| piece.lo == 0 && piece.hi == m));
        rows = Some(match rows {
            Some(rows) if !whole => {
                let lo: Vec<i64> = round.pieces.iter().map(|p| p.map_or(0, |p| p.lo)).collect();
                let hi: Vec<i64> = round.pieces.iter().map(|p| p.map_or(0, |p| p.hi)).collect();
                let mask = halo.rows(dim, &shape, &lo, &hi)?;
                halo.at.value_of(
                    "stablehlo.select",
                    &[mask, cut, rows],
                    &[],
                    halo.tensor(&shape, element),
                )
            }
            // The first round of a slice or concatenation: rows other rounds do not cover
            // are its own.
            _ => cut,
        });
    }
    rows
}

/// The dims a retype moves: split now (`now` differs from `before`) and changed by the op
/// along them (`changes`).
fn moved_dim(before: &[i64], now: &[i64], changes: impl Fn(usize) -> bool) -> Option<usize> {
    (0..before.len().min(now.len())).find(|&d| before[d] != now[d] && changes(d))
}

fn local_shape(op: OperationRef, operand: usize) -> Option<Vec<i64>> {
    core::static_shape(op.operand(operand).ok()?.r#type())
}

fn dense(op: OperationRef, name: &str) -> Vec<i64> {
    crate::rules::OpView::new(op).dense(name)
}

fn set(context: &Context, op: OperationRef, name: &str, values: &[i64]) {
    super::set_dense(context, op, name, values);
}

/// `stablehlo.slice` split on a dim it cuts (stride 1): its operand becomes the result's rows
/// and the dim is taken whole. Returns the dim, so the slice's own retype leaves it.
pub(super) fn slice<'c>(
    context: &'c Context,
    op: OperationRef<'c, '_>,
    before: &Shapes,
) -> Option<usize> {
    let (start, limit) = (dense(op, "start_indices"), dense(op, "limit_indices"));
    let was = before.operands.first()?;
    let dim = moved_dim(was, &local_shape(op, 0)?, |d| {
        start[d] != 0 || limit[d] != was[d]
    })?;
    let result_rows = limit[dim] - start[dim];
    let placed = [Placed {
        offset: -start[dim],
        rows: was[dim],
    }];
    let rows = assemble(
        context,
        op,
        &[op.operand(0).ok()?],
        dim,
        &placed,
        result_rows,
        None,
    )?;
    ffi::set_operand(op, 0, rows);
    let m = core::static_shape(rows.r#type())?[dim];
    let (mut start, mut limit) = (start, limit);
    start[dim] = 0;
    limit[dim] = m;
    set(context, op, "start_indices", &start);
    set(context, op, "limit_indices", &limit);
    Some(dim)
}

/// `stablehlo.pad` split on a padded dim (no interior padding): its operand becomes the
/// result's rows, the padding value where no row is, and the dim is not padded.
pub(super) fn pad<'c>(context: &'c Context, op: OperationRef<'c, '_>, before: &Shapes) {
    let (low, high) = (
        dense(op, "edge_padding_low"),
        dense(op, "edge_padding_high"),
    );
    let Some(was) = before.operands.first() else {
        return;
    };
    let Some(dim) =
        local_shape(op, 0).and_then(|now| moved_dim(was, &now, |d| low[d] != 0 || high[d] != 0))
    else {
        return;
    };
    let placed = [Placed {
        offset: low[dim],
        rows: was[dim],
    }];
    let result_rows = was[dim] + low[dim] + high[dim];
    let (Ok(operand), Ok(value)) = (op.operand(0), op.operand(1)) else {
        return;
    };
    if let Some(rows) = assemble(
        context,
        op,
        &[operand],
        dim,
        &placed,
        result_rows,
        Some(value),
    ) {
        ffi::set_operand(op, 0, rows);
        let (mut low, mut high) = (low, high);
        low[dim] = 0;
        high[dim] = 0;
        set(context, op, "edge_padding_low", &low);
        set(context, op, "edge_padding_high", &high);
    }
}

/// `stablehlo.concatenate` split on its dim: the result's rows, concatenated alone.
pub(super) fn concatenate<'c>(context: &'c Context, op: OperationRef<'c, '_>, before: &Shapes) {
    let view = crate::rules::OpView::new(op);
    let Some(dim) = view.integer("dimension").map(|d| d as usize) else {
        return;
    };
    let Some(now) = local_shape(op, 0) else {
        return;
    };
    if before.operands.first().and_then(|was| was.get(dim)) == now.get(dim) {
        return;
    }
    let mut offset = 0;
    let placed: Vec<Placed> = before
        .operands
        .iter()
        .map(|shape| {
            let place = Placed {
                offset,
                rows: shape[dim],
            };
            offset += shape[dim];
            place
        })
        .collect();
    let chunks: Vec<Value> = (0..op.operand_count())
        .filter_map(|index| op.operand(index).ok())
        .collect();
    if let Some(rows) = assemble(context, op, &chunks, dim, &placed, offset, None) {
        ffi::set_operands(op, &[rows]);
    }
}

/// `stablehlo.reverse` split on a reversed dim: device `j` reverses device `k-1-j`'s chunk.
pub(super) fn reverse<'c>(context: &'c Context, op: OperationRef<'c, '_>, before: &Shapes) {
    let reversed = dense(op, "dimensions");
    let (Some(was), Some(now)) = (before.operands.first(), local_shape(op, 0)) else {
        return;
    };
    let Some(dim) = moved_dim(was, &now, |d| reversed.contains(&(d as i64))) else {
        return;
    };
    let Some(source) = op.operand(0).ok().and_then(chunk) else {
        return;
    };
    let mirror: Vec<i64> = (0..source.parts).rev().collect();
    let at = Builder::before(context, op);
    let mirrored = at.value(core::permute(
        context,
        source.whole,
        source.range,
        dim,
        &mirror,
        source.value.r#type(),
        op.location(),
    ));
    ffi::set_operand(op, 0, mirrored);
}
