//! The rule data model: factors and which factor indexes each dim.

use std::fmt;

/// Marker for a dynamic (unknown) size, as MLIR's `ShapedType::kDynamic`.
/// Any negative size is treated as dynamic.
pub const DYNAMIC: i64 = i64::MIN;

/// Index of a factor within its [`Rule`].
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct FactorId(pub usize);

/// How partial results of a reduction factor are combined.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum ReductionKind {
    /// `#partir.sum`.
    Sum,
    /// Combined with `max`.
    Max,
    /// Combined with `min`.
    Min,
    /// Combined with a product.
    Mul,
    /// A combiner that is not recognised: never tiled.
    Other,
}

impl ReductionKind {
    /// The name used in einsum notation (`sum`, `max`, `min`, `mul`, `other`).
    pub fn name(self) -> &'static str {
        match self {
            ReductionKind::Sum => "sum",
            ReductionKind::Max => "max",
            ReductionKind::Min => "min",
            ReductionKind::Mul => "mul",
            ReductionKind::Other => "other",
        }
    }

    /// Inverse of [`ReductionKind::name`].
    pub fn from_name(name: &str) -> Option<Self> {
        Some(match name {
            "sum" => ReductionKind::Sum,
            "max" => ReductionKind::Max,
            "min" => ReductionKind::Min,
            "mul" => ReductionKind::Mul,
            "other" => ReductionKind::Other,
            _ => return None,
        })
    }

    /// The value combining leaves unchanged (0 for a sum, 1 for a product, -inf for a max);
    /// None for an unknown combiner.
    pub fn identity(self) -> Option<f64> {
        match self {
            ReductionKind::Sum => Some(0.0),
            ReductionKind::Mul => Some(1.0),
            ReductionKind::Max => Some(f64::NEG_INFINITY),
            ReductionKind::Min => Some(f64::INFINITY),
            ReductionKind::Other => None,
        }
    }

    /// Whether combining a value with itself is a no-op (`max`, `min`): an
    /// accumulator used whole by every partial result is then still correct.
    pub fn is_idempotent(self) -> bool {
        matches!(self, ReductionKind::Max | ReductionKind::Min)
    }
}

impl fmt::Display for ReductionKind {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.name())
    }
}

/// What tiling a factor does.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum FactorKind {
    /// Tiling it in the operands tiles the results on the dims where it appears.
    PassThrough,
    /// Tiling it in the operands gives partial results combined with this kind.
    Reduction(ReductionKind),
    /// Cannot be tiled.
    MustReplicate,
    /// Tiles like a pass-through, but a device's result chunk reads other devices' operand
    /// chunks (a slice, pad or concatenate on the dim, a reverse along it): the op's local
    /// form fetches them (`partir.permute`, `src/rules/stablehlo/halo.rs`). Its size divides
    /// every dim it indexes (their gcd).
    Moved,
}

/// One iteration factor of a rule.
///
/// `size` is the factor's extent: tiling it `n` ways needs `size % n == 0`.
/// It usually equals the size of every dim the factor indexes; a reshape
/// factor is the exception (see [`Rule::reshape`]). For must-replicate
/// factors the size is informative only.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Factor {
    /// Name used in einsum notation.
    pub name: String,
    /// Extent; negative means dynamic.
    pub size: i64,
    /// What tiling it does.
    pub kind: FactorKind,
}

/// For each dim of one value, the factor indexing it (`None`: a constant or a
/// complex expression, which cannot be tiled, and along which the value is
/// used whole).
#[derive(Clone, Debug, Default, PartialEq, Eq, Hash)]
pub struct TensorDims(pub Vec<Option<FactorId>>);

/// Dims of an operand.
pub type OperandDims = TensorDims;
/// Dims of a result.
pub type ResultDims = TensorDims;

impl TensorDims {
    /// `rank` dims indexed by no factor.
    pub fn unindexed(rank: usize) -> Self {
        TensorDims(vec![None; rank])
    }

    /// Number of dims.
    pub fn rank(&self) -> usize {
        self.0.len()
    }

    /// Factor of `dim`, `None` if unindexed or out of range.
    pub fn get(&self, dim: usize) -> Option<FactorId> {
        self.0.get(dim).copied().flatten()
    }

    /// Dims indexed by `factor`, in order.
    pub fn dims_of(&self, factor: FactorId) -> Vec<usize> {
        (0..self.0.len())
            .filter(|&d| self.0[d] == Some(factor))
            .collect()
    }
}

impl From<Vec<Option<FactorId>>> for TensorDims {
    fn from(v: Vec<Option<FactorId>>) -> Self {
        TensorDims(v)
    }
}

/// Letters given to unnamed factors, in order (see [`Rule::add_factor`]).
pub const DEFAULT_NAMES: &str = "ijklmnopqrstuvwxyzabcdefgh";

/// An op's tile mapping: its factors and, per operand and result, the factor
/// of each dim. Built by [`Rule::einsum`], [`Rule::from_indexing_maps`] or the
/// builders; queried by [`Rule::tile_operand`] / [`Rule::tile_result`].
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Rule {
    pub(crate) factors: Vec<Factor>,
    pub(crate) operands: Vec<OperandDims>,
    pub(crate) results: Vec<ResultDims>,
    /// Per result, the operand it is initialised from (destination passing).
    pub(crate) inits: Vec<Option<usize>>,
    /// A result a pass-through factor does not index is the same for every value of that
    /// factor (see [`Rule::with_invariant_results`]).
    pub(crate) invariant_results: bool,
    /// Results that come out partial, to combine with the kind, when a pass-through factor is
    /// tiled (see [`Rule::with_partial_result`]).
    pub(crate) partial_results: Vec<(FactorId, usize, ReductionKind)>,
}

impl Rule {
    /// An empty rule (no factors, operands or results).
    pub fn new() -> Self {
        Self::default()
    }

    /// Adds an unnamed factor. Naming scheme: the first name of
    /// `i j k … z a … h` (then `f26`, `f27`, …) not used yet, so without
    /// explicit names factor `n` is the `n`-th letter from `i`.
    pub fn add_factor(&mut self, size: i64, kind: FactorKind) -> FactorId {
        let name = self.fresh_name();
        self.add_named_factor(name, size, kind)
    }

    /// Adds a factor with an explicit name (must be unique).
    pub fn add_named_factor(
        &mut self,
        name: impl Into<String>,
        size: i64,
        kind: FactorKind,
    ) -> FactorId {
        let name = name.into();
        debug_assert!(self.factor_by_name(&name).is_none(), "duplicate {name}");
        self.factors.push(Factor { name, size, kind });
        FactorId(self.factors.len() - 1)
    }

    fn fresh_name(&self) -> String {
        let taken = |n: &str| self.factors.iter().any(|f| f.name == n);
        DEFAULT_NAMES
            .chars()
            .map(String::from)
            .chain((DEFAULT_NAMES.len()..).map(|n| format!("f{n}")))
            .find(|n| !taken(n))
            .expect("infinite name supply")
    }

    /// Appends an operand; returns its index.
    pub fn push_operand(&mut self, dims: impl Into<OperandDims>) -> usize {
        self.operands.push(dims.into());
        self.operands.len() - 1
    }

    /// Appends a result (with no init operand); returns its index.
    pub fn push_result(&mut self, dims: impl Into<ResultDims>) -> usize {
        self.results.push(dims.into());
        self.inits.push(None);
        self.results.len() - 1
    }

    /// Records that `result` is initialised from `operand` (linalg `outs`).
    pub fn set_init(&mut self, result: usize, operand: usize) {
        self.inits[result] = Some(operand);
    }

    /// Appends one init operand per result, indexed like that result, and
    /// records it as the result's init (linalg named ops in tensor form).
    pub fn with_inits(mut self) -> Self {
        for r in 0..self.results.len() {
            let op = self.push_operand(self.results[r].clone());
            self.set_init(r, op);
        }
        self
    }

    /// Appends `ranks.len()` operands used whole (no factor on any dim).
    pub fn with_whole_operands(mut self, ranks: &[usize]) -> Self {
        for &rank in ranks {
            self.push_operand(TensorDims::unindexed(rank));
        }
        self
    }

    /// Says that a result is independent of the pass-through factors that do not index it:
    /// tiling one of them leaves that result whole and the same on every device. True of ops
    /// that carry unrelated values together (a `while`'s counter, weights and activations);
    /// false of an einsum, where a factor missing from the result is a contraction.
    pub fn with_invariant_results(mut self) -> Self {
        self.invariant_results = true;
        self
    }

    /// Says that tiling pass-through `factor` leaves result `result` partial, to combine with
    /// `kind`: a loop whose body contracts its batch-split activations into a carried gradient
    /// accumulator (`dW += xᵀ·dy`), so each device's accumulator holds its part of the sum.
    /// The result's init (its operand of the same index, set with [`Rule::set_init`]) must
    /// hold the identity.
    pub fn with_partial_result(
        mut self,
        factor: FactorId,
        result: usize,
        kind: ReductionKind,
    ) -> Self {
        self.partial_results.push((factor, result, kind));
        self
    }

    /// Changes a factor's kind.
    pub fn set_kind(&mut self, factor: FactorId, kind: FactorKind) {
        self.factors[factor.0].kind = kind;
    }

    /// All factors, indexed by [`FactorId`].
    pub fn factors(&self) -> &[Factor] {
        &self.factors
    }

    /// One factor.
    pub fn factor(&self, id: FactorId) -> &Factor {
        &self.factors[id.0]
    }

    /// Looks a factor up by name.
    pub fn factor_by_name(&self, name: &str) -> Option<FactorId> {
        self.factors
            .iter()
            .position(|f| f.name == name)
            .map(FactorId)
    }

    /// Operand dims, in operand order.
    pub fn operands(&self) -> &[OperandDims] {
        &self.operands
    }

    /// Result dims, in result order.
    pub fn results(&self) -> &[ResultDims] {
        &self.results
    }

    /// The operand `result` is initialised from, if any.
    pub fn init_of(&self, result: usize) -> Option<usize> {
        self.inits.get(result).copied().flatten()
    }

    /// Factors of kind [`FactorKind::MustReplicate`].
    pub fn replicated_factors(&self) -> Vec<FactorId> {
        self.ids_where(|k| k == FactorKind::MustReplicate)
    }

    /// Makes `factor` [`FactorKind::Moved`] with `size` (the gcd of the dims it indexes).
    pub fn moved(mut self, factor: FactorId, size: i64) -> Self {
        self.set_kind(factor, FactorKind::Moved);
        self.factors[factor.0].size = size;
        self
    }

    /// Factors of kind [`FactorKind::Reduction`].
    pub fn reduction_factors(&self) -> Vec<FactorId> {
        self.ids_where(|k| matches!(k, FactorKind::Reduction(_)))
    }

    fn ids_where(&self, pred: impl Fn(FactorKind) -> bool) -> Vec<FactorId> {
        (0..self.factors.len())
            .map(FactorId)
            .filter(|&f| pred(self.factor(f).kind))
            .collect()
    }
}
