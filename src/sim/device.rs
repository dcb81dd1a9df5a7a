//! Device models: peaks of one accelerator and of the links between accelerators along each
//! mesh axis. Presets come from public datasheets (the source of every figure is in `sources`);
//! custom devices come from a TOML file:
//!
//! ```toml
//! name = "my-gpu"
//! matrix_tflops = 312.0          # dense matrix-unit peak for the program's float type
//! vector_tflops = 19.5           # elementwise peak (defaults to matrix_tflops)
//! memory_gib = 40.0              # HBM capacity
//! memory_gbps = 1555.0           # HBM bandwidth, GB/s
//! link_gbps = 300.0              # per-direction bandwidth a ring along one mesh axis gets, GB/s
//! link_latency_us = 5.0          # per ring step
//! op_overhead_us = 0.0           # optional: per kernel (an op XLA does not fuse into its consumers)
//! launch_overhead_us = 0.0       # optional: per step (starting the program on every device)
//! latency_per_operand = false    # optional: a combined collective pays its latency per operand
//! sources = ["how each figure was measured"]   # optional, shown in reports
//! [axis.batch]                   # optional per-axis override, e.g. an axis across hosts
//! link_gbps = 25.0
//! link_latency_us = 10.0
//! [nodes]                        # optional: nodes of this many devices, and the link between
//! devices = 8                    # them, which a collective whose group crosses nodes runs at
//! link_gbps = 50.0
//! link_latency_us = 10.0
//! ```
//!
//! Devices are numbered row-major over the mesh (first axis major), and node k holds devices
//! k·n .. k·n+n-1. On `{ data = 16, tensor = 8 }` with nodes of 8, `tensor` stays in a node
//! (NVLink) and `data` crosses nodes (InfiniBand); on `{ tensor = 8, data = 16 }` it is the
//! other way round.
//!
//! The two overheads are what a roofline misses on small programs: each kernel a device
//! launches costs `op_overhead_us` beyond its FLOPs and bytes (`sim::cost::op_time`; which ops
//! are kernels: `passes::simulate::profile`, XLA-style fusion), and each step
//! `launch_overhead_us`. Datasheets do not give them: the presets leave both at 0, and
//! `partir calibrate` measures them (with every other figure) on the machine it runs on. So is
//! `latency_per_operand`: partir combines a step's gradient all_reduces into one collective of
//! many operands, which NCCL and the TPU run as one, but XLA's CPU runtime operand by operand
//! (an all_reduce of 16 operands of 4 KiB over 4 devices there: 1.5 ms, of one: 0.1 ms).

use serde::Deserialize;
use std::collections::BTreeMap;
use std::path::Path;

const GB: f64 = 1e9;
const GIB: f64 = 1024.0 * 1024.0 * 1024.0;
const TERA: f64 = 1e12;
const PER_MICRO: f64 = 1e6;

/// The interconnect a collective along one mesh axis uses.
#[derive(Clone, Debug, PartialEq)]
pub struct Link {
    /// Bytes per second one device sends to its ring neighbour (one direction).
    pub bandwidth: f64,
    /// Seconds per ring step (alpha of the alpha-beta model).
    pub latency: f64,
}

/// One accelerator and its interconnect.
#[derive(Clone, Debug, PartialEq)]
pub struct Device {
    pub name: String,
    /// FLOP/s of the matrix units (contractions) for the program's float type.
    pub matrix_flops: f64,
    /// FLOP/s of the matrix units on 16-bit floats (bf16, f16): a contraction of bf16
    /// operands (mixed precision) runs at this peak.
    pub matrix_flops_16: f64,
    /// FLOP/s for elementwise and reduction work.
    pub vector_flops: f64,
    /// Bytes of device memory.
    pub memory_bytes: f64,
    /// Bytes per second between device memory and the compute units.
    pub memory_bandwidth: f64,
    /// The link along every axis without an override.
    pub link: Link,
    /// Per-axis overrides (an axis that crosses hosts, say).
    pub axis_links: BTreeMap<String, Link>,
    /// Nodes of several devices, when the link between them is slower than the link inside.
    pub nodes: Option<Nodes>,
    /// Seconds each kernel costs beyond its roofline (launch, dispatch): 0 on the presets.
    pub op_overhead: f64,
    /// Seconds each step costs beyond its ops (starting the program): 0 on the presets.
    pub launch_overhead: f64,
    /// A collective of several combined operands pays its latency once per operand (a runtime
    /// that runs it operand by operand: XLA's CPU one); false on the presets (NCCL and the
    /// TPU run a combined collective as one).
    pub latency_per_operand: bool,
    /// Where each figure comes from.
    pub sources: Vec<String>,
}

/// Nodes of `devices` consecutive devices (a DGX of 8 GPUs on NVLink), and the link between
/// nodes (each GPU's own InfiniBand NIC).
#[derive(Clone, Debug, PartialEq)]
pub struct Nodes {
    pub devices: i64,
    pub link: Link,
}

/// The slower of two links, per figure.
fn slowest(a: &Link, b: &Link) -> Link {
    Link {
        bandwidth: a.bandwidth.min(b.bandwidth),
        latency: a.latency.max(b.latency),
    }
}

/// Whether the devices a collective over `axes` groups together (numbered row-major over
/// `mesh`) sit in more than one node of `per_node` consecutive devices, in some group. A group
/// spans the ids from its first device to its first plus the largest offset, so it crosses
/// nodes exactly when those two ends do.
pub fn crosses_nodes(axes: &[String], mesh: &[crate::ir::MeshAxis], per_node: i64) -> bool {
    let mut stride = 1;
    let mut strides = vec![0; mesh.len()];
    for (i, axis) in mesh.iter().enumerate().rev() {
        strides[i] = stride;
        stride *= axis.size.max(1);
    }
    let devices = stride;
    let in_group = |i: usize| axes.contains(&mesh[i].name);
    let span: i64 = (0..mesh.len())
        .filter(|&i| in_group(i))
        .map(|i| (mesh[i].size - 1) * strides[i])
        .sum();
    if span == 0 || per_node <= 1 {
        return span > 0;
    }
    (0..devices)
        .filter(|id| (0..mesh.len()).all(|i| !in_group(i) || (id / strides[i]) % mesh[i].size == 0))
        .any(|first| first / per_node != (first + span) / per_node)
}

impl Device {
    /// The link a collective over `axes` of `mesh` uses: the axes' links, and the link between
    /// nodes when a group crosses nodes.
    pub fn link_over(&self, axes: &[String], mesh: &[crate::ir::MeshAxis]) -> Link {
        let link = self.link_for(axes);
        match &self.nodes {
            Some(nodes) if crosses_nodes(axes, mesh, nodes.devices) => slowest(&link, &nodes.link),
            _ => link,
        }
    }

    /// The link a collective over `axes` uses: the slowest of them (a multi-axis ring crosses
    /// every axis's links).
    pub fn link_for(&self, axes: &[String]) -> Link {
        axes.iter()
            .map(|axis| self.axis_links.get(axis).unwrap_or(&self.link))
            .fold(None::<Link>, |so_far, link| match so_far {
                Some(s) => Some(slowest(&s, link)),
                None => Some(link.clone()),
            })
            .unwrap_or_else(|| self.link.clone())
    }

    /// A preset by name, or a TOML file when `name` is a path to one.
    pub fn resolve(name: &str) -> Result<Device, String> {
        if let Some(device) = preset(name) {
            return Ok(device);
        }
        let path = Path::new(name);
        if name.ends_with(".toml") || path.exists() {
            return Device::load(path);
        }
        Err(format!(
            "unknown device '{name}' (presets: {}; or a TOML file)",
            PRESETS.join(", ")
        ))
    }

    /// Reads a custom device from TOML (see the module documentation).
    pub fn load(path: &Path) -> Result<Device, String> {
        let text = std::fs::read_to_string(path)
            .map_err(|error| format!("cannot read device file '{}': {error}", path.display()))?;
        Device::parse(&text).map_err(|error| format!("device file '{}': {error}", path.display()))
    }

    pub fn parse(text: &str) -> Result<Device, String> {
        let raw: RawDevice = toml::from_str(text).map_err(|error| error.message().to_string())?;
        for (what, value) in [
            ("matrix_tflops", raw.matrix_tflops),
            ("memory_gib", raw.memory_gib),
            ("memory_gbps", raw.memory_gbps),
            ("link_gbps", raw.link_gbps),
        ] {
            if !(value > 0.0 && value.is_finite()) {
                return Err(format!("{what} must be a positive number, not {value}"));
            }
        }
        let link = Link {
            bandwidth: raw.link_gbps * GB,
            latency: raw.link_latency_us / PER_MICRO,
        };
        let axis_links = raw
            .axis
            .into_iter()
            .map(|(axis, over)| {
                let link = Link {
                    bandwidth: over.link_gbps.unwrap_or(raw.link_gbps) * GB,
                    latency: over.link_latency_us.unwrap_or(raw.link_latency_us) / PER_MICRO,
                };
                if link.bandwidth > 0.0 {
                    Ok((axis, link))
                } else {
                    Err(format!("axis '{axis}': link_gbps must be positive"))
                }
            })
            .collect::<Result<_, String>>()?;
        let nodes = match raw.nodes {
            Some(nodes) if nodes.devices >= 1 && nodes.link_gbps > 0.0 => Some(Nodes {
                devices: nodes.devices,
                link: Link {
                    bandwidth: nodes.link_gbps * GB,
                    latency: nodes.link_latency_us.unwrap_or(raw.link_latency_us) / PER_MICRO,
                },
            }),
            Some(_) => {
                return Err("[nodes]: devices must be at least 1 and link_gbps positive".into())
            }
            None => None,
        };
        for (what, value) in [
            ("op_overhead_us", raw.op_overhead_us),
            ("launch_overhead_us", raw.launch_overhead_us),
        ] {
            if !(value >= 0.0 && value.is_finite()) {
                return Err(format!("{what} must be a non-negative number, not {value}"));
            }
        }
        Ok(Device {
            name: raw.name,
            matrix_flops: raw.matrix_tflops * TERA,
            matrix_flops_16: raw.matrix_tflops_16.unwrap_or(raw.matrix_tflops) * TERA,
            vector_flops: raw.vector_tflops.unwrap_or(raw.matrix_tflops) * TERA,
            memory_bytes: raw.memory_gib * GIB,
            memory_bandwidth: raw.memory_gbps * GB,
            link,
            axis_links,
            nodes,
            op_overhead: raw.op_overhead_us / PER_MICRO,
            launch_overhead: raw.launch_overhead_us / PER_MICRO,
            latency_per_operand: raw.latency_per_operand,
            sources: raw
                .sources
                .unwrap_or_else(|| vec!["custom device file".into()]),
        })
    }
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct RawDevice {
    name: String,
    matrix_tflops: f64,
    matrix_tflops_16: Option<f64>,
    vector_tflops: Option<f64>,
    memory_gib: f64,
    memory_gbps: f64,
    link_gbps: f64,
    #[serde(default = "default_latency_us")]
    link_latency_us: f64,
    #[serde(default)]
    op_overhead_us: f64,
    #[serde(default)]
    launch_overhead_us: f64,
    #[serde(default)]
    latency_per_operand: bool,
    sources: Option<Vec<String>>,
    #[serde(default)]
    axis: BTreeMap<String, RawAxisLink>,
    nodes: Option<RawNodes>,
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct RawNodes {
    devices: i64,
    link_gbps: f64,
    link_latency_us: Option<f64>,
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct RawAxisLink {
    link_gbps: Option<f64>,
    link_latency_us: Option<f64>,
}

fn default_latency_us() -> f64 {
    5.0
}

/// The device a simulation prices when none is named (`partir-simulate`, `partir --device`).
pub const DEFAULT_DEVICE: &str = "tpu-v3";

/// The preset names, for messages.
pub const PRESETS: [&str; 9] = [
    "tpu-v3",
    "tpu-v4",
    "tpu-v5e",
    "tpu-v5p",
    "a100-40gb",
    "a100-80gb",
    "h100-sxm",
    "a100-dgx",
    "h100-dgx",
];

/// A datasheet device. Conventions, the same for every preset:
/// - `matrix_flops` is the dense bf16 matrix peak for TPUs (JAX's default precision runs f32
///   matmuls as one bf16 pass on TPU) and the dense TF32 tensor-core peak for NVIDIA GPUs
///   (JAX's default precision for f32 matmuls there);
/// - `matrix_flops_16` is the dense bf16 peak: a TPU's matrix peak, twice TF32's on NVIDIA;
/// - the link of an axis is a bidirectional ring over that axis's two neighbour links, so a
///   device moves data at twice one link's per-direction bandwidth;
/// - latencies are not on datasheets: 1 µs per ICI hop and 5 µs per NVLink step are assumed.
pub fn preset(name: &str) -> Option<Device> {
    // A DGX is 8 of its GPUs on NVLink, and one InfiniBand NIC per GPU between nodes. The
    // latency of an InfiniBand step is not on a datasheet either: 10 us is assumed.
    let dgx = |gpu: &str, per_gpu_gbit: f64, source: &str| {
        preset(gpu).map(|mut device| {
            device.name = name.to_string();
            device.nodes = Some(Nodes {
                devices: 8,
                link: Link {
                    bandwidth: per_gpu_gbit / 8.0 * GB,
                    latency: 10.0 / PER_MICRO,
                },
            });
            device.sources.push(source.to_string());
            device
        })
    };
    match name {
        "h100-dgx" => return dgx("h100-sxm", 400.0, "nodes of 8 H100 SXM5 on NVLink 4; between nodes 8 x ConnectX-7 400 Gb/s InfiniBand NDR per node, one per GPU = 50 GB/s per GPU per direction (NVIDIA DGX H100 datasheet); InfiniBand step latency 10 us assumed"),
        "a100-dgx" => return dgx("a100-80gb", 200.0, "nodes of 8 A100 SXM4 80GB on NVLink 3; between nodes 8 x ConnectX-6 200 Gb/s InfiniBand HDR per node, one per GPU = 25 GB/s per GPU per direction (NVIDIA DGX A100 datasheet); InfiniBand step latency 10 us assumed"),
        _ => {}
    }
    let tpu_link = |per_direction_gbps: f64, source: &str| {
        (
            Link {
                bandwidth: 2.0 * per_direction_gbps * GB,
                latency: 1.0 / PER_MICRO,
            },
            source.to_string(),
        )
    };
    let nvlink = |per_direction_gbps: f64, source: &str| {
        (
            Link {
                bandwidth: per_direction_gbps * GB,
                latency: 5.0 / PER_MICRO,
            },
            source.to_string(),
        )
    };
    let (matrix_tflops, vector_tflops, memory_gib, memory_gbps, (link, link_source), sources): (
        f64,
        f64,
        f64,
        f64,
        (Link, String),
        &[&str],
    ) = match name {
        "tpu-v3" => (
            123.0,
            123.0,
            32.0,
            900.0,
            tpu_link(41.0, "ICI: 4 links x 656 Gbit/s per chip (Jouppi et al., CACM 2020, Table 3) = 41 GB/s per link per direction; 2-D torus, 2 links per axis"),
            &["123 TFLOP/s bf16, 32 GiB HBM, 900 GB/s per chip: Jouppi et al., 'A Domain-Specific Supercomputer for Training Deep Neural Networks', CACM 2020, Table 3; cloud.google.com/tpu/docs/system-architecture-tpu-vm"],
        ),
        "tpu-v4" => (
            275.0,
            275.0,
            32.0,
            1200.0,
            tpu_link(50.0, "ICI: 6 links x 50 GB/s per direction per chip (Jouppi et al., 'TPU v4', ISCA 2023); 3-D torus, 2 links per axis"),
            &["275 TFLOP/s bf16, 32 GiB HBM2, 1200 GB/s: cloud.google.com/tpu/docs/v4"],
        ),
        "tpu-v5e" => (
            197.0,
            197.0,
            16.0,
            819.0,
            tpu_link(50.0, "ICI: 400 GB/s bidirectional per chip over 4 ports = 50 GB/s per port per direction (cloud.google.com/tpu/docs/v5e); 2-D torus, 2 ports per axis"),
            &["197 TFLOP/s bf16, 16 GB HBM2, 819 GB/s: cloud.google.com/tpu/docs/v5e"],
        ),
        "tpu-v5p" => (
            459.0,
            459.0,
            95.0,
            2765.0,
            tpu_link(50.0, "ICI: 4800 Gbit/s per chip = 600 GB/s bidirectional over 6 ports (3-D torus) = 50 GB/s per port per direction (cloud.google.com/tpu/docs/v5p); 2 ports per axis; one slice (up to 8960 chips) is all ICI"),
            &["459 TFLOP/s bf16, 95 GB HBM2e, 2765 GB/s per chip: cloud.google.com/tpu/docs/v5p"],
        ),
        "a100-40gb" => (
            156.0,
            19.5,
            40.0,
            1555.0,
            nvlink(300.0, "NVLink 3: 600 GB/s bidirectional = 300 GB/s per direction through NVSwitch (NVIDIA A100 datasheet)"),
            &["156 TFLOP/s TF32 dense, 19.5 TFLOP/s FP32, 40 GB HBM2, 1555 GB/s: NVIDIA A100 Tensor Core GPU datasheet (SXM4)"],
        ),
        "a100-80gb" => (
            156.0,
            19.5,
            80.0,
            2039.0,
            nvlink(300.0, "NVLink 3: 600 GB/s bidirectional = 300 GB/s per direction through NVSwitch (NVIDIA A100 datasheet)"),
            &["156 TFLOP/s TF32 dense, 19.5 TFLOP/s FP32, 80 GB HBM2e, 2039 GB/s: NVIDIA A100 Tensor Core GPU datasheet (SXM4 80GB)"],
        ),
        "h100-sxm" => (
            494.5,
            67.0,
            80.0,
            3350.0,
            nvlink(450.0, "NVLink 4: 900 GB/s bidirectional = 450 GB/s per direction through NVSwitch (NVIDIA H100 datasheet)"),
            &["494.5 TFLOP/s TF32 dense (989 with sparsity), 67 TFLOP/s FP32, 80 GB HBM3, 3.35 TB/s: NVIDIA H100 Tensor Core GPU datasheet (SXM5)"],
        ),
        _ => return None,
    };
    let mut all_sources: Vec<String> = sources.iter().map(|s| s.to_string()).collect();
    all_sources.push(link_source);
    all_sources.push(
        "link latency: assumed (1 us per ICI hop, 5 us per NVLink ring step), not a datasheet figure"
            .into(),
    );
    // NVIDIA's dense BF16 tensor-core peak is twice its TF32 one (A100 312 and 156, H100 SXM5
    // 989.4 and 494.7 TFLOP/s: the datasheets above); a TPU's matrix peak is bf16's already.
    let matrix_tflops_16 = if name.starts_with("tpu") {
        matrix_tflops
    } else {
        2.0 * matrix_tflops
    };
    Some(Device {
        name: name.to_string(),
        matrix_flops: matrix_tflops * TERA,
        matrix_flops_16: matrix_tflops_16 * TERA,
        vector_flops: vector_tflops * TERA,
        memory_bytes: memory_gib
            * if name.starts_with("tpu") {
                GIB
            } else {
                // GPU datasheets give decimal gigabytes.
                GB
            },
        memory_bandwidth: memory_gbps * GB,
        link,
        axis_links: BTreeMap::new(),
        nodes: None,
        op_overhead: 0.0,
        launch_overhead: 0.0,
        latency_per_operand: false,
        sources: all_sources,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_preset_resolves_with_sources() {
        for name in PRESETS {
            let device = Device::resolve(name).unwrap();
            assert_eq!(device.name, name);
            assert!(device.matrix_flops > 1e13 && device.memory_bytes > 1e10);
            assert!(device.sources.len() >= 2, "{name} cites its figures");
        }
        assert_eq!(Device::resolve("tpu-v3").unwrap().matrix_flops, 123e12);
        // bf16: a TPU's matrix peak already; twice TF32's on NVIDIA (H100 SXM5: 989 TFLOP/s).
        assert_eq!(Device::resolve("tpu-v3").unwrap().matrix_flops_16, 123e12);
        assert_eq!(Device::resolve("h100-dgx").unwrap().matrix_flops_16, 989e12);
    }

    #[test]
    fn unknown_devices_list_the_presets() {
        let error = Device::resolve("tpu-v9").unwrap_err();
        assert!(error.contains("unknown device 'tpu-v9'") && error.contains("h100-sxm"));
    }

    #[test]
    fn custom_devices_parse_with_axis_overrides() {
        let device = Device::parse(
            "name = 'box'\nmatrix_tflops = 100\nmemory_gib = 1\nmemory_gbps = 1000\nlink_gbps = 100\n[axis.batch]\nlink_gbps = 10\nlink_latency_us = 20\n",
        )
        .unwrap();
        assert_eq!(device.vector_flops, 100e12);
        assert_eq!(device.link.latency, 5e-6);
        let batch = device.link_for(&["batch".into()]);
        assert_eq!((batch.bandwidth, batch.latency), (10e9, 20e-6));
        let both = device.link_for(&["model".into(), "batch".into()]);
        assert_eq!((both.bandwidth, both.latency), (10e9, 20e-6));
        assert_eq!(device.link_for(&["model".into()]), device.link);
    }

    fn mesh(axes: &[(&str, i64)]) -> Vec<crate::ir::MeshAxis> {
        axes.iter()
            .map(|(name, size)| crate::ir::MeshAxis {
                name: name.to_string(),
                size: *size,
            })
            .collect()
    }

    /// Row-major device ids, first axis major, nodes of 8: the minor axis of 8 stays in a node,
    /// the major one crosses nodes; an axis of 4 inside 8 stays, whichever its place.
    #[test]
    fn groups_cross_nodes_by_their_devices_ids() {
        let data_tensor = mesh(&[("data", 16), ("tensor", 8)]);
        assert!(!crosses_nodes(&["tensor".into()], &data_tensor, 8));
        assert!(crosses_nodes(&["data".into()], &data_tensor, 8));
        let tensor_data = mesh(&[("tensor", 8), ("data", 16)]);
        assert!(crosses_nodes(&["tensor".into()], &tensor_data, 8));
        let three = mesh(&[("data", 4), ("fsdp", 2), ("tensor", 4)]);
        assert!(!crosses_nodes(&["fsdp".into(), "tensor".into()], &three, 8));
        assert!(!crosses_nodes(&["fsdp".into()], &three, 8));
        assert!(crosses_nodes(&["data".into()], &three, 8));
        assert!(crosses_nodes(&["data".into(), "tensor".into()], &three, 8));
        assert!(!crosses_nodes(&[], &three, 8));
    }

    #[test]
    fn a_dgx_prices_inside_and_across_nodes() {
        let dgx = Device::resolve("h100-dgx").unwrap();
        let nvlink = Device::resolve("h100-sxm").unwrap().link;
        let layout = mesh(&[("data", 8), ("tensor", 8)]);
        assert_eq!(dgx.link_over(&["tensor".into()], &layout), nvlink);
        let across = dgx.link_over(&["data".into()], &layout);
        assert_eq!((across.bandwidth, across.latency), (50e9, 10e-6));
        assert!(dgx.sources.iter().any(|source| source.contains("DGX H100")));
        let custom = Device::parse(
            "name = 'pod'\nmatrix_tflops = 100\nmemory_gib = 1\nmemory_gbps = 1000\nlink_gbps = 100\n[nodes]\ndevices = 4\nlink_gbps = 10\n",
        )
        .unwrap();
        let across = custom.link_over(&["data".into()], &mesh(&[("data", 2), ("tensor", 4)]));
        assert_eq!((across.bandwidth, across.latency), (10e9, 5e-6));
        assert!(Device::parse("name = 'x'\nmatrix_tflops = 1\nmemory_gib = 1\nmemory_gbps = 1\nlink_gbps = 1\n[nodes]\ndevices = 0\nlink_gbps = 1\n").is_err());
    }

    #[test]
    fn custom_devices_reject_nonsense() {
        let error =
            Device::parse("name='x'\nmatrix_tflops=0\nmemory_gib=1\nmemory_gbps=1\nlink_gbps=1\n")
                .unwrap_err();
        assert!(error.contains("matrix_tflops must be a positive number"));
        assert!(Device::parse("name='x'\nmatrix_tflop=1\n").is_err());
        let error = Device::parse(
            "name='x'\nmatrix_tflops=1\nmemory_gib=1\nmemory_gbps=1\nlink_gbps=1\nop_overhead_us=-1\n",
        )
        .unwrap_err();
        assert!(error.contains("op_overhead_us must be a non-negative number"));
    }

    /// The overheads and sources are optional: absent, a device has none (as the presets).
    #[test]
    fn overheads_and_sources_are_optional() {
        let plain = "name='x'\nmatrix_tflops=1\nmemory_gib=1\nmemory_gbps=1\nlink_gbps=1\n";
        let device = Device::parse(plain).unwrap();
        assert_eq!((device.op_overhead, device.launch_overhead), (0.0, 0.0));
        assert!(!device.latency_per_operand);
        assert_eq!(device.sources, vec!["custom device file".to_string()]);
        let measured = Device::parse(&format!(
            "{plain}op_overhead_us = 2.5\nlaunch_overhead_us = 300\nlatency_per_operand = true\nsources = ['timed here']\n"
        ))
        .unwrap();
        assert!(measured.latency_per_operand);
        assert_eq!(measured.op_overhead, 2.5e-6);
        assert_eq!(measured.launch_overhead, 300e-6);
        assert_eq!(measured.sources, vec!["timed here".to_string()]);
        for name in PRESETS {
            let preset = Device::resolve(name).unwrap();
            assert_eq!((preset.op_overhead, preset.launch_overhead), (0.0, 0.0));
        }
    }
}
