//! `gather` and `scatter`: embedding lookups, `take_along_axis`, and their gradients.

use super::{
    lookup::{mask_gather, mask_scatter, Lookup},
    printed_list, reduction_kind,
};
use crate::{
    rules::{operand_shape, set_dense, OpView, Shapes},
    tmr::{FactorKind, ReductionKind, Rule, TensorDims},
};
use melior::ir::{block::BlockLike, operation::OperationLike, OperationRef, RegionLike};

/// The dimension numbers of a gather or scatter, from their printed form.
struct IndexedDims {
    text: String,
}

impl IndexedDims {
    fn of(op: &OpView, attribute: &str) -> Result<Self, String> {
        op.op
            .attribute(attribute)
            .map(|attr| Self {
                text: attr.to_string(),
            })
            .map_err(|_| format!("{} without {attribute}", op.name))
    }

    fn list(&self, key: &str) -> Vec<usize> {
        printed_list(&self.text, key)
            .into_iter()
            .filter_map(|d| usize::try_from(d).ok())
            .collect()
    }

    fn index_vector_dim(&self) -> Option<usize> {
        let at = self.text.find("index_vector_dim = ")? + "index_vector_dim = ".len();
        let digits: String = self.text[at..]
            .chars()
            .take_while(char::is_ascii_digit)
            .collect();
        digits.parse().ok()
    }
}

/// `gather` (an embedding lookup, `take_along_axis`): the indices' batch dims pass through to
/// the result's batch dims (and to the operand's batching dims); operand dims read whole
/// pass through to the result's offset dims; indexed and partly read operand dims are used
/// whole.
pub(super) fn gather(op: &OpView) -> Result<Rule, String> {
    let numbers = IndexedDims::of(op, "dimension_numbers")?;
    let (operand, indices, result) = (op.operand(0)?, op.operand(1)?, op.result(0)?);
    let (offset_dims, collapsed, start_map) = (
        numbers.list("offset_dims"),
        numbers.list("collapsed_slice_dims"),
        numbers.list("start_index_map"),
    );
    let (operand_batching, indices_batching) = (
        numbers.list("operand_batching_dims"),
        numbers.list("start_indices_batching_dims"),
    );
    // The printer leaves out an index_vector_dim of 0 (the field's default).
    let vector_dim = numbers.index_vector_dim().unwrap_or(0);
    let slice_sizes = op.dense("slice_sizes");
    let mut rule = Rule::new();
    let mut operand_dims = TensorDims::unindexed(operand.len());
    let mut indices_dims = TensorDims::unindexed(indices.len());
    let mut result_dims = TensorDims::unindexed(result.len());
    let batch_positions: Vec<usize> = (0..result.len())
        .filter(|d| !offset_dims.contains(d))
        .collect();
    let index_batch: Vec<usize> = (0..indices.len()).filter(|&d| d != vector_dim).collect();
    if batch_positions.len() != index_batch.len() {
        return Err(format!(
            "stablehlo.gather: {} batch dims for {} index dims",
            batch_positions.len(),
            index_batch.len()
        ));
    }
    for (&j, &r) in index_batch.iter().zip(&batch_positions) {
        let factor = rule.add_factor(indices[j], FactorKind::PassThrough);
        (indices_dims.0[j], result_dims.0[r]) = (Some(factor), Some(factor));
        if let Some(i) = indices_batching.iter().position(|&b| b == j) {
            let d = *operand_batching
                .get(i)
                .ok_or("stablehlo.gather: unpaired batching dims")?;
            operand_dims.0[d] = Some(factor);
        }
    }
    let windows: Vec<usize> = (0..operand.len())
        .filter(|d| !collapsed.contains(d) && !operand_batching.contains(d))
        .collect();
    if windows.len() != offset_dims.len() {
        return Err(format!(
            "stablehlo.gather: {} offset dims for {} window dims",
            offset_dims.len(),
            windows.len()
        ));
    }
    for (&d, &r) in windows.iter().zip(&offset_dims) {
        if slice_sizes.get(d) == Some(&operand[d]) && !start_map.contains(&d) {
            let factor = rule.add_factor(operand[d], FactorKind::PassThrough);
            (operand_dims.0[d], result_dims.0[r]) = (Some(factor), Some(factor));
        }
    }
    // A table split along the looked-up dim: each device looks up the ids in its rows and
    // reads zeros for the others ([`mask_gather`]), so the devices' results sum to the lookup.
    if let Some((lookup, _)) = gather_lookup(op) {
        if operand_dims.0[lookup.dim].is_none() {
            let rows = operand[lookup.dim];
            let factor = rule.add_factor(rows, FactorKind::Reduction(ReductionKind::Sum));
            operand_dims.0[lookup.dim] = Some(factor);
        }
    }
    rule.push_operand(operand_dims);
    rule.push_operand(indices_dims);
    rule.push_result(result_dims);
    Ok(rule)
}

/// A gather's one-component lookup of a numeric table (not `i1`, whose sum is not a lookup),
/// and the result dims its ids' batch dims become.
fn gather_lookup(op: &OpView) -> Option<(Lookup, Vec<usize>)> {
    let numbers = IndexedDims::of(op, "dimension_numbers").ok()?;
    let vector_dim = numbers.index_vector_dim().unwrap_or(0);
    let (indices, result) = (op.operand(1).ok()?, op.result(0).ok()?);
    let lookup = Lookup::of(
        &numbers.list("start_index_map"),
        vector_dim,
        indices,
        &op.dense("slice_sizes"),
    )?;
    if numbers.list("operand_batching_dims").contains(&lookup.dim) || is_bits(op) {
        return None;
    }
    let offset_dims = numbers.list("offset_dims");
    let batch = (0..result.len())
        .filter(|d| !offset_dims.contains(d))
        .collect();
    Some((lookup, batch))
}

/// Whether the op's first result holds booleans.
fn is_bits(op: &OpView) -> bool {
    op.op.result(0).is_ok_and(|r| {
        let element = crate::ffi::shaped_element(melior::ir::ValueLike::r#type(&r));
        melior::ir::r#type::IntegerType::try_from(element).is_ok_and(|i| i.width() == 1)
    })
}

/// A gather's sizes after propagation gave it local types: offset dims read whole keep reading
/// the whole (now local) dim, and a table split along its looked-up dim is looked up masked.
pub(super) fn gather_retype<'c>(
    context: &'c melior::Context,
    op: OperationRef<'c, '_>,
    before: &Shapes,
) {
    let view = OpView::new(op);
    let mut sizes = view.dense("slice_sizes");
    // A captured table reads as its local slice (`regions::divide_regions`).
    let now = before
        .local_inputs
        .first()
        .cloned()
        .or_else(|| operand_shape(op, 0));
    let (Some(old), Some(new)) = (before.operands.first(), now) else {
        return;
    };
    let lookup = gather_lookup(&view);
    for (d, size) in sizes.iter_mut().enumerate() {
        let looked_up = lookup.as_ref().is_some_and(|(l, _)| l.dim == d);
        if old.get(d) == Some(size) && new.get(d) != old.get(d) && !looked_up {
            *size = new[d];
        }
    }
    set_dense(context, op, "slice_sizes", &sizes);
    if let Some((lookup, batch)) = lookup {
        mask_gather(context, op, lookup, &batch, old);
    }
}

/// `scatter` with one input (the gradient of a gather: updates added into a table): operand
/// and result dims are one; the updates' scatter dims (the tokens) are reductions of the
/// body's kind, so a tiled batch gives partial tables combined afterwards; window dims written
/// whole pass through to the updates; indexed dims are used whole. The input is the
/// accumulator (init) of those partial results.
pub(super) fn scatter(op: &OpView) -> Result<Rule, String> {
    if op.operands.len() != 3 {
        return Err("stablehlo.scatter of several inputs is not partitioned".into());
    }
    let numbers = IndexedDims::of(op, "scatter_dimension_numbers")?;
    let (operand, indices, updates) = (op.operand(0)?, op.operand(1)?, op.operand(2)?);
    let (window_dims, inserted, to_operand) = (
        numbers.list("update_window_dims"),
        numbers.list("inserted_window_dims"),
        numbers.list("scatter_dims_to_operand_dims"),
    );
    let (input_batching, indices_batching) = (
        numbers.list("input_batching_dims"),
        numbers.list("scatter_indices_batching_dims"),
    );
    // The printer leaves out an index_vector_dim of 0 (the field's default).
    let vector_dim = numbers.index_vector_dim().unwrap_or(0);
    // An overwrite (`.at[].set`, a KV-cache write) has no combiner: its scattered dims are
    // used whole, its batching and window dims still pass through.
    let scattered = if overwrites(op) {
        FactorKind::MustReplicate
    } else {
        FactorKind::Reduction(reduction_kind(op)?)
    };
    let mut rule = Rule::new();
    let mut operand_dims = TensorDims::unindexed(operand.len());
    let mut indices_dims = TensorDims::unindexed(indices.len());
    let mut updates_dims = TensorDims::unindexed(updates.len());
    let scatter_positions: Vec<usize> = (0..updates.len())
        .filter(|d| !window_dims.contains(d))
        .collect();
    let index_batch: Vec<usize> = (0..indices.len()).filter(|&d| d != vector_dim).collect();
    if scatter_positions.len() != index_batch.len() {
        return Err(format!(
            "stablehlo.scatter: {} scatter dims for {} index dims",
            scatter_positions.len(),
            index_batch.len()
        ));
    }
    for (&j, &u) in index_batch.iter().zip(&scatter_positions) {
        let batching = indices_batching.iter().position(|&b| b == j);
        let factor_kind = if batching.is_some() {
            FactorKind::PassThrough
        } else {
            scattered
        };
        let factor = rule.add_factor(indices[j], factor_kind);
        (indices_dims.0[j], updates_dims.0[u]) = (Some(factor), Some(factor));
        if let Some(i) = batching {
            let d = *input_batching
                .get(i)
                .ok_or("stablehlo.scatter: unpaired batching dims")?;
            operand_dims.0[d] = Some(factor);
        }
    }
    let windows: Vec<usize> = (0..operand.len())
        .filter(|d| !inserted.contains(d) && !input_batching.contains(d))
        .collect();
    if windows.len() != window_dims.len() {
        return Err(format!(
            "stablehlo.scatter: {} window dims for {} operand dims",
            window_dims.len(),
            windows.len()
        ));
    }
    for (&d, &u) in windows.iter().zip(&window_dims) {
        if updates.get(u) == Some(&operand[d]) && !to_operand.contains(&d) {
            let factor = rule.add_factor(operand[d], FactorKind::PassThrough);
            (operand_dims.0[d], updates_dims.0[u]) = (Some(factor), Some(factor));
        }
    }
    // A table split along the dim its ids add into: each device adds the updates of its rows
    // ([`mask_scatter`]) and holds those rows of the result.
    if let Some((lookup, _)) = scatter_lookup(op) {
        if operand_dims.0[lookup.dim].is_none() {
            let factor = rule.add_factor(operand[lookup.dim], FactorKind::PassThrough);
            operand_dims.0[lookup.dim] = Some(factor);
        }
    }
    rule.push_operand(operand_dims.clone());
    rule.push_operand(indices_dims);
    rule.push_operand(updates_dims);
    rule.push_result(operand_dims);
    rule.set_init(0, 0);
    Ok(rule)
}

/// A scatter-add's one-component lookup into rows one element wide (an embedding's gradient,
/// `take_along_axis`'s), and the updates' dims its ids' batch dims are. Overwrites have none:
/// a masked update would write zeros.
fn scatter_lookup(op: &OpView) -> Option<(Lookup, Vec<usize>)> {
    if op.operands.len() != 3 || overwrites(op) || is_bits(op) {
        return None;
    }
    let numbers = IndexedDims::of(op, "scatter_dimension_numbers").ok()?;
    let vector_dim = numbers.index_vector_dim().unwrap_or(0);
    let (operand, indices, updates) = (
        op.operand(0).ok()?,
        op.operand(1).ok()?,
        op.operand(2).ok()?,
    );
    let inserted = numbers.list("inserted_window_dims");
    let window: Vec<i64> = (0..operand.len())
        .map(|d| i64::from(inserted.contains(&d)))
        .collect();
    let lookup = Lookup::of(
        &numbers.list("scatter_dims_to_operand_dims"),
        vector_dim,
        indices,
        &window,
    )?;
    if numbers.list("input_batching_dims").contains(&lookup.dim) {
        return None;
    }
    let window_dims = numbers.list("update_window_dims");
    let scatter = (0..updates.len())
        .filter(|d| !window_dims.contains(d))
        .collect();
    Some((lookup, scatter))
}

/// A scatter-add into a table split along its looked-up dim adds masked updates.
pub(super) fn scatter_retype<'c>(
    context: &'c melior::Context,
    op: OperationRef<'c, '_>,
    before: &Shapes,
) {
    let view = OpView::new(op);
    if let (Some((lookup, scatter)), Some(old)) = (scatter_lookup(&view), before.operands.first()) {
        mask_scatter(context, op, lookup, &scatter, old);
    }
}

/// Whether a scatter's body returns the update as it is (`^bb0(%old, %new): return %new`).
fn overwrites(op: &OpView) -> bool {
    let Some(body) = op.op.region(0).ok().and_then(|region| region.first_block()) else {
        return false;
    };
    let Some(first) = body.first_operation() else {
        return false;
    };
    let (Ok(returned), Ok(update)) = (first.operand(0), body.argument(1)) else {
        return false;
    };
    first.next_in_block().is_none() && returned == melior::ir::Value::from(update)
}
