//! partir's plans handed to XLA's own partitioner (`partir partition --stage sdy`, docs/design.md
//! "Export to Shardy"): the Shardy-annotated input, compiled by XLA with Shardy on 8 CPU devices,
//! computes what the original does and moves no more bytes in its collectives than partir's own
//! export of the same plan (`tools/sdy_check.py`). The bytes are what the annotations decide:
//! without the `unreduced` marks on Megatron's partial gradients, the transformer's BP_MP moves
//! 269,828 B through Shardy against partir's 237,060 B, and this test fails; without the
//! whole-kept gradients that ZeRO-2 slices locally, the MLP's Z2 all-gathers 64 KiB of
//! activations through Shardy against none.

mod common;

use common::{root, text};
use std::process::Command;

#[test]
fn shardy_runs_partir_s_plans_with_no_more_communication() {
    let python = root().join("tools/.venv/bin/python");
    assert!(
        python.exists(),
        "{} is missing: run `scripts/setup --with-python`",
        python.display()
    );
    let out = Command::new(python)
        .args([
            "tools/sdy_check.py",
            "--jobs",
            "2",
            "mlp:BP_MP_Z3",
            "mlp:Z2",
            "transformer:BP_MP",
            "mqa:BP_MP",
            "llama:BP_MP",
        ])
        .env("PARTIR", env!("CARGO_BIN_EXE_partir"))
        .current_dir(root())
        .output()
        .expect("the JAX venv runs tools/sdy_check.py");
    let stdout = text(&out.stdout);
    assert!(out.status.success(), "{stdout}\n{}", text(&out.stderr));
    assert!(stdout.contains("5 pairs, 0 failing"), "{stdout}");
    assert_eq!(stdout.matches("verifies True").count(), 5, "{stdout}");
}

/// The collectives of the last tactic's report: (kind, axes, count, bytes), sorted.
fn collectives(report: &std::path::Path) -> Vec<(String, String, u64, u64)> {
    let json: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(report).expect("a report")).expect("JSON");
    let last = json["tactics"]
        .as_array()
        .and_then(|t| t.last())
        .expect("tactics");
    let mut found: Vec<_> = last["report"]["collectives"]
        .as_array()
        .expect("collectives")
        .iter()
        .map(|c| {
            (
                c["kind"].to_string(),
                c["axes"].to_string(),
                c["count"].as_u64().unwrap_or(0),
                c["bytes"].as_f64().unwrap_or(0.0) as u64,
            )
        })
        .collect();
    found.sort();
    found
}

/// A plan written as Shardy annotations and read back (`--stage sdy`, then a schedule that only
/// names the mesh: the program's `sdy.sharding` and `sdy.sharding_constraint`s become tactics)
/// is the same plan: the same collectives and bytes. ZeRO plans do not read back the same:
/// annotations do not say which tiles are storage only (a tactic's `propagate = "elementwise"`).
#[test]
fn a_plan_written_as_shardy_annotations_reads_back_as_the_same_plan() {
    let dir = std::env::temp_dir().join(format!("partir-sdy-{}", std::process::id()));
    std::fs::create_dir_all(&dir).expect("scratch");
    let partir = |args: &[&str]| {
        let out = Command::new(env!("CARGO_BIN_EXE_partir"))
            .args(args)
            .current_dir(root())
            .output()
            .expect("partir runs");
        assert!(out.status.success(), "{args:?}:\n{}", text(&out.stderr));
        text(&out.stderr)
    };
    for (model, schedule) in [
        ("mlp", "BP_MP"),
        ("transformer", "BP_MP"),
        ("llama", "BP_MP"),
        ("unet", "BP_MP"),
        ("gns", "BP_MP"),
    ] {
        let program = format!("examples/{model}/{model}.stablehlo.mlir");
        let written = format!("examples/{model}/schedules/{schedule}.toml");
        let mesh_only = dir.join(format!("{model}-{schedule}-mesh.toml"));
        let mesh = std::fs::read_to_string(root().join(&written))
            .expect("the schedule")
            .lines()
            .find(|line| line.starts_with("mesh"))
            .expect("a mesh line")
            .to_string();
        std::fs::write(&mesh_only, format!("{mesh}\n")).expect("write");
        let (direct, annotated, read_back) = (
            dir.join(format!("{model}-{schedule}.json")),
            dir.join(format!("{model}-{schedule}.sdy.mlir")),
            dir.join(format!("{model}-{schedule}-read.json")),
        );
        let path = |p: &std::path::Path| p.to_str().unwrap().to_string();
        partir(&[
            "partition",
            &program,
            "-s",
            &written,
            "--report",
            &path(&direct),
            "-o",
            &path(&dir.join("d.mlir")),
        ]);
        partir(&[
            "partition",
            &program,
            "-s",
            &written,
            "--stage",
            "sdy",
            "-o",
            &path(&annotated),
        ]);
        let log = partir(&[
            "partition",
            &path(&annotated),
            "-s",
            &path(&mesh_only),
            "--report",
            &path(&read_back),
            "-o",
            &path(&dir.join("r.mlir")),
        ]);
        assert!(
            log.contains("the program's sharding annotations tile"),
            "{log}"
        );
        assert_eq!(
            collectives(&direct),
            collectives(&read_back),
            "{model} {schedule}"
        );
    }
}

/// A program as JAX emits it with its own annotations (`in_shardings`,
/// `with_sharding_constraint`; `tools/sdy_fixtures.py`), given a schedule that only names the
/// mesh: the annotations are the plan (x on batch, the weights on model, one all-reduce per
/// axis), and it runs on XLA equal to the original. The fixture regenerates byte for byte.
#[test]
fn a_jax_program_s_own_annotations_are_its_plan() {
    let run = |args: &[&str]| {
        Command::new(env!("CARGO_BIN_EXE_partir"))
            .args(args)
            .current_dir(root())
            .output()
            .expect("partir runs")
    };
    // The same function lowered with Shardy (sdy.sharding) and without (GSPMD's mhlo.sharding).
    for program in [
        "examples/sdy/constrained_mlp.mlir",
        "examples/sdy/constrained_mlp.gspmd.mlir",
    ] {
        reads_its_own_plan(&run, program);
    }
    let check = Command::new(root().join("tools/.venv/bin/python"))
        .args(["tools/sdy_fixtures.py", "--check"])
        .current_dir(root())
        .output()
        .expect("the JAX venv runs");
    assert!(check.status.success(), "{}", text(&check.stdout));
}

fn reads_its_own_plan(run: &dyn Fn(&[&str]) -> std::process::Output, program: &str) {
    let out = run(&["verify", program, "-s", "examples/sdy/mesh.toml", "--xla"]);
    let (stdout, stderr) = (text(&out.stdout), text(&out.stderr));
    assert!(
        out.status.success() && stdout.contains("partir: PASS"),
        "{stdout}\n{stderr}"
    );
    let out = run(&[
        "partition",
        program,
        "-s",
        "examples/sdy/mesh.toml",
        "-o",
        "/dev/null",
    ]);
    let stderr = text(&out.stderr);
    for row in [
        "arg0       [batch, -]",
        "arg1       [-, model]",
        "arg2       [model, -]",
        "all_reduce sum  batch  1",
        "all_reduce sum  model  1",
    ] {
        assert!(stderr.contains(row), "no '{row}' in:\n{stderr}");
    }
}
