//! How the command line fails: one sentence (or located diagnostics), exit code 1.

use std::fmt;

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

/// `No such file or directory` without the `(os error 2)` tail.
pub fn os_error(error: &std::io::Error) -> String {
    let text = error.to_string();
    match text.find(" (os error") {
        Some(at) => text[..at].to_string(),
        None => text,
    }
}
