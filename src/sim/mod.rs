//! The analytical simulator (docs/design.md#7-simulator): what one device of the mesh spends on a PartIR:HLO
//! program. Pure Rust: `passes::simulate` reads the IR into a [`Profile`] (work per op,
//! collectives, buffers); [`simulate`] prices it on a [`Device`] into a [`Report`].
//!
//! Step time = compute + communication (no overlap assumed: an upper bound a user can trust
//! before tuning overlap). Compute is a roofline per op, communication an alpha-beta ring per
//! collective on its axes' links, memory the peak of live local buffers.

pub mod cost;
pub mod deferred;
pub mod device;
pub mod liveness;
pub mod report;

pub use cost::{Bound, CollectiveKind, Work};
pub use device::{Device, DEFAULT_DEVICE};
pub use liveness::Buffer;
pub use report::{PartitionReport, Report, TacticReport};

use crate::ir::MeshAxis;
use std::collections::BTreeMap;

/// One computing op of the program, as the device sees it.
#[derive(Clone, Debug, PartialEq)]
pub struct OpProfile {
    pub name: String,
    /// `file:line:col`.
    pub location: String,
    pub work: Work,
    /// The share of its work spent on padding (`partir.padding_share`; 0 for most ops).
    pub padding: f64,
}

/// One collective: its kind, group and buffer size (see [`cost::collective_cost`]).
#[derive(Clone, Debug, PartialEq)]
pub struct CollectiveProfile {
    pub kind: CollectiveKind,
    /// sum, max, min for reductions.
    pub reduction: Option<String>,
    pub axes: Vec<String>,
    /// The number of devices in the group: the product of the axes' sizes.
    pub group_size: i64,
    pub bytes: f64,
    /// Buffers combined into this collective (1 unless several all_reduce operands were).
    pub operands: usize,
}

/// Everything the cost model needs from one program (per device).
#[derive(Clone, Debug, Default, PartialEq)]
pub struct Profile {
    pub mesh: Vec<MeshAxis>,
    pub ops: Vec<OpProfile>,
    pub collectives: Vec<CollectiveProfile>,
    pub buffers: Vec<Buffer>,
    /// Per step (the index a buffer's start/end refers to), the op there: `name at location`.
    pub steps: Vec<String>,
    pub argument_bytes: f64,
    /// How many of `buffers`, the first ones, are the function's arguments.
    pub argument_buffers: usize,
    pub result_bytes: f64,
    /// Things the model could not price exactly (an op without a rule, a dynamic shape).
    pub notes: Vec<String>,
    /// The loops that pipeline (see [`PipelineLoop`]).
    pub pipelines: Vec<PipelineLoop>,
}

/// A loop whose body hands its state to the next device along an axis once per iteration (a
/// `collective_permute`): GPipe's ticks as GSPMD and MaxText write them. With S devices along
/// the axis and T iterations, M = T - S + 1 microbatches go through, and every stage computes
/// in every tick: S - 1 ticks of each stage's compute are on padding, the bubble
/// (S-1)/(M+S-1) of the loop's compute.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct PipelineLoop {
    pub axes: Vec<String>,
    pub stages: i64,
    pub ticks: i64,
    /// Which way the state moves: to the next stage (false: forward), to the one before (true:
    /// JAX's transpose of a forward pipeline); None when the rotation does not say (2 stages).
    pub reversed: Option<bool>,
    /// `ops[range]`: the loop's ops, its body's and its inner loops' (times the trip counts).
    pub ops: std::ops::Range<usize>,
}

/// How many of the top ops (by time; identical ops grouped) a report lists.
pub const TOP_OPS: usize = 10;

/// Prices `profile` on `device`.
pub fn simulate(profile: &Profile, device: &Device) -> Report {
    use report::*;
    // Identical ops (name, work, bound) are one row with their count: a layer repeated 48 times
    // shows as one matmul x48, not 10 rows of the same matmul.
    let mut groups: BTreeMap<(String, u64, u64, u64, bool), OpRow> = BTreeMap::new();
    let mut totals = Totals::default();
    for op in &profile.ops {
        let (seconds, bound) = cost::op_time(&op.work, device);
        totals.flops += op.work.flops;
        totals.transcendentals += op.work.transcendentals;
        totals.bytes_accessed += op.work.bytes;
        totals.padding_flops += op.work.flops * op.padding;
        totals.padding_bytes += op.work.bytes * op.padding;
        totals.compute_seconds += seconds;
        totals.kernels += op.work.kernels;
        let key = (
            op.name.clone(),
            op.work.flops.to_bits(),
            op.work.bytes.to_bits(),
            op.work.transcendentals.to_bits(),
            op.work.matrix,
        );
        let row = groups.entry(key).or_insert_with(|| OpRow {
            op: op.name.clone(),
            count: 0,
            location: op.location.clone(),
            flops: 0.0,
            bytes: 0.0,
            seconds: 0.0,
            bound,
        });
        row.count += 1;
        row.flops += op.work.flops;
        row.bytes += op.work.bytes;
        row.seconds += seconds;
    }
    let mut top: Vec<OpRow> = groups.into_values().collect();
    top.sort_by(|a, b| b.seconds.total_cmp(&a.seconds));
    top.truncate(TOP_OPS);

    let mut rows: BTreeMap<(CollectiveKind, Option<String>, Vec<String>), CollectiveRow> =
        BTreeMap::new();
    let mut per_axes: BTreeMap<Vec<String>, AxisCommunication> = BTreeMap::new();
    for collective in &profile.collectives {
        let cost = cost::collective_of_operands(
            collective.kind,
            &collective.axes,
            &profile.mesh,
            collective.group_size,
            collective.bytes,
            collective.operands,
            device,
        );
        totals.communication_seconds += cost.seconds;
        let row = rows
            .entry((
                collective.kind,
                collective.reduction.clone(),
                collective.axes.clone(),
            ))
            .or_insert_with(|| CollectiveRow {
                kind: collective.kind,
                reduction: collective.reduction.clone(),
                axes: collective.axes.clone(),
                ..CollectiveRow::default()
            });
        row.count += 1;
        row.bytes += collective.bytes;
        row.traffic_bytes += cost.traffic;
        row.seconds += cost.seconds;
        if collective.kind != CollectiveKind::AllSlice {
            let axis =
                per_axes
                    .entry(collective.axes.clone())
                    .or_insert_with(|| AxisCommunication {
                        axes: collective.axes.clone(),
                        ..AxisCommunication::default()
                    });
            axis.count += 1;
            axis.bytes += collective.bytes;
            axis.traffic_bytes += cost.traffic;
            axis.seconds += cost.seconds;
        }
    }
    // Launching the step, and every kernel, costs beyond the ops' rooflines.
    totals.overhead_seconds = device.launch_overhead + totals.kernels * device.op_overhead;
    totals.compute_seconds += device.launch_overhead;
    totals.step_seconds = totals.compute_seconds + totals.communication_seconds;

    let (peak_bytes, peak_step) = liveness::peak(&profile.buffers);
    totals.peak_memory_bytes = peak_bytes;
    totals.memory_capacity_bytes = device.memory_bytes;
    totals.fits = peak_bytes <= device.memory_bytes;
    Report {
        device: DeviceSummary::of(device),
        mesh: profile.mesh.iter().map(AxisSize::of).collect(),
        devices: profile.mesh.iter().map(|axis| axis.size).product(),
        totals,
        memory: Memory {
            peak_bytes,
            arguments_bytes: profile.argument_bytes,
            results_bytes: profile.result_bytes,
            peak_at: profile.steps.get(peak_step).cloned().unwrap_or_default(),
            live_at_peak: live_at(profile, peak_step, LIVE_AT_PEAK),
            // Arguments and results are live to the end; the rest is the step's own.
            temporaries_peak_bytes: liveness::peak(
                &(profile.buffers.iter())
                    .skip(profile.argument_buffers)
                    .filter(|buffer| buffer.end != usize::MAX)
                    .cloned()
                    .collect::<Vec<_>>(),
            )
            .0,
        },
        communication: per_axes.into_values().collect(),
        collectives: rows.into_values().collect(),
        top_ops: top,
        notes: profile.notes.clone(),
        pipelines: profile
            .pipelines
            .iter()
            .map(|pipeline| {
                let compute_seconds: f64 = profile.ops[pipeline.ops.clone()]
                    .iter()
                    .map(|op| cost::op_time(&op.work, device).0)
                    .sum();
                let bubble = (pipeline.stages - 1) as f64 / pipeline.ticks as f64;
                report::Pipeline {
                    axes: pipeline.axes.clone(),
                    stages: pipeline.stages,
                    ticks: pipeline.ticks,
                    microbatches: pipeline.ticks - pipeline.stages + 1,
                    reversed: pipeline.reversed,
                    bubble,
                    compute_seconds,
                    idle_seconds: bubble * compute_seconds,
                }
            })
            .collect(),
    }
}

/// How many of the buffers live at the peak a report names.
const LIVE_AT_PEAK: usize = 8;

/// The `count` largest buffers the step itself holds at `step` (the arguments, which the
/// report totals apart, left out), each with the op that defines it (`profile.steps` at its
/// first step).
fn live_at(profile: &Profile, step: usize, count: usize) -> Vec<report::LiveBuffer> {
    let mut live: Vec<&Buffer> = (profile.buffers.iter())
        .skip(profile.argument_buffers)
        .filter(|buffer| buffer.start <= step && step <= buffer.end)
        .collect();
    live.sort_by(|a, b| b.bytes.total_cmp(&a.bytes));
    live.into_iter()
        .take(count)
        .map(|buffer| report::LiveBuffer {
            bytes: buffer.bytes,
            defined_at: profile.steps.get(buffer.start).cloned().unwrap_or_default(),
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn axis(name: &str, size: i64) -> MeshAxis {
        MeshAxis {
            name: name.into(),
            size,
        }
    }

    #[test]
    fn identical_ops_are_one_top_row_with_their_count() {
        let device = device::preset("tpu-v3").unwrap();
        let op = |name: &str, flops: f64, line: usize| OpProfile {
            name: name.into(),
            location: format!("m.mlir:{line}:3"),
            work: Work {
                flops,
                bytes: 1024.0,
                ..Work::default()
            },
            padding: 0.0,
        };
        let profile = Profile {
            ops: vec![
                op("linalg.matmul", 1e9, 1),
                op("linalg.generic", 1e3, 2),
                op("linalg.matmul", 1e9, 3),
            ],
            ..Profile::default()
        };
        let report = simulate(&profile, &device);
        assert_eq!(report.top_ops.len(), 2);
        let matmuls = &report.top_ops[0];
        assert_eq!((matmuls.count, matmuls.flops), (2, 2e9));
        assert_eq!(matmuls.location, "m.mlir:1:3");
        assert_eq!(matmuls.label(), "linalg.matmul x2");
        assert_eq!(report.top_ops[1].label(), "linalg.generic");
        assert_eq!(report.totals.flops, 2e9 + 1e3);
    }

    #[test]
    fn a_matmul_and_an_all_reduce_add_up() {
        let device = device::preset("tpu-v3").unwrap();
        let profile = Profile {
            mesh: vec![axis("batch", 4)],
            ops: vec![OpProfile {
                name: "linalg.matmul".into(),
                location: "m.mlir:3:5".into(),
                work: Work {
                    flops: 2.0 * 64.0 * 64.0 * 64.0,
                    transcendentals: 0.0,
                    bytes: 3.0 * 4.0 * 64.0 * 64.0,
                    matrix: true,
                    half: false,
                    kernels: 1.0,
                },
                padding: 0.0,
            }],
            collectives: vec![CollectiveProfile {
                kind: CollectiveKind::AllReduce,
                reduction: Some("sum".into()),
                axes: vec!["batch".into()],
                group_size: 4,
                bytes: 16384.0,
                operands: 1,
            }],
            buffers: vec![Buffer {
                bytes: 16384.0,
                start: 0,
                end: 1,
            }],
            steps: vec!["linalg.matmul at m.mlir:3:5".into(), "return".into()],
            ..Profile::default()
        };
        let report = simulate(&profile, &device);
        assert_eq!(report.devices, 4);
        assert_eq!(report.totals.flops, 524288.0);
        let compute = (49152.0 / 900e9_f64).max(524288.0 / 123e12);
        assert!((report.totals.compute_seconds - compute).abs() < 1e-15);
        let reduce = 6e-6 + 1.5 * 16384.0 / 82e9;
        assert!((report.totals.communication_seconds - reduce).abs() < 1e-12);
        assert_eq!(report.communication.len(), 1);
        assert_eq!(report.communication[0].traffic_bytes, 1.5 * 16384.0);
        assert_eq!(report.totals.peak_memory_bytes, 16384.0);
        assert_eq!(report.memory.peak_at, "linalg.matmul at m.mlir:3:5");
        assert!(report.totals.fits);
    }
}
