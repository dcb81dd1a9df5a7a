//! What the end-to-end tests share: the repository root and the `partir` binary.

#![allow(dead_code)] // each test file uses its own subset

use std::{
    path::{Path, PathBuf},
    process::{Command, Output},
};

pub fn root() -> &'static Path {
    Path::new(env!("CARGO_MANIFEST_DIR"))
}

/// Runs the `partir` binary in the repository root.
pub fn partir(args: &[&str]) -> Output {
    Command::new(env!("CARGO_BIN_EXE_partir"))
        .args(args)
        .current_dir(root())
        // A zoo model's original runs on XLA (f32, f64) are the same under each of its
        // schedules: XLA runs them once per checkout (src/cli/verify/xla.rs).
        .env(
            "PARTIR_XLA_REFERENCE_CACHE",
            root().join("target/tmp/xla-reference"),
        )
        .output()
        .expect("the partir binary runs")
}

pub fn text(bytes: &[u8]) -> String {
    String::from_utf8_lossy(bytes).into_owned()
}

/// `partir verify PROGRAM -s SCHEDULE --xla`: whether it passed (exit 0 and `partir: PASS`),
/// and everything it said.
pub fn verify_on_xla(program: &str, schedule: &str) -> (bool, String) {
    let done = partir(&["verify", program, "-s", schedule, "--xla"]);
    let said = text(&done.stdout) + &text(&done.stderr);
    (done.status.success() && said.contains("partir: PASS"), said)
}

/// A published model's schedule: `examples/published/schedules/FOLDER/NAME.toml`.
pub fn published_schedule(folder: &str, name: &str) -> String {
    root()
        .join(format!("examples/published/schedules/{folder}/{name}.toml"))
        .display()
        .to_string()
}

/// `tools/published_models.py CASE` (a case built on request, not a committed fixture: an
/// abstract 8B step, a scanned and rematerialised variant) written under `target/tmp/DIR`.
pub fn generated_program(case: &str, dir: &str) -> PathBuf {
    generated_program_with(case, dir, &[])
}

/// [`generated_program`] with the generator's options (`--layers 6`, `--plain`).
pub fn generated_program_with(case: &str, dir: &str, options: &[&str]) -> PathBuf {
    let dir = root().join("target/tmp").join(dir);
    std::fs::create_dir_all(&dir).expect("writable");
    let made = Command::new(root().join("tools/.venv/bin/python"))
        .args(["tools/published_models.py", case])
        .args(options)
        .arg("--out")
        .arg(&dir)
        .current_dir(root())
        .output()
        .expect("the JAX venv runs (tools/setup-venv)");
    assert!(made.status.success(), "{}", text(&made.stderr));
    dir.join(format!("{case}.mlir"))
}

/// XLA's own peak per device of `program` (`partir partition --stage xla`'s output) and
/// partir's peak over it, from `report` (that run's `--report`): XLA's buffer assignment on
/// the CPU backend (`tools/xla_memory.py`, `compiled.memory_analysis()`; compiling allocates
/// nothing). The figures are written next to `program`.
pub fn xla_memory(program: &Path, report: &Path) -> (f64, f64) {
    let figures = program.with_extension("xla-memory.json");
    let done = Command::new(root().join("tools/.venv/bin/python"))
        .arg(root().join("tools/xla_memory.py"))
        .arg(program)
        .arg(report)
        .arg("--json")
        .arg(&figures)
        .output()
        .expect("the JAX venv runs (tools/setup-venv)");
    assert!(
        done.status.success(),
        "{}: {}",
        program.display(),
        text(&done.stderr)
    );
    let figures: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(figures).expect("figures")).expect("JSON");
    let xla = figures["xla"]["peak_bytes"].as_f64().expect("XLA's peak");
    let partir = figures["partir_peak_bytes"]
        .as_f64()
        .expect("partir's peak");
    (xla, partir / xla)
}
