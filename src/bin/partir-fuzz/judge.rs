//! Running one step of a case (with a timeout) and judging how it ended: passed, a clear
//! located rejection, or a failure (crash, hang, invalid IR, unlocated diagnostic, wrong result).

use std::{
    fmt,
    path::Path,
    process::{Command, ExitStatus, Stdio},
    time::{Duration, Instant},
};

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

/// What running a tool gave: its status (None after a timeout) and stderr.
pub struct Run {
    status: Option<ExitStatus>,
    stderr: String,
}

pub fn run(command: &mut Command, dir: &Path, name: &str, timeout: Duration) -> Run {
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
pub const MEMCHECK_EXIT: i32 = 97;

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
pub fn judge(run: &Run, step: &'static str, located: bool) -> Outcome {
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
pub fn execution_failure(run: &Run, step: &'static str) -> Option<Failure> {
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
