//! The command line's grammar (clap derive). docs/design.md#9-command-line.

use clap::{Args, Parser, Subcommand, ValueEnum};
use std::path::PathBuf;

#[derive(Debug, Parser)]
#[command(
    name = "partir",
    version,
    about = "PartIR: partition an MLIR program with a schedule of tactics, and check the result",
    long_about = None
)]
pub struct Cli {
    #[command(subcommand)]
    pub command: Command,
}

#[derive(Debug, Subcommand)]
pub enum Command {
    /// Apply a schedule to a model and write the partitioned program.
    Partition(PartitionArgs),
    /// Check that the partitioned program computes what the original computes.
    Verify(VerifyArgs),
    /// Estimate the step time, memory and communication of a program on a device.
    Simulate(SimulateArgs),
    /// Search a partitioning (Monte Carlo tree search priced by the simulator) and write it
    /// as a schedule that `partir partition` applies.
    Auto(AutoArgs),
    /// List what a schedule can address: each argument's name, shape, type and size, and the
    /// tactics of a schedule that match it.
    Args(ArgsArgs),
    /// Measure this machine as a device (rates, bandwidth, overheads, each mesh axis's
    /// collectives) on its XLA CPU devices, and write a device TOML that `--device` takes.
    Calibrate(CalibrateArgs),
}

/// What `partition` and `verify` share: the model and its schedule.
#[derive(Debug, Args)]
pub struct ModelArgs {
    /// The program: an MLIR module whose functions name their arguments with `partir.name`.
    #[arg(value_name = "MODEL.mlir")]
    pub model: PathBuf,
    /// The schedule: a TOML file with a mesh and tactics (docs/design.md#6-schedules).
    #[arg(long, short = 's', value_name = "S.toml")]
    pub schedule: PathBuf,
}

/// The program `partition` writes.
#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum)]
pub enum Stage {
    /// PartIR:Core: the program with functional `partir.loop`s (global shapes).
    Core,
    /// PartIR:HLO: the device-local SPMD program with collectives (partir-lower-to-hlo).
    Hlo,
    /// A StableHLO SPMD module for XLA, one replica per device (partir-export-stablehlo; the
    /// model's payload must be StableHLO).
    Xla,
    /// The input program annotated for XLA's own partitioner: `sdy.mesh`, `sdy.sharding` on
    /// @main's arguments and results, `sdy.sharding_constraint` on the values the plan splits.
    Sdy,
}

#[derive(Debug, Args)]
pub struct PartitionArgs {
    #[command(flatten)]
    pub model: ModelArgs,
    /// Write the partitioned program here instead of to stdout.
    #[arg(long, short = 'o', value_name = "OUT.mlir")]
    pub output: Option<PathBuf>,
    /// Which program to write.
    #[arg(long, value_enum, default_value_t = Stage::Hlo)]
    pub stage: Stage,
    /// Price the program on this device after every tactic: a preset (tpu-v3, tpu-v4, tpu-v5e,
    /// tpu-v5p, a100-40gb, a100-80gb, h100-sxm; a100-dgx, h100-dgx: nodes of 8 with
    /// InfiniBand between them) or a device TOML file.
    #[arg(long, short = 'd', value_name = "D", default_value = crate::sim::DEFAULT_DEVICE)]
    pub device: String,
    /// Write the per-tactic report (JSON) here.
    #[arg(long, value_name = "R.json")]
    pub report: Option<PathBuf>,
    /// Write the per-tactic picture (a self-contained HTML page) here.
    #[arg(long, value_name = "R.html")]
    pub html: Option<PathBuf>,
}

#[derive(Debug, Args)]
pub struct VerifyArgs {
    /// The original program (the specification).
    #[arg(value_name = "ORIGINAL.mlir")]
    pub model: PathBuf,
    /// Partition the original with this schedule and check the result.
    #[arg(
        long,
        short = 's',
        value_name = "S.toml",
        conflicts_with = "partitioned"
    )]
    pub schedule: Option<PathBuf>,
    /// Check this partitioned program instead, made by any pipeline: PartIR:Core (partir
    /// loops, global shapes) or PartIR:HLO (device-local, with collectives).
    #[arg(long, value_name = "OUT.mlir")]
    pub partitioned: Option<PathBuf>,
    /// Check the sequential reading of the Core program (partir-sequential) on one process.
    #[arg(long, conflicts_with = "ranks")]
    pub sequential: bool,
    /// Run the PartIR:HLO program on N MPI ranks (N = the mesh's device count).
    #[arg(long, value_name = "N")]
    pub ranks: Option<u32>,
    /// Run a StableHLO program's partitioned form on XLA, one CPU device per mesh device
    /// (exported by partir-export-stablehlo; the original runs on one device). Needs the JAX
    /// venv (tools/setup-venv).
    #[arg(long, conflicts_with_all = ["ranks", "sequential"])]
    pub xla: bool,
    /// Inputs (and JAX's outputs): a directory with manifest.json and .npy files
    /// [default: <dir of ORIGINAL>/data when it has a manifest.json, else generated inputs].
    #[arg(long, value_name = "DIR")]
    pub data: Option<PathBuf>,
    /// An output passes when its normalised error max|a-b|/max|b| against the original run in
    /// f64 is at most this...
    #[arg(long, default_value_t = 1e-5, value_name = "E")]
    pub tolerance: f64,
    /// ...or at most this many times the original f32 program's own error against it.
    #[arg(long, default_value_t = 10.0, value_name = "F")]
    pub noise_factor: f64,
    /// The seed of generated inputs (used only without a data directory).
    #[arg(long, default_value_t = 0)]
    pub seed: u64,
    /// Write the harness programs (before lowering) into this directory.
    #[arg(long, value_name = "DIR")]
    pub keep: Option<PathBuf>,
}

#[derive(Debug, Args)]
pub struct AutoArgs {
    /// The program: an MLIR module whose functions name their arguments with `partir.name`.
    #[arg(value_name = "MODEL.mlir")]
    pub model: PathBuf,
    /// The mesh, major to minor: `batch=4,model=2` (default: the fixed schedule's).
    #[arg(long, value_name = "AXES")]
    pub mesh: Option<String>,
    /// Tactics to apply before searching (a schedule; its `auto` tactics are searched too).
    #[arg(long, short = 's', value_name = "FIXED.toml")]
    pub schedule: Option<PathBuf>,
    /// The axes to search, in this order [default: every mesh axis, in the mesh's order and in
    /// its reverse, keeping the faster plan].
    #[arg(long, value_delimiter = ',', value_name = "A,B")]
    pub axes: Vec<String>,
    /// The device plans are priced on: a preset or a device TOML file.
    #[arg(long, short = 'd', value_name = "D", default_value = crate::sim::DEFAULT_DEVICE)]
    pub device: String,
    /// The memory budget per device: B, KiB, MiB, GiB [default: the device's capacity].
    #[arg(long, value_name = "SIZE")]
    pub memory: Option<String>,
    /// Seconds each search phase (per axis: compute, then memory) may take.
    #[arg(long, value_name = "SECONDS", default_value_t = crate::passes::auto::DEFAULT_TIME_LIMIT)]
    pub time_limit: f64,
    /// The seed of the search: the same seed finds the same plan (unless the time limit
    /// stops it first).
    #[arg(long, default_value_t = 0)]
    pub seed: u64,
    /// Most distinct plans priced per search phase.
    #[arg(long, value_name = "N", default_value_t = crate::passes::auto::DEFAULT_EVALUATIONS)]
    pub evaluations: usize,
    /// Write the plan (a schedule) here.
    #[arg(long, short = 'o', value_name = "PLAN.toml")]
    pub output: PathBuf,
    /// Write the plan's per-tactic report (JSON, with the search's curve and decisions) here.
    #[arg(long, value_name = "R.json")]
    pub report: Option<PathBuf>,
    /// Write the plan's picture (a self-contained HTML page) here.
    #[arg(long, value_name = "R.html")]
    pub html: Option<PathBuf>,
}

#[derive(Debug, Args)]
pub struct ArgsArgs {
    /// The program: an MLIR module whose functions name their arguments with `partir.name`.
    #[arg(value_name = "MODEL.mlir")]
    pub model: PathBuf,
    /// Show which tactics of this schedule match each value, and selectors that match nothing.
    #[arg(long, short = 's', value_name = "S.toml")]
    pub schedule: Option<PathBuf>,
}

#[derive(Debug, Args)]
pub struct SimulateArgs {
    /// The partitioned program.
    #[arg(value_name = "OUT.mlir")]
    pub program: PathBuf,
    /// The device: a preset (tpu-v3, tpu-v4, tpu-v5e, tpu-v5p, a100-40gb, a100-80gb, h100-sxm;
    /// a100-dgx, h100-dgx: nodes of 8 with InfiniBand between them) or a device TOML file.
    #[arg(long, short = 'd', value_name = "D", default_value = crate::sim::DEFAULT_DEVICE)]
    pub device: String,
    /// Write the report (JSON) here.
    #[arg(long, value_name = "R.json")]
    pub report: Option<PathBuf>,
}

#[derive(Debug, Args)]
pub struct CalibrateArgs {
    /// XLA CPU devices measured at once: the devices partitioned programs run on.
    #[arg(long, value_name = "N", default_value_t = 8)]
    pub devices: usize,
    /// The mesh whose axes get their own links, major to minor: `batch=4,model=2` [default:
    /// batch=N/2,model=2 for an even N, else batch=N].
    #[arg(long, value_name = "AXES")]
    pub mesh: Option<String>,
    /// Fewer sizes and steps: seconds rather than minutes, rougher figures.
    #[arg(long)]
    pub quick: bool,
    /// Write the device TOML here [default: stdout].
    #[arg(long, short = 'o', value_name = "DEVICE.toml")]
    pub output: Option<PathBuf>,
}
