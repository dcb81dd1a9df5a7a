//! `partir`: the user's command line (docs/design.md#9-command-line).

fn main() {
    std::process::exit(partir::cli::main());
}
