//! Where a program's repeated layers meet, found from its dataflow alone, for programs whose
//! ops do not say their layer (imported without locations): the four values a cut reconnects
//! when it drops inner layers and keeps the first ones and the last.
//!
//! Each op gets two numbers: `up`, the highest layer whose arguments it depends on, and
//! `down`, the highest layer whose results it reaches. With `top` the last layer:
//! - a forward op of layer j depends on layers 0..=j and reaches every result (through the
//!   loss): (j, top);
//! - a backward op (or optimizer update) of layer j depends on every layer (through the
//!   cotangent) and reaches the results of layers 0..=j: (top, j);
//! - the last layer's forward, the head and the last layer's backward are all (top, top).
//!
//! The last layer cannot be told from the head, so a structural cut keeps it: it drops
//! layers `from..top` and keeps `0..from` and `top`. With 5 layers and `from` = 2:
//! ```text
//! forward   x0 -> L0 -> x1 -> L1 -> x2 -> L2 -> x3 -> L3 -> x4 -> L4 -> head
//! backward  head -> L4' -> d4 -> L3' -> d3 -> L2' -> d2 -> L1' -> d1 -> L0'
//! cut       x0 -> L0 -> x1 -> L1 -> x2 -> L4 -> head -> L4' -> d4 -> L1' -> d1 -> L0'
//! ```
//! `x` = x2 and `y` = x4 are layer inputs: after the last forward op reading layer j's
//! arguments, the first value every path to layer j+1 goes through (in a residual network the
//! stream after the block's last add, not the norm that follows it). `dx` = d2 and `dy` = d4
//! are the cotangents into layers 1 and 3: before the first backward op reading layer j's
//! arguments, the last value every path from layer j+1 comes through. The cut reads `x`
//! where the program read `y`, and `dy` where it read `dx`.

use super::fold::Layers;
use crate::{
    ffi,
    ir::{self, func_attrs},
};
use melior::ir::{
    block::{BlockArgument, BlockLike},
    operation::OperationLike,
    BlockRef, OperationRef, Value, ValueLike,
};
use std::collections::{HashMap, VecDeque};

/// The values a structural cut reconnects (see the module docs).
pub struct Seams<'c, 'a> {
    /// The first dropped layer's input, and the kept last layer's.
    pub x: Value<'c, 'a>,
    pub y: Value<'c, 'a>,
    /// The cotangent the dropped layers hand the kept first ones, and the one the kept last
    /// layer hands the dropped ones.
    pub dx: Value<'c, 'a>,
    pub dy: Value<'c, 'a>,
}

/// A value as (top-level op, result number).
type At = (usize, usize);

/// The entry block's top-level ops with their layer numbers.
struct Graph<'c, 'a> {
    ops: Vec<OperationRef<'c, 'a>>,
    /// Per op: the top-level values it (or an op nested in it) reads.
    operands: Vec<Vec<At>>,
    /// Per op: (result number, top-level user).
    users: Vec<Vec<(usize, usize)>>,
    /// Per op: the layers whose arguments it reads itself, or through views of them (ops
    /// computed from one layer's arguments alone: a transposed kernel, a cast, the identity
    /// loop a tile puts around an argument), which the forward and the backward share.
    reads: Vec<Vec<usize>>,
    /// Per op: whether it is such a view.
    view: Vec<bool>,
    /// Per op: whether it is computed from any argument (constants are not: each layer may
    /// have its own copy).
    depends: Vec<bool>,
    up: Vec<Option<usize>>,
    down: Vec<Option<usize>>,
}

/// The seams of the cut of `func` (the entry function, body `body`) that drops the layers in
/// `from..top` present in its arguments.
pub fn find<'c, 'a>(
    func: OperationRef<'c, 'a>,
    body: BlockRef<'c, 'a>,
    layers: &Layers,
    from: usize,
) -> Result<Seams<'c, 'a>, String> {
    let arguments = func_attrs::entries(func, "arg_attrs", body.argument_count());
    let argument_layer: Vec<Option<usize>> = arguments
        .iter()
        .map(|fields| func_attrs::name(fields).and_then(|name| layers.of_name(&name)))
        .collect();
    let mut present: Vec<usize> = argument_layer.iter().flatten().copied().collect();
    present.sort_unstable();
    present.dedup();
    let top = *present.last().ok_or("no argument names a layer")?;
    let kept = present.iter().copied().filter(|&layer| layer < from).max();
    let dropped: Vec<usize> = present
        .iter()
        .copied()
        .filter(|&layer| layer >= from && layer < top)
        .collect();
    let (Some(kept), Some(&first), Some(&last)) = (kept, dropped.first(), dropped.last()) else {
        return Err(format!(
            "no layer to cut between the first {from} and the last"
        ));
    };
    let graph = Graph::scan(func, body, &argument_layer, layers);
    let x = graph.forward_seam(kept, first, top)?;
    let y = graph.forward_seam(last, top, top)?;
    let dx = graph.backward_seam(kept, first, top)?;
    let dy = graph.backward_seam(last, top, top)?;
    let (x, y, dx, dy) = (
        graph.value(x),
        graph.value(y),
        graph.value(dx),
        graph.value(dy),
    );
    if x.r#type() != y.r#type() || dx.r#type() != dy.r#type() {
        return Err(format!(
            "the layers' inputs ({} and {}) or cotangents ({} and {}) differ in type",
            x.r#type(),
            y.r#type(),
            dx.r#type(),
            dy.r#type()
        ));
    }
    Ok(Seams { x, y, dx, dy })
}

impl<'c, 'a> Graph<'c, 'a> {
    fn scan(
        func: OperationRef<'c, 'a>,
        body: BlockRef<'c, 'a>,
        argument_layer: &[Option<usize>],
        layers: &Layers,
    ) -> Self {
        let ops = ir::block_ops(body);
        let index_of: HashMap<usize, usize> = ops
            .iter()
            .enumerate()
            .map(|(index, op)| (ffi::operation_id(*op), index))
            .collect();
        let count = ops.len();
        // Per op: the layer it is a view of, and whether it is computed from any argument
        // (constants are not: shared by every layer).
        let mut view_of: Vec<Option<usize>> = vec![None; count];
        let mut graph = Graph {
            depends: vec![false; count],
            operands: vec![Vec::new(); count],
            users: vec![Vec::new(); count],
            reads: vec![Vec::new(); count],
            view: vec![false; count],
            up: vec![None; count],
            down: vec![None; count],
            ops,
        };
        for index in 0..count {
            let (mut operands, mut reads) = (Vec::new(), Vec::new());
            let (mut reads_argument, mut reads_data) = (false, false);
            ffi::walk(graph.ops[index], |inner| {
                for operand in inner.operands() {
                    if let Some(owner) = ffi::result_owner(operand) {
                        if let Some(&producer) = index_of.get(&ffi::operation_id(owner)) {
                            let at = (producer, ffi::result_number(operand).unwrap_or(0));
                            if producer != index && !operands.contains(&at) {
                                operands.push(at);
                            }
                        }
                    } else if ffi::argument_owner(operand) == Some(body) {
                        reads_argument = true;
                        let number = BlockArgument::try_from(operand)
                            .map(|argument| argument.argument_number())
                            .ok();
                        match number.and_then(|number| argument_layer[number]) {
                            Some(layer) if !reads.contains(&layer) => reads.push(layer),
                            Some(_) => {}
                            // Data, not a layer's: what reads it is computed.
                            None => reads_data = true,
                        }
                    }
                }
            });
            let mut computed = reads_data;
            for &(producer, _) in &operands {
                match view_of[producer] {
                    Some(layer) if !reads.contains(&layer) => reads.push(layer),
                    Some(_) => {}
                    None => computed |= graph.depends[producer],
                }
            }
            view_of[index] = match reads[..] {
                [layer] if !computed => Some(layer),
                _ => None,
            };
            graph.depends[index] = reads_argument
                || operands
                    .iter()
                    .any(|&(producer, _)| graph.depends[producer]);
            let up = operands
                .iter()
                .filter_map(|&(producer, _)| graph.up[producer])
                .chain(reads.iter().copied())
                .max();
            for &(producer, result) in &operands {
                graph.users[producer].push((result, index));
            }
            graph.up[index] = up;
            graph.view[index] = view_of[index].is_some();
            graph.operands[index] = operands;
            graph.reads[index] = reads;
        }
        // What each op reaches: the returned values' layers, carried back to their producers.
        if let Some(terminator) = body.terminator() {
            let results = func_attrs::entries(func, "res_attrs", terminator.operand_count());
            for (operand, fields) in terminator.operands().zip(&results) {
                let layer = func_attrs::name(fields).and_then(|name| layers.of_name(&name));
                let producer = ffi::result_owner(operand)
                    .and_then(|owner| index_of.get(&ffi::operation_id(owner)).copied());
                if let (Some(layer), Some(producer)) = (layer, producer) {
                    graph.down[producer] = graph.down[producer].max(Some(layer));
                }
            }
        }
        for index in (0..count).rev() {
            let down = graph.users[index]
                .iter()
                .filter_map(|&(_, user)| graph.down[user])
                .max();
            graph.down[index] = graph.down[index].max(down);
        }
        graph
    }

    fn value(&self, (op, result): At) -> Value<'c, 'a> {
        self.ops[op]
            .result(result)
            .expect("a seam is a result of its op")
            .into()
    }

    fn reads(&self, op: usize, layer: usize) -> bool {
        self.reads[op].contains(&layer)
    }

    /// Layer `to`'s input from layer `from` (forward): after the last forward op reading
    /// `from`'s arguments, the first value that every forward path from layers 0..=from to
    /// an op reading `to`'s arguments goes through.
    fn forward_seam(&self, from: usize, to: usize, top: usize) -> Result<At, String> {
        let forward = |op: usize| self.up[op] == Some(from) && self.down[op] == Some(top);
        // Views are where JAX put them, in the forward or the backward: their readers say
        // where the layer is.
        let &start = (0..self.ops.len())
            .filter(|&op| forward(op) && !self.view[op] && self.reads(op, from))
            .collect::<Vec<_>>()
            .last()
            .ok_or_else(|| format!("no forward op reads layer {from}'s arguments"))?;
        // Paths start at every forward op of layers 0..=from, not only at those reading
        // `from`'s arguments: the residual stream into `from` bypasses its readers. Not at
        // those after the candidate, which belong to the next layer (its norm, before it
        // reads its scale). They go through the forward only (ops reaching the last layer's
        // results): the backward is the other seams' to cut.
        // Data the layers share (a mask: computed from no layer's arguments, read by every
        // layer) is no path, nor are constants; the embedding, which only layer 0 reads, is.
        let feeds = self.nearest_layers(top);
        let before: Vec<usize> = self
            .ops_of(|_, down| down == Some(top))
            .into_iter()
            .filter(|&op| match self.up[op] {
                Some(up) => up <= from,
                None => self.depends[op] && feeds[op].is_some_and(|up| up <= from),
            })
            .collect();
        let through = |op: usize| self.down[op] == Some(top);
        for op in (start..self.ops.len()).filter(|&op| forward(op)) {
            let before = self.apart_from(&before, op, Direction::Users);
            for result in 0..self.ops[op].result_count() {
                if !self.reaches(&before, (op, result), to, Direction::Users, through) {
                    return Ok((op, result));
                }
            }
        }
        Err(format!(
            "no single value hands layer {from}'s forward result to layer {to}"
        ))
    }

    /// The cotangent into layer `from`'s backward from layer `to`'s: before the first
    /// backward op reading `from`'s arguments, the last value that every backward path from
    /// an op reading `to`'s arguments to the backward of layers 0..=from comes through.
    fn backward_seam(&self, from: usize, to: usize, top: usize) -> Result<At, String> {
        // Down to the first layer's cotangent, which may reach no layer's result.
        let backward_of = |up: Option<usize>, down: Option<usize>, last: usize| {
            up == Some(top) && down.is_none_or(|down| down <= last)
        };
        let &end = (0..self.ops.len())
            .filter(|&op| backward_of(self.up[op], self.down[op], top - 1) && self.reads(op, from))
            .collect::<Vec<_>>()
            .first()
            .ok_or_else(|| format!("no backward op reads layer {from}'s arguments"))?;
        let backward = |op: usize| self.up[op] == Some(top) && self.down[op] == Some(from);
        // Paths end at every backward op of layers 0..=from (not at those before the
        // candidate): the residual stream's cotangent reaches layer `from - 1` past `from`'s
        // readers (penzai's GPT-NeoX transposes it for them, and the residual add takes it as
        // it is). They go through the backward only (ops reaching no result of the last
        // layer): a tied embedding's gradient also reads the head's, which reads the forward
        // of every layer, and the forward is the other seams' to cut.
        let after = self.ops_of(|up, down| backward_of(up, down, from));
        let through = |op: usize| backward_of(self.up[op], self.down[op], top - 1);
        for op in (0..=end).rev().filter(|&op| backward(op)) {
            let after = self.apart_from(&after, op, Direction::Producers);
            for result in 0..self.ops[op].result_count() {
                if !self.reaches(&after, (op, result), to, Direction::Producers, through) {
                    return Ok((op, result));
                }
            }
        }
        Err(format!(
            "no single value hands layer {to}'s cotangent to layer {from}"
        ))
    }

    /// Per op computed from no layer's arguments (`up` none): the highest layer among the
    /// first forward ops of some layer it feeds. A mask feeds every layer; the embedding,
    /// layer 0 (its backward, which reads it too, is not the forward).
    fn nearest_layers(&self, top: usize) -> Vec<Option<usize>> {
        let mut nearest = vec![None; self.ops.len()];
        for op in (0..self.ops.len()).rev() {
            nearest[op] = self.users[op]
                .iter()
                .filter(|&&(_, user)| self.down[user] == Some(top))
                .filter_map(|&(_, user)| self.up[user].or(nearest[user]))
                .max();
        }
        nearest
    }

    /// The ops (views and the return aside) whose layer numbers `up` and `down` satisfy
    /// `keep`.
    fn ops_of(&self, keep: impl Fn(Option<usize>, Option<usize>) -> bool) -> Vec<usize> {
        (0..self.ops.len())
            .filter(|&op| !self.view[op] && self.ops[op].result_count() > 0)
            .filter(|&op| keep(self.up[op], self.down[op]))
            .collect()
    }

    /// `ops` less `op` and what it reaches in `direction`.
    fn apart_from(&self, ops: &[usize], op: usize, direction: Direction) -> Vec<usize> {
        let mut reached = vec![false; self.ops.len()];
        reached[op] = true;
        let mut queue = VecDeque::from([op]);
        while let Some(at) = queue.pop_front() {
            for next in self.next(at, direction) {
                if !reached[next] {
                    reached[next] = true;
                    queue.push_back(next);
                }
            }
        }
        ops.iter().copied().filter(|&op| !reached[op]).collect()
    }

    /// The ops `op` hands values to (users) or takes them from (producers).
    fn next(&self, op: usize, direction: Direction) -> Vec<usize> {
        match direction {
            Direction::Users => self.users[op].iter().map(|&(_, user)| user).collect(),
            Direction::Producers => self.operands[op].iter().map(|&(op, _)| op).collect(),
        }
    }

    /// Whether an op reading `layer`'s arguments is reached from `sources` without passing
    /// through `avoid`, following users or producers among the ops `through` accepts.
    fn reaches(
        &self,
        sources: &[usize],
        avoid: At,
        layer: usize,
        direction: Direction,
        through: impl Fn(usize) -> bool,
    ) -> bool {
        let mut seen = vec![false; self.ops.len()];
        let mut queue: VecDeque<usize> = sources.iter().copied().collect();
        for &source in sources {
            seen[source] = true;
        }
        while let Some(op) = queue.pop_front() {
            if self.reads(op, layer) {
                return true;
            }
            let mut visit = |next: usize| {
                if !seen[next] && through(next) {
                    seen[next] = true;
                    queue.push_back(next);
                }
            };
            match direction {
                Direction::Users => self.users[op]
                    .iter()
                    .filter(|&&(result, _)| (op, result) != avoid)
                    .for_each(|&(_, user)| visit(user)),
                Direction::Producers => self.operands[op]
                    .iter()
                    .filter(|&&at| at != avoid)
                    .for_each(|&(producer, _)| visit(producer)),
            }
        }
        false
    }
}

#[derive(Clone, Copy)]
enum Direction {
    Users,
    Producers,
}
