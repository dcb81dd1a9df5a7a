//! Progress on stderr while a command runs.

use std::{path::Path, time::Instant};

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
