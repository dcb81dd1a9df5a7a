//! Dense ops: elementwise, `dot_general`, `reduce`, broadcasts, transposes, reshapes,
//! converts, compare/select, and reverse, slice, pad and concatenate along one dim, in the
//! forms JAX emits.

use super::*;

impl Builder<'_> {
    pub(super) fn unary(&mut self) {
        let input = self.value(1..=3);
        self.unary_of(&input);
    }

    pub(super) fn unary_of(&mut self, input: &Value) -> Value {
        // Bounded, smooth functions: chains of them stay finite.
        let op = *self.random.pick(&[
            "tanh", "negate", "sine", "cosine", "logistic", "abs", "tanh",
        ]);
        let (source, t) = (input.name.clone(), input.ty());
        self.define(input.shape.clone(), Elem::F32, |_| {
            format!("\"stablehlo.{op}\"({source}) : ({t}) -> {t}")
        })
    }

    /// `a OP b` on one shape; `b` sometimes a scalar broadcast (`x * 2.0`).
    pub(super) fn binary(&mut self) {
        let left = self.value(1..=3);
        let right = if self.random.chance(0.25) {
            let literal = *self
                .random
                .pick(&["2.000000e+00", "5.000000e-01", "-1.000000e+00"]);
            self.splat(&left.shape, Elem::F32, literal)
        } else {
            self.value_of(&left.shape, Elem::F32)
        };
        self.binary_of(&left, &right);
    }

    pub(super) fn binary_of(&mut self, left: &Value, right: &Value) -> Value {
        let op = *self
            .random
            .pick(&["add", "subtract", "multiply", "maximum", "minimum", "add"]);
        let (l, r, t) = (left.name.clone(), right.name.clone(), left.ty());
        self.define(left.shape.clone(), Elem::F32, |_| {
            format!("\"stablehlo.{op}\"({l}, {r}) : ({t}, {t}) -> {t}")
        })
    }

    /// A contraction with 0 or 1 batching dims, 1 or 2 contracting dims and up to one free
    /// dim per side, each side's dims in a random order.
    pub(super) fn dot_general(&mut self) {
        let batch = usize::from(self.random.chance(0.35));
        let contract = 1 + usize::from(self.random.chance(0.15));
        let lhs_free = usize::from(self.random.chance(0.85));
        let rhs_free = usize::from(self.random.chance(0.75));
        let lhs_rank = batch + contract + lhs_free;
        // The lhs: an existing value of that rank when there is one (its dims then decide).
        let lhs = self.value(lhs_rank..=lhs_rank);
        // Which lhs dim plays which part: a random order of batch, contracting, free.
        let mut roles: Vec<usize> = (0..lhs_rank).collect();
        shuffle(self.random, &mut roles);
        let lhs_batch = &roles[..batch];
        let lhs_contract = &roles[batch..batch + contract];
        let lhs_free_dims = &roles[batch + contract..];
        let rhs_rank = batch + contract + rhs_free;
        let mut rhs_roles: Vec<usize> = (0..rhs_rank).collect();
        shuffle(self.random, &mut rhs_roles);
        let rhs_batch = &rhs_roles[..batch];
        let rhs_contract = &rhs_roles[batch..batch + contract];
        let rhs_free_dims = &rhs_roles[batch + contract..];
        let mut rhs_shape = vec![0; rhs_rank];
        for (l, r) in lhs_batch.iter().zip(rhs_batch) {
            rhs_shape[*r] = lhs.shape[*l];
        }
        for (l, r) in lhs_contract.iter().zip(rhs_contract) {
            rhs_shape[*r] = lhs.shape[*l];
        }
        for &r in rhs_free_dims {
            rhs_shape[r] = self.size();
        }
        let rhs = self.value_of(&rhs_shape, Elem::F32);
        let mut shape: Vec<i64> = lhs_batch.iter().map(|&d| lhs.shape[d]).collect();
        shape.extend(lhs_free_dims.iter().map(|&d| lhs.shape[d]));
        shape.extend(rhs_free_dims.iter().map(|&d| rhs_shape[d]));
        let mut numbers = Vec::new();
        if batch > 0 {
            numbers.push(format!("lhs_batching_dimensions = [{}]", ints(lhs_batch)));
            numbers.push(format!("rhs_batching_dimensions = [{}]", ints(rhs_batch)));
        }
        numbers.push(format!(
            "lhs_contracting_dimensions = [{}]",
            ints(lhs_contract)
        ));
        numbers.push(format!(
            "rhs_contracting_dimensions = [{}]",
            ints(rhs_contract)
        ));
        let numbers = numbers.join(", ");
        let (a, b) = (lhs.name.clone(), rhs.name.clone());
        let (at, bt, rt) = (lhs.ty(), rhs.ty(), ty(&shape, Elem::F32));
        self.define(shape, Elem::F32, |_| {
            format!("\"stablehlo.dot_general\"({a}, {b}) <{{dot_dimension_numbers = #stablehlo.dot<{numbers}>, precision_config = [#stablehlo<precision DEFAULT>, #stablehlo<precision DEFAULT>]}}> : ({at}, {bt}) -> {rt}")
        });
    }

    /// A sum or max over one or two dims (`jnp.sum`, `jnp.max`).
    pub(super) fn reduce(&mut self) {
        let input = self.value(1..=3);
        let rank = input.shape.len();
        let mut dims = vec![self.random.below(rank)];
        if rank >= 2 && self.random.chance(0.25) {
            let other = (dims[0] + 1 + self.random.below(rank - 1)) % rank;
            dims.push(other);
            dims.sort_unstable();
        }
        let max = self.random.chance(0.3);
        self.reduce_dims(&input, &dims, max);
    }

    pub(super) fn reduce_dims(&mut self, input: &Value, dims: &[usize], max: bool) -> Value {
        let init = self.constant(Elem::F32, if max { "0xFF800000" } else { "0.000000e+00" });
        let shape: Vec<i64> = (0..input.shape.len())
            .filter(|d| !dims.contains(d))
            .map(|d| input.shape[d])
            .collect();
        let (a, b) = (self.fresh_arg(), self.fresh_arg());
        let r = self.fresh();
        let combine = if max { "maximum" } else { "add" };
        let indent = self.indent();
        let scalar = ty(&[], Elem::F32);
        let (source, init_name, from, to) = (
            input.name.clone(),
            init.name.clone(),
            input.ty(),
            ty(&shape, Elem::F32),
        );
        let dims = array(dims);
        self.define(shape, Elem::F32, |_| {
            format!(
                "\"stablehlo.reduce\"({source}, {init_name}) <{{dimensions = {dims}}}> ({{\n{indent}^bb0({a}: {scalar}, {b}: {scalar}):\n{indent}  {r} = \"stablehlo.{combine}\"({a}, {b}) : ({scalar}, {scalar}) -> {scalar}\n{indent}  \"stablehlo.return\"({r}) : ({scalar}) -> ()\n{indent}}}) : ({from}, {scalar}) -> {to}"
            )
        })
    }

    /// A new dim inserted somewhere (a bias broadcast onto the batch, an outer product).
    pub(super) fn broadcast(&mut self) {
        let input = self.value(0..=2);
        let rank = input.shape.len();
        let at = self.random.below(rank + 1);
        let size = self.size();
        let mut shape = input.shape.clone();
        shape.insert(at, size);
        let dims: Vec<usize> = (0..=rank).filter(|&d| d != at).collect();
        self.broadcast_to(&input, &shape, &dims);
    }

    pub(super) fn transpose(&mut self) {
        let input = self.value(2..=3);
        let rank = input.shape.len();
        let mut permutation: Vec<usize> = (0..rank).collect();
        while permutation.iter().enumerate().all(|(i, &d)| i == d) {
            shuffle(self.random, &mut permutation);
        }
        let shape: Vec<i64> = permutation.iter().map(|&d| input.shape[d]).collect();
        let (source, from, to) = (input.name.clone(), input.ty(), ty(&shape, Elem::F32));
        let permutation = array(&permutation);
        self.define(shape, Elem::F32, |_| {
            format!("\"stablehlo.transpose\"({source}) <{{permutation = {permutation}}}> : ({from}) -> {to}")
        });
    }

    /// Two adjacent dims merged, or one even dim split in two.
    pub(super) fn reshape(&mut self) {
        let input = self.value(1..=3);
        let rank = input.shape.len();
        let mut shape = input.shape.clone();
        if rank >= 2 && self.random.chance(0.5) {
            let at = self.random.below(rank - 1);
            let merged = shape[at] * shape[at + 1];
            shape.splice(at..at + 2, [merged]);
        } else {
            let at = self.random.below(rank);
            if shape[at] % 2 != 0 {
                return self.unary();
            }
            let half = shape[at] / 2;
            let split = if self.random.chance(0.5) {
                [2, half]
            } else {
                [half, 2]
            };
            shape.splice(at..at + 1, split);
        }
        let (source, from, to) = (input.name.clone(), input.ty(), ty(&shape, Elem::F32));
        self.define(shape, Elem::F32, |_| {
            format!("\"stablehlo.reshape\"({source}) : ({from}) -> {to}")
        });
    }

    /// Along one dim: a reverse, a slice of half the rows, an edge pad or a concatenation
    /// with another value (a halo when a schedule splits that dim: `rules/stablehlo/halo.rs`).
    pub(super) fn along_dim(&mut self) {
        let input = self.value(1..=3);
        let rank = input.shape.len();
        let dim = self.random.below(rank);
        let rows = input.shape[dim];
        let (source, from) = (input.name.clone(), input.ty());
        let mut shape = input.shape.clone();
        let listed = |values: &[i64]| {
            let values: Vec<String> = values.iter().map(i64::to_string).collect();
            format!("array<i64: {}>", values.join(", "))
        };
        match self.random.below(4) {
            0 => {
                let to = ty(&shape, Elem::F32);
                let dims = array(&[dim]);
                self.define(shape, Elem::F32, |_| {
                    format!("\"stablehlo.reverse\"({source}) <{{dimensions = {dims}}}> : ({from}) -> {to}")
                });
            }
            1 if rows >= 4 => {
                let start = self.random.below((rows / 2 + 1) as usize) as i64;
                let mut starts = vec![0; rank];
                let mut limits = input.shape.clone();
                starts[dim] = start;
                limits[dim] = start + rows / 2;
                shape[dim] = rows / 2;
                let to = ty(&shape, Elem::F32);
                let (starts, limits, strides) =
                    (listed(&starts), listed(&limits), listed(&vec![1; rank]));
                self.define(shape, Elem::F32, |_| {
                    format!("\"stablehlo.slice\"({source}) <{{limit_indices = {limits}, start_indices = {starts}, strides = {strides}}}> : ({from}) -> {to}")
                });
            }
            2 => {
                let low = *self.random.pick(&[0, 1, 2, 4]);
                let high = *self.random.pick(&[0, 2, 4, 6]);
                let value = self.constant(Elem::F32, "5.000000e-01");
                let (mut lows, mut highs) = (vec![0; rank], vec![0; rank]);
                lows[dim] = low;
                highs[dim] = high;
                shape[dim] = rows + low + high;
                let to = ty(&shape, Elem::F32);
                let (lows, highs, interior) =
                    (listed(&lows), listed(&highs), listed(&vec![0; rank]));
                let scalar = ty(&[], Elem::F32);
                self.define(shape, Elem::F32, |_| {
                    format!("\"stablehlo.pad\"({source}, {}) <{{edge_padding_high = {highs}, edge_padding_low = {lows}, interior_padding = {interior}}}> : ({from}, {scalar}) -> {to}", value.name)
                });
            }
            _ => {
                let mut other_shape = input.shape.clone();
                other_shape[dim] = self.size();
                let other = self.value_shaped(other_shape.clone());
                shape[dim] = rows + other_shape[dim];
                let (to, second) = (ty(&shape, Elem::F32), other.ty());
                self.define(shape, Elem::F32, |_| {
                    format!("\"stablehlo.concatenate\"({source}, {}) <{{dimension = {dim} : i64}}> : ({from}, {second}) -> {to}", other.name)
                });
            }
        }
    }

    /// Converts of exact values only (an argument times 4 to i32 and back, integer ids to
    /// f32), so rounding in a partitioned program cannot move a value across an integer.
    pub(super) fn convert(&mut self) {
        if self.in_helper() {
            return self.unary();
        }
        if self.random.chance(0.4) {
            let ids = self.ids(None);
            let (source, from, to) = (ids.name.clone(), ids.ty(), ty(&ids.shape, Elem::F32));
            self.define(ids.shape.clone(), Elem::F32, |_| {
                format!("\"stablehlo.convert\"({source}) : ({from}) -> {to}")
            });
            return;
        }
        let args: Vec<Value> = self
            .args
            .iter()
            .map(|(v, _, _)| v.clone())
            .filter(|v| v.elem == Elem::F32 && !v.shape.is_empty())
            .collect();
        let input = self.random.pick(&args).clone();
        let four = self.splat(&input.shape, Elem::F32, "4.000000e+00");
        let (x, f, t) = (input.name.clone(), four.name.clone(), input.ty());
        let scaled = self.define(input.shape.clone(), Elem::F32, |_| {
            format!("\"stablehlo.multiply\"({x}, {f}) : ({t}, {t}) -> {t}")
        });
        let it = ty(&input.shape, Elem::I32);
        let s = scaled.name.clone();
        let integer = self.define(input.shape.clone(), Elem::I32, |_| {
            format!("\"stablehlo.convert\"({s}) : ({t}) -> {it}")
        });
        let i = integer.name.clone();
        self.define(input.shape.clone(), Elem::F32, |_| {
            format!("\"stablehlo.convert\"({i}) : ({it}) -> {t}")
        });
    }

    /// `jnp.where(a > b, a, b)`: compare and select, continuous in the inputs (a max or min).
    pub(super) fn compare_select(&mut self) {
        let left = self.value(1..=3);
        let right = self.value_of(&left.shape, Elem::F32);
        let direction = *self.random.pick(&["GT", "LT", "GE", "LE"]);
        let (l, r, t) = (left.name.clone(), right.name.clone(), left.ty());
        let pt = ty(&left.shape, Elem::I1);
        let predicate = self.define(left.shape.clone(), Elem::I1, |_| {
            format!("\"stablehlo.compare\"({l}, {r}) <{{compare_type = #stablehlo<comparison_type FLOAT>, comparison_direction = #stablehlo<comparison_direction {direction}>}}> : ({t}, {t}) -> {pt}")
        });
        let p = predicate.name.clone();
        let (first, second) = if self.random.chance(0.5) {
            (l, r)
        } else {
            (r, l)
        };
        self.define(left.shape.clone(), Elem::F32, |_| {
            format!("\"stablehlo.select\"({p}, {first}, {second}) : ({pt}, {t}, {t}) -> {t}")
        });
    }
}

/// Fisher-Yates.
pub(super) fn shuffle<T>(random: &mut SplitMix64, items: &mut [T]) {
    for i in (1..items.len()).rev() {
        let j = random.below(i + 1);
        items.swap(i, j);
    }
}
