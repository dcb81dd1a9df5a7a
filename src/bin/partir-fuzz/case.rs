//! One fuzz case: a random program, a random schedule and random upstream passes before,
//! between and after partir's; run through the plugin in stock mlir-opt and through the
//! `partir` command line, and judged by the properties partir promises.

use crate::program::{self, Program};
use partir::random::SplitMix64;
use std::{
    fmt,
    path::{Path, PathBuf},
    process::{Command, ExitStatus, Stdio},
    time::{Duration, Instant},
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

/// Axis names a user might write, and a few hostile ones (empty, quotes, escapes, blanks).
const AXES: &[&str] = &["a", "b", "c", "batch", "model"];
const HOSTILE_AXES: &[&str] = &[
    "",
    "x y",
    "q\"t",
    "back\\slash",
    "new\nline",
    "tab\tbed",
    "é",
];

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
            Dialect::Mixed if seed % 2 == 0 => Dialect::Linalg,
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

/// A schedule over 1 to 3 axes, 1 to 3 tactics tiling selected values (mostly names that exist,
/// on dims that exist) and sometimes pinning some. `careful` schedules mostly tile a named
/// value on a dim the axis divides, so that most cases reach propagation and lowering.
fn schedule(random: &mut SplitMix64, program: &Program, careful: bool) -> (String, i64) {
    // Careful schedules are hostile less often.
    let hostile = if careful { 0.01 } else { 0.03 };
    let axis_count = 1 + random.below(3);
    let mut axes: Vec<(String, i64)> = Vec::new();
    for _ in 0..axis_count {
        let name = if random.chance(hostile) {
            random.pick(HOSTILE_AXES).to_string()
        } else {
            random.pick(AXES).to_string()
        };
        if axes.iter().any(|(existing, _)| *existing == name) {
            continue;
        }
        let size = match random.below(30) {
            0 => 1,
            1 => 3,
            2..=17 => 2,
            _ => 4,
        };
        axes.push((name, size));
    }
    let devices = axes.iter().map(|(_, size)| size).product();
    let mut mesh = toml::Table::new();
    for (name, size) in &axes {
        mesh.insert(name.clone(), toml::Value::Integer(*size));
    }
    let mut tactics = Vec::new();
    // Names a careful schedule tiled already (tiling one twice is mostly a conflict).
    let mut used: Vec<String> = Vec::new();
    for index in 0..1 + random.below(3) {
        let mut tactic = toml::Table::new();
        tactic.insert("name".into(), format!("T{index}").into());
        // Mostly one tactic per axis, in mesh order, as expert schedules are written.
        let axis = if random.chance(hostile) {
            "nope".to_string()
        } else if index < axes.len() && random.chance(if careful { 0.95 } else { 0.8 }) {
            axes[index].0.clone()
        } else {
            random.pick(&axes).0.clone()
        };
        let size = axes
            .iter()
            .find(|(name, _)| *name == axis)
            .map_or(1, |(_, size)| *size);
        tactic.insert("axis".into(), axis.into());
        let mut tile = toml::Table::new();
        let entries = if careful {
            1 + random.below(2)
        } else {
            1 + random.below(3)
        };
        for _ in 0..entries {
            if careful && random.chance(0.97) {
                if let Some((selector, dim)) = divisible_tile(random, program, size, &used) {
                    used.push(selector.clone());
                    tile.insert(selector, toml::Value::Integer(dim as i64));
                    continue;
                }
            }
            let at = random.below(program.names.len());
            let (selector, rank) = select(random, program, at);
            let dim = if random.chance(0.02) {
                rank + 1
            } else {
                random.below(rank.max(1))
            };
            tile.insert(selector, toml::Value::Integer(dim as i64));
        }
        tactic.insert("tile".into(), tile.into());
        if random.chance(0.2) {
            // A ZeRO-style tactic: the split reaches elementwise ops only.
            tactic.insert("propagate".into(), "elementwise".into());
        }
        if random.chance(if careful { 0.05 } else { 0.1 }) {
            let at = random.below(program.names.len());
            let (selector, _) = select(random, program, at);
            tactic.insert("replicate".into(), vec![toml::Value::from(selector)].into());
        }
        tactics.push(toml::Value::Table(tactic));
    }
    let mut file = toml::Table::new();
    file.insert("mesh".into(), mesh.into());
    file.insert("tactic".into(), tactics.into());
    // Rules for custom calls partir cannot read, as `[rules]` gives them; now and then one
    // malformed (a located error, not a crash).
    let mut rules = toml::Table::new();
    for (target, rule) in &program.rules {
        if random.chance(0.5) {
            let rule = if random.chance(0.05) {
                rule.replace("->", "=")
            } else {
                rule.clone()
            };
            rules.insert(target.clone(), rule.into());
        }
    }
    if !rules.is_empty() {
        file.insert("rules".into(), rules.into());
    }
    (
        toml::to_string(&file).expect("a schedule serialises"),
        devices,
    )
}

/// A named value and one of its dims that `size` divides (a few tries), by its exact name.
fn divisible_tile(
    random: &mut SplitMix64,
    program: &Program,
    size: i64,
    used: &[String],
) -> Option<(String, usize)> {
    for _ in 0..8 {
        let at = random.below(program.names.len());
        if used.contains(&program.names[at]) {
            continue;
        }
        let shape = &program.shapes[at];
        let dims: Vec<usize> = (0..shape.len())
            .filter(|&d| shape[d] >= size && shape[d] % size == 0)
            .collect();
        if !dims.is_empty() {
            return Some((program.names[at].clone(), *random.pick(&dims)));
        }
    }
    None
}

/// A selector for name `at`: the name itself, a glob, or one that matches nothing; with the
/// rank of what it names.
fn select(random: &mut SplitMix64, program: &Program, at: usize) -> (String, usize) {
    let name = &program.names[at];
    let rank = program.shapes[at].len();
    let selector = match random.below(100) {
        0..=84 => name.clone(),
        85..=89 => format!("{}*", &name[..name.len().min(1)]),
        90..=93 => "arg*".into(),
        94..=95 => "*".into(),
        96..=97 => "arg0".into(),
        _ => "no/such/value".into(),
    };
    (selector, rank)
}

/// How one step ended.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Outcome {
    Passed,
    /// A clear rejection: `file:line:col: error: partir-...: why` (or `partir: error: ...`).
    Rejected(String),
    /// What the properties forbid.
    Failed(Failure),
}

#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Failure {
    /// crash, hang, invalid-ir, unlocated-diagnostic, not-lowered, wrong-result, ...
    pub kind: &'static str,
    /// Which step: plugin, lower, cli, sequential, ranks, memcheck.
    pub step: &'static str,
    /// The first line that tells what happened.
    pub detail: String,
}

impl fmt::Display for Failure {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{} in {}: {}", self.kind, self.step, self.detail)
    }
}

impl Failure {
    /// The failure with numbers and paths blanked, to group reproducers of one class.
    pub fn class(&self) -> String {
        let mut class = String::new();
        let detail = self
            .detail
            .rsplit_once(": error: ")
            .map_or(self.detail.as_str(), |(_, message)| message);
        let mut previous_digit = false;
        for c in detail.chars().take(120) {
            if c.is_ascii_digit() {
                if !previous_digit {
                    class.push('N');
                }
                previous_digit = true;
            } else {
                class.push(c);
                previous_digit = false;
            }
        }
        format!("{} in {}: {class}", self.kind, self.step)
    }
}

/// Where the tools are.
pub struct Tools {
    pub mlir_opt: PathBuf,
    pub plugin: PathBuf,
    pub partir: PathBuf,
    pub timeout: Duration,
}

/// What running a tool gave: its status (None after a timeout) and stderr.
struct Run {
    status: Option<ExitStatus>,
    stderr: String,
}

fn run(command: &mut Command, dir: &Path, name: &str, timeout: Duration) -> Run {
    let stderr_path = dir.join(format!("{name}.stderr"));
    let stderr_file = std::fs::File::create(&stderr_path).expect("a scratch file");
    let child = command
        .stdin(Stdio::null())
        .stdout(Stdio::null())
        .stderr(stderr_file)
        .spawn();
    let mut child = match child {
        Ok(child) => child,
        Err(error) => {
            return Run {
                status: None,
                stderr: format!("cannot start: {error}"),
            }
        }
    };
    let start = Instant::now();
    let status = loop {
        match child.try_wait() {
            Ok(Some(status)) => break Some(status),
            Ok(None) if start.elapsed() > timeout => {
                let _ = child.kill();
                let _ = child.wait();
                break None;
            }
            Ok(None) => std::thread::sleep(Duration::from_millis(5)),
            Err(_) => break None,
        }
    };
    Run {
        status,
        stderr: std::fs::read_to_string(&stderr_path).unwrap_or_default(),
    }
}

/// valgrind's exit code when it found an error (`--error-exitcode`).
const MEMCHECK_EXIT: i32 = 97;

const CRASH_MARKS: &[&str] = &[
    "internal error",
    "panicked",
    "LLVM ERROR",
    "Assertion",
    "Rust cannot catch",
    "Stack dump",
    "PLEASE submit a bug report",
    "double free",
    "corrupted",
];

/// Judges a finished step. `located` asks rejections to carry a location (the plugin's
/// diagnostics); the command line may also say `partir: error: ...` for whole-file problems.
fn judge(run: &Run, step: &'static str, located: bool) -> Outcome {
    use std::os::unix::process::ExitStatusExt;
    let first_error = run
        .stderr
        .lines()
        .find(|line| line.contains("error"))
        .unwrap_or_else(|| run.stderr.lines().next().unwrap_or(""))
        .to_string();
    let Some(status) = run.status else {
        return Outcome::Failed(Failure {
            kind: "hang",
            step,
            detail: first_error,
        });
    };
    if status.code() == Some(MEMCHECK_EXIT) {
        return Outcome::Failed(Failure {
            kind: "memory-error",
            step,
            detail: first_valgrind_error(&run.stderr),
        });
    }
    if let Some(signal) = status.signal() {
        return Outcome::Failed(Failure {
            kind: "crash",
            step,
            detail: format!("signal {signal}: {first_error}"),
        });
    }
    if let Some(mark) = CRASH_MARKS.iter().find(|mark| run.stderr.contains(*mark)) {
        let line = run
            .stderr
            .lines()
            .find(|line| line.contains(mark))
            .unwrap_or(mark)
            .to_string();
        return Outcome::Failed(Failure {
            kind: "crash",
            step,
            detail: line,
        });
    }
    if status.success() {
        return Outcome::Passed;
    }
    // A rejection names partir's pass (or the command) and is located.
    let error = first_error.clone();
    let from_partir = error.contains("partir-") || error.starts_with("partir: error:");
    if !from_partir {
        return Outcome::Failed(Failure {
            kind: "invalid-ir",
            step,
            detail: error,
        });
    }
    let has_location = error.split(": error:").next().is_some_and(|place| {
        place
            .rsplit(':')
            .nth(1)
            .is_some_and(|line| line.parse::<u64>().is_ok_and(|l| l > 0))
    });
    if located && !has_location {
        return Outcome::Failed(Failure {
            kind: "unlocated-diagnostic",
            step,
            detail: error,
        });
    }
    Outcome::Rejected(error)
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
            Outcome::Rejected(_) => {}
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
        if execute && self.stablehlo() {
            if self.program.executable && (1..=8).contains(&self.devices) {
                report.executed = true;
                let mut command = Command::new(&tools.partir);
                command
                    .arg("verify")
                    .arg(&input)
                    .arg("--partitioned")
                    .arg(&hlo)
                    .arg("--xla")
                    .arg("--seed")
                    .arg(self.seed.to_string());
                let verified = run(&mut command, dir, "xla", timeout * 6);
                if let Some(failure) = execution_failure(&verified, "xla") {
                    report.failures.push(failure);
                }
            }
        } else if execute {
            report.executed = true;
            let mut command = Command::new(&tools.partir);
            command
                .arg("verify")
                .arg(&input)
                .arg("--partitioned")
                .arg(&core)
                .arg("--sequential")
                .arg("--seed")
                .arg(self.seed.to_string());
            let verified = run(&mut command, dir, "sequential", timeout * 4);
            if let Some(failure) = execution_failure(&verified, "sequential") {
                report.failures.push(failure);
            }
            if options.ranks_every > 0
                && self.seed.is_multiple_of(options.ranks_every)
                && (1..=8).contains(&self.devices)
            {
                let mut command = Command::new(&tools.partir);
                command
                    .arg("verify")
                    .arg(&input)
                    .arg("--partitioned")
                    .arg(&hlo)
                    .arg("--ranks")
                    .arg(self.devices.to_string())
                    .arg("--seed")
                    .arg(self.seed.to_string());
                let verified = run(&mut command, dir, "ranks", timeout * 6);
                if let Some(failure) = execution_failure(&verified, "ranks") {
                    report.failures.push(failure);
                }
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

fn first_valgrind_error(stderr: &str) -> String {
    stderr
        .lines()
        .find(|line| {
            line.contains("Invalid")
                || line.contains("uninitialised")
                || line.contains("definitely lost")
        })
        .unwrap_or("valgrind reported an error")
        .to_string()
}

/// A `partir verify` run that did not pass: a wrong result, or a program that does not run.
fn execution_failure(run: &Run, step: &'static str) -> Option<Failure> {
    match judge(run, step, false) {
        Outcome::Passed => None,
        Outcome::Failed(failure) => Some(failure),
        Outcome::Rejected(error) => Some(Failure {
            kind: if error.contains("verification failed") {
                "wrong-result"
            } else {
                "does-not-run"
            },
            step,
            detail: error,
        }),
    }
}
