//! How the simulator counts StableHLO ops: their cost class (FLOPs per iteration,
//! transcendentals, moves, views) and how fusion treats them (elementwise ops: 1 FLOP each,
//! registered with their rules in `super`).

use super::super::{Cost, Entries, Fusion};

/// How the simulator counts StableHLO ops.
pub(super) fn register(rules: &mut Entries) {
    for name in TRANSCENDENTAL {
        rules.add_cost(name, Cost::Transcendental);
    }
    rules.add_cost("stablehlo.dot_general", Cost::Contraction);
    rules.add_cost("stablehlo.convolution", Cost::Convolution);
    rules.add_cost("stablehlo.reduce", Cost::Flops(1.0));
    rules.add_cost("stablehlo.reduce_window", Cost::Flops(1.0));
    rules.add_cost("stablehlo.sort", Cost::Flops(1.0));
    rules.add_cost("chlo.top_k", Cost::Flops(1.0));
    rules.add_cost("stablehlo.optimization_barrier", Cost::View);
    rules.add_cost("stablehlo.reshape", Cost::View);
    rules.add_cost("stablehlo.constant", Cost::Free);
    for name in [
        "stablehlo.broadcast_in_dim",
        "stablehlo.transpose",
        "stablehlo.slice",
        "stablehlo.concatenate",
        "stablehlo.pad",
        "stablehlo.dynamic_slice",
        "stablehlo.dynamic_update_slice",
        "stablehlo.iota",
        "stablehlo.convert",
        "stablehlo.gather",
        "stablehlo.scatter",
        "stablehlo.reverse",
        "stablehlo.bitcast_convert",
        "stablehlo.rng_bit_generator",
        "stablehlo.select_and_scatter",
    ] {
        rules.add_cost(name, Cost::Moves);
    }
    // Fusion: a reduction takes its fused producers, and so does an in-place block write
    // (XLA fuses what computes the block into the dynamic_update_slice); an op that reads at
    // data-dependent places or sorts is a kernel of its own (XLA's loop fusion would take a
    // gather, but it reads where its indices say, not along its consumer's loop).
    for name in [
        "stablehlo.reduce",
        "stablehlo.reduce_window",
        "stablehlo.dynamic_update_slice",
    ] {
        rules.add_fusion(name, Fusion::Root);
    }
    for name in [
        "stablehlo.sort",
        "chlo.top_k",
        "stablehlo.gather",
        "stablehlo.scatter",
        "stablehlo.rng_bit_generator",
        "stablehlo.select_and_scatter",
        "stablehlo.optimization_barrier",
    ] {
        rules.add_fusion(name, Fusion::Alone);
    }
}

/// Elementwise ops XLA counts as transcendentals rather than FLOPs.
const TRANSCENDENTAL: &[&str] = &[
    "stablehlo.exponential",
    "stablehlo.exponential_minus_one",
    "stablehlo.log",
    "stablehlo.log_plus_one",
    "stablehlo.logistic",
    "stablehlo.sqrt",
    "stablehlo.rsqrt",
    "stablehlo.cbrt",
    "stablehlo.tanh",
    "stablehlo.sine",
    "stablehlo.cosine",
    "stablehlo.tan",
    "stablehlo.power",
    "stablehlo.atan2",
    "chlo.erf",
    "chlo.erfc",
    "chlo.erf_inv",
    "chlo.lgamma",
    "chlo.digamma",
    "chlo.tan",
];
