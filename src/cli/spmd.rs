//! `partir verify --ranks N`: runs the PartIR:HLO program on N MPI ranks
//! (docs/design.md#8-execution). The harness entry initialises MPI, materialises each full
//! input, keeps this device's shard (`partir_hlo.all_slice` per sharded dim of the argument's
//! `partir_hlo.sharding`), calls `@main`, reassembles every result (`partir_hlo.all_gather` per
//! sharded dim) and prints it on rank 0; `partir-to-mpi` then lowers every collective (the
//! harness's included), MLIR's CPU pipeline the rest; the program is compiled once
//! (`mlir-translate`, `clang -O0`, linked with MPICH) and `mpiexec -n N` runs the executable.

use super::{
    error::CliError,
    pipeline::Session,
    runner::{self, Input, TensorType, ENTRY, LOWER},
};
use crate::{
    ir::{Mesh, Sharding},
    passes::names,
};
use melior::ir::{Module, OperationRef};
use std::process::{Command, Stdio};

/// The launcher.
pub const MPIEXEC: &str = "mpiexec.mpich";

/// The `partir_hlo.sharding` of each argument and each result of `main` (None when absent).
pub fn shardings(main: OperationRef) -> (Vec<Option<Sharding>>, Vec<Option<Sharding>>) {
    (
        Sharding::of_function(main, "arg_attrs"),
        Sharding::of_function(main, "res_attrs"),
    )
}

/// The local (per-device) type of a global type under a sharding; an error names what does not
/// divide.
pub fn local_type(
    global: &TensorType,
    sharding: Option<&Sharding>,
    mesh: &Mesh,
) -> Result<TensorType, String> {
    let Some(sharding) = sharding else {
        return Ok(global.clone());
    };
    let shape: Vec<i64> = global.shape.iter().map(|&size| size as i64).collect();
    let local = sharding.local_shape_on(&shape, mesh)?;
    Ok(TensorType {
        shape: local.iter().map(|&size| size as usize).collect(),
        elem: global.elem,
    })
}

fn axes_list(axes: &[String]) -> String {
    let quoted: Vec<String> = axes.iter().map(|axis| format!("\"{axis}\"")).collect();
    format!("[{}]", quoted.join(", "))
}

/// A program argument or result: its global type and its sharding.
pub struct Sharded<'a> {
    pub global: &'a TensorType,
    pub sharding: Option<&'a Sharding>,
}

/// `module_text` (an HLO module whose `@main` is already private) with the SPMD entry function.
pub fn harness(
    module_text: &str,
    mesh: &Mesh,
    inputs: &[(Input, Option<&Sharding>)],
    outputs: &[Sharded],
) -> Result<String, CliError> {
    let close = module_text
        .rfind('}')
        .ok_or_else(|| CliError::new("the printed module has no closing brace"))?;
    let mut lines = vec![
        format!("  func.func @{ENTRY}() {{"),
        "    %mpi_init = mpi.init : !mpi.retval".to_string(),
    ];
    let mut args = Vec::new();
    let mut arg_types = Vec::new();
    for (i, (input, sharding)) in inputs.iter().enumerate() {
        lines.push(format!(
            "    %full{i} = arith.constant {} : {}",
            input.dense(),
            input.ty
        ));
        let mut value = format!("%full{i}");
        let mut ty = input.ty.clone();
        for (d, axes) in sharding
            .map(|sharding| sharding.0.as_slice())
            .unwrap_or(&[])
            .iter()
            .enumerate()
        {
            if axes.is_empty() {
                continue;
            }
            let before = ty.clone();
            let devices: i64 = axes
                .iter()
                .filter_map(|axis| mesh.axis_size(axis))
                .product();
            ty.shape[d] /= devices as usize;
            lines.push(format!(
                "    %in{i}_{d} = partir_hlo.all_slice {value} dim {d} axes {} : {before} -> {ty}",
                axes_list(axes)
            ));
            value = format!("%in{i}_{d}");
        }
        args.push(value);
        arg_types.push(ty.to_string());
    }
    let mut local_outputs = Vec::new();
    for output in outputs {
        local_outputs.push(
            local_type(output.global, output.sharding, mesh).map_err(|error| {
                CliError::new(format!("a result of @main cannot be sharded: {error}"))
            })?,
        );
    }
    let outs: Vec<String> = (0..outputs.len()).map(|j| format!("%out{j}")).collect();
    let out_types: Vec<String> = local_outputs.iter().map(ToString::to_string).collect();
    let call = format!(
        "func.call @{}({}) : ({}) -> ({})",
        runner::MODEL,
        args.join(", "),
        arg_types.join(", "),
        out_types.join(", ")
    );
    if outs.is_empty() {
        lines.push(format!("    {call}"));
    } else {
        lines.push(format!("    {} = {call}", outs.join(", ")));
    }
    let mut calls = Vec::new();
    let mut printers = Vec::new();
    for (j, (output, local)) in outputs.iter().zip(&local_outputs).enumerate() {
        let mut value = format!("%out{j}");
        let mut ty = local.clone();
        for (d, axes) in output
            .sharding
            .map(|sharding| sharding.0.as_slice())
            .unwrap_or(&[])
            .iter()
            .enumerate()
        {
            if axes.is_empty() {
                continue;
            }
            let before = ty.clone();
            ty.shape[d] = output.global.shape[d];
            lines.push(format!(
                "    %g{j}_{d} = partir_hlo.all_gather {value} dim {d} axes {} : {before} -> {ty}",
                axes_list(axes)
            ));
            value = format!("%g{j}_{d}");
        }
        let (converted, printer, bits) = runner::to_printable(j, &value, &ty);
        lines.extend(converted);
        calls.push(format!(
            "      func.call @{printer}(%b{j}) : (memref<*x{bits}>) -> ()"
        ));
        printers.push((printer, bits));
    }
    lines.push("    %world = mpi.comm_world : !mpi.comm".into());
    lines.push("    %rank = mpi.comm_rank(%world) : i32".into());
    lines.push("    %c0_i32 = arith.constant 0 : i32".into());
    lines.push("    %is0 = arith.cmpi eq, %rank, %c0_i32 : i32".into());
    lines.push("    scf.if %is0 {".into());
    lines.extend(calls);
    lines.push("    }".into());
    lines.push("    %mpi_fin = mpi.finalize : !mpi.retval".into());
    lines.push("    return\n  }".into());
    Ok(runner::close_harness(
        &module_text[..close],
        lines,
        printers,
    ))
}

/// Lowers the harness's collectives to MPI in-process (`partir-to-mpi`); the printed module.
pub fn to_mpi(session: &Session, harness: &str) -> Result<String, CliError> {
    let mut module: Module = session.parse(harness)?;
    session.run(&mut module, &format!("builtin.module({})", names::TO_MPI))?;
    session.take();
    Ok(module.as_operation().to_string())
}

/// Lowers the MPI program to LLVM (mlir-opt) and checks nothing of mpi or partir is left; the
/// text mlir-runner accepts (the module's `dlti.map` stripped).
pub fn lower(mpi_program: &str) -> Result<String, CliError> {
    let opt = runner::llvm_prefix().join("bin/mlir-opt");
    let lowered = runner::tool(&opt, &[format!("--pass-pipeline={LOWER}")], mpi_program).map_err(
        |error| {
            CliError::new(format!(
                "mlir-opt could not lower the SPMD program: {error}"
            ))
        },
    )?;
    let left = leftovers(&lowered);
    if !left.is_empty() {
        return Err(CliError::new(format!(
            "lowering the SPMD program to LLVM left {} in it",
            left.join(", ")
        )));
    }
    Ok(strip_dlti(&lowered))
}

/// The mpi and partir ops, attributes and types, and unrealized casts, a lowered program still
/// has (`partir.name` argument attributes and function names do not count).
pub fn leftovers(lowered: &str) -> Vec<&'static str> {
    let mut left = Vec::new();
    for line in lowered.lines() {
        let line = line.trim_start();
        let op = |prefix: &str| line.starts_with(prefix) || line.contains(&format!("= {prefix}"));
        let found = [
            ("mpi.", op("mpi.") || line.contains("!mpi.")),
            (
                "partir",
                op("partir") || line.contains("#partir") || line.contains("!partir"),
            ),
            (
                "unrealized_conversion_cast",
                line.contains("unrealized_conversion_cast"),
            ),
        ];
        for (word, present) in found {
            if present && !left.contains(&word) {
                left.push(word);
            }
        }
    }
    left
}

/// Removes ` attributes {dlti.map = ...}` of the module (mlir-runner rejects it).
pub fn strip_dlti(text: &str) -> String {
    const KEY: &str = " attributes {dlti.map = ";
    let Some(at) = text.find(KEY) else {
        return text.to_string();
    };
    let open = at + " attributes ".len();
    let mut depth = 0usize;
    for (offset, c) in text[open..].char_indices() {
        match c {
            '{' | '<' | '[' => depth += 1,
            '}' | '>' | ']' => {
                depth = depth.saturating_sub(1);
                if depth == 0 {
                    let end = open + offset + 1;
                    return format!("{}{}", &text[..at], &text[end..]);
                }
            }
            _ => {}
        }
    }
    text.to_string()
}

/// Compiles a lowered program once and runs it on `ranks` MPI ranks; the results rank 0
/// printed.
pub fn execute(lowered: &str, ranks: usize) -> Result<Vec<Vec<i64>>, CliError> {
    let executable = runner::compile(lowered, "SPMD", &["-lmpich"])?;
    let output = Command::new(MPIEXEC)
        .arg("-n")
        .arg(ranks.to_string())
        .arg(&executable.path)
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .output();
    let output = output.map_err(|error| {
        CliError::new(format!(
            "cannot start {MPIEXEC} ({error}); the SPMD check needs MPICH (apt-get install mpich libmpich-dev)"
        ))
    })?;
    if !output.status.success() {
        let stderr = String::from_utf8_lossy(&output.stderr);
        let first: Vec<&str> = stderr.lines().take(8).collect();
        return Err(CliError::new(format!(
            "{MPIEXEC} -n {ranks} failed ({}): {}",
            output.status,
            first.join("\n")
        )));
    }
    let stdout = String::from_utf8_lossy(&output.stdout);
    Ok(runner::parse_printed(&stdout))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn local_types_divide_global_ones() {
        let mesh = Mesh {
            symbol: "mesh".into(),
            axes: Mesh::parse_axes(&["batch=4", "model=2"]).unwrap(),
        };
        let global = TensorType::parse("tensor<32x64xf32>").unwrap();
        let sharding = Sharding::replicated(2)
            .with_axis(0, "batch")
            .with_axis(1, "model");
        assert_eq!(
            local_type(&global, Some(&sharding), &mesh)
                .unwrap()
                .to_string(),
            "tensor<8x32xf32>"
        );
        assert_eq!(local_type(&global, None, &mesh).unwrap(), global);
    }

    #[test]
    fn strips_the_dlti_map() {
        let text =
            "module attributes {dlti.map = #dlti.map<\"MPI:Implementation\" = \"MPICH\">} {\n}\n";
        assert_eq!(strip_dlti(text), "module {\n}\n");
    }
}
