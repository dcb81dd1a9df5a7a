//! MLIR text written by the pipelined form: StableHLO ops in their generic form, with fresh SSA
//! names. Text, parsed once into the module, because the form is a fixed template around one
//! retyped copy of the loop: a worked example reads as the IR it makes.

use std::fmt::Write;

pub(super) fn tensor(shape: &[i64], element: &str) -> String {
    if shape.is_empty() {
        format!("tensor<{element}>")
    } else {
        let dims: Vec<String> = shape.iter().map(i64::to_string).collect();
        format!("tensor<{}x{element}>", dims.join("x"))
    }
}

pub(super) fn zero(element: &str) -> &'static str {
    if element == "i1" {
        "false"
    } else if element.starts_with('f') || element.starts_with("bf") {
        "0.000000e+00"
    } else {
        "0"
    }
}

pub(super) fn i64s(values: impl IntoIterator<Item = i64>) -> String {
    let listed: Vec<String> = values.into_iter().map(|v| v.to_string()).collect();
    if listed.is_empty() {
        return "array<i64>".to_string();
    }
    format!("array<i64: {}>", listed.join(", "))
}

/// Text being written, with fresh SSA names.
pub(super) struct Text {
    pub(super) out: String,
    pub(super) next: usize,
    pub(super) indent: usize,
}

pub(super) const I32: &str = "tensor<i32>";
pub(super) const I1: &str = "tensor<i1>";

impl Text {
    pub(super) fn line(&mut self, line: &str) {
        let _ = writeln!(self.out, "{}{line}", "  ".repeat(self.indent));
    }

    pub(super) fn value(&mut self, rhs: &str) -> String {
        self.next += 1;
        let name = format!("%v{}", self.next);
        self.line(&format!("{name} = {rhs}"));
        name
    }

    pub(super) fn constant(&mut self, literal: impl std::fmt::Display, ty: &str) -> String {
        self.value(&format!(
            "\"stablehlo.constant\"() <{{value = dense<{literal}> : {ty}}}> : () -> {ty}"
        ))
    }

    /// Zeros of `ty`, a broadcast scalar: a device split on any of its dims makes its own
    /// chunk, nothing whole is ever built.
    pub(super) fn zeros(&mut self, element: &str, ty: &str) -> String {
        let scalar = tensor(&[], element);
        let zero = self.constant(zero(element), &scalar);
        self.broadcast(&zero, &scalar, &[], ty)
    }

    pub(super) fn binary(&mut self, name: &str, a: &str, b: &str, ty: &str) -> String {
        self.value(&format!(
            "\"stablehlo.{name}\"({a}, {b}) : ({ty}, {ty}) -> {ty}"
        ))
    }

    pub(super) fn compare(
        &mut self,
        direction: &str,
        a: &str,
        b: &str,
        ty: &str,
        result: &str,
    ) -> String {
        self.value(&format!(
            "\"stablehlo.compare\"({a}, {b}) <{{comparison_direction = #stablehlo<comparison_direction {direction}>}}> : ({ty}, {ty}) -> {result}"
        ))
    }

    pub(super) fn reshape(&mut self, x: &str, from: &str, to: &str) -> String {
        self.value(&format!("\"stablehlo.reshape\"({x}) : ({from}) -> {to}"))
    }

    pub(super) fn select(&mut self, p: &str, a: &str, b: &str, pty: &str, ty: &str) -> String {
        self.value(&format!(
            "\"stablehlo.select\"({p}, {a}, {b}) : ({pty}, {ty}, {ty}) -> {ty}"
        ))
    }

    pub(super) fn broadcast(&mut self, x: &str, from: &str, dims: &[i64], to: &str) -> String {
        self.value(&format!(
            "\"stablehlo.broadcast_in_dim\"({x}) <{{broadcast_dimensions = {}}}> : ({from}) -> {to}",
            i64s(dims.iter().copied())
        ))
    }

    /// The block of `sizes` at `offset` on `dim` (0 elsewhere) of `x`: [`shape`].
    pub(super) fn dynamic_slice(
        &mut self,
        x: &str,
        shape: &[i64],
        element: &str,
        dim: usize,
        offset: &str,
        sizes: &[i64],
    ) -> String {
        let zero = self.constant(0, I32);
        let starts: Vec<&str> = (0..shape.len())
            .map(|d| if d == dim { offset } else { zero.as_str() })
            .collect();
        self.value(&format!(
            "\"stablehlo.dynamic_slice\"({x}, {}) <{{slice_sizes = {}}}> : ({}, {}) -> {}",
            starts.join(", "),
            i64s(sizes.iter().copied()),
            tensor(shape, element),
            vec![I32; shape.len()].join(", "),
            tensor(sizes, element)
        ))
    }
}

/// One microbatch of a value of shape `view` (the batch as [mb, M] at `b`): as a block of it
/// (`[.., mb, 1, ..]`) and as the stage function takes it (`[.., mb, ..]`).
fn microbatch_shapes(view: &[i64], b: usize) -> (Vec<i64>, Vec<i64>) {
    let mut sizes = view.to_vec();
    sizes[b + 1] = 1;
    let mut local = sizes.clone();
    local.remove(b + 1);
    (sizes, local)
}

impl Text {
    /// Microbatch `index` of `x` (of shape `view`, the batch as [mb, M] at `b`): [`local`].
    pub(super) fn pick(
        &mut self,
        x: &str,
        view: &[i64],
        element: &str,
        b: usize,
        index: &str,
    ) -> String {
        let (sizes, local) = microbatch_shapes(view, b);
        let block = self.dynamic_slice(x, view, element, b + 1, index, &sizes);
        self.reshape(&block, &tensor(&sizes, element), &tensor(&local, element))
    }

    /// `x` (of shape `view`) with microbatch `index` replaced by `update`.
    pub(super) fn put(
        &mut self,
        x: &str,
        view: &[i64],
        element: &str,
        b: usize,
        index: &str,
        update: &str,
    ) -> String {
        let (sizes, local) = microbatch_shapes(view, b);
        let block = self.reshape(update, &tensor(&local, element), &tensor(&sizes, element));
        let zero = self.constant(0, I32);
        let starts: Vec<&str> = (0..view.len())
            .map(|d| if d == b + 1 { index } else { zero.as_str() })
            .collect();
        let ty = tensor(view, element);
        self.value(&format!(
            "\"stablehlo.dynamic_update_slice\"({x}, {block}, {}) : ({ty}, {}, {}) -> {ty}",
            starts.join(", "),
            tensor(&sizes, element),
            vec![I32; view.len()].join(", ")
        ))
    }
}

pub(super) fn prepend(first: i64, rest: &[i64]) -> Vec<i64> {
    std::iter::once(first).chain(rest.iter().copied()).collect()
}
