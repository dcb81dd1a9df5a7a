//! Progress on stderr while a command runs. On a terminal a step shows a spinner with its
//! elapsed time and a schedule a bar of tactics (indicatif); elsewhere (logs, tests) the same
//! steps print one plain line each: `partir: lowering to PartIR:HLO ... 0.04 s`.

use indicatif::{ProgressBar, ProgressDrawTarget, ProgressStyle};
use std::{io::IsTerminal, path::Path, time::Duration, time::Instant};

/// A step: `partir: what ...` then the time it took.
pub struct Step {
    what: String,
    start: Instant,
    spinner: Option<ProgressBar>,
}

impl Step {
    pub fn start(what: &str) -> Self {
        let spinner = Progress::spinner(what).0;
        if spinner.is_none() {
            eprint!("partir: {what} ... ");
        }
        Self {
            what: what.to_string(),
            start: Instant::now(),
            spinner,
        }
    }

    fn end(&self) {
        if let Some(spinner) = &self.spinner {
            spinner.finish_and_clear();
            eprint!("partir: {} ... ", self.what);
        }
    }

    pub fn done(self) -> f64 {
        self.end();
        let seconds = self.start.elapsed().as_secs_f64();
        eprintln!("{}", seconds_text(seconds));
        seconds
    }

    /// Ends the line when the step failed.
    pub fn failed(self) {
        self.end();
        eprintln!("failed");
    }
}

/// A count of `total` things done, drawn as a bar on terminals only.
pub struct Progress(Option<ProgressBar>);

impl Progress {
    pub fn bar(total: usize, what: &str) -> Self {
        Self(live().then(|| {
            ProgressBar::with_draw_target(Some(total as u64), ProgressDrawTarget::stderr())
                .with_style(
                    ProgressStyle::with_template(&format!(
                        "partir: {{bar:30}} {{pos}}/{{len}} {what} {{msg}}"
                    ))
                    .expect("a valid template"),
                )
        }))
    }

    /// A spinner with the elapsed time, for work whose length is unknown.
    pub fn spinner(what: &str) -> Self {
        Self(live().then(|| {
            let spinner = ProgressBar::with_draw_target(None, ProgressDrawTarget::stderr())
                .with_style(
                    ProgressStyle::with_template("partir: {msg} {spinner} {elapsed}")
                        .expect("a valid template"),
                )
                .with_message(what.to_string());
            spinner.enable_steady_tick(Duration::from_millis(120));
            spinner
        }))
    }

    /// Prints `line` on stderr (above the bar on a terminal).
    pub fn println(&self, line: &str) {
        match &self.0 {
            Some(bar) => bar.println(line),
            None => eprintln!("{line}"),
        }
    }

    /// One more done; `last` says which.
    pub fn advance(&self, last: &str) {
        if let Some(bar) = &self.0 {
            bar.set_message(format!("(last: {last})"));
            bar.inc(1);
        }
    }

    /// `position` done; `message` says how it goes (a search's best cost so far).
    pub fn set(&self, position: usize, message: &str) {
        if let Some(bar) = &self.0 {
            bar.set_position(position as u64);
            bar.set_message(message.to_string());
        }
    }

    pub fn finish(&self) {
        if let Some(bar) = &self.0 {
            bar.finish_and_clear();
        }
    }
}

/// Whether progress is drawn live: stderr is a terminal.
fn live() -> bool {
    std::io::stderr().is_terminal()
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
