//! `partir verify --ranks N`: runs the PartIR:HLO program on N MPI ranks (DESIGN §8), like
//! `tools/partir_jax/run_spmd.py`. The harness entry initialises MPI, materialises each full
//! input, keeps this device's shard (`partir_hlo.all_slice` per sharded dim of the argument's
//! `partir_hlo.sharding`), calls `@main`, reassembles every result (`partir_hlo.all_gather` per
//! sharded dim) and prints it on rank 0; `partir-to-mpi` then lowers every collective (the
//! harness's included), MLIR's CPU pipeline the rest, and `mpiexec -n N mlir-runner` runs it.

use super::{
    pipeline::Session,
    runner::{self, Input, TensorType, ENTRY, LOWER},
    CliError,
};
use melior::ir::{
    attribute::{ArrayAttribute, DictionaryAttribute},
    operation::OperationLike,
    Module, OperationRef,
};
use std::process::{Command, Stdio};

/// The launcher.
pub const MPIEXEC: &str = "mpiexec.mpich";

/// The device mesh: (axis, size) in order, major to minor.
#[derive(Clone, Debug, PartialEq)]
pub struct Mesh {
    pub name: String,
    pub axes: Vec<(String, usize)>,
}

impl Mesh {
    /// The first `partir.mesh @name ["a"=4, "b"=2]` of a printed module.
    pub fn parse(text: &str) -> Option<Self> {
        let at = text.find("partir.mesh @")?;
        let rest = &text[at + "partir.mesh @".len()..];
        let line = rest.lines().next()?;
        let (name, rest) = line.split_once(' ')?;
        let body = rest.trim().strip_prefix('[')?.split(']').next()?;
        let mut axes = Vec::new();
        for item in body.split(',').filter(|item| !item.trim().is_empty()) {
            let (axis, size) = item.trim().split_once('=')?;
            axes.push((
                axis.trim().trim_matches('"').to_string(),
                size.trim().parse().ok()?,
            ));
        }
        Some(Self {
            name: name.to_string(),
            axes,
        })
    }

    pub fn devices(&self) -> usize {
        self.axes.iter().map(|(_, size)| size).product()
    }

    pub fn size(&self, axis: &str) -> Option<usize> {
        self.axes
            .iter()
            .find(|(name, _)| name == axis)
            .map(|(_, size)| *size)
    }

    /// `batch=4 x model=2`.
    pub fn describe(&self) -> String {
        let axes: Vec<String> = self
            .axes
            .iter()
            .map(|(name, size)| format!("{name}={size}"))
            .collect();
        axes.join(" x ")
    }
}

/// The axes of each dimension, e.g. `[["batch"], []]`.
pub type Sharding = Vec<Vec<String>>;

/// Parses `#partir_hlo.sharding<[{"batch", "model"}, {}]>` (or just its body).
pub fn parse_sharding(text: &str) -> Option<Sharding> {
    let start = text.find('[')?;
    let end = text.rfind(']')?;
    let body = text.get(start + 1..end)?;
    let mut dims = Vec::new();
    let mut rest = body;
    while let Some(open) = rest.find('{') {
        let close = open + rest[open..].find('}')?;
        let axes = rest[open + 1..close]
            .split(',')
            .map(|axis| axis.trim().trim_matches('"').to_string())
            .filter(|axis| !axis.is_empty())
            .collect();
        dims.push(axes);
        rest = &rest[close + 1..];
    }
    Some(dims)
}

/// The `partir_hlo.sharding` of each argument and each result of `main` (None when absent).
pub fn shardings(main: OperationRef) -> (Vec<Option<Sharding>>, Vec<Option<Sharding>>) {
    let read = |name: &str| -> Vec<Option<Sharding>> {
        let Some(attrs) = main
            .attribute(name)
            .ok()
            .and_then(|attr| ArrayAttribute::try_from(attr).ok())
        else {
            return Vec::new();
        };
        (0..attrs.len())
            .map(|i| {
                attrs
                    .element(i)
                    .ok()
                    .and_then(|dict| DictionaryAttribute::try_from(dict).ok())
                    .and_then(|dict| dict.element_by_name("partir_hlo.sharding"))
                    .and_then(|attr| parse_sharding(&attr.to_string()))
            })
            .collect()
    };
    (read("arg_attrs"), read("res_attrs"))
}

/// The local (per-device) type of a global type under a sharding; an error names what does not
/// divide.
pub fn local_type(
    global: &TensorType,
    sharding: Option<&Sharding>,
    mesh: &Mesh,
) -> Result<TensorType, String> {
    let mut local = global.clone();
    let Some(sharding) = sharding else {
        return Ok(local);
    };
    for (d, axes) in sharding.iter().enumerate() {
        if axes.is_empty() {
            continue;
        }
        let mut devices = 1;
        for axis in axes {
            devices *= mesh
                .size(axis)
                .ok_or_else(|| format!("axis '{axis}' is not in the mesh {}", mesh.describe()))?;
        }
        let size = local.shape.get_mut(d).ok_or_else(|| {
            format!(
                "sharding of dim {d} but {global} has rank {}",
                global.shape.len()
            )
        })?;
        if *size % devices != 0 {
            return Err(format!(
                "dim {d} of {global} does not divide over {devices} devices"
            ));
        }
        *size /= devices;
    }
    Ok(local)
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
            .map(Vec::as_slice)
            .unwrap_or(&[])
            .iter()
            .enumerate()
        {
            if axes.is_empty() {
                continue;
            }
            let before = ty.clone();
            let devices: usize = axes.iter().filter_map(|axis| mesh.size(axis)).product();
            ty.shape[d] /= devices;
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
            .map(Vec::as_slice)
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
    session.run(&mut module, "builtin.module(partir-to-mpi)")?;
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
    fn parses_meshes_and_shardings() {
        let mesh =
            Mesh::parse("module {\n  partir.mesh @mesh [\"batch\"=4, \"model\"=2]\n}").unwrap();
        assert_eq!(mesh.name, "mesh");
        assert_eq!(mesh.devices(), 8);
        assert_eq!(mesh.describe(), "batch=4 x model=2");
        assert_eq!(
            parse_sharding(r#"#partir_hlo.sharding<[{"batch", "model"}, {}]>"#).unwrap(),
            vec![vec!["batch".to_string(), "model".to_string()], vec![]]
        );
        let global = TensorType::parse("tensor<32x64xf32>").unwrap();
        let sharding = parse_sharding(r#"[{"batch"}, {"model"}]"#).unwrap();
        assert_eq!(
            local_type(&global, Some(&sharding), &mesh)
                .unwrap()
                .to_string(),
            "tensor<8x32xf32>"
        );
    }

    #[test]
    fn strips_the_dlti_map() {
        let text =
            "module attributes {dlti.map = #dlti.map<\"MPI:Implementation\" = \"MPICH\">} {\n}\n";
        assert_eq!(strip_dlti(text), "module {\n}\n");
    }
}
