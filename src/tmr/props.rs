//! Property tests.

use proptest::prelude::*;

use super::*;

fn permutation() -> impl Strategy<Value = Vec<usize>> {
    (0usize..7).prop_flat_map(|n| Just((0..n).collect::<Vec<_>>()).prop_shuffle())
}

proptest! {
    #![proptest_config(ProptestConfig { failure_persistence: None, ..ProptestConfig::default() })]

    #[test]
    fn transpose_round_trips(perm in permutation()) {
        let shape: Vec<i64> = (0..perm.len() as i64).map(|d| d + 2).collect();
        let r = Rule::transpose(&shape, &perm).unwrap();
        for d in 0..perm.len() {
            let fwd = r.tile_operand(0, d).unwrap();
            let [ResultTiling::Tile(rd)] = fwd.results[..] else { panic!("{fwd:?}") };
            prop_assert_eq!(perm[rd], d);
            prop_assert_eq!(r.tile_result(0, rd).unwrap().operands, vec![Some(d)]);
        }
    }

    #[test]
    fn elementwise_dims_map_to_themselves(
        shape in prop::collection::vec(1i64..64, 0..6),
        nops in 1usize..4,
        nres in 1usize..3,
    ) {
        let r = Rule::elementwise(&shape, nops, nres);
        for op in 0..nops {
            for (d, &size) in shape.iter().enumerate() {
                let e = r.tile_operand(op, d).unwrap();
                prop_assert_eq!(e.operands, vec![Some(d); nops]);
                prop_assert_eq!(e.results, vec![ResultTiling::Tile(d); nres]);
                prop_assert_eq!(r.tile_operand_by(op, d, size).is_ok(), true);
            }
        }
    }

    #[test]
    fn matmul_einsum_stable_and_consistent(i in 1i64..512, j in 1i64..512, k in 1i64..512) {
        let maps = vec![
            AffineMapLite::dims(3, &[0, 2]),
            AffineMapLite::dims(3, &[2, 1]),
            AffineMapLite::dims(3, &[0, 1]),
        ];
        use IteratorType::{Parallel as P, Reduction as R};
        let r = Rule::from_indexing_maps(&maps, &[P, P, R], &[i, j, k], 1, ReductionKind::Sum).unwrap();
        prop_assert_eq!(r.to_string(), "([i,k],[k,j],[i,j]) -> ([i,j]) reduction={k:sum}");
        prop_assert_eq!(format!("{r:#}"), format!("{r} sizes={{i={i},j={j},k={k}}}"));
        let e = Rule::einsum("ik,kj->ij", &[i, k, j]).unwrap().reduction('k', ReductionKind::Sum);
        prop_assert_eq!(e.to_string(), "([i,k],[k,j]) -> ([i,j]) reduction={k:sum}");
        for rule in [&r, &e] {
            for (op, d) in [(0, 0), (1, 1)] {
                let fwd = rule.tile_operand(op, d).unwrap();
                let [ResultTiling::Tile(rd)] = fwd.results[..] else { panic!("{fwd:?}") };
                let back = rule.tile_result(0, rd).unwrap();
                prop_assert_eq!(back.operands[op], Some(d));
                prop_assert_eq!(&back, &fwd);
            }
        }
    }

    #[test]
    fn reshape_major_dim_maps_across(a in 2i64..16, b in 2i64..16, parts in 1i64..8) {
        let r = Rule::reshape(&[a * b], &[a, b], &[vec![0, 1]]).unwrap();
        prop_assert_eq!(r.tile_operand_by(0, 0, parts).is_ok(), a % parts == 0);
        prop_assert!(r.tile_result(0, 1).is_err());
    }
}
