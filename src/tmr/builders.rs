//! Builders of explicit rules for common op shapes.
//!
//! ```text
//! elementwise([4,8], 2, 1)        ([i,j],[i,j]) -> ([i,j])
//! transpose([2,3,4], [2,0,1])     ([i,j,k]) -> ([k,i,j])
//! reduce([4,8], [1], Max, false)  ([i,j]) -> ([i]) reduction={j:max}
//! concat([[2,8],[3,8]], 0)        ([i,j],[i,j]) -> ([i,j]) replicate={i}
//! ```

use super::rule::{FactorKind, ReductionKind, Rule, TensorDims, DYNAMIC};

impl Rule {
    /// `num_operands` operands and `num_results` results, all of `shape`,
    /// each dim its own pass-through factor.
    pub fn elementwise(shape: &[i64], num_operands: usize, num_results: usize) -> Rule {
        let mut rule = Rule::new();
        let dims = pass_through(&mut rule, shape);
        for _ in 0..num_operands {
            rule.push_operand(dims.clone());
        }
        for _ in 0..num_results {
            rule.push_result(dims.clone());
        }
        rule
    }

    /// Elementwise with numpy-style broadcasting (right-aligned): an operand
    /// dim of size 1 against a larger result dim, or missing, is used whole.
    /// All results must have one shape.
    pub fn broadcasting_elementwise(
        operands: &[Vec<i64>],
        results: &[Vec<i64>],
    ) -> Result<Rule, String> {
        let shape = results.first().ok_or("elementwise op without results")?;
        if results.iter().any(|r| r != shape) {
            return Err(format!("elementwise results differ in shape: {results:?}"));
        }
        let mut rule = Rule::new();
        let dims = pass_through(&mut rule, shape);
        for op in operands {
            let mut od = TensorDims::unindexed(op.len());
            let lead = op.len().checked_sub(shape.len());
            for (d, &size) in op.iter().enumerate() {
                let rd = match lead {
                    Some(lead) if d < lead => None,
                    Some(lead) => Some(d - lead),
                    None => Some(d + shape.len() - op.len()),
                };
                match rd {
                    None if size == 1 => {}
                    None => return Err(format!("operand {op:?} outranks result {shape:?}")),
                    Some(rd) if size == 1 && shape[rd] != 1 => {}
                    Some(rd) if size == shape[rd] || size < 0 || shape[rd] < 0 => {
                        od.0[d] = dims.0[rd]
                    }
                    Some(_) => return Err(format!("operand {op:?} vs result {shape:?}")),
                }
            }
            rule.push_operand(od);
        }
        for _ in results {
            rule.push_result(dims.clone());
        }
        Ok(rule)
    }

    /// Each operand its own pass-through factors, no results (`func.return`).
    pub fn identity(operands: &[Vec<i64>]) -> Rule {
        let mut rule = Rule::new();
        for shape in operands {
            let dims = pass_through(&mut rule, shape);
            rule.push_operand(dims);
        }
        rule
    }

    /// A value made from nothing tileable (`tensor.empty`, constants): result
    /// dims are pass-through factors with nothing to pull from, so slicing the
    /// result means building a smaller one. `scalar_operands` are rank-0.
    pub fn source(result: &[i64], scalar_operands: usize) -> Rule {
        let mut rule = Rule::new();
        let dims = pass_through(&mut rule, result);
        rule = rule.with_whole_operands(&vec![0; scalar_operands]);
        rule.push_result(dims);
        rule
    }

    /// `linalg.fill`: operands `(scalar, init)`, result like `init`.
    pub fn fill(shape: &[i64]) -> Rule {
        Rule::source(shape, 1).with_inits()
    }

    /// Transpose: result dim `i` is input dim `permutation[i]`.
    pub fn transpose(input: &[i64], permutation: &[usize]) -> Result<Rule, String> {
        let mut seen = vec![false; input.len()];
        if permutation.len() != input.len()
            || permutation
                .iter()
                .any(|&p| p >= input.len() || std::mem::replace(&mut seen[p], true))
        {
            return Err(format!(
                "{permutation:?} is not a permutation of rank {}",
                input.len()
            ));
        }
        let mut rule = Rule::new();
        let dims = pass_through(&mut rule, input);
        let out = permutation.iter().map(|&p| dims.0[p]).collect();
        rule.push_operand(dims);
        rule.push_result(TensorDims(out));
        Ok(rule)
    }

    /// Broadcast to `result`, whose dims `added` are new (linalg
    /// `dimensions`); the input has the other dims, in order.
    pub fn broadcast(result: &[i64], added: &[usize]) -> Result<Rule, String> {
        if added.iter().any(|&d| d >= result.len())
            || (1..added.len()).any(|i| added[..i].contains(&added[i]))
        {
            return Err(format!(
                "bad broadcast dims {added:?} for rank {}",
                result.len()
            ));
        }
        let mut rule = Rule::new();
        let dims = pass_through(&mut rule, result);
        let input = (0..result.len())
            .filter(|d| !added.contains(d))
            .map(|d| dims.0[d])
            .collect();
        rule.push_operand(TensorDims(input));
        rule.push_result(dims);
        Ok(rule)
    }

    /// Reduce `input` over `dims` with `kind`; with `keep_dims` the reduced
    /// dims stay in the result with size 1 (tosa), else they are dropped.
    pub fn reduce(
        input: &[i64],
        dims: &[usize],
        kind: ReductionKind,
        keep_dims: bool,
    ) -> Result<Rule, String> {
        if let Some(d) = dims.iter().find(|&&d| d >= input.len()) {
            return Err(format!("reduced dim {d} of rank {}", input.len()));
        }
        let mut rule = Rule::new();
        let all = pass_through(&mut rule, input);
        let mut out = vec![];
        for (d, f) in all.0.iter().enumerate() {
            if !dims.contains(&d) {
                out.push(*f);
            } else {
                rule.set_kind(f.expect("fresh"), FactorKind::Reduction(kind));
                if keep_dims {
                    out.push(None);
                }
            }
        }
        rule.push_operand(all);
        rule.push_result(TensorDims(out));
        Ok(rule)
    }

    /// Concatenation along `dim`: that dim must replicate, others pass through.
    pub fn concat(operands: &[Vec<i64>], dim: usize) -> Result<Rule, String> {
        let first = operands.first().ok_or("concat without operands")?;
        if dim >= first.len() || operands.iter().any(|o| o.len() != first.len()) {
            return Err(format!("concat along {dim} of {operands:?}"));
        }
        let mut rule = Rule::new();
        let mut dims = vec![];
        for d in 0..first.len() {
            let sizes = operands.iter().map(|o| o[d]);
            dims.push(Some(if d == dim {
                let total = sizes.clone().sum();
                let total = if sizes.clone().any(|s| s < 0) {
                    DYNAMIC
                } else {
                    total
                };
                rule.add_factor(total, FactorKind::MustReplicate)
            } else {
                let size = sizes.clone().find(|&s| s >= 0).unwrap_or(DYNAMIC);
                rule.add_factor(size, FactorKind::PassThrough)
            }));
        }
        for _ in operands {
            rule.push_operand(TensorDims(dims.clone()));
        }
        rule.push_result(TensorDims(dims));
        Ok(rule)
    }

    /// `tensor.pad` with static `low`/`high` amounts (negative: dynamic):
    /// padded dims must replicate.
    pub fn pad(source: &[i64], low: &[i64], high: &[i64]) -> Result<Rule, String> {
        if low.len() != source.len() || high.len() != source.len() {
            return Err(format!("pad {low:?}/{high:?} of rank {}", source.len()));
        }
        let mut rule = Rule::new();
        let mut dims = vec![];
        for d in 0..source.len() {
            dims.push(Some(if low[d] == 0 && high[d] == 0 {
                rule.add_factor(source[d], FactorKind::PassThrough)
            } else {
                let size = if [source[d], low[d], high[d]].iter().any(|&s| s < 0) {
                    DYNAMIC
                } else {
                    source[d] + low[d] + high[d]
                };
                rule.add_factor(size, FactorKind::MustReplicate)
            }));
        }
        rule.push_operand(TensorDims(dims.clone()));
        rule.push_result(TensorDims(dims));
        Ok(rule)
    }

    /// `tensor.extract_slice` with static offsets/sizes/strides (negative:
    /// dynamic). Dims taken whole pass through; sliced dims must replicate.
    /// `result` may drop unit dims (rank reduction).
    pub fn extract_slice(
        source: &[i64],
        offsets: &[i64],
        sizes: &[i64],
        strides: &[i64],
        result: &[i64],
    ) -> Result<Rule, String> {
        let kept = kept_dims(source.len(), offsets, sizes, strides, result)?;
        let (mut rule, full) = slice_rule(source, offsets, sizes, strides);
        rule.push_operand(full.clone());
        rule.push_result(TensorDims(kept.iter().map(|&d| full.0[d]).collect()));
        Ok(rule)
    }

    /// `tensor.insert_slice` of `source` into `dest` (operands in that order;
    /// result like `dest`, initialised from it). Dims of `dest` covered whole
    /// pass through; others must replicate. `source` may drop unit dims.
    pub fn insert_slice(
        source: &[i64],
        dest: &[i64],
        offsets: &[i64],
        sizes: &[i64],
        strides: &[i64],
    ) -> Result<Rule, String> {
        let kept = kept_dims(dest.len(), offsets, sizes, strides, source)?;
        let (mut rule, full) = slice_rule(dest, offsets, sizes, strides);
        rule.push_operand(TensorDims(kept.iter().map(|&d| full.0[d]).collect()));
        rule.push_operand(full.clone());
        rule.push_result(full);
        rule.set_init(0, 1);
        Ok(rule)
    }
}

/// One fresh pass-through factor per dim of `shape`.
fn pass_through(rule: &mut Rule, shape: &[i64]) -> TensorDims {
    TensorDims(
        shape
            .iter()
            .map(|&s| Some(rule.add_factor(s, FactorKind::PassThrough)))
            .collect(),
    )
}

/// Checks slice params against rank `n` and matches the dims of the
/// (possibly rank-reduced) `part` to the sliced dims: returns the kept ones.
/// Unit dims are dropped greedily, while `part` has fewer dims left.
/// `kept_dims(3, .., sizes [1, 16, 4], .., part [16, 4])` is `[1, 2]`.
pub fn kept_dims(
    n: usize,
    offsets: &[i64],
    sizes: &[i64],
    strides: &[i64],
    part: &[i64],
) -> Result<Vec<usize>, String> {
    if offsets.len() != n || sizes.len() != n || strides.len() != n {
        return Err(format!(
            "slice params {offsets:?} {sizes:?} {strides:?} for rank {n}"
        ));
    }
    let mismatch = || format!("slice {part:?} does not match sizes {sizes:?}");
    let mut kept = vec![];
    for (d, &s) in sizes.iter().enumerate() {
        let j = kept.len();
        if s == 1 && n - d > part.len() - j {
            continue;
        }
        if j >= part.len() || !(part[j] == s || part[j] < 0 || s < 0) {
            return Err(mismatch());
        }
        kept.push(d);
    }
    if kept.len() != part.len() {
        return Err(mismatch());
    }
    Ok(kept)
}

/// Factors over `full`'s dims: whole dims pass through, sliced dims must
/// replicate (sized as `full`).
fn slice_rule(full: &[i64], offsets: &[i64], sizes: &[i64], strides: &[i64]) -> (Rule, TensorDims) {
    let mut rule = Rule::new();
    let dims = (0..full.len())
        .map(|d| {
            let whole = offsets[d] == 0 && strides[d] == 1 && full[d] >= 0 && sizes[d] == full[d];
            let kind = if whole {
                FactorKind::PassThrough
            } else {
                FactorKind::MustReplicate
            };
            Some(rule.add_factor(full[d], kind))
        })
        .collect();
    (rule, TensorDims(dims))
}
