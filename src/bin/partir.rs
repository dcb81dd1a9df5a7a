//! `partir`: the user's command line (DESIGN §9).

fn main() {
    std::process::exit(partir::cli::main());
}
