//! Gathers and scatters whose index vector holds an iota along one of the indices' own dims
//! (`logits[jnp.arange(B), labels]`, `x[arange(B)[:, None], idx]`) index that operand dim by
//! position: element b of the batch reads row b. StableHLO says that with batching dims, which
//! a tiling splits on both sides at once. So such a gather is rewritten, before propagation,
//! into the same gather with that index component as a batching dim (as XLA's partitioner
//! finds "parallel dims" from iotas):
//!
//! ```text
//! %i = concatenate(broadcast(iota dim 0) : 8x1, labels : 8x1) dim 1
//! gather(logits: 8x10, %i) {collapsed_slice_dims = [0, 1], start_index_map = [0, 1], index_vector_dim = 1}
//! becomes
//! gather(logits, labels : 8x1) {collapsed_slice_dims = [1], operand_batching_dims = [0],
//!        start_indices_batching_dims = [0], start_index_map = [1], index_vector_dim = 1}
//! ```
//!
//! The iota may be wrapped as JAX wraps every index: `select(i < 0, i + n, i)` is `i` for an
//! iota. A scatter (the lookup's gradient) is rewritten alike.

use super::printed_list;
use crate::{ffi, ir::builder::Builder};
use melior::{
    ir::{
        attribute::IntegerAttribute, operation::OperationLike, Attribute, OperationRef, Value,
        ValueLike,
    },
    Context,
};

/// The names of a gather's or a scatter's dimension numbers, in printing order.
struct Fields {
    attribute: &'static str,
    name: &'static str,
    offsets: &'static str,
    collapsed: &'static str,
    operand_batching: &'static str,
    indices_batching: &'static str,
    index_map: &'static str,
    /// The operand holding the indices.
    indices: usize,
}

const GATHER: Fields = Fields {
    attribute: "dimension_numbers",
    name: "gather",
    offsets: "offset_dims",
    collapsed: "collapsed_slice_dims",
    operand_batching: "operand_batching_dims",
    indices_batching: "start_indices_batching_dims",
    index_map: "start_index_map",
    indices: 1,
};

const SCATTER: Fields = Fields {
    attribute: "scatter_dimension_numbers",
    name: "scatter",
    offsets: "update_window_dims",
    collapsed: "inserted_window_dims",
    operand_batching: "input_batching_dims",
    indices_batching: "scatter_indices_batching_dims",
    index_map: "scatter_dims_to_operand_dims",
    indices: 1,
};

pub(super) fn gather<'c>(context: &'c Context, op: OperationRef<'c, '_>) -> bool {
    rewrite(context, op, &GATHER)
}

pub(super) fn scatter<'c>(context: &'c Context, op: OperationRef<'c, '_>) -> bool {
    rewrite(context, op, &SCATTER)
}

fn rewrite<'c>(context: &'c Context, op: OperationRef<'c, '_>, fields: &Fields) -> bool {
    let Ok(numbers) = op.attribute(fields.attribute) else {
        return false;
    };
    let text = numbers.to_string();
    let list = |key| -> Vec<i64> { printed_list(&text, key) };
    let vector_dim = text
        .find("index_vector_dim = ")
        .and_then(|at| {
            text[at + "index_vector_dim = ".len()..]
                .chars()
                .take_while(char::is_ascii_digit)
                .collect::<String>()
                .parse::<usize>()
                .ok()
        })
        .unwrap_or(0);
    let (Ok(operand), Ok(indices)) = (op.operand(0), op.operand(fields.indices)) else {
        return false;
    };
    let (Some(operand_shape), Some(index_shape)) = (shape(operand), shape(indices)) else {
        return false;
    };
    if vector_dim >= index_shape.len() {
        return false;
    }
    // The index vector's components: the pieces of a concatenate along it, one each.
    let pieces: Vec<Value> = match ffi::result_owner(indices) {
        Some(concat)
            if ffi::op_is(concat, "stablehlo.concatenate")
                && integer(concat, "dimension") == Some(vector_dim as i64)
                && concat.operands().all(|piece| {
                    shape(piece).and_then(|s| s.get(vector_dim).copied()) == Some(1)
                }) =>
        {
            concat.operands().collect()
        }
        _ => return false,
    };
    let (mut collapsed, mut index_map) = (list(fields.collapsed), list(fields.index_map));
    let (mut operand_batching, mut indices_batching) =
        (list(fields.operand_batching), list(fields.indices_batching));
    let mut kept = Vec::new();
    for (k, piece) in pieces.iter().enumerate() {
        let batched = iota_along(*piece)
            .filter(|&j| j != vector_dim)
            .and_then(|j| {
                let d = usize::try_from(*index_map.get(k)?).ok()?;
                let fits = collapsed.contains(&(d as i64))
                    && operand_shape.get(d) == index_shape.get(j)
                    && !indices_batching.contains(&(j as i64));
                fits.then_some((d, j))
            });
        match batched {
            Some((d, j)) => {
                operand_batching.push(d as i64);
                indices_batching.push(j as i64);
                collapsed.retain(|&c| c != d as i64);
            }
            None => kept.push(k),
        }
    }
    if kept.len() == pieces.len() || kept.is_empty() {
        return false;
    }
    index_map = kept.iter().map(|&k| index_map[k]).collect();
    let builder = Builder::before(context, op);
    let new_indices = if let [k] = kept[..] {
        pieces[k]
    } else {
        let remaining: Vec<Value> = kept.iter().map(|&k| pieces[k]).collect();
        let ty = crate::ir::core::with_dim(indices.r#type(), vector_dim, kept.len() as i64);
        let dimension = IntegerAttribute::new(
            melior::ir::r#type::IntegerType::new(context, 64).into(),
            vector_dim as i64,
        );
        let concat = builder.op(
            "stablehlo.concatenate",
            &remaining,
            &[("dimension", dimension.into())],
            &[ty],
        );
        Value::from(concat.result(0).expect("one result"))
    };
    let field = |key: &str, values: &[i64]| {
        (!values.is_empty()).then(|| {
            let items: Vec<String> = values.iter().map(i64::to_string).collect();
            format!("{key} = [{}]", items.join(", "))
        })
    };
    let parts: Vec<String> = [
        field(fields.offsets, &list(fields.offsets)),
        field(fields.collapsed, &collapsed),
        field(fields.operand_batching, &operand_batching),
        field(fields.indices_batching, &indices_batching),
        field(fields.index_map, &index_map),
        Some(format!("index_vector_dim = {vector_dim}")),
    ]
    .into_iter()
    .flatten()
    .collect();
    let Some(numbers) = Attribute::parse(
        context,
        &format!("#stablehlo.{}<{}>", fields.name, parts.join(", ")),
    ) else {
        return false;
    };
    let new = builder.insert(ffi::clone_operation(op));
    ffi::set_operand(new, fields.indices, new_indices);
    ffi::set_attribute(new, fields.attribute, numbers);
    for index in 0..op.result_count() {
        let (Ok(old), Ok(now)) = (op.result(index), new.result(index)) else {
            continue;
        };
        ffi::replace_all_uses(old.into(), now.into());
    }
    // SAFETY: every use of `op` now reads `new`; no handle to `op` is kept.
    unsafe { ffi::erase(op) };
    if let Some(concat) = ffi::result_owner(indices).filter(|_| ffi::uses(indices).is_empty()) {
        // SAFETY: the old index vector has no use left and no handle to it is kept.
        unsafe { ffi::erase(concat) };
    }
    true
}

fn shape(value: Value) -> Option<Vec<i64>> {
    crate::ir::core::static_shape(value.r#type())
}

fn integer(op: OperationRef, name: &str) -> Option<i64> {
    crate::rules::OpView::new(op).integer(name)
}

/// The dim `value` counts along, when each of its elements is its own position along that dim
/// (an iota, broadcast, or wrapped as JAX wraps indices).
fn iota_along(value: Value) -> Option<usize> {
    let producer = ffi::result_owner(value)?;
    let sizes = shape(value)?;
    let along = if ffi::op_is(producer, "stablehlo.iota") {
        usize::try_from(integer(producer, "iota_dimension")?).ok()?
    } else if ffi::op_is(producer, "stablehlo.broadcast_in_dim") {
        let input = producer.operand(0).ok()?;
        let j = iota_along(input)?;
        let map = crate::rules::OpView::new(producer).dense("broadcast_dimensions");
        let d = usize::try_from(*map.get(j)?).ok()?;
        (shape(input)?.get(j) == sizes.get(d)).then_some(d)?
    } else if ffi::op_is(producer, "stablehlo.convert") {
        iota_along(producer.operand(0).ok()?)?
    } else if ffi::op_is(producer, "stablehlo.select") {
        // `select(i < 0, i + n, i)`: i when i is an iota (never negative).
        let (predicate, otherwise) = (producer.operand(0).ok()?, producer.operand(2).ok()?);
        let compare = ffi::result_owner(predicate)?;
        let negative = ffi::op_is(compare, "stablehlo.compare")
            && compare
                .attribute("comparison_direction")
                .is_ok_and(|attr| attr.to_string().contains("LT"))
            && compare.operand(0).ok()? == otherwise
            && is_zero(compare.operand(1).ok()?);
        if !negative {
            return None;
        }
        iota_along(otherwise)?
    } else {
        return None;
    };
    (sizes.get(along).copied().unwrap_or(0) > 1).then_some(along)
}

/// Whether `value` is all zeros (a zero constant, broadcast).
pub(super) fn is_zero(value: Value) -> bool {
    let Some(producer) = ffi::result_owner(value) else {
        return false;
    };
    if ffi::op_is(producer, "stablehlo.broadcast_in_dim") {
        return producer.operand(0).is_ok_and(is_zero);
    }
    ffi::op_is(producer, "stablehlo.constant")
        && producer.attribute("value").ok().and_then(ffi::scalar_value) == Some(0.0)
}
