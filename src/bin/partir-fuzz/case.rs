//! One fuzz case: a random program, a random schedule and random upstream passes before,
//! between and after partir's; run through the plugin in stock mlir-opt and through the
//! `partir` command line, and judged by the properties partir promises.

use crate::judge::{execution_failure, judge, run, Failure, Outcome, MEMCHECK_EXIT};
use crate::program::{self, Program};
use crate::schedule::schedule;
use partir::random::SplitMix64;
use std::{
    path::{Path, PathBuf},
    process::Command,
    time::Duration,
};

/// The upstream passes mixed into pipelines (each as it nests: `func.func(cse)`).
const UPSTREAM: &[&str] = &[
    "func.func(cse)",
    "func.func(canonicalize)",
    "sccp",
    "inline",
    "func.func(loop-invariant-code-motion)",
    "symbol-dce",
    "func.func(linalg-generalize-named-ops)",
    "func.func(linalg-fuse-elementwise-ops)",
    "func.func(linalg-fold-unit-extent-dims)",
];

/// The upstream passes mixed into StableHLO pipelines (the linalg ones would find nothing).
/// Not `inline` nor `symbol-dce`: on unregistered ops with regions (the generic form's
/// `stablehlo.while`) stock mlir-opt 22 crashes in the inliner and symbol-dce stops with
/// "potentially unknown symbol table", on JAX's program alone, without partir.
const UPSTREAM_STABLEHLO: &[&str] = &[
    "func.func(cse)",
    "func.func(canonicalize)",
    "sccp",
    "func.func(loop-invariant-code-motion)",
];

/// Which generator makes a case's program.
#[derive(Clone, Copy, Debug, PartialEq, Eq, clap::ValueEnum)]
pub enum Dialect {
    Linalg,
    Stablehlo,
    /// Each case either, by its seed.
    Mixed,
}

pub struct Case {
    pub seed: u64,
    /// Linalg or StableHLO (never Mixed).
    pub dialect: Dialect,
    pub program: Program,
    pub schedule: String,
    pub devices: i64,
    pub before: Vec<&'static str>,
    pub between: Vec<&'static str>,
    pub after: Vec<&'static str>,
}

fn passes(random: &mut SplitMix64, upstream: &[&'static str]) -> Vec<&'static str> {
    if random.chance(0.5) {
        return Vec::new();
    }
    (0..1 + random.below(2))
        .map(|_| *random.pick(upstream))
        .collect()
}

impl Case {
    pub fn generate(seed: u64, dialect: Dialect) -> Self {
        let dialect = match dialect {
            Dialect::Mixed if seed.is_multiple_of(2) => Dialect::Linalg,
            Dialect::Mixed => Dialect::Stablehlo,
            other => other,
        };
        let mut random = SplitMix64(seed);
        let (program, upstream) = match dialect {
            Dialect::Stablehlo => (
                program::stablehlo::generate(&mut random, 8),
                UPSTREAM_STABLEHLO,
            ),
            _ => (program::generate(&mut random, 8), UPSTREAM),
        };
        let (schedule, devices) = schedule(&mut random, &program, dialect == Dialect::Stablehlo);
        Case {
            seed,
            dialect,
            program,
            schedule,
            devices,
            before: passes(&mut random, upstream),
            between: passes(&mut random, upstream),
            after: passes(&mut random, upstream),
        }
    }

    fn stablehlo(&self) -> bool {
        self.dialect == Dialect::Stablehlo
    }
}

/// Where the tools are.
pub struct Tools {
    pub mlir_opt: PathBuf,
    pub plugin: PathBuf,
    pub partir: PathBuf,
    pub timeout: Duration,
}

/// What one case gave.
pub struct Report {
    pub accepted: bool,
    pub executed: bool,
    pub failures: Vec<Failure>,
}

fn hash(path: &Path) -> u64 {
    use std::hash::{Hash, Hasher};
    let mut hasher = std::collections::hash_map::DefaultHasher::new();
    std::fs::read(path).unwrap_or_default().hash(&mut hasher);
    hasher.finish()
}

pub struct Options {
    pub execute: bool,
    /// Execute (`partir verify`) only cases whose seed is a multiple of this.
    pub execute_every: u64,
    pub ranks_every: u64,
    pub memcheck: bool,
}

impl Case {
    fn pipeline(&self, schedule: &Path) -> String {
        let mut steps: Vec<String> = self.before.iter().map(|p| p.to_string()).collect();
        steps.push(format!("partir-schedule{{file={}}}", schedule.display()));
        steps.extend(self.between.iter().map(|p| p.to_string()));
        format!("builtin.module({})", steps.join(","))
    }

    fn lowering(&self) -> String {
        // Combining runs on every case: it reorders ops, the riskiest rewrite after lowering.
        let mut steps = vec![
            "partir-lower-to-hlo".to_string(),
            "partir-combine-collectives".to_string(),
        ];
        steps.extend(self.after.iter().map(|p| p.to_string()));
        format!("builtin.module({})", steps.join(","))
    }

    /// Writes the case into `dir` and runs every step.
    pub fn run(&self, dir: &Path, tools: &Tools, options: &Options) -> Report {
        std::fs::create_dir_all(dir).expect("a scratch directory");
        let input = dir.join("in.mlir");
        let schedule = dir.join("schedule.toml");
        std::fs::write(&input, &self.program.text).expect("writable");
        std::fs::write(&schedule, &self.schedule).expect("writable");
        std::fs::write(
            dir.join("pipeline.txt"),
            format!("{}\n{}\n", self.pipeline(&schedule), self.lowering()),
        )
        .expect("writable");
        let before = hash(&input);
        let mut report = Report {
            accepted: false,
            executed: false,
            failures: Vec::new(),
        };
        let plugin = |command: &mut Command| {
            command
                .arg(format!("--load-dialect-plugin={}", tools.plugin.display()))
                .arg(format!("--load-pass-plugin={}", tools.plugin.display()));
            // StableHLO is read unregistered in a stock mlir-opt (generic form).
            if self.stablehlo() {
                command.arg("--allow-unregistered-dialect");
            }
        };
        let memcheck = |program: &Path| -> Command {
            if options.memcheck {
                let mut command = Command::new("valgrind");
                command
                    .arg("--quiet")
                    .arg(format!("--error-exitcode={MEMCHECK_EXIT}"))
                    .arg("--exit-on-first-error=yes")
                    .arg(program);
                command
            } else {
                Command::new(program)
            }
        };
        let timeout = if options.memcheck {
            tools.timeout * 20
        } else {
            tools.timeout
        };
        let step_name = |name: &'static str| if options.memcheck { "memcheck" } else { name };

        // 1. The plugin in stock mlir-opt: passes before, the schedule, passes between.
        let core = dir.join("core.mlir");
        let mut command = memcheck(&tools.mlir_opt);
        plugin(&mut command);
        command
            .arg("-p")
            .arg(self.pipeline(&schedule))
            .arg(&input)
            .arg("-o")
            .arg(&core);
        let outcome = judge(
            &run(&mut command, dir, "plugin", timeout),
            step_name("plugin"),
            true,
        );
        match outcome {
            Outcome::Failed(failure) => report.failures.push(failure),
            // A custom call nobody gave a rule for is warned about, never a reason to reject.
            Outcome::Rejected(error) => {
                let unruled = self.program.rules.iter().any(|(target, _)| {
                    error.contains(target.as_str()) && !self.schedule.contains(target.as_str())
                });
                if unruled {
                    report.failures.push(Failure {
                        kind: "custom-call-rejected",
                        step: "plugin",
                        detail: error,
                    });
                }
            }
            Outcome::Passed => report.accepted = true,
        }

        // 2. What it accepted lowers (then the passes after).
        let hlo = dir.join("hlo.mlir");
        if report.accepted {
            let mut command = memcheck(&tools.mlir_opt);
            plugin(&mut command);
            command
                .arg("-p")
                .arg(self.lowering())
                .arg(&core)
                .arg("-o")
                .arg(&hlo);
            let lowered = run(&mut command, dir, "lower", timeout);
            match judge(&lowered, step_name("lower"), true) {
                Outcome::Passed => {}
                Outcome::Rejected(error) => report.failures.push(Failure {
                    kind: "not-lowered",
                    step: "lower",
                    detail: error,
                }),
                Outcome::Failed(failure) => report.failures.push(failure),
            }
        }

        // 2b. StableHLO: the lowered program exports for XLA (partir-export-stablehlo).
        if report.accepted && report.failures.is_empty() && self.stablehlo() {
            let mut command = memcheck(&tools.mlir_opt);
            plugin(&mut command);
            command
                .arg("-p")
                .arg("builtin.module(partir-export-stablehlo)")
                .arg(&hlo)
                .arg("-o")
                .arg(dir.join("xla.mlir"));
            let exported = run(&mut command, dir, "export", timeout);
            match judge(&exported, step_name("export"), true) {
                Outcome::Passed => {}
                Outcome::Rejected(error) => report.failures.push(Failure {
                    kind: "not-exported",
                    step: "export",
                    detail: error,
                }),
                Outcome::Failed(failure) => report.failures.push(failure),
            }
        }

        // 3. The command line on the original (schedule only, priced per tactic; StableHLO
        //    all the way to XLA's form).
        if !options.memcheck {
            let mut command = Command::new(&tools.partir);
            command
                .arg("partition")
                .arg(&input)
                .arg("-s")
                .arg(&schedule)
                .arg("-o")
                .arg(dir.join("cli.mlir"));
            if self.stablehlo() {
                command.arg("--stage").arg("xla");
            }
            if let Outcome::Failed(failure) =
                judge(&run(&mut command, dir, "cli", timeout), "cli", false)
            {
                report.failures.push(failure);
            }
        }

        // 4. Its sequential reading computes what the original does (and, sometimes, the
        //    device-local program on MPI ranks); StableHLO runs on XLA instead (the only
        //    executor that reads it), every `execute_every`th case, as it takes seconds.
        let lowered_ok = report.accepted && report.failures.is_empty();
        let execute = lowered_ok
            && options.execute
            && !options.memcheck
            && self.seed.is_multiple_of(options.execute_every.max(1));
        // `partir verify INPUT --partitioned PROGRAM ENGINE... --seed S`, judged as `step`.
        let verify = |program: &Path, engine: &[String], step: &'static str, limit| {
            let mut command = Command::new(&tools.partir);
            command
                .arg("verify")
                .arg(&input)
                .arg("--partitioned")
                .arg(program)
                .args(engine)
                .arg("--seed")
                .arg(self.seed.to_string());
            execution_failure(&run(&mut command, dir, step, limit), step)
        };
        if execute && self.stablehlo() {
            if self.program.executable && (1..=8).contains(&self.devices) {
                report.executed = true;
                report
                    .failures
                    .extend(verify(&hlo, &["--xla".into()], "xla", timeout * 6));
            }
        } else if execute {
            report.executed = true;
            report.failures.extend(verify(
                &core,
                &["--sequential".into()],
                "sequential",
                timeout * 4,
            ));
            if options.ranks_every > 0
                && self.seed.is_multiple_of(options.ranks_every)
                && (1..=8).contains(&self.devices)
            {
                let ranks = ["--ranks".into(), self.devices.to_string()];
                report
                    .failures
                    .extend(verify(&hlo, &ranks, "ranks", timeout * 6));
            }
        }
        if hash(&input) != before {
            report.failures.push(Failure {
                kind: "input-changed",
                step: "plugin",
                detail: "the input file changed".into(),
            });
        }
        report
    }
}
