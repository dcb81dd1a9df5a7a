//! The cost formulas: a roofline per op (plus the device's per-kernel overhead when the op is
//! a kernel of its own) and an alpha-beta ring model per collective.
//!
//! Worked example (tpu-v3: 123 TFLOP/s, 900 GB/s; ring link 82 GB/s, 1 µs):
//! - a 1024x1024x1024 f32 matmul: 2.1 GFLOP and 12 MiB moved → max(17.5 µs, 14.0 µs) = 17.5 µs,
//!   compute bound;
//! - an all_reduce of 4 MiB over a 4-device axis: 2·3·1 µs + 2·(3/4)·4 MiB / 82 GB/s = 82.7 µs.

use super::device::{Device, Link};
use serde::Serialize;

/// What one op asks of a device.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct Work {
    /// Floating-point operations (not transcendentals).
    pub flops: f64,
    /// exp, log, tanh, rsqrt, ... evaluations.
    pub transcendentals: f64,
    /// Bytes read and written in device memory.
    pub bytes: f64,
    /// Runs on the matrix units (a contraction).
    pub matrix: bool,
    /// Its operands are 16-bit floats (bf16, f16): a contraction runs at the 16-bit peak.
    pub half: bool,
    /// Kernels it launches: 1 for an op that is a kernel of its own, 0 for one fused into its
    /// consumers' kernel, a loop's trip count for an op in its body. Each pays the device's
    /// per-kernel overhead.
    pub kernels: f64,
}

/// Which roof an op hits.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize)]
#[serde(rename_all = "lowercase")]
pub enum Bound {
    Compute,
    Memory,
}

/// Roofline time of `work` on `device`: the slower of computing and moving its bytes, plus the
/// device's per-kernel overhead when the op is a kernel. Transcendentals count as one vector
/// FLOP each.
pub fn op_time(work: &Work, device: &Device) -> (f64, Bound) {
    let peak = if work.matrix && work.half {
        device.matrix_flops_16
    } else if work.matrix {
        device.matrix_flops
    } else {
        device.vector_flops
    };
    let compute = (work.flops + work.transcendentals) / peak;
    let memory = work.bytes / device.memory_bandwidth;
    let overhead = work.kernels * device.op_overhead;
    if compute >= memory {
        (overhead + compute, Bound::Compute)
    } else {
        (overhead + memory, Bound::Memory)
    }
}

/// The collective kinds of PartIR:HLO.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum CollectiveKind {
    AllGather,
    AllReduce,
    ReduceScatter,
    AllToAll,
    AllSlice,
    CollectivePermute,
}

impl CollectiveKind {
    pub fn from_op_name(name: &str) -> Option<Self> {
        Some(match name.strip_prefix("partir_hlo.")? {
            "all_gather" => Self::AllGather,
            "all_reduce" => Self::AllReduce,
            "reduce_scatter" => Self::ReduceScatter,
            "all_to_all" => Self::AllToAll,
            "all_slice" => Self::AllSlice,
            "collective_permute" => Self::CollectivePermute,
            _ => return None,
        })
    }

    pub fn name(self) -> &'static str {
        match self {
            Self::AllGather => "all_gather",
            Self::AllReduce => "all_reduce",
            Self::ReduceScatter => "reduce_scatter",
            Self::AllToAll => "all_to_all",
            Self::AllSlice => "all_slice",
            Self::CollectivePermute => "collective_permute",
        }
    }
}

/// What a collective costs one device.
#[derive(Clone, Debug, PartialEq)]
pub struct CollectiveCost {
    /// Bytes this device sends over the links.
    pub traffic: f64,
    pub seconds: f64,
}

/// Ring alpha-beta cost of a collective over a group of `group_size` devices. `buffer_bytes`
/// is the size of the whole buffer on one device: the gathered result of an all_gather, the
/// operand of an all_reduce, reduce_scatter or all_to_all (the convention of
/// `test/Collectives/Inputs/collectives.py`). With n devices and link (alpha, beta = 1/bandwidth):
/// - all_gather, reduce_scatter: (n-1)·alpha + (n-1)/n · S · beta
/// - all_reduce (reduce_scatter then all_gather): twice that
/// - all_to_all (each device keeps 1/n, sends the rest): (n-1)·alpha + (n-1)/n · S · beta
/// - all_slice: local, free;
/// - collective_permute (each device sends its buffer to one other): alpha + S · beta.
pub fn collective_cost(
    kind: CollectiveKind,
    group_size: i64,
    buffer_bytes: f64,
    link: &Link,
) -> CollectiveCost {
    if group_size <= 1 || kind == CollectiveKind::AllSlice {
        return CollectiveCost {
            traffic: 0.0,
            seconds: 0.0,
        };
    }
    if kind == CollectiveKind::CollectivePermute {
        return CollectiveCost {
            traffic: buffer_bytes,
            seconds: link.latency + buffer_bytes / link.bandwidth,
        };
    }
    let n = group_size as f64;
    let phases = if kind == CollectiveKind::AllReduce {
        2.0
    } else {
        1.0
    };
    let traffic = phases * (n - 1.0) / n * buffer_bytes;
    CollectiveCost {
        traffic,
        seconds: phases * (n - 1.0) * link.latency + traffic / link.bandwidth,
    }
}

/// The time of a whole collective on `device` over `axes` of `mesh` (whose layout says which
/// groups cross nodes).
pub fn collective_on(
    kind: CollectiveKind,
    axes: &[String],
    mesh: &[crate::ir::MeshAxis],
    group_size: i64,
    buffer_bytes: f64,
    device: &Device,
) -> CollectiveCost {
    collective_of_operands(kind, axes, mesh, group_size, buffer_bytes, 1, device)
}

/// [`collective_on`] for a collective of `operands` buffers combined into one (partir and XLA
/// combine a step's gradient all_reduces): one latency, unless the device runs a combined
/// collective operand by operand (`Device::latency_per_operand`: XLA's CPU runtime), when each
/// operand pays it.
pub fn collective_of_operands(
    kind: CollectiveKind,
    axes: &[String],
    mesh: &[crate::ir::MeshAxis],
    group_size: i64,
    buffer_bytes: f64,
    operands: usize,
    device: &Device,
) -> CollectiveCost {
    let mut link = device.link_over(axes, mesh);
    if device.latency_per_operand {
        link.latency *= operands.max(1) as f64;
    }
    collective_cost(kind, group_size, buffer_bytes, &link)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::sim::device::preset;

    fn close(a: f64, b: f64) -> bool {
        (a - b).abs() <= 1e-9 * b.abs().max(1e-30)
    }

    #[test]
    fn a_large_matmul_is_compute_bound() {
        let device = preset("tpu-v3").unwrap();
        let (m, n, k) = (1024.0, 1024.0, 1024.0);
        let work = Work {
            flops: 2.0 * m * n * k,
            transcendentals: 0.0,
            bytes: 4.0 * (m * k + k * n + m * n),
            matrix: true,
            half: false,
            kernels: 1.0,
        };
        let (seconds, bound) = op_time(&work, &device);
        assert_eq!(bound, Bound::Compute);
        // The presets have no kernel overhead.
        assert!(close(seconds, 2.0 * 1024f64.powi(3) / 123e12));
    }

    #[test]
    fn an_elementwise_add_is_memory_bound() {
        let device = preset("a100-40gb").unwrap();
        let elements = 1e6;
        let work = Work {
            flops: elements,
            transcendentals: 0.0,
            bytes: 12.0 * elements,
            matrix: false,
            half: false,
            kernels: 0.0,
        };
        let (seconds, bound) = op_time(&work, &device);
        assert_eq!(bound, Bound::Memory);
        assert!(close(seconds, 12e6 / 1555e9));
    }

    #[test]
    fn a_kernel_pays_the_overhead_a_fused_op_does_not() {
        let mut device = preset("a100-40gb").unwrap();
        device.op_overhead = 5e-6;
        let fused = Work {
            flops: 1e6,
            bytes: 0.0,
            ..Work::default()
        };
        let kernel = Work {
            kernels: 1.0,
            ..fused.clone()
        };
        let (alone, _) = op_time(&fused, &device);
        assert!(close(alone, 1e6 / 19.5e12));
        let (launched, bound) = op_time(&kernel, &device);
        assert_eq!(bound, Bound::Compute);
        assert!(close(launched, 5e-6 + 1e6 / 19.5e12));
    }

    #[test]
    fn ring_all_reduce_moves_twice_the_all_gather() {
        let link = Link {
            bandwidth: 100e9,
            latency: 1e-6,
        };
        let bytes = 4.0 * 1024.0 * 1024.0;
        let gather = collective_cost(CollectiveKind::AllGather, 4, bytes, &link);
        assert!(close(gather.traffic, 0.75 * bytes));
        assert!(close(gather.seconds, 3.0e-6 + 0.75 * bytes / 100e9));
        let reduce = collective_cost(CollectiveKind::AllReduce, 4, bytes, &link);
        assert!(close(reduce.traffic, 1.5 * bytes));
        assert!(close(reduce.seconds, 6.0e-6 + 1.5 * bytes / 100e9));
        let scatter = collective_cost(CollectiveKind::ReduceScatter, 4, bytes, &link);
        assert_eq!(scatter, gather);
        // One hop: a halo or a mirror moves the buffer once, whatever the group.
        let permute = collective_cost(CollectiveKind::CollectivePermute, 4, bytes, &link);
        assert!(close(permute.traffic, bytes));
        assert!(close(permute.seconds, 1.0e-6 + bytes / 100e9));
    }

    #[test]
    fn a_combined_collective_pays_one_latency_unless_the_device_runs_it_per_operand() {
        let mut device = preset("tpu-v3").unwrap();
        let mesh = [crate::ir::MeshAxis {
            name: "batch".into(),
            size: 4,
        }];
        let axes = ["batch".to_string()];
        let price = |device: &Device, operands| {
            collective_of_operands(
                CollectiveKind::AllReduce,
                &axes,
                &mesh,
                4,
                4096.0,
                operands,
                device,
            )
            .seconds
        };
        // Combined: one latency, whatever the operands (the presets).
        assert_eq!(price(&device, 5), price(&device, 1));
        device.latency_per_operand = true;
        let bandwidth = 1.5 * 4096.0 / device.link.bandwidth;
        assert!(close(
            price(&device, 5) - bandwidth,
            5.0 * 6.0 * device.link.latency
        ));
    }

    #[test]
    fn local_collectives_and_single_devices_are_free() {
        let link = Link {
            bandwidth: 1e9,
            latency: 1e-6,
        };
        let free = CollectiveCost {
            traffic: 0.0,
            seconds: 0.0,
        };
        assert_eq!(
            collective_cost(CollectiveKind::AllSlice, 8, 1e6, &link),
            free
        );
        assert_eq!(
            collective_cost(CollectiveKind::AllReduce, 1, 1e6, &link),
            free
        );
    }
}
