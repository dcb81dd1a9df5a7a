//! The `partir` command line (DESIGN §9).

/// Runs the command line on the process arguments; returns the exit code.
pub fn main() -> i32 {
    eprintln!("partir: not implemented yet");
    1
}
