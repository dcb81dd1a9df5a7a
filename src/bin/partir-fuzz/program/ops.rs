//! The op generators of [`Builder`]: one method per kind of op a program may contain.

use super::*;

impl Builder<'_> {
    pub(super) fn unary(&mut self) {
        let input = self.value(None);
        let rank = input.shape.len();
        let empty = self.empty(&input.shape);
        let ty = input.ty();
        let body = match self.random.below(4) {
            0 => "%r = math.tanh %in : f32".to_string(),
            1 => "%t = math.tanh %in : f32\n      %r = math.exp %t : f32".to_string(),
            2 => "%r = arith.negf %in : f32".to_string(),
            _ => "%r = arith.mulf %in, %in : f32".to_string(),
        };
        let maps = format!("[{}, {}]", identity(rank), identity(rank));
        let iters = iterators(&vec!["parallel"; rank]);
        let source = input.name.clone();
        self.define(input.shape.clone(), |name| {
            format!(
                "    {name} = linalg.generic {{indexing_maps = {maps}, iterator_types = [{iters}]}} ins({source} : {ty}) outs({empty} : {ty}) {{\n    ^bb0(%in: f32, %out: f32):\n      {body}\n      linalg.yield %r : f32\n    }} -> {ty}"
            )
        });
    }

    pub(super) fn binary(&mut self) {
        let left = self.value(None);
        let rank = left.shape.len();
        // The right operand: the same shape, or broadcast along its leading dims.
        let broadcast = rank >= 2 && self.random.chance(0.3);
        let right_dims: Vec<usize> = if broadcast {
            (1..rank).collect()
        } else {
            (0..rank).collect()
        };
        let right_shape: Vec<i64> = right_dims.iter().map(|&d| left.shape[d]).collect();
        let right = self.value_of(&right_shape);
        let empty = self.empty(&left.shape);
        let combine =
            *self
                .random
                .pick(&["arith.addf", "arith.subf", "arith.mulf", "arith.maximumf"]);
        let maps = format!(
            "[{}, {}, {}]",
            identity(rank),
            map(rank, &right_dims),
            identity(rank)
        );
        let iters = iterators(&vec!["parallel"; rank]);
        let (ty, right_ty) = (left.ty(), right.ty());
        let (l, r) = (left.name.clone(), right.name.clone());
        self.define(left.shape.clone(), |name| {
            format!(
                "    {name} = linalg.generic {{indexing_maps = {maps}, iterator_types = [{iters}]}} ins({l}, {r} : {ty}, {right_ty}) outs({empty} : {ty}) {{\n    ^bb0(%a: f32, %b: f32, %out: f32):\n      %r = {combine} %a, %b : f32\n      linalg.yield %r : f32\n    }} -> {ty}"
            )
        });
    }

    pub(super) fn matmul(&mut self) {
        let lhs = self.value(Some(2));
        let (m, k) = (lhs.shape[0], lhs.shape[1]);
        let n = self.size();
        let rhs = self.value_of(&[k, n]);
        let init = self.sum_init(&[m, n]);
        let (a, b, c) = (lhs.name.clone(), rhs.name.clone(), init.name.clone());
        let (at, bt, ct) = (lhs.ty(), rhs.ty(), init.ty());
        self.define(vec![m, n], |name| {
            format!(
                "    {name} = linalg.matmul ins({a}, {b} : {at}, {bt}) outs({c} : {ct}) -> {ct}"
            )
        });
    }

    pub(super) fn batch_matmul(&mut self) {
        let lhs = self.value(Some(3));
        let (batch, m, k) = (lhs.shape[0], lhs.shape[1], lhs.shape[2]);
        let n = self.size();
        let rhs = self.value_of(&[batch, k, n]);
        let init = self.sum_init(&[batch, m, n]);
        let (a, b, c) = (lhs.name.clone(), rhs.name.clone(), init.name.clone());
        let (at, bt, ct) = (lhs.ty(), rhs.ty(), init.ty());
        self.define(vec![batch, m, n], |name| {
            format!(
                "    {name} = linalg.batch_matmul ins({a}, {b} : {at}, {bt}) outs({c} : {ct}) -> {ct}"
            )
        });
    }

    /// A sum or max over one dim, as a generic (or a linalg.reduce).
    pub(super) fn reduction(&mut self) {
        let input = self.value(None);
        let rank = input.shape.len();
        let dim = self.random.below(rank);
        let kept: Vec<usize> = (0..rank).filter(|&d| d != dim).collect();
        let shape: Vec<i64> = kept.iter().map(|&d| input.shape[d]).collect();
        let max = self.random.chance(0.3);
        let init = if max {
            self.fill(&shape, "0xFF800000")
        } else {
            self.sum_init(&shape)
        };
        let combine = if max { "arith.maximumf" } else { "arith.addf" };
        let (source, ty, out, out_ty) =
            (input.name.clone(), input.ty(), init.name.clone(), init.ty());
        if self.random.chance(0.3) {
            self.define(shape, |name| {
                format!(
                    "    {name} = linalg.reduce ins({source} : {ty}) outs({out} : {out_ty}) dimensions = [{dim}]\n      (%in: f32, %acc: f32) {{\n        %r = {combine} %in, %acc : f32\n        linalg.yield %r : f32\n      }}"
                )
            });
            return;
        }
        let kinds: Vec<&str> = (0..rank)
            .map(|d| if d == dim { "reduction" } else { "parallel" })
            .collect();
        let maps = format!("[{}, {}]", identity(rank), map(rank, &kept));
        let iters = iterators(&kinds);
        self.define(shape, |name| {
            format!(
                "    {name} = linalg.generic {{indexing_maps = {maps}, iterator_types = [{iters}]}} ins({source} : {ty}) outs({out} : {out_ty}) {{\n    ^bb0(%in: f32, %acc: f32):\n      %r = {combine} %acc, %in : f32\n      linalg.yield %r : f32\n    }} -> {out_ty}"
            )
        });
    }

    pub(super) fn transpose(&mut self) {
        let input = self.value(None);
        let rank = input.shape.len();
        if rank < 2 {
            return;
        }
        let mut permutation: Vec<usize> = (0..rank).collect();
        permutation.swap(0, rank - 1);
        let shape: Vec<i64> = permutation.iter().map(|&d| input.shape[d]).collect();
        let empty = self.empty(&shape);
        let (source, ty, out_ty) = (input.name.clone(), input.ty(), tensor_type(&shape));
        let perm = permutation
            .iter()
            .map(ToString::to_string)
            .collect::<Vec<_>>()
            .join(", ");
        self.define(shape, |name| {
            format!(
                "    {name} = linalg.transpose ins({source} : {ty}) outs({empty} : {out_ty}) permutation = [{perm}]"
            )
        });
    }

    pub(super) fn broadcast(&mut self) {
        let input = self.value(None);
        if input.shape.len() >= 3 {
            return;
        }
        let size = self.size();
        let mut shape = input.shape.clone();
        shape.push(size);
        let empty = self.empty(&shape);
        let added = shape.len() - 1;
        let (source, ty, out_ty) = (input.name.clone(), input.ty(), tensor_type(&shape));
        self.define(shape, |name| {
            format!(
                "    {name} = linalg.broadcast ins({source} : {ty}) outs({empty} : {out_ty}) dimensions = [{added}]"
            )
        });
    }

    /// Splits a dim in two, or merges two adjacent dims.
    pub(super) fn reshape(&mut self) {
        let input = self.value(None);
        let rank = input.shape.len();
        let (source, ty) = (input.name.clone(), input.ty());
        if rank >= 2 && self.random.chance(0.5) {
            let at = self.random.below(rank - 1);
            let mut shape = input.shape.clone();
            let merged = shape[at] * shape[at + 1];
            shape.splice(at..at + 2, [merged]);
            let groups = reassociation(rank, at);
            let out_ty = tensor_type(&shape);
            self.define(shape, |name| {
                format!("    {name} = tensor.collapse_shape {source} {groups} : {ty} into {out_ty}")
            });
        } else if rank <= 2 {
            let at = self.random.below(rank);
            let size = input.shape[at];
            let factor = if size % 2 == 0 { 2 } else { size };
            let mut shape = input.shape.clone();
            shape.splice(at..=at, [factor, size / factor]);
            let groups = reassociation(rank + 1, at);
            let out_ty = tensor_type(&shape);
            let sizes = shape
                .iter()
                .map(ToString::to_string)
                .collect::<Vec<_>>()
                .join(", ");
            self.define(shape, |name| {
                format!(
                    "    {name} = tensor.expand_shape {source} {groups} output_shape [{sizes}] : {ty} into {out_ty}"
                )
            });
        }
    }

    /// A static slice: the first half of one dim, sometimes rank-reducing (a size-1 dim
    /// dropped).
    pub(super) fn extract_slice(&mut self) {
        let input = self.value(None);
        let rank = input.shape.len();
        let dim = self.random.below(rank);
        let reduce = rank >= 2 && self.random.chance(0.3);
        let mut sizes = input.shape.clone();
        sizes[dim] = if reduce { 1 } else { (sizes[dim] / 2).max(1) };
        let offset = if self.random.chance(0.5) {
            0
        } else {
            input.shape[dim] - sizes[dim]
        };
        let offsets: Vec<String> = (0..rank)
            .map(|d| {
                if d == dim {
                    offset.to_string()
                } else {
                    "0".into()
                }
            })
            .collect();
        let result: Vec<i64> = if reduce {
            sizes
                .iter()
                .enumerate()
                .filter(|(d, _)| *d != dim)
                .map(|(_, &s)| s)
                .collect()
        } else {
            sizes.clone()
        };
        let (source, ty, out_ty) = (input.name.clone(), input.ty(), tensor_type(&result));
        let sizes_text = sizes
            .iter()
            .map(ToString::to_string)
            .collect::<Vec<_>>()
            .join(", ");
        let strides = vec!["1"; rank].join(", ");
        let offsets = offsets.join(", ");
        self.define(result, |name| {
            format!(
                "    {name} = tensor.extract_slice {source}[{offsets}] [{sizes_text}] [{strides}] : {ty} to {out_ty}"
            )
        });
    }

    /// A value inserted into the first half of a larger one along a dim.
    pub(super) fn insert_slice(&mut self) {
        let dest = self.value(None);
        let rank = dest.shape.len();
        let dim = self.random.below(rank);
        if dest.shape[dim] < 2 {
            return;
        }
        let mut shape = dest.shape.clone();
        shape[dim] /= 2;
        let source = self.value_of(&shape);
        let offsets = vec!["0"; rank].join(", ");
        let sizes = shape
            .iter()
            .map(ToString::to_string)
            .collect::<Vec<_>>()
            .join(", ");
        let strides = vec!["1"; rank].join(", ");
        let (s, d, st, dt) = (
            source.name.clone(),
            dest.name.clone(),
            source.ty(),
            dest.ty(),
        );
        self.define(dest.shape.clone(), |name| {
            format!(
                "    {name} = tensor.insert_slice {s} into {d}[{offsets}] [{sizes}] [{strides}] : {st} into {dt}"
            )
        });
    }

    pub(super) fn concat(&mut self) {
        let first = self.value(None);
        let rank = first.shape.len();
        let dim = self.random.below(rank);
        let second = self.value_of(&first.shape);
        let mut shape = first.shape.clone();
        shape[dim] *= 2;
        let (a, b, ty, out_ty) = (
            first.name.clone(),
            second.name.clone(),
            first.ty(),
            tensor_type(&shape),
        );
        self.define(shape, |name| {
            format!("    {name} = tensor.concat dim({dim}) {a}, {b} : ({ty}, {ty}) -> {out_ty}")
        });
    }

    pub(super) fn pad(&mut self) {
        let input = self.value(None);
        let rank = input.shape.len();
        let dim = self.random.below(rank);
        let mut shape = input.shape.clone();
        shape[dim] += 2;
        let zero = self.fresh();
        self.body
            .push(format!("    {zero} = arith.constant 0.000000e+00 : f32"));
        let low: Vec<&str> = (0..rank)
            .map(|d| if d == dim { "1" } else { "0" })
            .collect();
        let indices: Vec<String> = (0..rank).map(|d| format!("%i{d}: index")).collect();
        let (source, ty, out_ty) = (input.name.clone(), input.ty(), tensor_type(&shape));
        let low = low.join(", ");
        let indices = indices.join(", ");
        self.define(shape, |name| {
            format!(
                "    {name} = tensor.pad {source} low[{low}] high[{low}] {{\n    ^bb0({indices}):\n      tensor.yield {zero} : f32\n    }} : {ty} to {out_ty}"
            )
        });
    }

    /// An `scf.for` whose body adds a value captured from above to its iteration argument.
    pub(super) fn scf_for(&mut self) {
        let carried = self.value(None);
        let captured = self.value_of(&carried.shape);
        let rank = carried.shape.len();
        let (c0, c2, c1) = (self.fresh(), self.fresh(), self.fresh());
        self.body
            .push(format!("    {c0} = arith.constant 0 : index"));
        self.body
            .push(format!("    {c2} = arith.constant 2 : index"));
        self.body
            .push(format!("    {c1} = arith.constant 1 : index"));
        let ty = carried.ty();
        let maps = format!(
            "[{}, {}, {}]",
            identity(rank),
            identity(rank),
            identity(rank)
        );
        let iters = iterators(&vec!["parallel"; rank]);
        let (init, other) = (carried.name.clone(), captured.name.clone());
        self.define(carried.shape.clone(), |name| {
            format!(
                "    {name} = scf.for %i = {c0} to {c2} step {c1} iter_args(%acc = {init}) -> ({ty}) {{\n      %e = tensor.empty() : {ty}\n      %s = linalg.generic {{indexing_maps = {maps}, iterator_types = [{iters}]}} ins(%acc, {other} : {ty}, {ty}) outs(%e : {ty}) {{\n      ^bb0(%a: f32, %b: f32, %out: f32):\n        %r = arith.addf %a, %b : f32\n        linalg.yield %r : f32\n      }} -> {ty}\n      scf.yield %s : {ty}\n    }}"
            )
        });
    }

    /// A generic whose body reads element 0 of a value captured from above.
    pub(super) fn extract_in_body(&mut self) {
        let input = self.value(None);
        let captured = self.value(None);
        let rank = input.shape.len();
        let empty = self.empty(&input.shape);
        let zeros = vec!["%c0"; captured.shape.len()].join(", ");
        let maps = format!("[{}, {}]", identity(rank), identity(rank));
        let iters = iterators(&vec!["parallel"; rank]);
        let (source, ty, other, other_ty) = (
            input.name.clone(),
            input.ty(),
            captured.name.clone(),
            captured.ty(),
        );
        self.define(input.shape.clone(), |name| {
            format!(
                "    {name} = linalg.generic {{indexing_maps = {maps}, iterator_types = [{iters}]}} ins({source} : {ty}) outs({empty} : {ty}) {{\n    ^bb0(%in: f32, %out: f32):\n      %c0 = arith.constant 0 : index\n      %x = tensor.extract {other}[{zeros}] : {other_ty}\n      %r = arith.addf %in, %x : f32\n      linalg.yield %r : f32\n    }} -> {ty}"
            )
        });
    }

    /// A generic reading `linalg.index` of a dim (an iota): that dim cannot be split. Half of
    /// them read no input (JAX's iota, only positions), half add the position to a value.
    pub(super) fn iota(&mut self) {
        if self.random.chance(0.5) {
            let rank = 1 + self.random.below(2);
            let shape = self.shape(rank);
            let dim = self.random.below(rank);
            let empty = self.empty(&shape);
            let ty = tensor_type(&shape);
            let maps = format!("[{}]", identity(rank));
            let iters = iterators(&vec!["parallel"; rank]);
            self.define(shape, |name| {
                format!(
                    "    {name} = linalg.generic {{indexing_maps = {maps}, iterator_types = [{iters}]}} outs({empty} : {ty}) {{\n    ^bb0(%out: f32):\n      %i = linalg.index {dim} : index\n      %n = arith.index_cast %i : index to i32\n      %f = arith.sitofp %n : i32 to f32\n      linalg.yield %f : f32\n    }} -> {ty}"
                )
            });
            return;
        }
        let input = self.value(None);
        let rank = input.shape.len();
        let dim = self.random.below(rank);
        let empty = self.empty(&input.shape);
        let maps = format!("[{}, {}]", identity(rank), identity(rank));
        let iters = iterators(&vec!["parallel"; rank]);
        let (source, ty) = (input.name.clone(), input.ty());
        self.define(input.shape.clone(), |name| {
            format!(
                "    {name} = linalg.generic {{indexing_maps = {maps}, iterator_types = [{iters}]}} ins({source} : {ty}) outs({empty} : {ty}) {{\n    ^bb0(%in: f32, %out: f32):\n      %i = linalg.index {dim} : index\n      %n = arith.index_cast %i : index to i32\n      %f = arith.sitofp %n : i32 to f32\n      %r = arith.addf %in, %f : f32\n      linalg.yield %r : f32\n    }} -> {ty}"
            )
        });
    }

    /// A call of a helper function (whose arguments are unnamed: `arg0`, ...).
    pub(super) fn call(&mut self) {
        let input = self.value(None);
        let rank = input.shape.len();
        let ty = input.ty();
        let helper = format!("@helper{}", self.helpers.len());
        let maps = format!("[{}, {}]", identity(rank), identity(rank));
        let iters = iterators(&vec!["parallel"; rank]);
        self.helpers.push(format!(
            "  func.func private {helper}(%h: {ty}) -> {ty} {{\n    %e = tensor.empty() : {ty}\n    %r = linalg.generic {{indexing_maps = {maps}, iterator_types = [{iters}]}} ins(%h : {ty}) outs(%e : {ty}) {{\n    ^bb0(%in: f32, %out: f32):\n      %t = math.tanh %in : f32\n      linalg.yield %t : f32\n    }} -> {ty}\n    return %r : {ty}\n  }}"
        ));
        let source = input.name.clone();
        self.define(input.shape.clone(), |name| {
            format!("    {name} = func.call {helper}({source}) : ({ty}) -> {ty}")
        });
    }

    pub(super) fn constant(&mut self) {
        let rank = 1 + self.random.below(2);
        let shape = self.shape(rank);
        let ty = tensor_type(&shape);
        self.define(shape, |name| {
            format!("    {name} = arith.constant dense<5.000000e-01> : {ty}")
        });
    }
}
