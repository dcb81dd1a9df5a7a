//! Tile Mapping Registry (TMR): per-op rules saying how tiling one dim of an
//! operand or result maps onto the op's other operands and results.
//!
//! A [`Rule`] lists an op's iteration factors ([`Factor`]: size and
//! [`FactorKind`]) and, for each dim of each operand and result, the factor
//! indexing it. Rules print and build in einsum notation:
//!
//! ```text
//! matmul: ([i,k],[k,j]) -> ([i,j]) reduction={k:sum}
//! ```
//! Propagation asks [`Rule::tile_operand`] (forward) or [`Rule::tile_result`]
//! (backward) for a [`TileEffect`] or a [`Conflict`]. Pure Rust, no MLIR
//! dependency: which op gets which rule is `crate::rules`'s (the registry).

mod affine;
mod builders;
mod einsum;
mod reshape;
mod rule;
mod tiling;

#[cfg(test)]
mod props;
#[cfg(test)]
mod tests;

pub use affine::{loop_sizes_from_shapes, AffineExprLite, AffineMapLite, IteratorType};
pub use builders::kept_dims;
pub use einsum::FactorKey;
pub use reshape::infer_reassociation;
pub use rule::{
    Factor, FactorId, FactorKind, OperandDims, ReductionKind, ResultDims, Rule, TensorDims,
    DEFAULT_NAMES, DYNAMIC,
};
pub use tiling::{Conflict, ResultTiling, TileEffect, ValueRef};
