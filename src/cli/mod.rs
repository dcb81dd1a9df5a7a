//! The `partir` command line (DESIGN §9).
//!
//! - `partir partition MODEL.mlir --schedule S.toml [-o OUT.mlir] [--stage core]`: applies the
//!   schedule in-process (`partir-schedule{file=S}`), lowers to PartIR:HLO (`partir-lower-to-hlo,
//!   cse`) and writes it (or the Core program with `--stage core`), with a row per tactic and a
//!   summary of the collectives on stderr.
//! - `partir verify MODEL.mlir --schedule S.toml --sequential`: the equivalence check of
//!   DESIGN §8 on one process: runs the original and the sequential reading of the partitioned
//!   program (`partir-sequential`) with `mlir-runner` on the same inputs and compares outputs.
//! - `partir verify MODEL.mlir --schedule S.toml --ranks N`: the same check for the PartIR:HLO
//!   program run on N MPI ranks (`mpiexec -n N mlir-runner`, see `spmd`).
//!
//! Errors are one sentence with a location, exit code 1.

pub mod args;
pub mod manifest;
pub mod npy;
pub mod pipeline;
pub mod runner;
pub mod spmd;
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
    let total = Instant::now();
    let source = shown(&args.model.model);
    let session = Session::new(&source);
    let mut module = partition(&session, &args.model)?;
    let what = match args.stage {
        Stage::Core => "Core",
        Stage::Hlo => {
            lower_to_hlo(&session, &mut module)?;
            "PartIR:HLO"
        }
    };
    let text = module.as_operation().to_string();
    if args.stage == Stage::Hlo {
        eprint!("{}", collectives_summary(&text));
    }
    match &args.output {
        Some(path) => std::fs::write(path, &text).map_err(|error| {
            CliError::new(format!("cannot write '{}': {error}", path.display()))
        })?,
        None => print!("{text}"),
    }
    eprintln!(
        "partir: wrote the {what} program{} in {} in total",
        args.output
            .as_ref()
            .map(|path| format!(" to {}", path.display()))
            .unwrap_or_default(),
        seconds_text(total.elapsed().as_secs_f64())
    );
    Ok(0)
}

/// Lowers a partitioned Core module to PartIR:HLO (`partir-lower-to-hlo`, then `cse`).
pub fn lower_to_hlo(session: &Session, module: &mut Module) -> Result<(), CliError> {
    let step = Step::start("lowering to PartIR:HLO (partir-lower-to-hlo, cse)");
    let result = session.run(module, "builtin.module(partir-lower-to-hlo,cse)");
    match &result {
        Ok(()) => {
            step.done();
        }
        Err(_) => step.failed(),
    }
    result?;
    for diag in session.take() {
        if diag.level != Level::Remark {
            eprintln!("{diag}");
        }
    }
    Ok(())
}

/// The collectives of a printed PartIR:HLO module: a count per kind and axes, as lines.
pub fn collectives_summary(text: &str) -> String {
    let mut counts: Vec<((String, String), usize)> = Vec::new();
    for line in text.lines() {
        let Some(at) = line.find("= partir_hlo.") else {
            continue;
        };
        let rest = &line[at + 2 + "partir_hlo.".len()..];
        let mut words = rest.split_whitespace();
        let Some(op) = words.next() else { continue };
        let mut kind = op.to_string();
        if op == "all_reduce" || op == "reduce_scatter" {
            if let Some(reduction) = words.next() {
                kind = format!("{op} {reduction}");
            }
        }
        let axes = rest
            .split_once(" axes [")
            .and_then(|(_, tail)| tail.split_once(']'))
            .map(|(axes, _)| axes.replace('"', ""))
            .unwrap_or_default();
        match counts
            .iter_mut()
            .find(|(key, _)| key.0 == kind && key.1 == axes)
        {
            Some((_, count)) => *count += 1,
            None => counts.push(((kind, axes), 1)),
        }
    }
    let total: usize = counts.iter().map(|(_, count)| count).sum();
    if total == 0 {
        return "partir: collectives: none\n".into();
    }
    let mut rows = vec![vec![
        "collective".to_string(),
        "axes".into(),
        "count".into(),
    ]];
    for ((kind, axes), count) in &counts {
        rows.push(vec![kind.clone(), axes.clone(), count.to_string()]);
    }
    format!("partir: collectives: {total}\n{}", pipeline::table(&rows))
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
