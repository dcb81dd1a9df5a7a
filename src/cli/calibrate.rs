//! `partir calibrate [--devices N] [--mesh a=4,b=2] [--quick] [-o DEVICE.toml]`: measures the
//! machine it runs on as the simulator sees a device (matrix and vector rates, memory
//! bandwidth, kernel and launch overheads, each mesh axis's collective latency and bandwidth)
//! on N XLA CPU devices running at once, and writes a device TOML that `--device` takes. The
//! measuring is `tools/partir_jax/calibrate.py` (JAX's XLA client, as `verify --xla` runs XLA);
//! this checks the mesh first and that the simulator loads what it wrote.

use super::{
    args::CalibrateArgs,
    error::{os_error, CliError},
    python,
};
use crate::{ir::Mesh, sim::Device};
use std::process::Stdio;

pub fn calibrate_command(args: &CalibrateArgs) -> Result<i32, CliError> {
    if args.devices == 0 {
        return Err(CliError::new("--devices must be at least 1"));
    }
    let mesh = match &args.mesh {
        Some(text) => {
            let axes = Mesh::parse_axes(&text.split(',').collect::<Vec<_>>())
                .map_err(|error| CliError::new(format!("--mesh: {error}")))?;
            let devices: i64 = axes.iter().map(|axis| axis.size).product();
            if devices != args.devices as i64 {
                return Err(CliError::new(format!(
                    "--mesh {text} has {devices} devices, not --devices {}",
                    args.devices
                )));
            }
            Some(text.clone())
        }
        None => None,
    };
    let scratch =
        std::env::temp_dir().join(format!("partir-calibrate-{}.toml", std::process::id()));
    let written = args.output.clone().unwrap_or_else(|| scratch.clone());
    let mut command = python::module("calibrate", "partir_jax.calibrate", args.devices)?;
    command
        .arg("--devices")
        .arg(args.devices.to_string())
        .arg("-o")
        .arg(&written)
        .stdout(Stdio::null())
        .stderr(Stdio::inherit());
    if let Some(mesh) = &mesh {
        command.arg("--mesh").arg(mesh);
    }
    if args.quick {
        command.arg("--quick");
    }
    let status = command.status().map_err(|error| {
        CliError::new(format!(
            "cannot start {} ({})",
            command.get_program().to_string_lossy(),
            os_error(&error)
        ))
    })?;
    if !status.success() {
        return Err(CliError::new("calibrate: measuring on XLA failed (above)"));
    }
    let text = std::fs::read_to_string(&written).map_err(|error| {
        CliError::new(format!(
            "cannot read '{}': {}",
            written.display(),
            os_error(&error)
        ))
    })?;
    if args.output.is_none() {
        let _ = std::fs::remove_file(&scratch);
        print!("{text}");
    }
    // What was written must be a device the simulator loads.
    let device = Device::parse(&text).map_err(|error| {
        CliError::new(format!(
            "calibrate wrote a device partir cannot load: {error}"
        ))
    })?;
    let links: Vec<String> = device
        .axis_links
        .iter()
        .map(|(axis, link)| {
            format!(
                "{axis} {:.1} us + {:.3} GB/s",
                link.latency * 1e6,
                link.bandwidth / 1e9
            )
        })
        .collect();
    eprintln!(
        "partir: {}: matrix {:.2} GFLOP/s, vector {:.2} GFLOP/s, memory {:.2} GB/s per device; \
         {:.1} us per kernel, {:.0} us per step; links: {}",
        device.name,
        device.matrix_flops / 1e9,
        device.vector_flops / 1e9,
        device.memory_bandwidth / 1e9,
        device.op_overhead * 1e6,
        device.launch_overhead * 1e6,
        if links.is_empty() {
            "none (one device)".to_string()
        } else {
            links.join(", ")
        }
    );
    if let Some(path) = &args.output {
        eprintln!("partir: wrote the device to {}", path.display());
    }
    Ok(0)
}
