//! `partir-opt`: mlir-opt with every upstream dialect and pass, plus PartIR's.

fn main() {
    std::process::exit(partir::ffi::opt_main());
}
