//! The repository's Python tools as the command line runs them: the JAX venv
//! (`tools/setup-venv`) and the `partir_jax` package, found where partir was built.

use super::error::CliError;
use std::{
    path::{Path, PathBuf},
    process::Command,
};

/// The repository's `tools/` directory.
pub fn tools() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("tools")
}

/// `python -m MODULE` in the JAX venv, with `partir_jax` importable and XLA's CPU backend
/// holding `devices` devices; `what` says which command needs it when the venv is missing.
pub fn module(what: &str, name: &str, devices: usize) -> Result<Command, CliError> {
    let python = tools().join(".venv/bin/python");
    if !python.exists() {
        return Err(CliError::new(format!(
            "{what} runs XLA through JAX: {} is missing (run tools/setup-venv)",
            python.display()
        )));
    }
    let mut command = Command::new(&python);
    command
        .args(["-m", name])
        .env("PYTHONPATH", tools())
        .env(
            "XLA_FLAGS",
            format!("--xla_force_host_platform_device_count={}", devices.max(1)),
        )
        .env("JAX_PLATFORMS", "cpu");
    Ok(command)
}

/// The last `count` lines a Python tool printed on stderr (its exception, without the
/// traceback above it), for an error message.
pub fn last_lines(stderr: &[u8], count: usize) -> String {
    let said = String::from_utf8_lossy(stderr);
    let lines: Vec<&str> = said.lines().collect();
    lines[lines.len().saturating_sub(count)..].join("\n")
}
