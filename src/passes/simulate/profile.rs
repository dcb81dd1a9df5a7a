//! Reading a PartIR:HLO function into a [`Profile`]: each op's work (FLOPs, transcendentals,
//! bytes, kernels) from its TMR rule and body, its collectives, and its buffers (see the module
//! docs of `super` for the conventions). A value that fuses into its readers
//! ([`super::fusion`]) moves no bytes and launches no kernel; it keeps its buffer in the
//! liveness (docs/design.md, "Simulator": XLA's CPU buffer assignment holds about as much).

use super::super::{names::SIMULATE as PASS, PassError};
use crate::{
    ffi,
    ir::{func::is_return, hlo, location::describe, types::tensor_bytes, Mesh},
    rules::{cost, is_multiply, Cost, Rules},
    sim::{Buffer, CollectiveKind, CollectiveProfile, OpProfile, Profile, Work},
    tmr::FactorKind,
};
use melior::ir::{
    block::BlockLike, operation::OperationLike, OperationRef, RegionLike, Value, ValueLike,
};
use std::collections::{HashMap, HashSet};

/// Ops that only move or reinterpret data: no FLOPs (each dialect's file in `crate::rules`
/// says which of its ops these are; `tensor` and `bufferization` ops all are).
fn is_data_movement(name: &str) -> bool {
    matches!(
        cost(name),
        Some(Cost::Moves | Cost::View | Cost::Free | Cost::Empty)
    )
}

/// Ops whose result is a view of operand 0 (no new buffer).
pub(super) fn is_view(name: &str) -> bool {
    cost(name) == Some(Cost::View)
}

/// Reads one function in program order.
pub(super) struct Reader {
    mesh: Option<Mesh>,
    rules: Rules,
    profile: Profile,
    /// Per SSA value (by id): its buffer.
    buffer_of: HashMap<usize, usize>,
    /// Values that are function arguments (never written in place).
    arguments: Vec<usize>,
    /// Per value, the last step that uses it (filled per block before reading it).
    last_use: HashMap<usize, usize>,
    /// Loop bodies' peaks added so far (each one buffer, see [`super::loop_memory::body_peak`]).
    transient: usize,
    /// Whether steps and ops carry their source locations (for a report); pricing alone
    /// skips them: describing every op's location was a tenth of a search's pricing.
    located: bool,
    /// Values that fuse into their readers' kernels (see [`super::fusion`]).
    fused: HashSet<usize>,
}

impl Reader {
    pub(super) fn new(mesh: Option<Mesh>, located: bool) -> Self {
        let profile = Profile {
            mesh: mesh
                .as_ref()
                .map(|mesh| mesh.axes.clone())
                .unwrap_or_default(),
            ..Profile::default()
        };
        Self {
            mesh,
            rules: Rules::default(),
            profile,
            buffer_of: HashMap::new(),
            arguments: Vec::new(),
            last_use: HashMap::new(),
            transient: 0,
            located,
            fused: HashSet::new(),
        }
    }

    pub(super) fn arguments(&mut self, body: melior::ir::BlockRef) {
        for index in 0..body.argument_count() {
            let Ok(argument) = body.argument(index) else {
                continue;
            };
            let value: Value = argument.into();
            let bytes = tensor_bytes(value.r#type());
            self.profile.argument_bytes += bytes;
            self.profile.argument_buffers += 1;
            let id = ffi::value_id(value);
            self.arguments.push(id);
            self.new_buffer(id, bytes, 0, usize::MAX);
        }
    }

    fn new_buffer(&mut self, value: usize, bytes: f64, start: usize, end: usize) {
        self.buffer_of.insert(value, self.profile.buffers.len());
        self.profile.buffers.push(Buffer { bytes, start, end });
    }

    /// Extends the buffer of `value` to `step`.
    fn touch(&mut self, value: usize, step: usize) {
        if let Some(&buffer) = self.buffer_of.get(&value) {
            let buffer = &mut self.profile.buffers[buffer];
            buffer.end = buffer.end.max(step);
        }
    }

    pub(super) fn block<'c>(
        &mut self,
        block: melior::ir::BlockRef<'c, '_>,
    ) -> Result<(), PassError<'c>> {
        // Last uses first, so that in-place decisions know whether a destination dies.
        let first_step = self.profile.steps.len();
        let mut step = first_step;
        self.fused
            .extend(super::fusion::fused_values(&crate::rules::regions::ops_of(
                block,
            )));
        let mut next = block.first_operation();
        while let Some(op) = next {
            for index in 0..op.operand_count() {
                if let Ok(operand) = op.operand(index) {
                    self.last_use.insert(ffi::value_id(operand), step);
                }
            }
            step += 1;
            next = op.next_in_block();
        }
        let mut next = block.first_operation();
        while let Some(op) = next {
            self.op(op)?;
            next = op.next_in_block();
        }
        Ok(())
    }

    fn op<'c>(&mut self, op: OperationRef<'c, '_>) -> Result<(), PassError<'c>> {
        let step = self.profile.steps.len();
        let name = op
            .name()
            .as_string_ref()
            .as_str()
            .unwrap_or("?")
            .to_string();
        let location = if self.located {
            describe(op.location(), "")
        } else {
            String::new()
        };
        self.profile.steps.push(if location.is_empty() {
            name.clone()
        } else {
            format!("{name} at {location}")
        });
        let operand_count = op.operand_count();
        let operands: Vec<Value> = (0..operand_count)
            .filter_map(|i| op.operand(i).ok())
            .collect();
        for operand in &operands {
            self.touch(ffi::value_id(*operand), step);
        }
        if is_return(op) {
            for operand in &operands {
                self.profile.result_bytes += tensor_bytes(operand.r#type());
                self.touch(ffi::value_id(*operand), usize::MAX);
            }
            return Ok(());
        }
        let linalg = ffi::linalg_info(op);
        if let Some(kind) = CollectiveKind::from_op_name(&name) {
            self.collective(op, kind)?;
        } else if cost(&name) == Some(Cost::Loop) {
            let (ops, collectives) = (self.profile.ops.len(), self.profile.collectives.len());
            self.looped(op, 1.0);
            self.pipeline(op, ops, collectives);
            // What one iteration holds beyond its carries, live while the loop runs (a
            // rematerialised layer's recomputed activations and its gradients).
            let temporaries = super::loop_memory::body_peak(op);
            if temporaries > 0.0 {
                self.transient += 1;
                self.new_buffer(usize::MAX - self.transient, temporaries, step, step);
            }
        } else {
            self.compute(op, linalg.as_ref(), &name, &location);
        }
        self.result_buffers(op, linalg.as_ref(), &name, &operands, step);
        Ok(())
    }

    fn collective<'c>(
        &mut self,
        op: OperationRef<'c, '_>,
        kind: CollectiveKind,
    ) -> Result<(), PassError<'c>> {
        let axes = hlo::collective_axes(op).unwrap_or_default();
        let mut group_size = 1;
        for axis in &axes {
            let size = self.mesh.as_ref().and_then(|mesh| mesh.axis_size(axis));
            group_size *= size.ok_or_else(|| {
                PassError::new(
                    op.location(),
                    format!("{PASS}: collective over axis '{axis}', which the module's mesh does not declare"),
                )
            })?;
        }
        let reduction = match kind {
            CollectiveKind::AllReduce | CollectiveKind::ReduceScatter => {
                hlo::reduction(op).map(|kind| kind.name().to_string())
            }
            _ => None,
        };
        // The buffer a collective is about: the gathered result of an all_gather, the operand
        // otherwise, all operands of a combined all_reduce packed in one buffer
        // (test/Collectives/Inputs/collectives.py counts the same way).
        let values: Vec<Value> = if kind == CollectiveKind::AllGather {
            op.result(0).map(|result| vec![result.into()])
        } else {
            (0..op.operand_count().max(1))
                .map(|index| op.operand(index))
                .collect()
        }
        .map_err(|_| PassError::new(op.location(), format!("{PASS}: malformed collective")))?;
        let bytes = if kind == CollectiveKind::AllSlice {
            0.0
        } else {
            values
                .iter()
                .map(|value| tensor_bytes(value.r#type()))
                .sum()
        };
        self.profile.collectives.push(CollectiveProfile {
            kind,
            reduction,
            axes,
            group_size,
            bytes,
            operands: values.len().max(1),
        });
        Ok(())
    }

    fn compute(
        &mut self,
        op: OperationRef,
        linalg: Option<&ffi::LinalgInfo>,
        name: &str,
        location: &str,
    ) {
        let Some(work) = self.work(op, linalg, name) else {
            return;
        };
        if work.flops > 0.0 || work.transcendentals > 0.0 || work.bytes > 0.0 {
            self.profile.ops.push(OpProfile {
                name: name.to_string(),
                location: location.to_string(),
                work,
                padding: crate::passes::padding_share::of(op),
            });
        }
    }

    /// The work of a loop's regions, each op as itself, `times` (the enclosing loops' trip
    /// counts) times its own trip count: a roofline is linear in the work, so an op's time
    /// scales exactly. The body's temporaries are one buffer of the loop's step
    /// ([`super::loop_memory::body_peak`]).
    fn looped(&mut self, op: OperationRef, times: f64) {
        let trips = crate::rules::trip_count(op).unwrap_or_else(|| {
            self.note(format!(
                "a {} whose trip count is not a constant: its body counted once",
                op.name().as_string_ref().as_str().unwrap_or("?")
            ));
            1
        });
        let times = times * trips as f64;
        for block in crate::rules::regions::blocks(op) {
            let ops = crate::rules::regions::ops_of(block);
            self.fused.extend(super::fusion::fused_values(&ops));
            for inner in ops {
                let name = op_name(inner);
                if cost(&name) == Some(Cost::Loop) {
                    self.looped(inner, times);
                    continue;
                }
                // A collective in a loop's body (Megatron's all_reduce in a scanned layer) runs
                // once per iteration: one entry per run, as the step has them.
                if let Some(kind) = CollectiveKind::from_op_name(&name) {
                    for _ in 0..times.round() as usize {
                        // Validated when its axes are read; an unknown axis is an error then.
                        if self.collective(inner, kind).is_err() {
                            break;
                        }
                    }
                    continue;
                }
                if inner.result_count() == 0 {
                    continue;
                }
                let linalg = ffi::linalg_info(inner);
                if let Some(work) = self.work(inner, linalg.as_ref(), &name) {
                    if work.flops > 0.0 || work.transcendentals > 0.0 || work.bytes > 0.0 {
                        let location = if self.located {
                            describe(inner.location(), "")
                        } else {
                            String::new()
                        };
                        self.profile.ops.push(OpProfile {
                            name,
                            location,
                            work: Work {
                                flops: work.flops * times,
                                transcendentals: work.transcendentals * times,
                                bytes: work.bytes * times,
                                matrix: work.matrix,
                                half: work.half,
                                kernels: work.kernels * times,
                            },
                            padding: crate::passes::padding_share::of(inner),
                        });
                    }
                }
            }
        }
    }

    /// Records loop `op` as a pipeline when its body rotates state along an axis, one
    /// `collective_permute` per iteration ([`crate::sim::PipelineLoop`]); `ops` and
    /// `collectives` are where its entries start in the profile.
    fn pipeline(&mut self, op: OperationRef, ops: usize, collectives: usize) {
        let Some(ticks) = crate::rules::trip_count(op) else {
            return;
        };
        let rotation = self.profile.collectives[collectives..]
            .iter()
            .find(|collective| collective.kind == CollectiveKind::CollectivePermute);
        if let Some(rotation) = rotation {
            if rotation.group_size > 1 && ticks >= rotation.group_size {
                self.profile.pipelines.push(crate::sim::PipelineLoop {
                    axes: rotation.axes.clone(),
                    stages: rotation.group_size,
                    ticks,
                    reversed: super::rotation::direction(op, rotation.group_size),
                    ops: ops..self.profile.ops.len(),
                });
            }
        }
    }

    /// FLOPs and bytes of a computing op (None for ops that cost nothing).
    fn work(
        &mut self,
        op: OperationRef,
        linalg: Option<&ffi::LinalgInfo>,
        name: &str,
    ) -> Option<Work> {
        let inits = linalg
            .map(|info| info.num_inputs)
            .unwrap_or(op.operand_count());
        // A fused value is neither written by its maker nor read by its readers.
        let written = |value: Value| !self.fused.contains(&ffi::value_id(value));
        let mut bytes: f64 = (0..inits.min(op.operand_count()))
            .filter_map(|i| op.operand(i).ok())
            .filter(|value| written(*value))
            .map(|value| tensor_bytes(value.r#type()))
            .sum();
        let operand_bytes = bytes;
        bytes += (0..op.result_count())
            .filter_map(|i| op.result(i).ok())
            .map(Value::from)
            .filter(|value| written(*value))
            .map(|value| tensor_bytes(value.r#type()))
            .sum::<f64>();
        // A kernel of its own, unless every result fuses into its readers.
        let fuses = op.result_count() > 0 && op.results().all(|result| !written(result.into()));
        let kernels = if fuses { 0.0 } else { 1.0 };
        // A block read or written at run-time offsets (a scan reading one layer's weights,
        // saving one layer's activations into the stack) moves the block, not the stacked
        // value: XLA slices and updates in place. Counting the whole stack per iteration
        // priced LLaMA-3 8B's 32-layer scan at 2.2 TB of DUS traffic per step.
        if crate::rules::block_access(op) {
            let rank =
                |value: Value| ffi::tensor_shape(value.r#type()).map_or(0, |shape| shape.len());
            let stacked = op.operand(0).map(rank).unwrap_or(0);
            let block = op
                .operands()
                .chain(op.results().map(Into::into))
                .filter(|value| rank(*value) == stacked)
                .map(|value| tensor_bytes(value.r#type()))
                .fold(f64::INFINITY, f64::min);
            // A block is written once, and read once unless its maker fused into the write
            // (an update) or the read fused into its readers (a slice).
            let update = op.results().next().is_some_and(|result| {
                op.operand(0)
                    .is_ok_and(|stack| stack.r#type() == result.r#type())
            });
            let read_again = if update {
                (1..op.operand_count())
                    .filter_map(|i| op.operand(i).ok())
                    .any(|value| rank(value) == stacked && written(value))
            } else {
                !fuses
            };
            return Some(Work {
                bytes: if read_again { 2.0 * block } else { block },
                kernels,
                ..Work::default()
            });
        }
        if is_data_movement(name) {
            return match cost(name) {
                Some(Cost::Moves) => Some(Work {
                    bytes,
                    kernels,
                    ..Work::default()
                }),
                // A view read by a kernel it fuses into: that kernel reads its source. A view
                // of a fused value that is itself written: the fusion writes it, a kernel.
                Some(Cost::View) if fuses => (operand_bytes > 0.0).then_some(Work {
                    bytes: operand_bytes,
                    ..Work::default()
                }),
                Some(Cost::View) if op.operand(0).is_ok_and(|source| !written(source)) => {
                    Some(Work {
                        bytes,
                        kernels,
                        ..Work::default()
                    })
                }
                _ => None,
            };
        }
        let rule = match self.rules.rule_with(op, linalg) {
            Some(Ok(rule)) => rule,
            _ => {
                if op.result_count() > 0 && !name.starts_with("partir") {
                    self.note(format!(
                        "no rule for {name}: counted as moving its bytes only"
                    ));
                }
                return Some(Work {
                    bytes,
                    kernels,
                    ..Work::default()
                });
            }
        };
        let loop_sizes: Vec<i64> = rule
            .factors
            .iter()
            .map(|factor| factor.size.max(1))
            .collect();
        let iterations = match linalg {
            Some(info) => super::iterations::useful_iterations(op, info, &loop_sizes),
            None => loop_sizes.iter().map(|&size| size as f64).product(),
        };
        let reduces = rule
            .factors()
            .iter()
            .any(|factor| matches!(factor.kind, FactorKind::Reduction(_)));
        let (per_iteration, transcendental, multiplies) = if linalg.is_some() {
            body_ops(op)
        } else {
            match cost(name) {
                Some(Cost::Transcendental) => (0.0, 1.0, false),
                Some(Cost::Contraction) => (2.0, 0.0, true),
                Some(Cost::Convolution) => {
                    return Some(Work {
                        flops: super::iterations::convolution_flops(op, &rule),
                        bytes,
                        matrix: true,
                        half: half_operands(op),
                        kernels,
                        ..Work::default()
                    })
                }
                Some(Cost::Flops(flops)) => (flops, 0.0, false),
                _ => (0.0, 0.0, false),
            }
        };
        Some(Work {
            flops: per_iteration * iterations,
            transcendentals: transcendental * iterations,
            bytes,
            matrix: reduces && multiplies,
            half: half_operands(op),
            kernels,
        })
    }

    fn note(&mut self, note: String) {
        if !self.profile.notes.contains(&note) {
            self.profile.notes.push(note);
        }
    }

    /// Gives each tensor result a buffer (or the buffer it is a view of, or writes in place).
    fn result_buffers(
        &mut self,
        op: OperationRef,
        linalg: Option<&ffi::LinalgInfo>,
        name: &str,
        operands: &[Value],
        step: usize,
    ) {
        for index in 0..op.result_count() {
            let Ok(result) = op.result(index) else {
                continue;
            };
            let result: Value = result.into();
            let id = ffi::value_id(result);
            let bytes = tensor_bytes(result.r#type());
            // A destination not written yet has no buffer: the op writing into it owns one.
            if bytes == 0.0 || cost(name) == Some(Cost::Empty) {
                continue;
            }
            let shared = if is_view(name) {
                operands.first().map(|source| ffi::value_id(*source))
            } else if crate::rules::carried_body(op).is_some() {
                // A loop's state is updated in place: result k is carry k's buffer when
                // nothing reads the carry after the loop (XLA copies it otherwise). JAX's
                // backward scan carries the forward's stacked activations through unchanged;
                // held twice, LLaMA-3 8B scanned with FSDP on 64 devices peaked at 133.4 GiB
                // per device, 1.76x XLA's CPU buffer assignment.
                operands
                    .get(index)
                    .map(|carry| ffi::value_id(*carry))
                    .filter(|carry| self.dies_at(*carry, step))
            } else if let Some(info) = linalg {
                // Destination passing: result k is written into operand num_inputs + k.
                operands
                    .get(info.num_inputs + index)
                    .map(|init| ffi::value_id(*init))
                    .filter(|init| self.dies_at(*init, step))
            } else {
                None
            };
            match shared.and_then(|source| self.buffer_of.get(&source).copied()) {
                Some(buffer) => {
                    self.buffer_of.insert(id, buffer);
                }
                None => self.new_buffer(id, bytes, step, step),
            }
        }
    }

    /// Whether the value `id` is last read at `step` and is the step's own (not an argument,
    /// which the caller holds): its buffer may then be written in place.
    fn dies_at(&self, id: usize, step: usize) -> bool {
        self.last_use.get(&id) == Some(&step) && !self.arguments.contains(&id)
    }

    pub(super) fn finish(self) -> Profile {
        self.profile
    }
}

/// Per iteration of a linalg op: (FLOPs, transcendentals, multiplies?) of its body.
pub(super) fn body_ops(op: OperationRef) -> (f64, f64, bool) {
    let (mut flops, mut transcendentals, mut multiplies) = (0.0, 0.0, false);
    let Some(body) = op.region(0).ok().and_then(|region| region.first_block()) else {
        return (0.0, 0.0, false);
    };
    let mut next = body.first_operation();
    while let Some(inner) = next {
        let name = inner
            .name()
            .as_string_ref()
            .as_str()
            .unwrap_or("")
            .to_string();
        match cost(&name) {
            Some(Cost::Transcendental) => transcendentals += 1.0,
            Some(Cost::Flops(per_op)) => {
                flops += per_op;
                multiplies |= is_multiply(&name);
            }
            _ => {}
        }
        next = inner.next_in_block();
    }
    (flops, transcendentals, multiplies)
}

/// Whether `op`'s first operand holds 16-bit floats (bf16, f16): mixed precision's matmuls
/// run at the device's 16-bit matrix peak.
fn half_operands(op: OperationRef) -> bool {
    op.operand(0).is_ok_and(|operand| {
        let ty = operand.r#type();
        crate::ffi::is_ranked_tensor(ty) && {
            let element = crate::ffi::shaped_element(ty);
            use melior::ir::r#type::TypeLike;
            element.is_bf16() || element.is_f16()
        }
    })
}

/// `op`'s name, `?` when it is not UTF-8.
pub(super) fn op_name(op: OperationRef) -> String {
    op.name()
        .as_string_ref()
        .as_str()
        .unwrap_or("?")
        .to_string()
}
