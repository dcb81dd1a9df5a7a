//! Queries used by propagation: what tiling one dim does to the whole op.
//!
//! ```text
//! matmul ([i,k],[k,j]) -> ([i,j]) reduction={k:sum}
//! tile_operand(0, 0) -> operands [Some(0), None],    results [Tile(0)]
//! tile_operand(0, 1) -> operands [Some(1), Some(0)], results [Sum(Sum)]
//! tile_result(0, 1)  -> operands [None, Some(1)],    results [Tile(1)]
//! ```

use std::fmt;

use super::rule::{FactorId, FactorKind, ReductionKind, Rule, TensorDims};

/// An operand or a result of an op.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum ValueRef {
    /// Operand by index.
    Operand(usize),
    /// Result by index.
    Result(usize),
}

impl fmt::Display for ValueRef {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            ValueRef::Operand(i) => write!(f, "operand {i}"),
            ValueRef::Result(i) => write!(f, "result {i}"),
        }
    }
}

/// How one result comes out of an op whose factor is tiled.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum ResultTiling {
    /// Tiled along this dim (`#partir.tile<d>`).
    Tile(usize),
    /// A partial result to combine with this kind (`#partir.sum`, …).
    Sum(ReductionKind),
    /// The same whole value on every device (`#partir.any`): a result the tiled factor does
    /// not reach, of an op whose rule says so ([`Rule::with_invariant_results`]: a loop's
    /// counter next to its batch-split activations).
    Same,
}

/// The effect of tiling one factor of an op.
///
/// A pass-through factor missing from a result would, for most rules, make every iteration
/// compute that result from partial data, so it is reported as
/// [`Conflict::MissingFromResult`]; only rules that say their results do not depend on the
/// factors they lack ([`Rule::with_invariant_results`]) give [`ResultTiling::Same`].
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct TileEffect {
    /// The factor tiled.
    pub factor: FactorId,
    /// Per operand: the dim to slice, or `None` to use it whole.
    pub operands: Vec<Option<usize>>,
    /// Per result: how it comes out.
    pub results: Vec<ResultTiling>,
    /// Operands used whole as accumulators (inits) of a partial result with
    /// a non-idempotent kind (sum, mul): they must hold the reduction's
    /// identity (e.g. a zero fill), or the caller must rewrite them.
    pub identity_inits: Vec<usize>,
}

/// Why a dim cannot be tiled.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Conflict {
    /// No such operand/result, or dim beyond its rank.
    OutOfRange {
        /// The value named.
        value: ValueRef,
        /// The dim asked for.
        dim: usize,
    },
    /// The dim is indexed by a constant or complex expression.
    NotIndexed {
        /// The value.
        value: ValueRef,
        /// The dim.
        dim: usize,
    },
    /// The factor is must-replicate.
    MustReplicate {
        /// Factor name.
        factor: String,
    },
    /// The factor indexes several dims of one value (e.g. a diagonal).
    RepeatedFactor {
        /// Factor name.
        factor: String,
        /// The value.
        value: ValueRef,
    },
    /// A reduction factor indexes a result (so it cannot be tiled from there).
    ReductionInResult {
        /// Factor name.
        factor: String,
        /// The result.
        result: usize,
    },
    /// A pass-through factor does not index some result.
    MissingFromResult {
        /// Factor name.
        factor: String,
        /// The result.
        result: usize,
    },
    /// A reduction with an unknown combiner ([`ReductionKind::Other`]).
    UnknownCombiner {
        /// Factor name.
        factor: String,
    },
    /// The factor size is not a multiple of the number of parts.
    Indivisible {
        /// Factor name.
        factor: String,
        /// Its size.
        size: i64,
        /// Parts asked for.
        parts: i64,
    },
    /// The factor size is dynamic, so divisibility is unknown.
    DynamicSize {
        /// Factor name.
        factor: String,
    },
}

impl fmt::Display for Conflict {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Conflict::OutOfRange { value, dim } => write!(f, "{value} has no dim {dim}"),
            Conflict::NotIndexed { value, dim } => {
                write!(
                    f,
                    "dim {dim} of {value} is not indexed by a tileable factor"
                )
            }
            Conflict::MustReplicate { factor } => write!(f, "factor {factor} must be replicated"),
            Conflict::RepeatedFactor { factor, value } => {
                write!(f, "factor {factor} indexes several dims of {value}")
            }
            Conflict::ReductionInResult { factor, result } => {
                write!(
                    f,
                    "reduction factor {factor} cannot be tiled from result {result}"
                )
            }
            Conflict::MissingFromResult { factor, result } => {
                write!(f, "factor {factor} does not index result {result}")
            }
            Conflict::UnknownCombiner { factor } => {
                write!(f, "reduction factor {factor} has an unknown combiner")
            }
            Conflict::Indivisible {
                factor,
                size,
                parts,
            } => write!(
                f,
                "factor {factor} of size {size} is not divisible by {parts}"
            ),
            Conflict::DynamicSize { factor } => {
                write!(f, "factor {factor} has a dynamic size")
            }
        }
    }
}

impl std::error::Error for Conflict {}

impl Rule {
    /// The factor of `dim` of `value`.
    pub fn factor_at(&self, value: ValueRef, dim: usize) -> Result<FactorId, Conflict> {
        let dims = match value {
            ValueRef::Operand(i) => self.operands.get(i),
            ValueRef::Result(i) => self.results.get(i),
        };
        match dims {
            Some(d) if dim < d.rank() => d.get(dim).ok_or(Conflict::NotIndexed { value, dim }),
            _ => Err(Conflict::OutOfRange { value, dim }),
        }
    }

    /// Forward: operand `operand` is tiled on `dim`.
    pub fn tile_operand(&self, operand: usize, dim: usize) -> Result<TileEffect, Conflict> {
        self.tile_factor(self.factor_at(ValueRef::Operand(operand), dim)?)
    }

    /// Backward: result `result` is sliced on `dim`.
    pub fn tile_result(&self, result: usize, dim: usize) -> Result<TileEffect, Conflict> {
        self.tile_factor(self.factor_at(ValueRef::Result(result), dim)?)
    }

    /// [`Rule::tile_operand`], also checking that the factor splits in `parts`.
    pub fn tile_operand_by(
        &self,
        operand: usize,
        dim: usize,
        parts: i64,
    ) -> Result<TileEffect, Conflict> {
        let e = self.tile_operand(operand, dim)?;
        self.check_parts(e.factor, parts)?;
        Ok(e)
    }

    /// [`Rule::tile_result`], also checking that the factor splits in `parts`.
    pub fn tile_result_by(
        &self,
        result: usize,
        dim: usize,
        parts: i64,
    ) -> Result<TileEffect, Conflict> {
        let e = self.tile_result(result, dim)?;
        self.check_parts(e.factor, parts)?;
        Ok(e)
    }

    /// Whether `factor` can be split in `parts` equal chunks.
    pub fn check_parts(&self, factor: FactorId, parts: i64) -> Result<(), Conflict> {
        let f = self.factor(factor);
        if f.size < 0 {
            return Err(Conflict::DynamicSize {
                factor: f.name.clone(),
            });
        }
        if parts <= 0 || f.size % parts != 0 {
            return Err(Conflict::Indivisible {
                factor: f.name.clone(),
                size: f.size,
                parts,
            });
        }
        Ok(())
    }

    /// The effect of tiling `factor`, wherever it was reached from.
    pub fn tile_factor(&self, factor: FactorId) -> Result<TileEffect, Conflict> {
        let f = self.factor(factor);
        let name = || f.name.clone();
        let reduction = match f.kind {
            FactorKind::MustReplicate => return Err(Conflict::MustReplicate { factor: name() }),
            FactorKind::Reduction(ReductionKind::Other) => {
                return Err(Conflict::UnknownCombiner { factor: name() })
            }
            FactorKind::Reduction(k) => Some(k),
            FactorKind::PassThrough | FactorKind::Moved => None,
        };
        let single = |dims: &TensorDims, value| match dims.dims_of(factor)[..] {
            [] => Ok(None),
            [d] => Ok(Some(d)),
            _ => Err(Conflict::RepeatedFactor {
                factor: name(),
                value,
            }),
        };
        let operands = (0..self.operands.len())
            .map(|i| single(&self.operands[i], ValueRef::Operand(i)))
            .collect::<Result<Vec<_>, _>>()?;
        let mut results = Vec::with_capacity(self.results.len());
        let mut identity_inits = Vec::new();
        for (r, dims) in self.results.iter().enumerate() {
            let at = single(dims, ValueRef::Result(r))?;
            results.push(match (at, reduction) {
                (Some(d), None) => ResultTiling::Tile(d),
                (None, Some(k)) => {
                    if let Some(init) = self.init_of(r).filter(|_| !k.is_idempotent()) {
                        identity_inits.push(init);
                    }
                    ResultTiling::Sum(k)
                }
                (Some(_), Some(_)) => {
                    return Err(Conflict::ReductionInResult {
                        factor: name(),
                        result: r,
                    })
                }
                (None, None) => match self
                    .partial_results
                    .iter()
                    .find(|(f, result, _)| *f == factor && *result == r)
                {
                    Some(&(_, _, k)) => {
                        if let Some(init) = self.init_of(r).filter(|_| !k.is_idempotent()) {
                            identity_inits.push(init);
                        }
                        ResultTiling::Sum(k)
                    }
                    None if self.invariant_results => ResultTiling::Same,
                    None => {
                        return Err(Conflict::MissingFromResult {
                            factor: name(),
                            result: r,
                        })
                    }
                },
            });
        }
        Ok(TileEffect {
            factor,
            operands,
            results,
            identity_inits,
        })
    }
}
