//! A bounded, seeded fuzzing run (`partir-fuzz`): random programs, schedules and upstream
//! passes through the plugin and the command line, with no crash, hang, invalid IR, unlocated
//! rejection or wrong result allowed. The seeds are fixed, so a failure here reproduces with
//! `target/debug/partir-fuzz --replay SEED` (`--dialect stablehlo` for the StableHLO run);
//! longer campaigns: `partir-fuzz --cases 10000`.

use std::{path::Path, process::Command};

/// Runs `partir-fuzz` with `args` into `target/tmp/<out>` and returns its summary, asserting
/// it ran `cases` cases with no failure.
fn campaign(out: &str, cases: u64, args: &[&str]) -> String {
    let root = Path::new(env!("CARGO_MANIFEST_DIR"));
    let out = root.join("target/tmp").join(out);
    let _ = std::fs::remove_dir_all(&out);
    let run = Command::new(env!("CARGO_BIN_EXE_partir-fuzz"))
        .args(["--cases", &cases.to_string()])
        .args(args)
        .arg("--out")
        .arg(&out)
        .current_dir(root)
        .output()
        .expect("partir-fuzz runs");
    let (stdout, stderr) = (
        String::from_utf8_lossy(&run.stdout).to_string(),
        String::from_utf8_lossy(&run.stderr),
    );
    assert!(run.status.success(), "{stdout}\n{stderr}");
    assert!(stdout.contains(&format!("{cases} cases")), "{stdout}");
    assert!(stdout.contains("; 0 failures"), "{stdout}");
    stdout
}

/// The number before `label` in the summary (`183 accepted by the schedule`).
fn count(summary: &str, label: &str) -> u64 {
    summary
        .split(label)
        .next()
        .and_then(|before| before.split_whitespace().last())
        .and_then(|number| number.parse().ok())
        .unwrap_or(0)
}

#[test]
fn fuzz_campaign_finds_nothing() {
    let stdout = campaign(
        "fuzz",
        300,
        &["--seed", "20261124", "--jobs", "2", "--ranks-every", "10"],
    );
    // The campaign exercises partir: most accepted programs are executed and compared.
    let accepted = count(&stdout, " accepted by the schedule");
    assert!(accepted >= 60, "too few cases accepted: {stdout}");
}

/// JAX-style StableHLO programs (calls, loops, case, gathers and scatters, custom calls,
/// barriers): no failure, most cases accepted by their schedules, and every 10th seed's
/// accepted program run on XLA against the original (seconds each, hence not all).
#[test]
fn fuzz_stablehlo_campaign_finds_nothing() {
    let stdout = campaign(
        "fuzz-stablehlo",
        150,
        &[
            "--dialect",
            "stablehlo",
            "--seed",
            "20261126",
            "--jobs",
            "2",
            "--execute-every",
            "10",
        ],
    );
    let accepted = count(&stdout, " accepted by the schedule");
    let executed = count(&stdout, " executed and compared");
    assert!(
        accepted >= 76,
        "fewer than half the cases accepted: {stdout}"
    );
    assert!(executed >= 3, "too few cases executed on XLA: {stdout}");
}
