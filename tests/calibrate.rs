//! `partir calibrate --quick` (seconds) writes a device TOML the simulator loads, with sane
//! positive figures and a link per mesh axis; the fits and the bench's Spearman pass their
//! planted cases (tools/test_calibrate.py).

mod common;

use common::{partir, root, text};
use std::{path::PathBuf, process::Command};

fn scratch() -> PathBuf {
    let dir = root().join("target/tmp/calibrate");
    std::fs::create_dir_all(&dir).expect("scratch directory");
    dir
}

#[test]
fn a_quick_calibration_is_a_device_the_simulator_loads() {
    let dir = scratch();
    let device = dir.join("device.toml");
    let out = partir(&["calibrate", "--quick", "-o", device.to_str().unwrap()]);
    let said = text(&out.stderr);
    assert!(out.status.success(), "{said}");
    assert!(said.contains("partir: calibrated-"), "{said}");
    let written: toml::Table =
        toml::from_str(&std::fs::read_to_string(&device).unwrap()).expect("the device is TOML");
    assert!(written["name"].as_str().unwrap().starts_with("calibrated-"));
    for figure in [
        "matrix_tflops",
        "vector_tflops",
        "memory_gib",
        "memory_gbps",
        "link_gbps",
        "launch_overhead_us",
    ] {
        let value = written[figure].as_float().unwrap();
        assert!(value > 0.0 && value.is_finite(), "{figure} = {value}");
    }
    assert!(written["op_overhead_us"].as_float().unwrap() >= 0.0);
    // A link per mesh axis (the default mesh batch=4,model=2), each measured.
    for axis in ["batch", "model"] {
        let link = &written["axis"][axis];
        assert!(link["link_gbps"].as_float().unwrap() > 0.0, "{axis}");
        assert!(link["link_latency_us"].as_float().unwrap() >= 0.0, "{axis}");
    }
    assert!(!written["sources"].as_array().unwrap().is_empty());

    // The simulator prices a partitioned program on it.
    let program = dir.join("mlp-bp.mlir");
    let out = partir(&[
        "partition",
        "examples/mlp/mlp.stablehlo.mlir",
        "--schedule",
        "examples/mlp/schedules/BP.toml",
        "-o",
        program.to_str().unwrap(),
    ]);
    assert!(out.status.success(), "{}", text(&out.stderr));
    let report = dir.join("report.json");
    let out = partir(&[
        "simulate",
        program.to_str().unwrap(),
        "--device",
        device.to_str().unwrap(),
        "--report",
        report.to_str().unwrap(),
    ]);
    let said = text(&out.stderr);
    assert!(out.status.success(), "{said}");
    assert!(said.contains("partir-simulate: calibrated-"), "{said}");
    let report: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(&report).unwrap()).unwrap();
    let totals = &report["totals"];
    let step = totals["step_seconds"].as_f64().unwrap();
    // Launching the step alone costs the measured overhead; the MLP's kernels cost theirs.
    assert!(
        step >= report["device"]["launch_overhead"].as_f64().unwrap(),
        "{totals}"
    );
    assert!(totals["kernels"].as_f64().unwrap() > 0.0, "{totals}");
    assert!(
        totals["communication_seconds"].as_f64().unwrap() > 0.0,
        "{totals}"
    );
}

#[test]
fn the_fits_and_spearman_pass_their_planted_cases() {
    let out = Command::new(root().join("tools/.venv/bin/python"))
        .arg(root().join("tools/test_calibrate.py"))
        .current_dir(root())
        .output()
        .expect("the JAX venv runs (tools/setup-venv)");
    assert!(
        out.status.success(),
        "{}\n{}",
        text(&out.stdout),
        text(&out.stderr)
    );
}
