//! Plain affine maps and iterator types: the vocabulary in which the FFI reads a linalg op's
//! indexing maps from MLIR and the Tile Mapping Registry builds its rule from them. Data only,
//! no MLIR.

/// A plain affine expression over loop dims.
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub enum AffineExprLite {
    /// `d_n`.
    Dim(usize),
    /// A constant.
    Constant(i64),
    /// A sum of terms (`d0 + d1`).
    Add(Vec<AffineExprLite>),
    /// A constant times a term (`2 * d0`).
    Mul(i64, Box<AffineExprLite>),
    /// Any other expression (`mod`, `floordiv`, …) over the listed dims.
    Other(Vec<usize>),
}

impl AffineExprLite {
    /// `d_a + d_b`.
    pub fn add(a: usize, b: usize) -> Self {
        AffineExprLite::Add(vec![AffineExprLite::Dim(a), AffineExprLite::Dim(b)])
    }

    /// Loop dims used anywhere in the expression.
    pub fn dims(&self) -> Vec<usize> {
        match self {
            AffineExprLite::Dim(d) => vec![*d],
            AffineExprLite::Constant(_) => vec![],
            AffineExprLite::Add(terms) => terms.iter().flat_map(|t| t.dims()).collect(),
            AffineExprLite::Mul(_, t) => t.dims(),
            AffineExprLite::Other(ds) => ds.clone(),
        }
    }
}

/// A plain affine map: `num_dims` loop dims to one expression per tensor dim.
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub struct AffineMapLite {
    /// Number of loop dims.
    pub num_dims: usize,
    /// One expression per tensor dim.
    pub results: Vec<AffineExprLite>,
}

impl AffineMapLite {
    /// A map whose results are plain dims: `AffineMapLite::dims(3, &[0, 2])`
    /// is `(d0, d1, d2) -> (d0, d2)`.
    pub fn dims(num_dims: usize, dims: &[usize]) -> Self {
        AffineMapLite {
            num_dims,
            results: dims.iter().map(|&d| AffineExprLite::Dim(d)).collect(),
        }
    }
}

/// A linalg iterator type.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum IteratorType {
    /// `parallel`.
    Parallel,
    /// `reduction`.
    Reduction,
}
