//! Gathers and scatters in the forms JAX emits: embedding lookups (`table[ids]`),
//! `take_along_axis` (operand/start-indices batching dims), `logits[arange(B), labels]`,
//! `.at[idx].add(u)`, `segment_sum` (batched and not) and `.at[arange(K)].set(u)`.
//!
//! Indices are integer arguments (generated in [0, 8) by `partir verify`) into dims of at
//! least 8, so every lookup is in bounds, and overwrites use distinct (iota) indices, so the
//! result does not depend on the order of the writes.

use super::*;

/// Dims indexed by ids: at least 8 (the ids' range).
const INDEXED: &[i64] = &[8, 8, 16];

impl Builder<'_> {
    /// Integer ids of `shape` (rank 1 or 2 when None): an i32 argument (`batch['tokens']`).
    pub(super) fn ids(&mut self, shape: Option<Vec<i64>>) -> Value {
        let shape = match shape {
            Some(shape) => shape,
            None => {
                let existing: Vec<Value> = self
                    .args
                    .iter()
                    .map(|(v, _, _)| v.clone())
                    .filter(|v| v.elem == Elem::I32 && !v.shape.is_empty())
                    .collect();
                if !existing.is_empty() && self.random.chance(0.5) {
                    return self.random.pick(&existing).clone();
                }
                let rank = 1 + self.random.below(2);
                self.shape(rank)
            }
        };
        let existing: Vec<Value> = self
            .args
            .iter()
            .map(|(v, _, _)| v.clone())
            .filter(|v| v.elem == Elem::I32 && v.shape == shape)
            .collect();
        if !existing.is_empty() && self.random.chance(0.6) {
            return self.random.pick(&existing).clone();
        }
        self.argument(shape, Elem::I32)
    }

    /// A visible f32 value of rank 2 whose `dim` is at least 8, else a new argument.
    fn indexed(&mut self, dim: usize) -> Value {
        let candidates: Vec<Value> = self
            .visible()
            .into_iter()
            .filter(|v| v.elem == Elem::F32 && v.shape.len() == 2 && v.shape[dim] >= 8)
            .collect();
        if !candidates.is_empty() && self.random.chance(0.5) {
            return self.random.pick(&candidates).clone();
        }
        let mut shape = self.shape(2);
        shape[dim] = *self.random.pick(INDEXED);
        self.argument(shape, Elem::F32)
    }

    /// JAX's negative-index wrap: `where(ids < 0, ids + size, ids)`.
    fn wrap(&mut self, ids: &Value, size: i64) -> Value {
        let zero = self.splat(&ids.shape, Elem::I32, "0");
        let bound = self.splat(&ids.shape, Elem::I32, &size.to_string());
        let (i, z, b, t) = (
            ids.name.clone(),
            zero.name.clone(),
            bound.name.clone(),
            ids.ty(),
        );
        let pt = ty(&ids.shape, Elem::I1);
        let negative = self.define(ids.shape.clone(), Elem::I1, |_| {
            format!("\"stablehlo.compare\"({i}, {z}) <{{compare_type = #stablehlo<comparison_type SIGNED>, comparison_direction = #stablehlo<comparison_direction LT>}}> : ({t}, {t}) -> {pt}")
        });
        let shifted = self.define(ids.shape.clone(), Elem::I32, |_| {
            format!("\"stablehlo.add\"({i}, {b}) : ({t}, {t}) -> {t}")
        });
        let (n, s) = (negative.name.clone(), shifted.name.clone());
        self.define(ids.shape.clone(), Elem::I32, |_| {
            format!("\"stablehlo.select\"({n}, {s}, {i}) : ({pt}, {t}, {t}) -> {t}")
        })
    }

    /// `ids[..., None]`: a trailing index vector dim of 1.
    fn index_vector(&mut self, ids: &Value) -> Value {
        let mut shape = ids.shape.clone();
        shape.push(1);
        let dims: Vec<usize> = (0..ids.shape.len()).collect();
        if self.random.chance(0.5) {
            self.broadcast_to(ids, &shape, &dims)
        } else {
            let (source, from, to) = (ids.name.clone(), ids.ty(), ty(&shape, Elem::I32));
            self.define(shape, Elem::I32, |_| {
                format!("\"stablehlo.reshape\"({source}) : ({from}) -> {to}")
            })
        }
    }

    pub(super) fn gather(&mut self) {
        match self.random.below(3) {
            0 => self.embedding(),
            1 => self.take_along_axis(),
            _ => self.label_lookup(),
        }
    }

    fn gather_op(
        &mut self,
        operand: &Value,
        indices: &Value,
        numbers: &str,
        slice: &[i64],
        shape: Vec<i64>,
    ) -> Value {
        let slice: Vec<usize> = slice.iter().map(|&s| s as usize).collect();
        let (o, i, ot, it) = (
            operand.name.clone(),
            indices.name.clone(),
            operand.ty(),
            indices.ty(),
        );
        let rt = ty(&shape, Elem::F32);
        let slice = array(&slice);
        self.define(shape, Elem::F32, |_| {
            format!("\"stablehlo.gather\"({o}, {i}) <{{dimension_numbers = #stablehlo.gather<{numbers}>, indices_are_sorted = false, slice_sizes = {slice}}}> : ({ot}, {it}) -> {rt}")
        })
    }

    /// `table[ids]` (`jnp.take`, `nn.Embed`): rows of a [V, D] table.
    fn embedding(&mut self) {
        let table = self.indexed(0);
        let mut ids = self.ids(None);
        if self.random.chance(0.5) {
            ids = self.wrap(&ids, table.shape[0]);
        }
        let indices = self.index_vector(&ids);
        let rank = ids.shape.len();
        let mut shape = ids.shape.clone();
        shape.push(table.shape[1]);
        let numbers = format!(
            "offset_dims = [{rank}], collapsed_slice_dims = [0], start_index_map = [0], index_vector_dim = {rank}"
        );
        self.gather_op(&table, &indices, &numbers, &[1, table.shape[1]], shape);
    }

    /// `jnp.take_along_axis(x, idx[:, :, None]...)`: per-row lookups, the row dim batching.
    fn take_along_axis(&mut self) {
        let x = self.indexed(1);
        let k = *self.random.pick(&[1, 2, 3, 4]);
        let ids = self.ids(Some(vec![x.shape[0], k]));
        let indices = self.index_vector(&ids);
        let numbers = "collapsed_slice_dims = [1], operand_batching_dims = [0], start_indices_batching_dims = [0], start_index_map = [1], index_vector_dim = 2";
        self.gather_op(&x, &indices, numbers, &[1, 1], vec![x.shape[0], k]);
    }

    /// `logits[jnp.arange(B), labels]`: an iota and the labels as one index vector.
    fn label_lookup(&mut self) {
        let logits = self.indexed(1);
        let batch = logits.shape[0];
        let labels = self.ids(Some(vec![batch]));
        let it = ty(&[batch], Elem::I32);
        let rows = self.define(vec![batch], Elem::I32, |_| {
            format!("\"stablehlo.iota\"() <{{iota_dimension = 0 : i64}}> : () -> {it}")
        });
        let rows = self.index_vector(&rows);
        let labels = self.index_vector(&labels);
        let (r, l, t) = (rows.name.clone(), labels.name.clone(), rows.ty());
        let pt = ty(&[batch, 2], Elem::I32);
        let indices = self.define(vec![batch, 2], Elem::I32, |_| {
            format!("\"stablehlo.concatenate\"({r}, {l}) <{{dimension = 1 : i64}}> : ({t}, {t}) -> {pt}")
        });
        let numbers =
            "collapsed_slice_dims = [0, 1], start_index_map = [0, 1], index_vector_dim = 1";
        self.gather_op(&logits, &indices, numbers, &[1, 1], vec![batch]);
    }

    pub(super) fn scatter(&mut self) {
        match self.random.below(4) {
            0 => self.scatter_add(),
            1 => self.segment_sum(false),
            2 => self.segment_sum(true),
            _ => self.scatter_set(),
        }
    }

    /// A scatter whose region adds (`.at[].add`) or overwrites (`.at[].set`).
    fn scatter_op(
        &mut self,
        operand: &Value,
        indices: &Value,
        updates: &Value,
        numbers: &str,
        add: bool,
    ) -> Value {
        let (a, b) = (self.fresh_arg(), self.fresh_arg());
        let r = self.fresh();
        let indent = self.indent();
        let scalar = ty(&[], Elem::F32);
        let body = if add {
            format!("{indent}  {r} = \"stablehlo.add\"({a}, {b}) : ({scalar}, {scalar}) -> {scalar}\n{indent}  \"stablehlo.return\"({r}) : ({scalar}) -> ()")
        } else {
            format!("{indent}  \"stablehlo.return\"({b}) : ({scalar}) -> ()")
        };
        let (o, i, u) = (
            operand.name.clone(),
            indices.name.clone(),
            updates.name.clone(),
        );
        let (ot, it, ut) = (operand.ty(), indices.ty(), updates.ty());
        self.define(operand.shape.clone(), Elem::F32, |_| {
            format!("\"stablehlo.scatter\"({o}, {i}, {u}) <{{indices_are_sorted = false, scatter_dimension_numbers = #stablehlo.scatter<{numbers}>, unique_indices = false}}> ({{\n{indent}^bb0({a}: {scalar}, {b}: {scalar}):\n{body}\n{indent}}}) : ({ot}, {it}, {ut}) -> {ot}")
        })
    }

    /// `x.at[idx].add(u)` on the rows of [V, D], or on the columns of [B, V].
    fn scatter_add(&mut self) {
        let on_rows = self.random.chance(0.5);
        let x = self.indexed(if on_rows { 0 } else { 1 });
        let k = *self.random.pick(&[2, 3, 4, 8]);
        let ids = self.ids(Some(vec![k]));
        let indices = self.index_vector(&ids);
        let (updates, numbers) = if on_rows {
            (
                vec![k, x.shape[1]],
                "update_window_dims = [1], inserted_window_dims = [0], scatter_dims_to_operand_dims = [0], index_vector_dim = 1",
            )
        } else {
            (
                vec![x.shape[0], k],
                "update_window_dims = [0], inserted_window_dims = [1], scatter_dims_to_operand_dims = [1], index_vector_dim = 1",
            )
        };
        let updates = self.value_of(&updates, Elem::F32);
        self.scatter_op(&x, &indices, &updates, numbers, true);
    }

    /// `jax.ops.segment_sum(data, segments, 8)` into zeros; `vmapped`: per example, with
    /// input/scatter-indices batching dims.
    fn segment_sum(&mut self, vmapped: bool) {
        let data = self.value(if vmapped { 3..=3 } else { 2..=2 });
        let segments = data.shape[..data.shape.len() - 1].to_vec();
        let ids = self.ids(Some(segments));
        let indices = self.index_vector(&ids);
        let width = *data.shape.last().expect("rank 2 or 3");
        let (zeros, numbers) = if vmapped {
            (
                vec![data.shape[0], 8, width],
                "update_window_dims = [2], inserted_window_dims = [1], input_batching_dims = [0], scatter_indices_batching_dims = [0], scatter_dims_to_operand_dims = [1], index_vector_dim = 2",
            )
        } else {
            (
                vec![8, width],
                "update_window_dims = [1], inserted_window_dims = [0], scatter_dims_to_operand_dims = [0], index_vector_dim = 1",
            )
        };
        let zeros = self.splat(&zeros, Elem::F32, "0");
        self.scatter_op(&zeros, &indices, &data, numbers, true);
    }

    /// `x.at[jnp.arange(K)].set(u)`: distinct rows overwritten.
    fn scatter_set(&mut self) {
        let x = self.indexed(0);
        let rows = x.shape[0];
        let k = if self.random.chance(0.5) {
            rows
        } else {
            rows / 2
        };
        let it = ty(&[k], Elem::I32);
        let iota = self.define(vec![k], Elem::I32, |_| {
            format!("\"stablehlo.iota\"() <{{iota_dimension = 0 : i64}}> : () -> {it}")
        });
        let indices = self.index_vector(&iota);
        let updates = self.value_of(&[k, x.shape[1]], Elem::F32);
        let numbers = "update_window_dims = [1], inserted_window_dims = [0], scatter_dims_to_operand_dims = [0], index_vector_dim = 1";
        self.scatter_op(&x, &indices, &updates, numbers, false);
    }
}
