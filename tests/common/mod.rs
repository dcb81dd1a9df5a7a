//! What the end-to-end tests share: the repository root and the `partir` binary.

#![allow(dead_code)] // each test file uses its own subset

use std::{
    path::Path,
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
        .output()
        .expect("the partir binary runs")
}

pub fn text(bytes: &[u8]) -> String {
    String::from_utf8_lossy(bytes).into_owned()
}
