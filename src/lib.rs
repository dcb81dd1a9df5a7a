//! partir: PartIR in Rust. Composable SPMD partitioning of MLIR programs by rewriting.
//!
//! The data flows one way: schedule → actions (tile, replicate) → propagation (TMR) → Core IR
//! → lowering → HLO → simulator / MPI. See docs/design.md and docs/architecture.md.
//!
//! - [`ffi`]: the C ABI (plugin entry points, C API, the C++ glue); the only `unsafe` code.
//! - [`ir`]: typed views of partir IR (mesh, named values, Core op builders).
//! - [`passes`]: one module per pass.
//! - [`tmr`]: the Tile Mapping Registry (rules per op, einsum notation, tiling queries).

pub mod affine;
pub mod cli;
pub mod entry;
pub mod ffi;
pub mod ir;
pub mod passes;
pub mod random;
pub mod report;
pub mod rules;
pub mod schedule;
pub mod sim;
pub mod text;
pub mod tmr;
