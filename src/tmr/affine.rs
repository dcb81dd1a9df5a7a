//! Rules of linalg structured ops, from plain affine maps.
//!
//! ```text
//! matmul maps  (d0,d2) (d2,d1) (d0,d1), iterators [par, par, red]
//!   -> ([i,k],[k,j],[i,j]) -> ([i,j]) reduction={k:sum}
//! conv input   (d0, d1 + d4, d2 + d5, d6): d1, d2, d4, d5 become replicate
//! ```

use super::rule::{FactorId, FactorKind, ReductionKind, Rule, TensorDims, DYNAMIC};
pub use crate::affine::{AffineExprLite, AffineMapLite, IteratorType};

impl Rule {
    /// The rule of a linalg structured op. `maps` has one map per operand
    /// (inputs, then the `num_inits` inits); the op has one result per init,
    /// indexed like it. Loop dim `n` is factor `n` (named by
    /// [`Rule::add_factor`]'s scheme); reduction loops get `reduction_kind`.
    /// A loop dim used inside a complex expression becomes must-replicate
    /// and the complex tensor dim is unindexed.
    pub fn from_indexing_maps(
        maps: &[AffineMapLite],
        iterator_types: &[IteratorType],
        loop_sizes: &[i64],
        num_inits: usize,
        reduction_kind: ReductionKind,
    ) -> Result<Rule, String> {
        let n = iterator_types.len();
        if loop_sizes.len() != n {
            return Err(format!("{} loop sizes for {n} loops", loop_sizes.len()));
        }
        if num_inits > maps.len() {
            return Err(format!("{num_inits} inits but {} maps", maps.len()));
        }
        let mut rule = Rule::new();
        for (it, &size) in iterator_types.iter().zip(loop_sizes) {
            let kind = match it {
                IteratorType::Parallel => FactorKind::PassThrough,
                IteratorType::Reduction => FactorKind::Reduction(reduction_kind),
            };
            rule.add_factor(size, kind);
        }
        let mut replicate = vec![];
        for (i, map) in maps.iter().enumerate() {
            if map.num_dims != n {
                return Err(format!("map {i} has {} dims, not {n}", map.num_dims));
            }
            let mut dims = Vec::with_capacity(map.results.len());
            for e in &map.results {
                if let Some(&d) = e.dims().iter().find(|&&d| d >= n) {
                    return Err(format!("map {i} uses d{d} of {n} loops"));
                }
                dims.push(match e {
                    AffineExprLite::Dim(d) => Some(FactorId(*d)),
                    other => {
                        replicate.extend(other.dims());
                        None
                    }
                });
            }
            rule.push_operand(TensorDims(dims));
        }
        for d in replicate {
            rule.set_kind(FactorId(d), FactorKind::MustReplicate);
        }
        let first_init = maps.len() - num_inits;
        for (r, op) in (first_init..maps.len()).enumerate() {
            rule.push_result(rule.operands()[op].clone());
            rule.set_init(r, op);
        }
        Ok(rule)
    }
}

/// Loop sizes inferred from operand shapes: a loop's size is the first static
/// size of a tensor dim indexed by exactly that loop ([`DYNAMIC`] if none).
pub fn loop_sizes_from_shapes(
    maps: &[AffineMapLite],
    num_loops: usize,
    shapes: &[Vec<i64>],
) -> Result<Vec<i64>, String> {
    if maps.len() != shapes.len() {
        return Err(format!("{} maps for {} operands", maps.len(), shapes.len()));
    }
    let mut sizes = vec![DYNAMIC; num_loops];
    for (i, (map, shape)) in maps.iter().zip(shapes).enumerate() {
        if map.results.len() != shape.len() {
            return Err(format!(
                "map {i} has {} results, rank {}",
                map.results.len(),
                shape.len()
            ));
        }
        for (e, &s) in map.results.iter().zip(shape) {
            if let AffineExprLite::Dim(d) = *e {
                match sizes.get_mut(d) {
                    Some(x) if *x < 0 => *x = s,
                    Some(_) => {}
                    None => return Err(format!("map {i} uses d{d} of {num_loops} loops")),
                }
            }
        }
    }
    Ok(sizes)
}
