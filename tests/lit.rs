//! Runs the lit suite (`test/`) against the freshly built plugin and driver, so that one
//! `cargo test` runs everything. Cargo builds the binaries before integration tests; the
//! cdylib is located next to them.

use std::{path::PathBuf, process::Command};

#[test]
fn lit_suite() {
    let driver = PathBuf::from(env!("CARGO_BIN_EXE_partir-opt"));
    let build = driver
        .parent()
        .expect("binaries live in the build folder")
        .to_path_buf();
    assert!(
        build.join("libpartir.so").exists(),
        "{} has no libpartir.so; run `cargo build` (the cdylib) before `cargo test`",
        build.display()
    );
    let llvm = env!("PARTIR_LLVM_PREFIX");
    let lit = [format!("{llvm}/bin/lit"), "lit".into()]
        .into_iter()
        .find(|candidate| Command::new(candidate).arg("--version").output().is_ok())
        .expect("lit not found: run scripts/setup");
    let root = env!("CARGO_MANIFEST_DIR");
    let status = Command::new(lit)
        .args(["-sv", "--order=lexical", "test"])
        .current_dir(root)
        .env("PARTIR_BUILD_DIR", &build)
        .env("PARTIR_LLVM_PREFIX", llvm)
        .status()
        .expect("lit runs");
    assert!(status.success(), "lit reported failing tests (see above)");
}
