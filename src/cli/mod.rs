//! The `partir` command line (DESIGN §9).
//!
//! - `partir partition MODEL.mlir --schedule S.toml [-o OUT.mlir] [--stage core]`: applies the
//!   schedule in-process (`partir-schedule{file=S}`) and writes the Core program, with a row per
//!   tactic on stderr.
//! - `partir verify MODEL.mlir --schedule S.toml --sequential`: the equivalence check of
//!   DESIGN §8 on one process: runs the original and the sequential reading of the partitioned
//!   program (`partir-sequential`) with `mlir-runner` on the same inputs and compares outputs.
//!
//! Errors are one sentence with a location, exit code 1.

pub mod args;
pub mod manifest;
pub mod npy;
pub mod pipeline;
pub mod runner;
pub mod verify;

use args::{Cli, Command, ModelArgs, PartitionArgs, Stage};
use clap::Parser;
use melior::ir::Module;
use pipeline::{Diag, Level, Session, TacticSummary};
use std::{fmt, path::Path, time::Instant};

/// A failure of the command: printed as `partir: error: ...` (or as located diagnostics).
#[derive(Debug, Clone, PartialEq)]
pub struct CliError {
    message: String,
    /// The message already reads `file:line:col: error: ...`.
    located: bool,
}

impl CliError {
    pub fn new(message: impl Into<String>) -> Self {
        Self {
            message: message.into(),
            located: false,
        }
    }

    pub fn located(message: impl Into<String>) -> Self {
        Self {
            message: message.into(),
            located: true,
        }
    }
}

impl fmt::Display for CliError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        if self.located {
            f.write_str(&self.message)
        } else {
            write!(f, "partir: error: {}", self.message)
        }
    }
}

impl From<String> for CliError {
    fn from(message: String) -> Self {
        Self::new(message)
    }
}

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
        Command::Simulate(_) => Err(CliError::new(
            "partir simulate is not implemented yet (needs partir-lower-to-hlo and partir-simulate)",
        )),
    };
    match result {
        Ok(code) => code,
        Err(error) => {
            eprintln!("{error}");
            1
        }
    }
}

/// Progress on stderr: `partir: what ...` then the time it took.
pub struct Step {
    start: Instant,
}

impl Step {
    pub fn start(what: &str) -> Self {
        eprint!("partir: {what} ... ");
        Self {
            start: Instant::now(),
        }
    }

    pub fn done(self) -> f64 {
        let seconds = self.start.elapsed().as_secs_f64();
        eprintln!("{}", seconds_text(seconds));
        seconds
    }

    /// Ends the line when the step failed.
    pub fn failed(self) {
        eprintln!("failed");
    }
}

pub fn seconds_text(seconds: f64) -> String {
    if seconds < 10.0 {
        format!("{seconds:.2} s")
    } else {
        format!("{seconds:.1} s")
    }
}

/// A display form of a path relative to the working directory.
pub fn shown(path: &Path) -> String {
    path.display().to_string()
}

fn partition_command(args: &PartitionArgs) -> Result<i32, CliError> {
    if args.stage == Stage::Hlo {
        return Err(CliError::new(
            "--stage hlo is not implemented yet (needs partir-lower-to-hlo); use --stage core",
        ));
    }
    let total = Instant::now();
    let source = shown(&args.model.model);
    let session = Session::new(&source);
    let module = partition(&session, &args.model)?;
    let text = module.as_operation().to_string();
    match &args.output {
        Some(path) => std::fs::write(path, &text).map_err(|error| {
            CliError::new(format!("cannot write '{}': {error}", path.display()))
        })?,
        None => print!("{text}"),
    }
    eprintln!(
        "partir: wrote the Core program{} in {} in total",
        args.output
            .as_ref()
            .map(|path| format!(" to {}", path.display()))
            .unwrap_or_default(),
        seconds_text(total.elapsed().as_secs_f64())
    );
    Ok(0)
}

/// Reads, parses and partitions the model with its schedule; prints diagnostics and the tactic
/// table on stderr.
pub fn partition<'s>(session: &'s Session, args: &ModelArgs) -> Result<Module<'s>, CliError> {
    let text = read_model(&args.model)?;
    check_schedule(&args.schedule)?;
    let step = Step::start(&format!("parsing {}", shown(&args.model)));
    let mut module = session.parse(&text).inspect_err(|_| eprintln!("failed"))?;
    step.done();
    let step = Step::start(&format!(
        "partitioning with {} (partir-schedule)",
        shown(&args.schedule)
    ));
    let pipeline = format!(
        "builtin.module(partir-schedule{{file={}}})",
        pass_option(&args.schedule.to_string_lossy())
    );
    let result = session.run(&mut module, &pipeline);
    match &result {
        Ok(()) => {
            step.done();
        }
        Err(_) => step.failed(),
    }
    result?;
    report_diagnostics(&session.take());
    Ok(module)
}

pub fn read_model(path: &Path) -> Result<String, CliError> {
    std::fs::read_to_string(path).map_err(|error| {
        CliError::new(format!(
            "cannot read the model '{}': {}",
            path.display(),
            os_error(&error)
        ))
    })
}

fn check_schedule(path: &Path) -> Result<(), CliError> {
    std::fs::File::open(path).map(|_| ()).map_err(|error| {
        CliError::new(format!(
            "cannot read the schedule '{}': {}",
            path.display(),
            os_error(&error)
        ))
    })
}

/// `No such file or directory` without the `(os error 2)` tail.
pub fn os_error(error: &std::io::Error) -> String {
    let text = error.to_string();
    match text.find(" (os error") {
        Some(at) => text[..at].to_string(),
        None => text,
    }
}

/// A pass option value, quoted when MLIR's option parser would split it.
fn pass_option(value: &str) -> String {
    if value.contains([' ', ',', '{', '}', '=', '"']) {
        format!("\"{}\"", value.replace('"', "\\\""))
    } else {
        value.to_string()
    }
}

/// Prints warnings and remarks, then the tactic table.
fn report_diagnostics(diags: &[Diag]) {
    let mut summaries = Vec::new();
    for diag in diags {
        match TacticSummary::parse(&diag.message) {
            Some(summary) if diag.level == Level::Remark => summaries.push(summary),
            _ => eprintln!("{diag}"),
        }
    }
    if let Some(table) = pipeline::summary_table(&summaries) {
        eprint!("{table}");
    }
}
