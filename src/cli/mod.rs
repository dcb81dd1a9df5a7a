//! The `partir` command line (docs/design.md#9-command-line).
//!
//! - `partir partition MODEL.mlir --schedule S.toml [-o OUT.mlir] [--stage core]`: applies the
//!   schedule in-process (`partir-schedule{file=S}`), lowers to PartIR:HLO (`partir-lower-to-hlo,
//!   cse`) and writes it (or the Core program with `--stage core`), with a row per tactic and a
//!   summary of the collectives on stderr.
//! - `partir verify MODEL.mlir --schedule S.toml --sequential`: the equivalence check of
//!   docs/design.md#8-execution on one process: runs the original and the sequential reading of the partitioned
//!   program (`partir-sequential`) with `mlir-runner` on the same inputs and compares outputs.
//! - `partir verify MODEL.mlir --schedule S.toml --ranks N`: the same check for the PartIR:HLO
//!   program run on N MPI ranks (`mpiexec -n N mlir-runner`, see `spmd`).
//!
//! - `partir calibrate [-o DEVICE.toml]`: measures this machine on its XLA CPU devices and
//!   writes a device TOML (see `calibrate`).
//!
//! Errors are one sentence with a location, exit code 1.

pub mod args;
mod arguments;
mod auto;
mod calibrate;
mod error;
pub mod manifest;
pub mod npy;
mod padding;
mod partition;
pub mod pipeline;
mod progress;
mod python;
pub mod runner;
pub mod spmd;
pub mod verify;

pub use error::{os_error, CliError};
pub use partition::{lower_to_hlo, partition, partition_priced, read_model};
pub use progress::{seconds_text, shown, Step};

use args::{Cli, Command};
use clap::Parser;
use partition::{partition_command, simulate_command};

/// Runs the command line on the process arguments; returns the exit code.
pub fn main() -> i32 {
    let cli = match Cli::try_parse() {
        Ok(cli) => cli,
        Err(error) => {
            let _ = error.print();
            return error.exit_code();
        }
    };
    let result = match cli.command {
        Command::Partition(args) => partition_command(&args),
        Command::Verify(args) => verify::run(&args),
        Command::Simulate(args) => simulate_command(&args),
        Command::Args(args) => arguments::args_command(&args),
        Command::Auto(args) => auto::auto_command(&args),
        Command::Calibrate(args) => calibrate::calibrate_command(&args),
    };
    match result {
        Ok(code) => code,
        Err(error) => {
            eprintln!("{error}");
            1
        }
    }
}
