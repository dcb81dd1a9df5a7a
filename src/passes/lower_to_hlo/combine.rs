//! The rewrite of `partir-combine-collectives` (`super::super::combine` is the pass):
//! independent `partir_hlo.all_reduce`s of one kind, axes and element type become one variadic
//! all_reduce, as XLA's all-reduce combiner does. A BP step's
//! gradient reductions, one per parameter, become one collective:
//!
//! ```text
//! %1 = all_reduce sum %0 axes ["batch"]        %3 = ...
//! %2 = arith.subf %w, %1                 →     %g:2 = all_reduce sum %0, %3 axes ["batch"]
//! %3 = ...                                     %2 = arith.subf %w, %g#0
//! %4 = all_reduce sum %3 axes ["batch"]
//! ```
//!
//! Each function body is walked once per key (kind, axes, element type), in order, with one
//! open group. A value is *tainted* when it depends on a result of the open group; an
//! all_reduce whose operand is tainted cannot join (its operand needs the group's result) and
//! starts the next group, as does one that would cross the byte or count threshold. A closed
//! group's combined op goes where its last member was, and the tainted ops before that point
//! (users of earlier members, and their users) move right after it, keeping their order: no
//! operand of a member is tainted, so nothing a member needs moves. Keys are combined one after
//! another on the rewritten IR, so groups of different keys cannot wait on each other.

use crate::{
    ffi,
    ir::{builder::Builder, hlo, types::tensor_bytes},
};
use melior::{
    ir::{operation::OperationLike, OperationRef, RegionLike, Type, Value, ValueLike},
    Context,
};
use std::collections::HashSet;

/// The collectives that combine: the all_reduces of a BP step's gradients, the reduce_scatters
/// of ZeRO's gradient shards.
const COMBINABLE: [&str; 2] = ["partir_hlo.all_reduce", "partir_hlo.reduce_scatter"];

/// The attributes a member's combined collective takes from it: kind and axes, and a
/// reduce_scatter's dim.
fn attributes_of<'c>(op: OperationRef<'c, '_>) -> Vec<(&'static str, melior::ir::Attribute<'c>)> {
    let mut attributes = hlo::reduction_attributes(op).to_vec();
    if let Ok(dim) = op.attribute("dim") {
        attributes.push(("dim", dim));
    }
    attributes
}

/// How large one combined collective may grow.
#[derive(Clone, Copy, Debug)]
pub struct Limits {
    pub bytes: f64,
    pub count: usize,
}

impl Default for Limits {
    /// XLA's defaults: `kDefaultAllReduceCombineThreshold` (30 MiB) and 256 operands.
    fn default() -> Self {
        Self {
            bytes: 30.0 * 1024.0 * 1024.0,
            count: 256,
        }
    }
}

/// What combining did to one function: per collective (`all_reduce`, `reduce_scatter`),
/// `combined` of them became `into` ones.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Summary {
    pub kinds: Vec<(&'static str, usize, usize)>,
}

impl std::fmt::Display for Summary {
    /// `3 all_reduce into 1, 21 reduce_scatter into 1`.
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        let parts: Vec<String> = self
            .kinds
            .iter()
            .map(|(op, combined, into)| {
                format!(
                    "{combined} {} into {into}",
                    op.trim_start_matches("partir_hlo.")
                )
            })
            .collect();
        f.write_str(&parts.join(", "))
    }
}

/// The key collectives must share to combine: `all_reduce sum ["batch"] f32` (and a
/// reduce_scatter's dim).
#[derive(Clone, Debug, PartialEq, Eq, PartialOrd, Ord, Hash)]
struct Key {
    op: &'static str,
    kind: String,
    axes: Vec<String>,
    element: String,
    dim: Option<i64>,
}

fn key_of(op: OperationRef) -> Option<Key> {
    let name = *COMBINABLE.iter().find(|name| crate::ffi::op_is(op, name))?;
    let element = op
        .operand(0)
        .ok()
        .map(|value| crate::ir::builder::element_type(value.r#type()).to_string())?;
    let all_same = (0..op.operand_count()).all(|index| {
        op.operand(index).is_ok_and(|value| {
            crate::ir::builder::element_type(value.r#type()).to_string() == element
        })
    });
    all_same.then(|| Key {
        op: name,
        dim: hlo::integer_attribute(op, "dim"),
        kind: hlo::reduction(op)
            .map(|kind| kind.name().to_string())
            .unwrap_or_default(),
        axes: hlo::collective_axes(op).unwrap_or_default(),
        element,
    })
}

fn operand_bytes(op: OperationRef) -> f64 {
    (0..op.operand_count())
        .filter_map(|index| op.operand(index).ok())
        .map(|value| tensor_bytes(value.r#type()))
        .sum()
}

/// Combines the all_reduces of every key in `func`'s body.
pub fn combine_function<'c>(
    context: &'c Context,
    func: OperationRef<'c, '_>,
    limits: Limits,
) -> Summary {
    let Some(body) = func.region(0).ok().and_then(|region| region.first_block()) else {
        return Summary::default();
    };
    let mut keys: Vec<Key> = Vec::new();
    for op in crate::ir::block_ops(body) {
        if let Some(key) = key_of(op) {
            if !keys.contains(&key) {
                keys.push(key);
            }
        }
    }
    keys.sort();
    let mut summary = Summary::default();
    for key in keys {
        let mut group = Group::default();
        for op in crate::ir::block_ops(body) {
            if key_of(op).as_ref() == Some(&key) {
                let fits = group.members.len() < limits.count
                    && group.bytes + operand_bytes(op) <= limits.bytes;
                if group.reads_tainted(op) || !fits {
                    summary.add(key.op, group.close(context));
                    group = Group::default();
                }
                group.join(op);
            } else if group.reads_tainted(op) {
                group.taint(op);
            }
        }
        summary.add(key.op, group.close(context));
    }
    summary
}

impl Summary {
    fn add(&mut self, op: &'static str, closed: Option<usize>) {
        let Some(members) = closed else { return };
        match self.kinds.iter_mut().find(|(known, _, _)| *known == op) {
            Some((_, combined, into)) => {
                *combined += members;
                *into += 1;
            }
            None => self.kinds.push((op, members, 1)),
        }
    }

    /// How many collectives were combined away.
    pub fn combined(&self) -> usize {
        self.kinds.iter().map(|(_, combined, _)| combined).sum()
    }
}

/// The open group: its members in order, and what depends on their results.
#[derive(Default)]
struct Group<'c, 'a> {
    members: Vec<OperationRef<'c, 'a>>,
    bytes: f64,
    /// Values (by id) computed from a member's result.
    tainted: HashSet<usize>,
    /// Ops computing tainted values, in order, with how many members had joined when each was
    /// seen (those before the last member move after the combined op).
    tainted_ops: Vec<(OperationRef<'c, 'a>, usize)>,
}

impl<'c, 'a> Group<'c, 'a> {
    /// True when `op` (or an op nested in it) reads a tainted value.
    fn reads_tainted(&self, op: OperationRef<'c, 'a>) -> bool {
        if self.tainted.is_empty() {
            return false;
        }
        let mut reads = false;
        ffi::walk(op, |inner| {
            reads = reads
                || (0..inner.operand_count()).any(|index| {
                    inner
                        .operand(index)
                        .is_ok_and(|value| self.tainted.contains(&ffi::value_id(value)))
                });
        });
        reads
    }

    fn mark_results(&mut self, op: OperationRef<'c, 'a>) {
        for index in 0..op.result_count() {
            if let Ok(result) = op.result(index) {
                self.tainted.insert(ffi::value_id(result.into()));
            }
        }
    }

    fn join(&mut self, op: OperationRef<'c, 'a>) {
        self.bytes += operand_bytes(op);
        self.members.push(op);
        self.mark_results(op);
    }

    fn taint(&mut self, op: OperationRef<'c, 'a>) {
        self.mark_results(op);
        self.tainted_ops.push((op, self.members.len()));
    }

    /// Builds the combined all_reduce where the last member is; the number of members combined
    /// (None when fewer than two).
    fn close(self, context: &'c Context) -> Option<usize> {
        let (&last, _) = self.members.split_last()?;
        if self.members.len() < 2 {
            return None;
        }
        let builder = Builder::before(context, last);
        let mut operands: Vec<Value> = Vec::new();
        let mut types: Vec<Type> = Vec::new();
        for member in &self.members {
            for index in 0..member.operand_count() {
                operands.push(member.operand(index).expect("in range"));
                types.push(
                    member
                        .result(index)
                        .expect("one result per operand")
                        .r#type(),
                );
            }
        }
        let name = last
            .name()
            .as_string_ref()
            .as_str()
            .unwrap_or_default()
            .to_string();
        let combined = builder.op(&name, &operands, &attributes_of(last), &types);
        let mut next = 0;
        for member in &self.members {
            for index in 0..member.result_count() {
                let old: Value = member.result(index).expect("in range").into();
                let new: Value = combined
                    .result(next)
                    .expect("one result per operand")
                    .into();
                ffi::replace_all_uses(old, new);
                next += 1;
            }
        }
        // Users of earlier members that sat before the last one now follow the combined op.
        let anchor = last.next_in_block().expect("a terminator follows");
        for &(op, seen) in &self.tainted_ops {
            if seen < self.members.len() {
                ffi::move_before(op, anchor);
            }
        }
        for &member in &self.members {
            // SAFETY: every use was replaced above; the member handles are dropped here.
            unsafe { ffi::erase(member) };
        }
        Some(self.members.len())
    }
}

/// The inverse, for consumers without variadic collectives (upstream `shard.all_reduce`,
/// `shard.reduce_scatter`): one single-operand collective per operand of `op`, in its place.
/// Returns the new ops (just `op` when it has one operand).
pub fn split<'c, 'a>(context: &'c Context, op: OperationRef<'c, 'a>) -> Vec<OperationRef<'c, 'a>> {
    let Some(name) = COMBINABLE.iter().find(|name| crate::ffi::op_is(op, name)) else {
        return vec![op];
    };
    if op.operand_count() < 2 {
        return vec![op];
    }
    let builder = Builder::before(context, op);
    let attributes = attributes_of(op);
    let mut singles = Vec::new();
    for index in 0..op.operand_count() {
        let operand = op.operand(index).expect("in range");
        let result = op.result(index).expect("one result per operand");
        let single = builder.op(name, &[operand], &attributes, &[result.r#type()]);
        ffi::replace_all_uses(result.into(), single.result(0).expect("one result").into());
        singles.push(single);
    }
    // SAFETY: every use was replaced above and `op` is not used after this.
    unsafe { ffi::erase(op) };
    singles
}
