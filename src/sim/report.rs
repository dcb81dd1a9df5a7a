//! What the simulator reports: per-device totals and breakdowns ([`Report`]), and the
//! per-tactic story of a schedule ([`PartitionReport`]). Serialised as JSON for tools; shown
//! as text and HTML for people by `crate::report`.

use super::{cost::Bound, CollectiveKind, Device};
use crate::ir::MeshAxis;
use serde::Serialize;
use std::collections::BTreeMap;

/// The device a report was priced on.
#[derive(Clone, Debug, Default, PartialEq, Serialize)]
pub struct DeviceSummary {
    pub name: String,
    pub matrix_flops: f64,
    pub vector_flops: f64,
    pub memory_bytes: f64,
    pub memory_bandwidth: f64,
    pub link_bandwidth: f64,
    pub link_latency: f64,
    /// Seconds per kernel and per step beyond the rooflines (0 on the presets).
    pub op_overhead: f64,
    pub launch_overhead: f64,
    pub latency_per_operand: bool,
    pub sources: Vec<String>,
}

impl DeviceSummary {
    pub fn of(device: &Device) -> Self {
        Self {
            name: device.name.clone(),
            matrix_flops: device.matrix_flops,
            vector_flops: device.vector_flops,
            memory_bytes: device.memory_bytes,
            memory_bandwidth: device.memory_bandwidth,
            link_bandwidth: device.link.bandwidth,
            link_latency: device.link.latency,
            op_overhead: device.op_overhead,
            launch_overhead: device.launch_overhead,
            latency_per_operand: device.latency_per_operand,
            sources: device.sources.clone(),
        }
    }
}

#[derive(Clone, Debug, Default, PartialEq, Serialize)]
pub struct AxisSize {
    pub name: String,
    pub size: i64,
}

impl AxisSize {
    pub fn of(axis: &MeshAxis) -> Self {
        Self {
            name: axis.name.clone(),
            size: axis.size,
        }
    }

    /// A mesh of `(name, size)` axes, as tests write one.
    pub fn mesh(axes: &[(&str, i64)]) -> Vec<AxisSize> {
        axes.iter()
            .map(|(name, size)| AxisSize {
                name: name.to_string(),
                size: *size,
            })
            .collect()
    }
}

/// Per-device totals.
#[derive(Clone, Debug, Default, PartialEq, Serialize)]
pub struct Totals {
    pub flops: f64,
    pub transcendentals: f64,
    pub bytes_accessed: f64,
    /// The FLOPs and bytes spent on padding (dims an axis does not divide, padded to whole
    /// tiles: docs/design.md#uneven-dims), included in `flops` and `bytes_accessed`.
    pub padding_flops: f64,
    pub padding_bytes: f64,
    /// The ops' time (roofline and per-kernel overhead) and the step's launch overhead.
    pub compute_seconds: f64,
    pub communication_seconds: f64,
    pub step_seconds: f64,
    /// Kernels launched (ops not fused into their consumers; a loop body's once per trip).
    pub kernels: f64,
    /// The part of `compute_seconds` that is overhead: kernels and the step's launch.
    pub overhead_seconds: f64,
    pub peak_memory_bytes: f64,
    pub memory_capacity_bytes: f64,
    pub fits: bool,
}

#[derive(Clone, Debug, Default, PartialEq, Serialize)]
pub struct Memory {
    pub peak_bytes: f64,
    pub arguments_bytes: f64,
    pub results_bytes: f64,
    /// The op at which the peak is first reached.
    pub peak_at: String,
    /// The largest buffers live at the peak, largest first (what to shard or rematerialise).
    pub live_at_peak: Vec<LiveBuffer>,
    /// The peak of the temporaries alone (neither arguments nor results): XLA's
    /// `temp_size_in_bytes`, which holds its outputs in buffers of their own for the whole step
    /// (`tools/xla_memory.py` compares the two).
    pub temporaries_peak_bytes: f64,
}

/// One buffer live at the peak: its size and the op that defines it (a loop's body
/// temporaries are one buffer defined by the loop).
#[derive(Clone, Debug, Default, PartialEq, Serialize)]
pub struct LiveBuffer {
    pub bytes: f64,
    pub defined_at: String,
}

/// The collectives over one set of axes (all_slice excluded: it moves nothing).
#[derive(Clone, Debug, Default, PartialEq, Serialize)]
pub struct AxisCommunication {
    pub axes: Vec<String>,
    pub count: usize,
    /// Buffer bytes (the `collectives.py` convention).
    pub bytes: f64,
    /// Bytes this device sends.
    pub traffic_bytes: f64,
    pub seconds: f64,
}

/// The collectives of one kind, reduction and axes.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct CollectiveRow {
    pub kind: CollectiveKind,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub reduction: Option<String>,
    pub axes: Vec<String>,
    pub count: usize,
    pub bytes: f64,
    pub traffic_bytes: f64,
    pub seconds: f64,
}

impl Default for CollectiveRow {
    fn default() -> Self {
        Self {
            kind: CollectiveKind::AllReduce,
            reduction: None,
            axes: Vec::new(),
            count: 0,
            bytes: 0.0,
            traffic_bytes: 0.0,
            seconds: 0.0,
        }
    }
}

impl CollectiveRow {
    /// `all_reduce sum` / `all_gather`.
    pub fn label(&self) -> String {
        match &self.reduction {
            Some(reduction) => format!("{} {reduction}", self.kind.name()),
            None => self.kind.name().to_string(),
        }
    }
}

/// One of the most expensive ops, or `count` identical ones (same name and work): then the
/// figures are their totals and `location` is the first one's.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct OpRow {
    pub op: String,
    pub count: usize,
    pub location: String,
    pub flops: f64,
    pub bytes: f64,
    pub seconds: f64,
    pub bound: Bound,
}

impl OpRow {
    /// `linalg.matmul`, or `linalg.matmul x24` for a group.
    pub fn label(&self) -> String {
        match self.count {
            0 | 1 => self.op.clone(),
            count => format!("{} x{count}", self.op),
        }
    }
}

/// The simulator's answer for one program, per device.
#[derive(Clone, Debug, Default, PartialEq, Serialize)]
pub struct Report {
    pub device: DeviceSummary,
    pub mesh: Vec<AxisSize>,
    /// Devices in the mesh (1 without one).
    pub devices: i64,
    pub totals: Totals,
    pub memory: Memory,
    pub communication: Vec<AxisCommunication>,
    pub collectives: Vec<CollectiveRow>,
    pub top_ops: Vec<OpRow>,
    pub notes: Vec<String>,
    /// The pipelines' bubbles, one per loop that rotates state along an axis.
    pub pipelines: Vec<Pipeline>,
}

/// A pipeline's bubble: `stages` devices along `axes`, `ticks` iterations for
/// `microbatches = ticks - stages + 1`; each stage computes on padding in `stages - 1` ticks,
/// `bubble` = (S-1)/(M+S-1) of the loop's compute, `idle_seconds` of it.
#[derive(Clone, Debug, Default, PartialEq, Serialize)]
pub struct Pipeline {
    pub axes: Vec<String>,
    pub stages: i64,
    pub ticks: i64,
    pub microbatches: i64,
    /// The state moves to the stage before (a backward pipeline); None: not known (2 stages).
    pub reversed: Option<bool>,
    pub bubble: f64,
    pub compute_seconds: f64,
    pub idle_seconds: f64,
}

impl Report {
    pub fn json(&self) -> String {
        to_json(self)
    }

    /// The count of communicating collectives per kind label (`all_reduce sum`: 5), for
    /// per-tactic differences.
    pub fn collective_counts(&self) -> BTreeMap<String, usize> {
        let mut counts = BTreeMap::new();
        // all_slice is local: not communication a tactic adds.
        for row in self
            .collectives
            .iter()
            .filter(|row| row.kind != CollectiveKind::AllSlice)
        {
            *counts.entry(row.label()).or_insert(0) += row.count;
        }
        counts
    }
}

/// The name of the row for the program before the first tactic.
pub const UNPARTITIONED: &str = "(unpartitioned)";

/// One tactic's outcome: the program after it, priced.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct TacticReport {
    /// `(unpartitioned)` for the program before the first tactic.
    pub tactic: String,
    pub axis: String,
    /// Collectives this tactic added (negative: removed), by kind label.
    pub collectives_added: BTreeMap<String, i64>,
    /// What propagation did in this tactic (absent for the unpartitioned program).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub propagation: Option<PropagationSummary>,
    /// For a tactic an `auto` tactic found (the first of its axis): what the search did.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub search: Option<SearchSummary>,
    pub report: Report,
}

/// What the automatic partitioner did for one axis (passes::auto).
#[derive(Clone, Debug, Default, PartialEq, Serialize)]
pub struct SearchSummary {
    pub axis: String,
    /// Candidate actions before the analysis: a tile per (argument, divisible dim) and a
    /// replicate per argument.
    pub raw_actions: usize,
    /// After grouping repeated layers, grouping what propagation ties together and dropping
    /// what propagation refuses or what changes nothing.
    pub reduced_actions: usize,
    /// Distinct plans priced by the search.
    pub evaluations: usize,
    /// Plans priced by the analysis: each group's tile alone.
    pub probes: usize,
    pub seconds: f64,
    /// Every plan was priced (the result is the exact optimum of the reduced space).
    pub exhausted: bool,
    /// The time limit stopped the search.
    pub timed_out: bool,
    /// (plans priced so far, best step time so far in seconds), each time the best improved.
    pub curve: Vec<(usize, f64)>,
    /// What was decided, per group of values.
    pub decisions: Vec<Decision>,
    /// How plans were priced: on the whole program, or on two cuts of its repeated layers
    /// (`48 layers folded into cuts of 1 and 2 (0.12% off on the base)`).
    pub pricing: String,
}

/// One decision of a search: `params/layers/*/w1` tiled on dim 1 (with everything it ties).
#[derive(Clone, Debug, Default, PartialEq, Serialize)]
pub struct Decision {
    /// The selector of the group decided.
    pub group: String,
    /// `tile dim 1`, `replicate`, `shard dim 0 (elementwise)`.
    pub decision: String,
    /// The other arguments propagation tiles with it.
    pub ties: Vec<String>,
}

/// Separates a propagation stop's reason (the same at every place it happens, so reports group
/// them) from what it means at this place (which value, dim and size, and what it costs).
pub const STOP_DETAIL: &str = " \u{2014} ";

/// A stop's reason, without what it means at its place: what reports group stops by.
pub fn stop_reason(message: &str) -> &str {
    message.split(STOP_DETAIL).next().unwrap_or_default()
}

/// A tactic's propagation: ops partitioned, and each place it stopped with why and what it
/// costs, in the model's terms (which value, dim and size).
#[derive(Clone, Debug, Default, PartialEq, Serialize)]
pub struct PropagationSummary {
    pub ops_partitioned: usize,
    pub conflicts: usize,
    pub stops: Vec<PropagationStop>,
}

/// Where and why propagation stopped, as propagation found it (not parsed from its remark):
/// `{"location": "mqa.mlir:263:11", "op": "linalg.generic", "axis": "model", "reason": "factor j
/// must be replicated", "detail": "operand 0 (...) is split on dim 1 ...", "message": "stopped at
/// 'linalg.generic' on axis 'model': ..."}`.
#[derive(Clone, Debug, Default, PartialEq, Serialize)]
pub struct PropagationStop {
    pub location: String,
    /// The op, as a user knows it (a custom call with its target).
    pub op: String,
    pub axis: String,
    /// Why: the same at every place it happens (what reports group stops by).
    pub reason: String,
    /// What it means at this place: the value, its dim and size, and what it costs.
    pub detail: String,
    /// The remark's text: `stopped at 'OP' on axis 'AXIS': REASON — DETAIL`.
    pub message: String,
}

impl PropagationStop {
    /// The stop with a buffer location (`:9:10`, no file) placed in `source`.
    pub fn located_in(mut self, source: &str) -> Self {
        if self.location.starts_with(':') || self.location.is_empty() {
            self.location = format!("{source}{}", self.location);
        }
        self
    }

    pub fn new(location: String, op: String, axis: String, reason: String, detail: String) -> Self {
        let mut message = format!("stopped at '{op}' on axis '{axis}': {reason}");
        if !detail.is_empty() {
            message.push_str(STOP_DETAIL);
            message.push_str(&detail);
        }
        Self {
            location,
            op,
            axis,
            reason,
            detail,
            message,
        }
    }
}

/// A schedule's story: the program before any tactic, then after each.
#[derive(Clone, Debug, Default, PartialEq, Serialize)]
pub struct PartitionReport {
    pub model: String,
    pub schedule: String,
    pub device: String,
    pub tactics: Vec<TacticReport>,
    /// How each argument and result of the final program is split (after lowering).
    pub shardings: Vec<ValueSharding>,
    /// What the next step pays to gather back the state this one returns split otherwise
    /// than it came in ([`super::deferred`]): 0 for a plan that returns its state as it took
    /// it. The step a training loop repeats costs the last tactic's step time plus this.
    pub deferred_seconds: f64,
}

/// One argument's or result's final sharding: per dim, the mesh axes splitting it (major to
/// minor), and the shape each device holds.
#[derive(Clone, Debug, Default, PartialEq, Serialize)]
pub struct ValueSharding {
    /// `params/layers/0/wq`, or `result#2` / `arg3` without a `partir.name`.
    pub name: String,
    pub is_result: bool,
    pub axes: Vec<Vec<String>>,
    pub local_shape: Vec<i64>,
}

impl ValueSharding {
    /// A value named `name` split on `axes` per dim, `local_shape` per device.
    pub fn new(name: &str, is_result: bool, axes: &[&[&str]], local_shape: &[i64]) -> Self {
        ValueSharding {
            name: name.into(),
            is_result,
            axes: axes
                .iter()
                .map(|dim| dim.iter().map(|axis| axis.to_string()).collect())
                .collect(),
            local_shape: local_shape.to_vec(),
        }
    }

    /// The whole value's shape: each dim of [`ValueSharding::local_shape`] times the sizes of
    /// the mesh axes splitting it (an axis not in `mesh` counts 1).
    pub fn global_shape(&self, mesh: &[AxisSize]) -> Vec<i64> {
        self.local_shape
            .iter()
            .enumerate()
            .map(|(dim, &local)| {
                let split: i64 = self
                    .axes
                    .get(dim)
                    .into_iter()
                    .flatten()
                    .map(|axis| {
                        mesh.iter()
                            .find(|mesh_axis| &mesh_axis.name == axis)
                            .map_or(1, |mesh_axis| mesh_axis.size)
                    })
                    .product();
                local * split
            })
            .collect()
    }

    /// `["-> params/wq", "[-, model]", "64x32"]`: the name (results marked `->`), the axes
    /// splitting each dim (`-` for none, `batch*model` for two), and the shape each device holds.
    pub fn cells(&self) -> [String; 3] {
        let dims: Vec<String> = self
            .axes
            .iter()
            .map(|axes| {
                if axes.is_empty() {
                    "-".to_string()
                } else {
                    axes.join("*")
                }
            })
            .collect();
        [
            format!("{}{}", if self.is_result { "-> " } else { "" }, self.name),
            format!("[{}]", dims.join(", ")),
            if self.local_shape.is_empty() {
                "scalar".into()
            } else {
                crate::text::shape(&self.local_shape)
            },
        ]
    }
}

impl PartitionReport {
    pub fn json(&self) -> String {
        to_json(self)
    }

    /// Adds the report after `tactic`, with the collectives it added relative to the last.
    pub fn push(&mut self, tactic: &str, axis: &str, report: Report) {
        let before = self
            .tactics
            .last()
            .map(|last| last.report.collective_counts())
            .unwrap_or_default();
        let after = report.collective_counts();
        let mut added = BTreeMap::new();
        for label in before.keys().chain(after.keys()) {
            let delta =
                *after.get(label).unwrap_or(&0) as i64 - *before.get(label).unwrap_or(&0) as i64;
            if delta != 0 {
                added.insert(label.clone(), delta);
            }
        }
        self.tactics.push(TacticReport {
            tactic: tactic.into(),
            axis: axis.into(),
            collectives_added: added,
            propagation: None,
            search: None,
            report,
        });
    }
}

fn to_json(value: &impl Serialize) -> String {
    let mut text = serde_json::to_string_pretty(value).expect("reports are plain data");
    text.push('\n');
    text
}

#[cfg(test)]
pub(crate) mod tests {
    use super::*;

    /// A report with `count` collectives of each kind (`all_reduce`, ...), nothing else.
    pub(crate) fn with_collectives(rows: &[(&str, usize)]) -> Report {
        Report {
            collectives: rows
                .iter()
                .map(|(kind, count)| CollectiveRow {
                    kind: CollectiveKind::from_op_name(&format!("partir_hlo.{kind}")).unwrap(),
                    count: *count,
                    ..CollectiveRow::default()
                })
                .collect(),
            ..Report::default()
        }
    }

    #[test]
    fn tactics_report_the_collectives_they_add() {
        let mut story = PartitionReport::default();
        story.push("(unpartitioned)", "", with_collectives(&[]));
        story.push("BP", "batch", with_collectives(&[("all_reduce", 5)]));
        story.push(
            "Z3",
            "batch",
            with_collectives(&[("all_reduce", 2), ("all_gather", 6)]),
        );
        assert!(story.tactics[0].collectives_added.is_empty());
        assert_eq!(story.tactics[1].collectives_added["all_reduce"], 5);
        assert_eq!(story.tactics[2].collectives_added["all_reduce"], -3);
        assert_eq!(story.tactics[2].collectives_added["all_gather"], 6);
        let json = story.json();
        assert!(json.contains("\"collectives_added\""), "{json}");
    }
}
