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
