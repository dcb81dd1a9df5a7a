//! The pipelined form of one loop as text: the ticks (`@__partir_pipeline_<id>`: the
//! microbatches fed, the states rotated, the stage loop, the outputs collected) and the stage
//! function they call (`@__partir_stage_<id>`, filled by [`super::splice::fill_stage`]).

use super::{
    text::{i64s, prepend, tensor, Text, I1, I32},
    Carry,
};

/// The pipelined form's text: the ticks (`@__partir_pipeline_<id>`) and the per-stage
/// function they call (`@__partir_stage_<id>`, its body filled in by [`fill_stage`]).
pub(super) struct Form<'p> {
    pub(super) kinds: &'p [Carry],
    pub(super) shapes: &'p [Vec<i64>],
    pub(super) elements: Vec<String>,
    pub(super) types: Vec<String>,
    /// Which operands are zeros (a gradient's accumulator starts so).
    pub(super) zeros: Vec<bool>,
    pub(super) stages: i64,
    pub(super) micro: i64,
    pub(super) layers: i64,
    pub(super) reversed: bool,
    pub(super) axis: &'p str,
    pub(super) id: usize,
}

impl Form<'_> {
    pub(super) fn pipeline_name(&self) -> String {
        format!("__partir_pipeline_{}", self.id)
    }

    pub(super) fn stage_name(&self) -> String {
        format!("__partir_stage_{}", self.id)
    }

    pub(super) fn per_stage(&self) -> i64 {
        self.layers / self.stages
    }

    fn mb(&self, rows: i64) -> i64 {
        rows / self.micro
    }

    fn batch(&self, i: usize) -> Option<usize> {
        match self.kinds[i] {
            Carry::Activation(b) => Some(b),
            Carry::Stack { batch, .. } | Carry::Constant(batch) => batch,
            Carry::Counter => None,
        }
    }

    /// Carry i's shape with its batch seen as [mb, M]: microbatch m is rows m, M + m,
    /// 2M + m, ..., so that a batch split contiguously over devices (BP) splits every
    /// microbatch alike.
    fn view(&self, i: usize) -> Vec<i64> {
        let mut shape = self.shapes[i].clone();
        if let Some(b) = self.batch(i) {
            shape[b] = self.mb(shape[b]);
            shape.insert(b + 1, self.micro);
        }
        shape
    }

    /// Carry i's shape in one stage on one microbatch (what the stage function takes).
    fn local(&self, i: usize) -> Vec<i64> {
        let mut shape = self.shapes[i].clone();
        if let Some(b) = self.batch(i) {
            shape[b] = self.mb(shape[b]);
        }
        if matches!(self.kinds[i], Carry::Stack { .. }) {
            shape[0] = self.per_stage();
        }
        shape
    }

    fn local_type(&self, i: usize) -> String {
        tensor(&self.local(i), &self.elements[i])
    }

    /// A stack's shape split by stage: [S, Ls, ...] (its batch as in [`Self::view`]).
    fn staged(&self, i: usize) -> Vec<i64> {
        let mut shape = vec![self.stages, self.per_stage()];
        shape.extend_from_slice(&self.view(i)[1..]);
        shape
    }

    fn of(&self, pick: impl Fn(&Carry) -> bool) -> Vec<usize> {
        (0..self.kinds.len())
            .filter(|&i| pick(&self.kinds[i]))
            .collect()
    }

    pub(super) fn module_text(&self) -> String {
        let mut text = Text {
            out: String::new(),
            next: 0,
            indent: 0,
        };
        text.line(&format!(
            "partir.mesh @mesh [\"{}\"={}]",
            self.axis, self.stages
        ));
        self.stage_function(&mut text);
        self.pipeline_function(&mut text);
        format!("module {{\n{}}}\n", text.out)
    }

    fn stage_function(&self, text: &mut Text) {
        let n = self.kinds.len();
        let types: Vec<String> = (0..n).map(|i| self.local_type(i)).collect();
        let args: Vec<String> = (0..n).map(|i| format!("%s{i}: {}", types[i])).collect();
        text.line(&format!(
            "func.func private @{}({}) -> ({}) {{",
            self.stage_name(),
            args.join(", "),
            types.join(", ")
        ));
        text.line(&format!(
            "  return {} : {}",
            (0..n)
                .map(|i| format!("%s{i}"))
                .collect::<Vec<_>>()
                .join(", "),
            types.join(", ")
        ));
        text.line("}");
    }

    fn pipeline_function(&self, text: &mut Text) {
        let n = self.kinds.len();
        let (s, m) = (self.stages, self.micro);
        let acts = self.of(|k| matches!(k, Carry::Activation(_)));
        let ys = self.of(|k| matches!(k, Carry::Stack { written: true, .. }));
        let xs = self.of(|k| matches!(k, Carry::Stack { written: false, .. }));
        let consts = self.of(|k| matches!(k, Carry::Constant(_)));
        let args: Vec<String> = (0..n)
            .map(|i| format!("%a{i}: {}", self.types[i]))
            .collect();
        text.line(&format!(
            "func.func private @{}({}) -> ({}) {{",
            self.pipeline_name(),
            args.join(", "),
            self.types.join(", ")
        ));
        text.indent = 1;
        // The ticks' carries: the tick, per activation its state [S, local] and outputs
        // [S, whole], the written stacks [S, Ls, ...], then what passes through: the read
        // stacks [S, Ls, ...], the activations' inputs and the constants.
        let mut inits: Vec<(String, String)> = Vec::new();
        let t0 = text.constant(0, I32);
        inits.push((t0, I32.to_string()));
        let state_type = |i: usize| tensor(&prepend(s, &self.local(i)), &self.elements[i]);
        let out_type = |i: usize| tensor(&prepend(s, &self.view(i)), &self.elements[i]);
        let view_type = |i: usize| tensor(&self.view(i), &self.elements[i]);
        let staged_type = |i: usize| tensor(&self.staged(i), &self.elements[i]);
        for &i in &acts {
            let ty = state_type(i);
            let zeros = text.zeros(&self.elements[i], &ty);
            inits.push((zeros, ty));
        }
        for &i in &acts {
            let ty = out_type(i);
            let zeros = text.zeros(&self.elements[i], &ty);
            inits.push((zeros, ty));
        }
        for &i in ys.iter().chain(&xs) {
            // Zeros made in place, which every device can make its own chunk of, and from
            // which a sum left partial by another axis is reduced once after the ticks.
            let staged = if self.zeros[i] {
                text.zeros(&self.elements[i], &staged_type(i))
            } else {
                text.reshape(&format!("%a{i}"), &self.types[i], &staged_type(i))
            };
            inits.push((staged, staged_type(i)));
        }
        for &i in acts.iter().chain(&consts) {
            let viewed = match self.batch(i) {
                Some(_) => text.reshape(&format!("%a{i}"), &self.types[i], &view_type(i)),
                None => format!("%a{i}"),
            };
            inits.push((viewed, view_type(i)));
        }
        let k = inits.len();
        let names: Vec<&str> = inits.iter().map(|(v, _)| v.as_str()).collect();
        let types: Vec<&str> = inits.iter().map(|(_, t)| t.as_str()).collect();
        let block_args: Vec<String> = (0..k).map(|j| format!("%b{j}: {}", types[j])).collect();
        let ticks = m + s - 1;
        let w = format!("%w{}", self.id);
        text.line(&format!(
            "{w}:{k} = \"stablehlo.while\"({}) ({{",
            names.join(", ")
        ));
        text.line(&format!("^bb0({}):", block_args.join(", ")));
        text.indent = 2;
        let limit = text.constant(ticks, I32);
        let go = text.compare("LT", "%b0", &limit, I32, I1);
        text.line(&format!("\"stablehlo.return\"({go}) : ({I1}) -> ()"));
        text.indent = 1;
        text.line("}, {");
        text.line(&format!("^bb0({}):", block_args.join(", ")));
        text.indent = 2;
        // Block argument positions.
        let a = acts.len();
        let state_at = |j: usize| 1 + j;
        let out_at = |j: usize| 1 + a + j;
        let ys_at = |j: usize| 1 + 2 * a + j;
        let xs_at = |j: usize| 1 + 2 * a + ys.len() + j;
        let in_at = |j: usize| 1 + 2 * a + ys.len() + xs.len() + j;
        let const_at = |j: usize| 1 + 3 * a + ys.len() + xs.len() + j;
        let vec_s = tensor(&[s], "i32");
        let iota = text.value(&format!(
            "\"stablehlo.iota\"() <{{iota_dimension = 0 : i64}}> : () -> {vec_s}"
        ));
        let t_s = text.broadcast("%b0", I32, &[], &vec_s);
        // Stage s works on microbatch t - s (t - (S-1-s) when the stages run last to first).
        let microbatch = if self.reversed {
            let last = text.constant(s - 1, &vec_s);
            let shifted = text.binary("subtract", &t_s, &last, &vec_s);
            text.binary("add", &shifted, &iota, &vec_s)
        } else {
            text.binary("subtract", &t_s, &iota, &vec_s)
        };
        let first_stage = if self.reversed { s - 1 } else { 0 };
        let first_s = text.constant(first_stage, &vec_s);
        let first = text.compare("EQ", &iota, &first_s, &vec_s, &tensor(&[s], "i1"));
        let last_micro = text.constant(m - 1, I32);
        let fed = text.binary("minimum", "%b0", &last_micro, I32);
        let all_micro = text.constant(m, I32);
        let feeding = text.compare("LT", "%b0", &all_micro, I32, I1);
        let mut states_in = Vec::new();
        for (j, &i) in acts.iter().enumerate() {
            let Carry::Activation(b) = self.kinds[i] else {
                unreachable!()
            };
            let local = self.local(i);
            let element = &self.elements[i];
            let picked = text.pick(&format!("%b{}", in_at(j)), &self.view(i), element, b, &fed);
            // Zeros once every microbatch is in: the bubble's ticks compute on zeros.
            let zeros = text.zeros(element, &self.local_type(i));
            let fresh = text.select(&feeding, &picked, &zeros, I1, &self.local_type(i));
            let st = state_type(i);
            let dims: Vec<i64> = (1..=local.len() as i64).collect();
            let fed_all = text.broadcast(&fresh, &self.local_type(i), &dims, &st);
            // Rotate the states one stage on: forward, stage s takes stage s-1's.
            let state = format!("%b{}", state_at(j));
            let (head, tail) = if self.reversed {
                ((1, s), (0, 1))
            } else {
                ((s - 1, s), (0, s - 1))
            };
            let part = |text: &mut Text, (lo, hi): (i64, i64)| {
                let mut start = vec![0; local.len() + 1];
                let mut limit = prepend(s, &local);
                start[0] = lo;
                limit[0] = hi;
                let ty = tensor(&prepend(hi - lo, &local), element);
                text.value(&format!(
                    "\"stablehlo.slice\"({state}) <{{start_indices = {}, limit_indices = {}, strides = {}}}> : ({st}) -> {ty}",
                    i64s(start),
                    i64s(limit),
                    i64s(vec![1; local.len() + 1])
                ))
            };
            let (h, t) = (part(text, head), part(text, tail));
            let rotated = text.value(&format!(
                "\"stablehlo.concatenate\"({h}, {t}) <{{dimension = 0 : i64}}> : ({}, {}) -> {st}",
                tensor(&prepend(head.1 - head.0, &local), element),
                tensor(&prepend(tail.1 - tail.0, &local), element)
            ));
            let mask_ty = tensor(&prepend(s, &local), "i1");
            let mask = text.broadcast(&first, &tensor(&[s], "i1"), &[0], &mask_ty);
            states_in.push(text.select(&mask, &fed_all, &rotated, &mask_ty, &st));
        }
        // The stages, each on its own microbatch.
        let mut results: Vec<String> = Vec::new();
        results.extend(acts.iter().map(|&i| state_type(i)));
        results.extend(acts.iter().map(|&i| out_type(i)));
        results.extend(ys.iter().map(|&i| staged_type(i)));
        let tiles = vec!["#partir.tile<0>"; results.len()].join(", ");
        let stage_loop = format!("%p{}", self.id);
        text.line(&format!(
            "{stage_loop}:{} = partir.loop \"{}\" [{tiles}] (%st: !partir.range<{s}>) {{",
            results.len(),
            self.axis
        ));
        text.indent = 3;
        let one = tensor(&[1], "i32");
        let mine = text.value(&format!(
            "partir.slice 0 {microbatch}[%st] : {vec_s} -> {one}"
        ));
        let mb_index = text.reshape(&mine, &one, I32);
        let zero_i = text.constant(0, I32);
        let count = text.constant(m, I32);
        let ge = text.compare("GE", &mb_index, &zero_i, I32, I1);
        let lt = text.compare("LT", &mb_index, &count, I32, I1);
        let valid = text.binary("and", &ge, &lt, I1);
        let last_m = text.constant(m - 1, I32);
        let clamped = text.value(&format!(
            "\"stablehlo.clamp\"({zero_i}, {mb_index}, {last_m}) : ({I32}, {I32}, {I32}) -> {I32}"
        ));
        let chunk = |text: &mut Text, whole: &str, shape: &[i64], element: &str| {
            let from = tensor(shape, element);
            let one_shape = prepend(1, &shape[1..]);
            let piece = text.value(&format!(
                "partir.slice 0 {whole}[%st] : {from} -> {}",
                tensor(&one_shape, element)
            ));
            text.reshape(
                &piece,
                &tensor(&one_shape, element),
                &tensor(&shape[1..], element),
            )
        };
        let mut operands = vec![String::new(); n];
        for (i, operand) in operands.iter_mut().enumerate() {
            let element = &self.elements[i];
            let local = self.local(i);
            *operand = match self.kinds[i] {
                Carry::Counter => {
                    let start = if self.reversed {
                        self.layers - self.per_stage()
                    } else {
                        0
                    };
                    text.constant(start, &self.types[i])
                }
                Carry::Activation(_) => {
                    let j = acts.iter().position(|&x| x == i).expect("an activation");
                    chunk(text, &states_in[j], &prepend(s, &local), element)
                }
                Carry::Stack { written: true, .. } => text.zeros(element, &self.local_type(i)),
                Carry::Stack { batch, .. } => {
                    let j = xs.iter().position(|&x| x == i).expect("a read stack");
                    let mine = chunk(text, &format!("%b{}", xs_at(j)), &self.staged(i), element);
                    match batch {
                        None => mine,
                        Some(b) => text.pick(&mine, &self.staged(i)[1..], element, b, &clamped),
                    }
                }
                Carry::Constant(batch) => {
                    let j = consts.iter().position(|&x| x == i).expect("a constant");
                    let whole = format!("%b{}", const_at(j));
                    match batch {
                        None => whole,
                        Some(b) => text.pick(&whole, &self.view(i), element, b, &clamped),
                    }
                }
            };
        }
        let local_types: Vec<String> = (0..n).map(|i| self.local_type(i)).collect();
        let call = format!("%c{}", self.id);
        text.line(&format!(
            "{call}:{n} = func.call @{}({}) : ({}) -> ({})",
            self.stage_name(),
            operands.join(", "),
            local_types.join(", "),
            local_types.join(", ")
        ));
        let mut yields: Vec<String> = Vec::new();
        let mut yield_types: Vec<String> = Vec::new();
        for &i in &acts {
            let local = self.local(i);
            let one_ty = tensor(&prepend(1, &local), &self.elements[i]);
            yields.push(text.reshape(&format!("{call}#{i}"), &self.local_type(i), &one_ty));
            yield_types.push(one_ty);
        }
        for (j, &i) in acts.iter().enumerate() {
            let Carry::Activation(b) = self.kinds[i] else {
                unreachable!()
            };
            let element = &self.elements[i];
            let view = self.view(i);
            let outs = chunk(
                text,
                &format!("%b{}", out_at(j)),
                &prepend(s, &view),
                element,
            );
            let old = text.pick(&outs, &view, element, b, &clamped);
            let kept = text.select(
                &valid,
                &format!("{call}#{i}"),
                &old,
                I1,
                &self.local_type(i),
            );
            let written = text.put(&outs, &view, element, b, &clamped, &kept);
            let one_ty = tensor(&prepend(1, &view), element);
            yields.push(text.reshape(&written, &view_type(i), &one_ty));
            yield_types.push(one_ty);
        }
        for (j, &i) in ys.iter().enumerate() {
            let Carry::Stack { batch, summed, .. } = self.kinds[i] else {
                unreachable!()
            };
            let element = &self.elements[i];
            let staged = self.staged(i);
            let whole = &staged[1..];
            let whole_ty = tensor(whole, element);
            let result = format!("{call}#{i}");
            // A gradient is not summed here: the stage yields its share and the tick adds it to
            // the whole accumulator, where a sum split on another axis (BP) stays partial and is
            // reduced once after the ticks (lower_to_hlo/loop_sums.rs).
            let mut mine = || chunk(text, &format!("%b{}", ys_at(j)), &staged, element);
            let written = match batch {
                Some(b) => {
                    let mine = mine();
                    let old = text.pick(&mine, whole, element, b, &clamped);
                    let kept = text.select(&valid, &result, &old, I1, &self.local_type(i));
                    text.put(&mine, whole, element, b, &clamped, &kept)
                }
                // A reversed loop is JAX's transpose: its gradients are linear in the
                // cotangent it hands on, which is zero in the bubble's ticks (fed zeros), so
                // they need no mask, and the reduce of a sum split on another axis reaches the
                // accumulator through layout ops alone.
                None if summed && self.reversed => result.clone(),
                None if summed => {
                    let zeros = text.zeros(element, &whole_ty);
                    text.select(&valid, &result, &zeros, I1, &whole_ty)
                }
                None => {
                    let mine = mine();
                    text.select(&valid, &result, &mine, I1, &whole_ty)
                }
            };
            let staged_one = tensor(&prepend(1, whole), element);
            yields.push(text.reshape(&written, &whole_ty, &staged_one));
            yield_types.push(staged_one);
        }
        text.line(&format!(
            "partir.yield {} : {}",
            yields.join(", "),
            yield_types.join(", ")
        ));
        text.indent = 2;
        text.line(&format!("}} : {}", results.join(", ")));
        let step = text.constant(1, I32);
        let next = text.binary("add", "%b0", &step, I32);
        let mut carried = vec![next];
        for r in 0..results.len() {
            let stage_result = format!("{stage_loop}#{r}");
            carried.push(match r.checked_sub(2 * a).map(|j| (j, ys[j])) {
                Some((j, i)) if matches!(self.kinds[i], Carry::Stack { summed: true, .. }) => text
                    .binary(
                        "add",
                        &format!("%b{}", ys_at(j)),
                        &stage_result,
                        &staged_type(i),
                    ),
                _ => stage_result,
            });
        }
        carried.extend((1 + results.len()..k).map(|j| format!("%b{j}")));
        text.line(&format!(
            "\"stablehlo.return\"({}) : ({}) -> ()",
            carried.join(", "),
            types.join(", ")
        ));
        text.indent = 1;
        text.line(&format!(
            "}}) : ({}) -> ({})",
            types.join(", "),
            types.join(", ")
        ));
        // The activations as the last stage left them; the stacks unstaged.
        let mut returned = vec![String::new(); n];
        let iota = text.value(&format!(
            "\"stablehlo.iota\"() <{{iota_dimension = 0 : i64}}> : () -> {vec_s}"
        ));
        let last_stage = text.constant(if self.reversed { 0 } else { s - 1 }, &vec_s);
        let last = text.compare("EQ", &iota, &last_stage, &vec_s, &tensor(&[s], "i1"));
        for (j, &i) in acts.iter().enumerate() {
            let element = &self.elements[i];
            let hot = text.value(&format!(
                "\"stablehlo.convert\"({last}) : ({}) -> {}",
                tensor(&[s], "i1"),
                tensor(&[s], element)
            ));
            let last = text.value(&format!(
                "\"stablehlo.dot_general\"({hot}, {w}#{}) <{{dot_dimension_numbers = #stablehlo.dot<lhs_contracting_dimensions = [0], rhs_contracting_dimensions = [0]>}}> : ({}, {}) -> {}",
                out_at(j),
                tensor(&[s], element),
                out_type(i),
                view_type(i)
            ));
            returned[i] = text.reshape(&last, &view_type(i), &self.types[i]);
        }
        for (j, &i) in ys.iter().enumerate() {
            returned[i] = text.reshape(
                &format!("{w}#{}", ys_at(j)),
                &staged_type(i),
                &self.types[i],
            );
        }
        for (i, slot) in returned.iter_mut().enumerate() {
            if slot.is_empty() {
                *slot = match self.kinds[i] {
                    Carry::Counter => text.constant(self.layers, &self.types[i]),
                    _ => format!("%a{i}"),
                };
            }
        }
        text.line(&format!(
            "return {} : {}",
            returned.join(", "),
            self.types.join(", ")
        ));
        text.indent = 0;
        text.line("}");
    }
}
