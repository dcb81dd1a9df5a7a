//! StableHLO in, XLA out: every zoo model's StableHLO form (JAX's own IR, read as unregistered
//! ops) partitioned with each expert schedule and run by XLA on one CPU device per mesh
//! device (`partir verify --xla`), against the original run by XLA in f32 and in f64 and
//! against JAX's stored outputs; a planted bug is caught.

mod common;

use common::{partir, root, text};
use std::{
    path::{Path, PathBuf},
    process::Command,
};

fn stablehlo(model: &str) -> PathBuf {
    root().join(format!("examples/{model}/{model}.stablehlo.mlir"))
}

fn scratch(test: &str) -> PathBuf {
    let dir = root().join("target/tmp/xla").join(test);
    std::fs::create_dir_all(&dir).expect("scratch directory");
    dir
}

#[test]
fn every_zoo_model_and_schedule_runs_on_xla() {
    let mut pairs = Vec::new();
    for model in [
        "mlp",
        "transformer",
        "unet",
        "gns",
        "mqa",
        "llama",
        "moe",
        "gpipe",
        "transformer_scan",
    ] {
        let mut schedules: Vec<PathBuf> =
            std::fs::read_dir(root().join(format!("examples/{model}/schedules")))
                .expect("schedules")
                .map(|entry| entry.unwrap().path())
                .collect();
        schedules.sort();
        pairs.extend(schedules.into_iter().map(|schedule| (model, schedule)));
    }
    // Two at a time: each run is mostly JAX starting and XLA compiling, one core each.
    let failures: Vec<String> = std::thread::scope(|scope| {
        let workers: Vec<_> = (0..2)
            .map(|worker| {
                let pairs = &pairs;
                scope.spawn(move || {
                    let mut failures = Vec::new();
                    for (model, schedule) in pairs.iter().skip(worker).step_by(2) {
                        let program = stablehlo(model);
                        let out = partir(&[
                            "verify",
                            program.to_str().unwrap(),
                            "--schedule",
                            schedule.to_str().unwrap(),
                            "--xla",
                        ]);
                        let stdout = text(&out.stdout);
                        if !out.status.success() || !stdout.contains("partir: PASS") {
                            failures.push(format!(
                                "{model} {}:\n{stdout}\n{}",
                                schedule.display(),
                                text(&out.stderr)
                            ));
                        }
                    }
                    failures
                })
            })
            .collect();
        workers
            .into_iter()
            .flat_map(|worker| worker.join().expect("a worker"))
            .collect()
    });
    assert!(
        pairs.len() >= 35,
        "only {} model x schedule pairs",
        pairs.len()
    );
    assert!(failures.is_empty(), "{}", failures.join("\n"));
}

#[test]
fn partition_writes_an_xla_module_with_one_replica_per_device() {
    let program = stablehlo("mlp");
    let out = partir(&[
        "partition",
        program.to_str().unwrap(),
        "--schedule",
        "examples/mlp/schedules/BP_MP.toml",
        "--stage",
        "xla",
    ]);
    let stdout = text(&out.stdout);
    assert!(out.status.success(), "{}", text(&out.stderr));
    assert!(stdout.contains("mhlo.num_replicas = 8 : i32"), "{stdout}");
    assert!(
        stdout.contains("partir.mesh = \"batch=4,model=2\""),
        "{stdout}"
    );
    assert!(stdout.contains("\"stablehlo.all_reduce\""), "{stdout}");
    assert!(!stdout.contains("partir_hlo."), "{stdout}");
}

#[test]
fn verify_xla_catches_a_wrong_reduction_kind() {
    let dir = scratch("wrong_reduction");
    let hlo = dir.join("mlp-bp.mlir");
    let program = stablehlo("mlp");
    let out = partir(&[
        "partition",
        program.to_str().unwrap(),
        "--schedule",
        "examples/mlp/schedules/BP.toml",
        "-o",
        hlo.to_str().unwrap(),
    ]);
    assert!(out.status.success(), "{}", text(&out.stderr));
    let good = std::fs::read_to_string(&hlo).unwrap();
    // The unchanged program passes...
    let verify = |path: &Path| {
        partir(&[
            "verify",
            program.to_str().unwrap(),
            "--partitioned",
            path.to_str().unwrap(),
            "--xla",
        ])
    };
    let out = verify(&hlo);
    assert!(
        out.status.success(),
        "{}\n{}",
        text(&out.stdout),
        text(&out.stderr)
    );
    // ...a gradient all-reduced with max instead of sum does not.
    let planted = dir.join("mlp-bp-max.mlir");
    let line = good
        .lines()
        .find(|line| {
            line.contains("partir_hlo.all_reduce sum") && line.contains("tensor<10x256xf32>")
        })
        .expect("w2's gradient all_reduce");
    std::fs::write(
        &planted,
        good.replacen(line, &line.replace(" sum ", " max "), 1),
    )
    .unwrap();
    let out = verify(&planted);
    let stdout = text(&out.stdout);
    assert_eq!(out.status.code(), Some(1), "{stdout}");
    assert!(
        stdout.contains("params/w2") && stdout.contains("FAIL"),
        "{stdout}"
    );
}

/// The JAX front door (`partir_jax.partition`): outputs equal `jax.jit(step)`'s on zoo models,
/// and the README's example trains the LLaMA-style model with BP+MP, its loss falling.
#[test]
fn partir_from_jax_matches_jit_and_trains() {
    let python = root().join("tools/.venv/bin/python");
    let run = |script: &str| {
        Command::new(&python)
            .arg(root().join(script))
            .env("PARTIR", env!("CARGO_BIN_EXE_partir"))
            .current_dir(root())
            .output()
            .expect("the JAX venv runs (tools/setup-venv)")
    };
    let out = run("tools/test_partir_jax.py");
    assert!(
        out.status.success(),
        "{}\n{}",
        text(&out.stdout),
        text(&out.stderr)
    );
    let out = run("examples/llama/train.py");
    let stdout = text(&out.stdout);
    assert!(out.status.success(), "{stdout}\n{}", text(&out.stderr));
    let losses: Vec<f64> = stdout
        .lines()
        .filter_map(|line| line.split("loss ").nth(1))
        .map(|loss| loss.trim().parse().expect("a loss"))
        .collect();
    assert_eq!(losses.len(), 5, "{stdout}");
    assert!(losses.windows(2).all(|pair| pair[1] < pair[0]), "{stdout}");
    assert!(stdout.contains("MP               model"), "{stdout}");
}

/// More than one process (`tools/test_multiprocess.py`): `partir_jax` under `jax.distributed`,
/// 2 processes × 4 CPU devices started by the script, gives what 1 process × 8 devices gives
/// (within rounding noise: the cross-process all-reduce sums in another order), a planted
/// difference between the processes' data is caught, and misuse is an error, not a hang.
#[test]
fn partir_from_jax_multiprocess_matches_one_process() {
    let out = Command::new(root().join("tools/.venv/bin/python"))
        .arg(root().join("tools/test_multiprocess.py"))
        .env("PARTIR", env!("CARGO_BIN_EXE_partir"))
        .current_dir(root())
        .output()
        .expect("the JAX venv runs (tools/setup-venv)");
    let stdout = text(&out.stdout);
    assert!(out.status.success(), "{stdout}\n{}", text(&out.stderr));
    assert!(
        stdout.contains("a planted bug") && !stdout.contains("FAIL"),
        "{stdout}"
    );
}
