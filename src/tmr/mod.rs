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
//! (backward) for a [`TileEffect`] or a [`Conflict`]. A [`Registry`] maps op
//! names to rule builders over a plain [`OpShapeInfo`]; [`Registry::with_defaults`]
//! covers elementwise `arith`/`math`/`tosa` ops, `tosa.matmul`/`transpose`/
//! `reshape`/`reduce_*`, `tensor.empty`/`expand_shape`/`collapse_shape`/
//! `extract_slice`/`insert_slice`/`concat`/`pad`, `linalg.fill`/`transpose`/
//! `broadcast`/`reduce`, linalg structured ops (from indexing maps),
//! `arith.constant` and `func.return`. Pure Rust, no MLIR dependency.

mod affine;
mod builders;
mod einsum;
mod registry;
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
pub use registry::{
    structured_rule, OpAttrs, OpShapeInfo, Registry, RuleFn, ARITH_MATH_ELEMENTWISE,
    LINALG_STRUCTURED, TOSA_ELEMENTWISE,
};
pub use reshape::infer_reassociation;
pub use rule::{
    Factor, FactorId, FactorKind, OperandDims, ReductionKind, ResultDims, Rule, TensorDims,
    DEFAULT_NAMES, DYNAMIC,
};
pub use tiling::{Conflict, ResultTiling, TileEffect, ValueRef};
