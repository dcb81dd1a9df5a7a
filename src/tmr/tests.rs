//! Example-based tests of rules, tiling queries and the registry.

use super::*;
use AffineExprLite::{Constant, Dim};
use IteratorType::{Parallel as P, Reduction as R};
use ResultTiling::{Sum, Tile};

fn map(n: usize, dims: &[usize]) -> AffineMapLite {
    AffineMapLite::dims(n, dims)
}

fn matmul_maps() -> Vec<AffineMapLite> {
    vec![map(3, &[0, 2]), map(3, &[2, 1]), map(3, &[0, 1])]
}

fn linalg_matmul() -> Rule {
    Rule::from_indexing_maps(
        &matmul_maps(),
        &[P, P, R],
        &[32, 256, 64],
        1,
        ReductionKind::Sum,
    )
    .unwrap()
}

fn einsum_matmul() -> Rule {
    Rule::einsum("ik,kj->ij", &[32, 64, 256])
        .unwrap()
        .reduction('k', ReductionKind::Sum)
}

#[test]
fn matmul_from_maps_prints() {
    let r = linalg_matmul();
    assert_eq!(
        r.to_string(),
        "([i,k],[k,j],[i,j]) -> ([i,j]) reduction={k:sum}"
    );
    assert_eq!(
        format!("{r:#}"),
        "([i,k],[k,j],[i,j]) -> ([i,j]) reduction={k:sum} sizes={i=32,j=256,k=64}"
    );
    assert_eq!(r.init_of(0), Some(2));
}

#[test]
fn einsum_matmul_prints() {
    let r = einsum_matmul();
    assert_eq!(r.to_string(), "([i,k],[k,j]) -> ([i,j]) reduction={k:sum}");
    assert_eq!(
        format!("{r:#}"),
        "([i,k],[k,j]) -> ([i,j]) reduction={k:sum} sizes={i=32,k=64,j=256}"
    );
}

#[test]
fn einsum_round_trips_through_printer() {
    for r in [
        linalg_matmul(),
        einsum_matmul(),
        Rule::reshape(&[32], &[4, 8], &[vec![0, 1]]).unwrap(),
    ] {
        let text = format!("{r:#}");
        let again = Rule::einsum(&text, &[]).unwrap();
        assert_eq!(format!("{again:#}"), text);
        assert_eq!(again.factors(), r.factors());
    }
    let r = Rule::einsum("([a,_],[]) -> () replicate={a} sizes={a=?}", &[]).unwrap();
    assert_eq!(
        format!("{r:#}"),
        "([a,_],[]) -> () replicate={a} sizes={a=?}"
    );
}

#[test]
fn einsum_errors() {
    assert!(Rule::einsum("ik,kj", &[1, 2, 3]).is_err());
    assert!(Rule::einsum("ik,kj->ij", &[1, 2]).is_err());
    assert!(Rule::einsum("ik->i reduction={k:avg}", &[1, 2]).is_err());
    assert!(Rule::einsum_shapes("ik,kj->ij", &[vec![2, 3], vec![4, 5]], &[vec![2, 5]]).is_err());
    let r =
        Rule::einsum_shapes("ik,kj->ij", &[vec![2, 3], vec![3, DYNAMIC]], &[vec![2, 5]]).unwrap();
    assert_eq!(
        format!("{r:#}"),
        "([i,k],[k,j]) -> ([i,j]) sizes={i=2,k=3,j=5}"
    );
}

#[test]
#[should_panic(expected = "no factor")]
fn einsum_unknown_factor_panics() {
    let _ = einsum_matmul().replicate('z');
}

#[test]
fn matmul_tile_lhs_rows() {
    let e = linalg_matmul().tile_operand(0, 0).unwrap();
    assert_eq!(e.operands, vec![Some(0), None, Some(0)]);
    assert_eq!(e.results, vec![Tile(0)]);
    let e = einsum_matmul().tile_operand(0, 0).unwrap();
    assert_eq!(e.operands, vec![Some(0), None]);
    assert_eq!(e.results, vec![Tile(0)]);
}

#[test]
fn matmul_tile_contraction() {
    let e = linalg_matmul().tile_operand(0, 1).unwrap();
    assert_eq!(e.operands, vec![Some(1), Some(0), None]);
    assert_eq!(e.results, vec![Sum(ReductionKind::Sum)]);
    assert_eq!(e.identity_inits, vec![2]);
    let e = einsum_matmul().tile_operand(1, 0).unwrap();
    assert_eq!(e.operands, vec![Some(1), Some(0)]);
    assert!(e.identity_inits.is_empty());
}

#[test]
fn matmul_backward() {
    let r = linalg_matmul();
    let e = r.tile_result(0, 1).unwrap();
    assert_eq!(e.operands, vec![None, Some(1), Some(1)]);
    assert_eq!(e.results, vec![Tile(1)]);
    assert_eq!(
        r.tile_result(0, 2),
        Err(Conflict::OutOfRange {
            value: ValueRef::Result(0),
            dim: 2
        })
    );
    assert!(r.tile_operand(3, 0).is_err());
    assert_eq!(r.tile_result_by(0, 1, 4).unwrap(), e);
    assert_eq!(
        r.tile_result_by(0, 1, 3).unwrap_err().to_string(),
        "factor j of size 256 is not divisible by 3"
    );
}

#[test]
fn batch_matmul() {
    let maps = vec![map(4, &[0, 1, 3]), map(4, &[0, 3, 2]), map(4, &[0, 1, 2])];
    let r = Rule::from_indexing_maps(&maps, &[P, P, P, R], &[4, 8, 16, 32], 1, ReductionKind::Sum)
        .unwrap();
    assert_eq!(
        r.to_string(),
        "([i,j,l],[i,l,k],[i,j,k]) -> ([i,j,k]) reduction={l:sum}"
    );
    let e = r.tile_operand(1, 0).unwrap();
    assert_eq!(e.operands, vec![Some(0), Some(0), Some(0)]);
    assert_eq!(e.results, vec![Tile(0)]);
    let e = r.tile_operand(0, 2).unwrap();
    assert_eq!(e.results, vec![Sum(ReductionKind::Sum)]);
}

#[test]
fn generic_max_combiner() {
    let maps = vec![map(2, &[0, 1]), map(2, &[0])];
    let r = Rule::from_indexing_maps(&maps, &[P, R], &[8, 16], 1, ReductionKind::Max).unwrap();
    assert_eq!(r.to_string(), "([i,j],[i]) -> ([i]) reduction={j:max}");
    let e = r.tile_operand(0, 1).unwrap();
    assert_eq!(e.results, vec![Sum(ReductionKind::Max)]);
    assert_eq!(e.operands, vec![Some(1), None]);
    assert!(e.identity_inits.is_empty(), "max is idempotent");
    let other =
        Rule::from_indexing_maps(&maps, &[P, R], &[8, 16], 1, ReductionKind::Other).unwrap();
    assert!(matches!(
        other.tile_operand(0, 1),
        Err(Conflict::UnknownCombiner { .. })
    ));
}

#[test]
fn conv_marks_spatial_replicate() {
    // n, oh, ow, f, kh, kw, c
    let input = AffineMapLite {
        num_dims: 7,
        results: vec![
            Dim(0),
            AffineExprLite::add(1, 4),
            AffineExprLite::add(2, 5),
            Dim(6),
        ],
    };
    let maps = vec![input, map(7, &[4, 5, 6, 3]), map(7, &[0, 1, 2, 3])];
    let its = [P, P, P, P, R, R, R];
    let r = Rule::from_indexing_maps(&maps, &its, &[2, 8, 8, 16, 3, 3, 4], 1, ReductionKind::Sum)
        .unwrap();
    assert_eq!(
        r.to_string(),
        "([i,_,_,o],[m,n,o,l],[i,j,k,l]) -> ([i,j,k,l]) reduction={o:sum} replicate={j,k,m,n}"
    );
    assert!(matches!(
        r.tile_result(0, 1),
        Err(Conflict::MustReplicate { .. })
    ));
    assert!(matches!(
        r.tile_operand(0, 1),
        Err(Conflict::NotIndexed { .. })
    ));
    assert!(matches!(
        r.tile_operand(1, 0),
        Err(Conflict::MustReplicate { .. })
    ));
    assert_eq!(r.tile_operand(0, 0).unwrap().results, vec![Tile(0)]);
    assert_eq!(
        r.tile_result(0, 3).unwrap().operands,
        vec![None, Some(3), Some(3)]
    );
}

#[test]
fn constant_index_and_diagonal() {
    let maps = vec![
        AffineMapLite {
            num_dims: 1,
            results: vec![Dim(0), Dim(0)],
        },
        AffineMapLite {
            num_dims: 1,
            results: vec![Dim(0), Constant(0)],
        },
    ];
    let r = Rule::from_indexing_maps(&maps, &[P], &[8], 1, ReductionKind::Sum).unwrap();
    assert_eq!(r.to_string(), "([i,i],[i,_]) -> ([i,_])");
    let c = r.tile_result(0, 0).unwrap_err();
    assert_eq!(
        c,
        Conflict::RepeatedFactor {
            factor: "i".into(),
            value: ValueRef::Operand(0)
        }
    );
    assert_eq!(
        r.tile_result(0, 1),
        Err(Conflict::NotIndexed {
            value: ValueRef::Result(0),
            dim: 1
        })
    );
}

#[test]
fn missing_and_reduction_in_result() {
    let r = Rule::einsum("ij->i", &[4, 8]).unwrap();
    assert!(matches!(
        r.tile_operand(0, 1),
        Err(Conflict::MissingFromResult { .. })
    ));
    let r = Rule::einsum("ij->ij", &[4, 8])
        .unwrap()
        .reduction('j', ReductionKind::Sum);
    assert!(matches!(
        r.tile_result(0, 1),
        Err(Conflict::ReductionInResult { .. })
    ));
}

#[test]
fn expand_shape() {
    let r = Rule::reshape(&[32], &[4, 8], &[vec![0, 1]]).unwrap();
    assert_eq!(
        format!("{r:#}"),
        "([i]) -> ([i,j]) replicate={j} sizes={i=4,j=8}"
    );
    let e = r.tile_operand_by(0, 0, 4).unwrap();
    assert_eq!(e.results, vec![Tile(0)]);
    assert_eq!(r.tile_result_by(0, 0, 2).unwrap().operands, vec![Some(0)]);
    assert!(matches!(
        r.tile_operand_by(0, 0, 8),
        Err(Conflict::Indivisible { size: 4, .. })
    ));
    assert!(matches!(
        r.tile_result(0, 1),
        Err(Conflict::MustReplicate { .. })
    ));
}

#[test]
fn collapse_shape() {
    let r = Rule::reshape(&[4, 8], &[32], &[vec![0, 1]]).unwrap();
    assert_eq!(r.to_string(), "([i,j]) -> ([i]) replicate={j}");
    assert_eq!(r.tile_operand_by(0, 0, 2).unwrap().results, vec![Tile(0)]);
    assert!(r.tile_operand(0, 1).is_err());
    // Unit dims are skipped when choosing the major dim.
    let r = Rule::reshape(&[1, 4, 8, 3], &[32, 3], &[vec![0, 1, 2], vec![3]]).unwrap();
    assert_eq!(r.to_string(), "([_,i,j,k]) -> ([i,k]) replicate={j}");
    assert!(Rule::reshape(&[4, 8], &[30], &[vec![0, 1]]).is_err());
    assert!(Rule::reshape(&[4, 8], &[32], &[vec![0]]).is_err());
}

#[test]
fn infer_groups() {
    assert_eq!(
        infer_reassociation(&[2, 3, 4], &[6, 4]),
        Some(vec![vec![0, 1], vec![2]])
    );
    assert_eq!(
        infer_reassociation(&[6, 4], &[2, 3, 4]),
        Some(vec![vec![0, 1], vec![2]])
    );
    assert_eq!(
        infer_reassociation(&[4, 8], &[4, 1, 8]),
        Some(vec![vec![0, 1], vec![2]])
    );
    assert_eq!(
        infer_reassociation(&[4, 1], &[4, 1, 1]),
        Some(vec![vec![0], vec![1, 2]])
    );
    assert_eq!(infer_reassociation(&[1, 1], &[]), Some(vec![]));
    assert_eq!(
        infer_reassociation(&[4, 8], &[4, 8]),
        Some(vec![vec![0], vec![1]])
    );
    assert_eq!(infer_reassociation(&[4, 6], &[6, 4]), None);
    assert_eq!(infer_reassociation(&[2, 12], &[6, 2, 2]), None);
    assert_eq!(infer_reassociation(&[DYNAMIC, 4], &[8]), None);
}

#[test]
fn transpose_maps_dims() {
    let r = Rule::transpose(&[2, 3, 4], &[2, 0, 1]).unwrap();
    assert_eq!(r.to_string(), "([i,j,k]) -> ([k,i,j])");
    assert_eq!(r.tile_operand(0, 2).unwrap().results, vec![Tile(0)]);
    assert_eq!(r.tile_result(0, 2).unwrap().operands, vec![Some(1)]);
    assert!(Rule::transpose(&[2, 3], &[0, 0]).is_err());
}

#[test]
fn broadcast_rule() {
    let r = Rule::broadcast(&[4, 8, 16], &[1]).unwrap().with_inits();
    assert_eq!(r.to_string(), "([i,k],[i,j,k]) -> ([i,j,k])");
    assert_eq!(r.tile_operand(0, 1).unwrap().results, vec![Tile(2)]);
    let e = r.tile_result(0, 1).unwrap();
    assert_eq!(e.operands, vec![None, Some(1)]);
}

#[test]
fn reduce_rule() {
    let r = Rule::reduce(&[4, 8, 16], &[1], ReductionKind::Sum, false).unwrap();
    assert_eq!(r.to_string(), "([i,j,k]) -> ([i,k]) reduction={j:sum}");
    assert_eq!(
        r.tile_operand(0, 1).unwrap().results,
        vec![Sum(ReductionKind::Sum)]
    );
    assert_eq!(r.tile_operand(0, 2).unwrap().results, vec![Tile(1)]);
    let kept = Rule::reduce(&[4, 8], &[0], ReductionKind::Min, true).unwrap();
    assert_eq!(kept.to_string(), "([i,j]) -> ([_,j]) reduction={i:min}");
}

#[test]
fn concat_rule() {
    let r = Rule::concat(&[vec![2, 8], vec![3, 8]], 0).unwrap();
    assert_eq!(
        format!("{r:#}"),
        "([i,j],[i,j]) -> ([i,j]) replicate={i} sizes={i=5,j=8}"
    );
    assert_eq!(
        r.tile_operand(1, 1).unwrap().operands,
        vec![Some(1), Some(1)]
    );
    assert!(matches!(
        r.tile_operand(0, 0),
        Err(Conflict::MustReplicate { .. })
    ));
}

#[test]
fn pad_rule() {
    let r = Rule::pad(&[4, 8], &[0, 1], &[0, 1]).unwrap();
    assert_eq!(
        format!("{r:#}"),
        "([i,j]) -> ([i,j]) replicate={j} sizes={i=4,j=10}"
    );
    assert_eq!(r.tile_result(0, 0).unwrap().operands, vec![Some(0)]);
    assert!(r.tile_result(0, 1).is_err());
}

#[test]
fn slices() {
    // 8x16x4 -> [0, 0..4, 0..4] rank-reduced to 4x4.
    let r = Rule::extract_slice(&[8, 16, 4], &[3, 0, 0], &[1, 4, 4], &[1, 1, 1], &[4, 4]).unwrap();
    assert_eq!(r.to_string(), "([i,j,k]) -> ([j,k]) replicate={i,j}");
    assert_eq!(r.tile_result(0, 1).unwrap().operands, vec![Some(2)]);
    assert!(r.tile_result(0, 0).is_err());
    let r = Rule::insert_slice(&[4, 8], &[16, 8], &[4, 0], &[4, 8], &[1, 1]).unwrap();
    assert_eq!(r.to_string(), "([i,j],[i,j]) -> ([i,j]) replicate={i}");
    assert_eq!(
        r.tile_result(0, 1).unwrap().operands,
        vec![Some(1), Some(1)]
    );
    assert_eq!(r.init_of(0), Some(1));
    assert!(Rule::extract_slice(&[8], &[0], &[4], &[1], &[5]).is_err());
}

#[test]
fn sources_and_identity() {
    let r = Rule::fill(&[4, 8]);
    assert_eq!(r.to_string(), "([],[i,j]) -> ([i,j])");
    assert_eq!(r.tile_result(0, 1).unwrap().operands, vec![None, Some(1)]);
    let r = Rule::source(&[4, 8], 0);
    assert_eq!(r.to_string(), "() -> ([i,j])");
    assert_eq!(r.tile_result(0, 0).unwrap().results, vec![Tile(0)]);
    let r = Rule::identity(&[vec![4], vec![2, 3]]);
    assert_eq!(r.to_string(), "([i],[j,k]) -> ()");
    let e = r.tile_operand(1, 1).unwrap();
    assert_eq!((e.operands, e.results), (vec![None, Some(1)], vec![]));
}

#[test]
fn elementwise_broadcasting() {
    let r =
        Rule::broadcasting_elementwise(&[vec![4, 8], vec![1, 8], vec![8], vec![]], &[vec![4, 8]])
            .unwrap();
    assert_eq!(r.to_string(), "([i,j],[_,j],[j],[]) -> ([i,j])");
    assert_eq!(
        r.tile_operand(0, 0).unwrap().operands,
        vec![Some(0), None, None, None]
    );
    assert!(Rule::broadcasting_elementwise(&[vec![3, 8]], &[vec![4, 8]]).is_err());
}

#[test]
fn reshapes_that_regroup_keep_the_untouched_dims_tileable() {
    // [8,4,6] -> [8,2,12]: dim 0 passes, the regrouped 4x6 -> 2x12 stays whole.
    let r = Rule::reshape_segments(&[8, 4, 6], &[8, 2, 12]).unwrap();
    assert_eq!(r.to_string(), "([i,j,k]) -> ([i,l,m]) replicate={j,k,l,m}");
    assert_eq!(r.tile_operand(0, 0).unwrap().results, vec![Tile(0)]);
    assert!(r.tile_operand(0, 1).is_err());
    // A merge behind an untouched dim, and unit dims anywhere, as the group rule has them.
    let r = Rule::reshape_segments(&[8, 1, 4, 6], &[8, 24, 1]).unwrap();
    assert_eq!(r.tile_operand(0, 2).unwrap().results, vec![Tile(1)]);
    assert!(r.tile_operand(0, 3).is_err());
    assert!(Rule::reshape_segments(&[8, 4], &[8, 5]).is_err());
}
