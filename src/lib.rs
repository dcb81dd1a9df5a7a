//! partir: PartIR in Rust. Composable SPMD partitioning of MLIR programs by rewriting.
//!
//! The data flows one way: schedule → actions (tile, replicate) → propagation (TMR) → Core IR
//! → lowering → HLO → simulator / MPI. See docs/design.md and docs/architecture.md.
//!
//! - [`entry`]: every call into Rust (pass entry points under the panic guard, plugin, C API).
//! - [`cli`]: the `partir` command line.
//! - [`passes`]: one module per pass.
//! - [`report`]: the simulator's reports as text and HTML.
//! - [`ir`], [`rules`], [`tmr`], [`schedule`], [`sim`]: typed views of partir IR; each op's
//!   Tile Mapping Registry rule; the rule algebra (einsum notation, tiling queries); schedule
//!   files; the simulator.
//! - [`ffi`]: the C++ glue (cxx bridges) and MLIR C API helpers; a leaf. `unsafe` code lives
//!   here and in `entry`; elsewhere only calls of ffi's `unsafe fn`s, each with its `SAFETY`.

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
