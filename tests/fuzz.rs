//! A bounded, seeded fuzzing run (`partir-fuzz`): random programs, schedules and upstream
//! passes through the plugin and the command line, with no crash, hang, invalid IR, unlocated
//! rejection or wrong result allowed. The seeds are fixed, so a failure here reproduces with
//! `target/debug/partir-fuzz --replay SEED`; longer campaigns: `partir-fuzz --cases 10000`.

use std::{path::Path, process::Command};

#[test]
fn fuzz_campaign_finds_nothing() {
    let root = Path::new(env!("CARGO_MANIFEST_DIR"));
    let out = root.join("target/tmp/fuzz");
    let _ = std::fs::remove_dir_all(&out);
    let run = Command::new(env!("CARGO_BIN_EXE_partir-fuzz"))
        .args([
            "--cases",
            "300",
            "--seed",
            "20261124",
            "--jobs",
            "2",
            "--ranks-every",
            "10",
        ])
        .arg("--out")
        .arg(&out)
        .current_dir(root)
        .output()
        .expect("partir-fuzz runs");
    let (stdout, stderr) = (
        String::from_utf8_lossy(&run.stdout),
        String::from_utf8_lossy(&run.stderr),
    );
    assert!(run.status.success(), "{stdout}\n{stderr}");
    assert!(stdout.contains("300 cases"), "{stdout}");
    assert!(stdout.contains("; 0 failures"), "{stdout}");
    // The campaign exercises partir: most accepted programs are executed and compared.
    let accepted: u64 = stdout
        .split(": ")
        .nth(1)
        .and_then(|rest| rest.split_whitespace().next())
        .and_then(|count| count.parse().ok())
        .unwrap_or(0);
    assert!(accepted >= 60, "too few cases accepted: {stdout}");
}
