//! The op-form coverage suite (docs/op_forms.md): small JAX functions, one StableHLO op form each
//! as `jax.jit(f).lower()` emits it (`tools/op_forms.py`, fixtures in `examples/op_forms/`),
//! partitioned along the batch with partir and run on 8 XLA CPU devices against JAX
//! (`tools/op_forms_check.py`). The check fails when a form of `EXPECTED_TO_PASS` stops
//! passing through (a stop or an all_gather), when partir crashes on a form, and when a
//! partitioned program does not run on XLA or computes something else than JAX.

mod common;

use common::{root, text};
use std::process::{Command, Output};

/// Runs a tool with the JAX venv's Python in the repository root.
fn python(args: &[&str]) -> Output {
    let python = root().join("tools/.venv/bin/python");
    assert!(
        python.exists(),
        "{} is missing: run `scripts/setup --with-python` (the JAX virtual environment)",
        python.display()
    );
    Command::new(python)
        .args(args)
        .env("PARTIR", env!("CARGO_BIN_EXE_partir"))
        .current_dir(root())
        .output()
        .expect("the JAX venv runs (tools/setup-venv)")
}

#[test]
fn every_op_form_partitions_and_runs_on_xla() {
    let out = python(&[
        "tools/op_forms_check.py",
        "--partir",
        env!("CARGO_BIN_EXE_partir"),
    ]);
    let stdout = text(&out.stdout);
    assert!(out.status.success(), "{stdout}\n{}", text(&out.stderr));
    let last = stdout.lines().last().unwrap_or_default();
    let passed: usize = last
        .split(" passed, ")
        .next()
        .and_then(|count| count.parse().ok())
        .unwrap_or_else(|| panic!("no `N passed, M failed` line:\n{stdout}"));
    assert!(passed > 0, "{stdout}");
    assert!(!stdout.contains("FAIL "), "{stdout}");
}

#[test]
fn op_form_fixtures_regenerate_byte_for_byte() {
    let out = python(&["tools/op_forms.py", "--check"]);
    let stdout = text(&out.stdout);
    assert!(out.status.success(), "{stdout}\n{}", text(&out.stderr));
    assert!(stdout.contains("all identical"), "{stdout}");
    let forms: usize = stdout
        .lines()
        .last()
        .and_then(|line| line.split(" forms, ").next())
        .and_then(|count| count.parse().ok())
        .unwrap_or_else(|| panic!("no `N forms, ...` line:\n{stdout}"));
    assert!(forms >= 55, "only {forms} op forms:\n{stdout}");
}

/// `verify --ranks` runs scatters as loops (`tools/partir_jax/scatter_loops.py`: one update
/// element per iteration of a `stablehlo.while`, as the StableHLO spec defines a scatter). On
/// XLA, every scatter form JAX emits here (`.at[].add`, `.at[].set`, a vmapped add with
/// batching dims) and the published FlaxLlama's three (its embedding gradient among them) give
/// what XLA's scatter gives, within the program's own f32 rounding; with every combiner planted
/// as an overwrite, the adds differ.
#[test]
fn scatters_as_loops_compute_what_xla_scatters_compute() {
    let programs = [
        "examples/op_forms/scatter_add.mlir",
        "examples/op_forms/scatter_set.mlir",
        "examples/op_forms/scatter_vmap_add.mlir",
        "examples/published/llama-scan.mlir",
    ];
    let run = |plant: bool| {
        let mut args = vec![
            "-m".to_string(),
            "partir_jax.scatter_loops".into(),
            "--check".into(),
        ];
        args.extend(programs.map(|program| root().join(program).display().to_string()));
        if plant {
            args.push("--plant".into());
        }
        let out = Command::new(root().join("tools/.venv/bin/python"))
            .args(&args)
            .env("PYTHONFAULTHANDLER", "1")
            .current_dir(root().join("tools"))
            .output()
            .expect("the JAX venv runs (tools/setup-venv)");
        let said = format!("{}{}({})", text(&out.stdout), text(&out.stderr), out.status);
        (out.status.success(), said)
    };
    let (passed, said) = run(false);
    assert!(passed, "{said}");
    assert_eq!(said.matches("PASS ").count(), programs.len(), "{said}");
    let (passed, said) = run(true);
    assert!(!passed, "a planted overwrite is not caught: {said}");
    for add in ["scatter_add", "scatter_vmap_add", "llama-scan"] {
        assert!(
            said.lines()
                .any(|line| line.starts_with("FAIL") && line.contains(add)),
            "{add}: {said}"
        );
    }
}
