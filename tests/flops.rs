//! partir's per-device FLOP counts (`partir simulate`, totals.flops and totals.transcendentals) against
//! XLA's own cost analysis of the same JAX training steps, unsharded and sharded per expert schedule
//! (recorded in examples/<model>/xla_cost.json by tools/xla_cost.py): tools/flop_check.py partitions
//! every zoo model with every recorded schedule, simulates it, prints the comparison table and fails
//! on a ratio outside [0.95, 1.05] that is not a documented known difference. Needs only python3
//! (standard library), not JAX.

use std::{path::Path, process::Command};

#[test]
fn flops_match_xla_cost_analysis() {
    let root = Path::new(env!("CARGO_MANIFEST_DIR"));
    let output = Command::new("python3")
        .arg(root.join("tools/flop_check.py"))
        .arg("--partir")
        .arg(env!("CARGO_BIN_EXE_partir"))
        .current_dir(root)
        .output()
        .expect("python3 runs tools/flop_check.py");
    let stdout = String::from_utf8_lossy(&output.stdout);
    let stderr = String::from_utf8_lossy(&output.stderr);
    println!("{stdout}");
    eprintln!("{stderr}");
    assert!(
        output.status.success(),
        "tools/flop_check.py: partir's FLOPs differ from XLA's cost analysis (table above)"
    );
}
