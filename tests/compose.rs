//! partir composes with upstream passes (`tools/compose_matrix.py`, docs/composition.md): every
//! zoo model with BP+MP+Z3 and each of nine upstream passes before the schedule, between the
//! schedule and the lowering, and after the lowering (140 pipelines) lowers and moves no more
//! bytes in no more collectives than the plain pipeline; the distinct programs of the MLP and
//! the MQA model also pass `partir verify --ranks 8` (all five models: `--verify` alone, about
//! 7 minutes on 2 cores).

use std::{path::Path, process::Command};

#[test]
fn upstream_passes_compose_with_partir() {
    let root = Path::new(env!("CARGO_MANIFEST_DIR"));
    let build = Path::new(env!("CARGO_BIN_EXE_partir"))
        .parent()
        .expect("the build directory");
    let run = Command::new("python3")
        .arg(root.join("tools/compose_matrix.py"))
        .args(["--verify", "--verify-models", "mlp,mqa", "--jobs", "2"])
        .arg("--build")
        .arg(build)
        .current_dir(root)
        .output()
        .expect("python3 runs the matrix");
    let (stdout, stderr) = (
        String::from_utf8_lossy(&run.stdout),
        String::from_utf8_lossy(&run.stderr),
    );
    assert!(run.status.success(), "{stdout}\n{stderr}");
    assert!(stderr.contains("140 pipelines, 0 failing"), "{stderr}");
    assert!(stdout.matches("ok, verified").count() >= 50, "{stdout}");
}

/// Fused programs partition as well as unfused ones: every zoo model x schedule after
/// `linalg-generalize-named-ops, linalg-fuse-elementwise-ops, canonicalize, cse` has no more
/// conflicts, collectives or bytes than the program as imported.
#[test]
fn fused_programs_partition_as_well_as_unfused_ones() {
    let root = Path::new(env!("CARGO_MANIFEST_DIR"));
    let build = Path::new(env!("CARGO_BIN_EXE_partir"))
        .parent()
        .expect("the build directory");
    let run = Command::new("python3")
        .arg(root.join("tools/compose_matrix.py"))
        .arg("--fused")
        .arg("--build")
        .arg(build)
        .current_dir(root)
        .output()
        .expect("python3 runs the matrix");
    let (stdout, stderr) = (
        String::from_utf8_lossy(&run.stdout),
        String::from_utf8_lossy(&run.stderr),
    );
    assert!(run.status.success(), "{stdout}\n{stderr}");
    assert!(stderr.contains("33 fused programs, 0 failing"), "{stderr}");
}
