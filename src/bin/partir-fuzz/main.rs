//! `partir-fuzz`: random small linalg programs (or, with `--dialect stablehlo`, JAX-style
//! StableHLO programs in generic form) with random schedules and upstream passes, run
//! through the plugin in stock mlir-opt and the `partir` command line, checked for what partir
//! promises on any input:
//! - no crash, abort or panic, no hang, no IR that the MLIR verifier rejects after any pass;
//! - every rejection is an error at a location, from a partir pass, saying why (and never
//!   about a custom call the schedule gave no rule for: partir warns about those);
//! - everything accepted lowers to PartIR:HLO (StableHLO: and exports for XLA), and computes
//!   what the original does: linalg's sequential reading (`partir verify --sequential`; every
//!   `--ranks-every`th case also on MPI ranks), StableHLO on XLA (`partir verify --xla`, the
//!   only executor that reads it, seconds a case: every `--execute-every`th seed); the input
//!   file is never changed.
//!
//! ```sh
//! target/debug/partir-fuzz --cases 10000 --seed 1 --jobs 2        # a campaign
//! target/debug/partir-fuzz --dialect stablehlo --cases 10000 --jobs 1 --execute-every 50
//! target/debug/partir-fuzz --cases 50 --memcheck                   # under valgrind
//! target/debug/partir-fuzz --replay 1234                           # one case, kept
//! ```
//! Failing cases are kept under `--out` (program, schedule, pipeline, each step's stderr),
//! grouped by class in the summary.

mod case;
mod judge;
mod program;
mod schedule;

use case::{Case, Dialect, Options, Tools};
use clap::Parser;
use judge::Failure;
use std::{
    collections::BTreeMap,
    path::PathBuf,
    sync::{
        atomic::{AtomicU64, Ordering},
        Mutex,
    },
    time::{Duration, Instant},
};

#[derive(Debug, Parser)]
#[command(
    name = "partir-fuzz",
    about = "Fuzz partir with random programs, schedules and pipelines"
)]
struct Args {
    /// How many cases to run.
    #[arg(long, default_value_t = 100)]
    cases: u64,
    /// The first case's seed (case i uses seed + i).
    #[arg(long, default_value_t = 1)]
    seed: u64,
    /// Cases run in parallel.
    #[arg(long, default_value_t = 2)]
    jobs: usize,
    /// Where cases are written (failing ones are kept).
    #[arg(long, default_value = "target/fuzz")]
    out: PathBuf,
    /// Which programs: linalg, StableHLO (JAX's generic form), or each case either.
    #[arg(long, value_enum, default_value = "linalg")]
    dialect: Dialect,
    /// Do not execute accepted programs (no `partir verify`).
    #[arg(long)]
    no_execute: bool,
    /// Execute only cases whose seed is a multiple of N (StableHLO runs on XLA: seconds a
    /// case).
    #[arg(long, default_value_t = 1)]
    execute_every: u64,
    /// Also run the device-local program of every case whose seed is a multiple of N on MPI
    /// ranks, when accepted and the mesh has at most 8 devices (0: never).
    #[arg(long, default_value_t = 10)]
    ranks_every: u64,
    /// Run the plugin steps under valgrind's memcheck (slow; no execution).
    #[arg(long)]
    memcheck: bool,
    /// Seconds before a step counts as a hang.
    #[arg(long, default_value_t = 30)]
    timeout: u64,
    /// Run only the case of this seed and keep it.
    #[arg(long)]
    replay: Option<u64>,
    /// Keep every case's directory, not only failing ones.
    #[arg(long)]
    keep: bool,
}

fn tools(args: &Args) -> Tools {
    let exe = std::env::current_exe().expect("the fuzzer's own path");
    let build = exe.parent().expect("the build directory").to_path_buf();
    let llvm = partir::cli::runner::llvm_prefix();
    Tools {
        mlir_opt: llvm.join("bin/mlir-opt"),
        plugin: build.join("libpartir.so"),
        partir: build.join("partir"),
        timeout: Duration::from_secs(args.timeout),
    }
}

#[derive(Default)]
struct Tally {
    cases: u64,
    accepted: u64,
    executed: u64,
    /// class → (count, first seed, its detail).
    failures: BTreeMap<String, (u64, u64, Failure)>,
}

fn main() {
    let args = Args::parse();
    let tools = tools(&args);
    for tool in [&tools.mlir_opt, &tools.plugin, &tools.partir] {
        if !tool.exists() {
            eprintln!(
                "partir-fuzz: {} not found (cargo build first)",
                tool.display()
            );
            std::process::exit(2);
        }
    }
    let options = Options {
        execute: !args.no_execute && !args.memcheck,
        execute_every: args.execute_every,
        ranks_every: args.ranks_every,
        memcheck: args.memcheck,
    };
    let (first, count) = match args.replay {
        Some(seed) => (seed, 1),
        None => (args.seed, args.cases),
    };
    let next = AtomicU64::new(0);
    let tally = Mutex::new(Tally::default());
    let start = Instant::now();
    std::thread::scope(|scope| {
        for _ in 0..args.jobs.max(1) {
            scope.spawn(|| loop {
                let index = next.fetch_add(1, Ordering::SeqCst);
                if index >= count {
                    break;
                }
                let seed = first + index;
                let case = Case::generate(seed, args.dialect);
                let dir = args.out.join(format!("case-{seed}"));
                let report = case.run(&dir, &tools, &options);
                let keep = args.keep || args.replay.is_some() || !report.failures.is_empty();
                if !keep {
                    let _ = std::fs::remove_dir_all(&dir);
                }
                let mut tally = tally.lock().unwrap_or_else(|p| p.into_inner());
                tally.cases += 1;
                tally.accepted += u64::from(report.accepted);
                tally.executed += u64::from(report.executed);
                for failure in report.failures {
                    eprintln!("partir-fuzz: case {seed}: {failure} ({})", dir.display());
                    let entry = tally
                        .failures
                        .entry(failure.class())
                        .or_insert((0, seed, failure));
                    entry.0 += 1;
                }
                if tally.cases.is_multiple_of(100) {
                    eprintln!(
                        "partir-fuzz: {} cases in {:.0} s, {} accepted, {} executed, {} failure classes",
                        tally.cases,
                        start.elapsed().as_secs_f64(),
                        tally.accepted,
                        tally.executed,
                        tally.failures.len()
                    );
                }
            });
        }
    });
    let tally = tally.into_inner().unwrap_or_else(|p| p.into_inner());
    let failed: u64 = tally.failures.values().map(|(count, _, _)| count).sum();
    println!(
        "partir-fuzz: {} cases (seeds {}..{}) in {:.0} s: {} accepted by the schedule, {} rejected with a located error, {} executed and compared; {} failures",
        tally.cases,
        first,
        first + count,
        start.elapsed().as_secs_f64(),
        tally.accepted,
        tally.cases - tally.accepted,
        tally.executed,
        failed
    );
    for (class, (count, seed, failure)) in &tally.failures {
        println!(
            "  {count:>5} x {class}\n        first: seed {seed}: {}",
            failure.detail
        );
    }
    std::process::exit(i32::from(failed > 0));
}
