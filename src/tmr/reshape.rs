//! Reshapes (`expand_shape`, `collapse_shape`, `tosa.reshape`).
//!
//! For each reassociation group, the major-most non-unit dim of the group
//! shares a factor with the single dim on the other side; the factor's size
//! is that major dim's size, so tiling `n` ways needs `n` to divide it (see
//! [`Rule::check_parts`]). Other non-unit dims of the group must replicate;
//! unit dims are unindexed.
//!
//! ```text
//! expand 32 -> 4x8, [[0,1]]   ([i]) -> ([i,j]) replicate={j}   sizes={i=4,j=8}
//! collapse 4x8 -> 32, [[0,1]] ([i,j]) -> ([i]) replicate={j}   sizes={i=4,j=8}
//! ```

use super::rule::{FactorKind, Rule, TensorDims};

impl Rule {
    /// A reshape from `src` to `dst`. `reassociation` groups the dims of the
    /// higher-rank side (MLIR's convention for both expand and collapse), one
    /// group per dim of the other side.
    pub fn reshape(src: &[i64], dst: &[i64], reassociation: &[Vec<usize>]) -> Result<Rule, String> {
        let collapse = src.len() >= dst.len();
        let (grouped, single) = if collapse { (src, dst) } else { (dst, src) };
        check_groups(grouped, single, reassociation)?;
        let mut rule = Rule::new();
        let mut gdims = TensorDims::unindexed(grouped.len());
        let mut sdims = TensorDims::unindexed(single.len());
        for (s, group) in reassociation.iter().enumerate() {
            let major = *group
                .iter()
                .find(|&&d| grouped[d] != 1)
                .unwrap_or(&group[0]);
            for &d in group {
                if d == major {
                    let f = rule.add_factor(grouped[d], FactorKind::PassThrough);
                    gdims.0[d] = Some(f);
                    sdims.0[s] = Some(f);
                } else if grouped[d] != 1 {
                    gdims.0[d] = Some(rule.add_factor(grouped[d], FactorKind::MustReplicate));
                }
            }
        }
        let (sd, dd) = if collapse {
            (gdims, sdims)
        } else {
            (sdims, gdims)
        };
        rule.push_operand(sd);
        rule.push_result(dd);
        Ok(rule)
    }
}

impl Rule {
    /// Any static reshape, as segments of dims whose sizes multiply to the same number on
    /// both sides: a segment of one dim on each side passes through; a merge or a split is
    /// [`Rule::reshape`]'s group (its major non-unit dim passes); a segment that is neither
    /// (`4x6 -> 2x12`) keeps its dims whole. So `[8,4,6] -> [8,2,12]` tiles dim 0:
    ///
    /// ```text
    /// [8,4,6] -> [8,2,12]   ([i,j,k]) -> ([i,l,m]) replicate={j,k,l,m}
    /// ```
    pub fn reshape_segments(src: &[i64], dst: &[i64]) -> Result<Rule, String> {
        let segments = segments(src, dst)
            .ok_or_else(|| format!("reshape {src:?} -> {dst:?} changes the number of elements"))?;
        let mut rule = Rule::new();
        let mut from = TensorDims::unindexed(src.len());
        let mut to = TensorDims::unindexed(dst.len());
        for (a, b) in segments {
            let significant = |dims: &[usize], shape: &[i64]| -> Vec<usize> {
                dims.iter().copied().filter(|&d| shape[d] != 1).collect()
            };
            let (sa, sb) = (significant(&a, src), significant(&b, dst));
            if sa.len() <= 1 || sb.len() <= 1 {
                // A merge or a split: the major non-unit dims meet.
                if let (Some(&x), Some(&y)) = (sa.first(), sb.first()) {
                    let factor = rule.add_factor(src[x], FactorKind::PassThrough);
                    (from.0[x], to.0[y]) = (Some(factor), Some(factor));
                }
                for &x in sa.iter().skip(1) {
                    from.0[x] = Some(rule.add_factor(src[x], FactorKind::MustReplicate));
                }
                for &y in sb.iter().skip(1) {
                    to.0[y] = Some(rule.add_factor(dst[y], FactorKind::MustReplicate));
                }
            } else {
                for &x in &sa {
                    from.0[x] = Some(rule.add_factor(src[x], FactorKind::MustReplicate));
                }
                for &y in &sb {
                    to.0[y] = Some(rule.add_factor(dst[y], FactorKind::MustReplicate));
                }
            }
        }
        rule.push_operand(from);
        rule.push_result(to);
        Ok(rule)
    }
}

/// The smallest runs of dims, in order, whose sizes multiply to the same number on both
/// sides: `[8,4,6]` and `[8,2,12]` are `[0]~[0]`, `[1,2]~[1,2]`. None when the element counts
/// differ or a size is dynamic.
fn segments(src: &[i64], dst: &[i64]) -> Option<Vec<(Vec<usize>, Vec<usize>)>> {
    if src.iter().chain(dst).any(|&size| size < 0)
        || src.iter().product::<i64>() != dst.iter().product::<i64>()
    {
        return None;
    }
    let (mut i, mut j) = (0, 0);
    let mut found = Vec::new();
    while i < src.len() || j < dst.len() {
        let (mut a, mut b) = (Vec::new(), Vec::new());
        let (mut pa, mut pb) = (1i64, 1i64);
        loop {
            let closed =
                pa == pb && (!a.is_empty() || i == src.len()) && (!b.is_empty() || j == dst.len());
            if closed && !(a.is_empty() && b.is_empty()) {
                break;
            }
            if (pa <= pb || j == dst.len()) && i < src.len() {
                pa *= src[i];
                a.push(i);
                i += 1;
            } else if j < dst.len() {
                pb *= dst[j];
                b.push(j);
                j += 1;
            } else {
                return None;
            }
        }
        found.push((a, b));
    }
    Some(found)
}

fn check_groups(grouped: &[i64], single: &[i64], groups: &[Vec<usize>]) -> Result<(), String> {
    let err = || format!("bad reassociation {groups:?} for {grouped:?} <-> {single:?}");
    if groups.len() != single.len() || groups.iter().any(|g| g.is_empty()) {
        return Err(err());
    }
    let flat: Vec<usize> = groups.iter().flatten().copied().collect();
    if flat != (0..grouped.len()).collect::<Vec<_>>() {
        return Err(err());
    }
    for (g, &s) in groups.iter().zip(single) {
        let sizes: Vec<i64> = g.iter().map(|&d| grouped[d]).collect();
        if s >= 0 && sizes.iter().all(|&x| x >= 0) && sizes.iter().product::<i64>() != s {
            return Err(err());
        }
    }
    Ok(())
}

/// Reassociation groups (over the higher-rank side) for a reshape between
/// two static shapes that is a pure merge or split of contiguous dims;
/// `None` otherwise (e.g. `4x6 -> 6x4`, or dynamic sizes).
///
/// ```text
/// infer_reassociation([2,3,4], [6,4]) == Some([[0,1],[2]])
/// infer_reassociation([4,8], [4,1,8]) == Some([[0,1],[2]])
/// ```
pub fn infer_reassociation(src: &[i64], dst: &[i64]) -> Option<Vec<Vec<usize>>> {
    let (hi, lo) = if src.len() >= dst.len() {
        (src, dst)
    } else {
        (dst, src)
    };
    if hi.iter().chain(lo).any(|&s| s < 0) {
        return (src == dst).then(|| (0..src.len()).map(|d| vec![d]).collect());
    }
    if lo.is_empty() {
        return hi.iter().all(|&s| s == 1).then(Vec::new);
    }
    let mut groups = vec![];
    let mut i = 0;
    for j in 0..lo.len() {
        let mut group = vec![];
        let mut prod = 1;
        while group.is_empty() || prod != lo[j] {
            if i >= hi.len() || (prod > lo[j] && lo[j] > 0) {
                return None;
            }
            prod *= hi[i];
            group.push(i);
            i += 1;
        }
        // Trailing unit dims join this group unless the next group needs one.
        if lo.get(j + 1).is_none_or(|&next| next != 1) {
            while i < hi.len() && hi[i] == 1 {
                group.push(i);
                i += 1;
            }
        }
        groups.push(group);
    }
    (i == hi.len()).then_some(groups)
}
