//! `arith` and `math`: elementwise ops on tensors, and constants.

use super::{Cost, Entries};
use crate::tmr::Rule;

/// `arith` and `math` ops that are elementwise on tensors.
const ELEMENTWISE: &[&str] = &[
    "arith.addf",
    "arith.subf",
    "arith.mulf",
    "arith.divf",
    "arith.remf",
    "arith.negf",
    "arith.maximumf",
    "arith.minimumf",
    "arith.maxnumf",
    "arith.minnumf",
    "arith.cmpf",
    "arith.cmpi",
    "arith.select",
    "arith.addi",
    "arith.subi",
    "arith.muli",
    "arith.divsi",
    "arith.divui",
    "arith.remsi",
    "arith.remui",
    "arith.ceildivsi",
    "arith.floordivsi",
    "arith.maxsi",
    "arith.maxui",
    "arith.minsi",
    "arith.minui",
    "arith.andi",
    "arith.ori",
    "arith.xori",
    "arith.shli",
    "arith.shrsi",
    "arith.shrui",
    "arith.extf",
    "arith.truncf",
    "arith.extsi",
    "arith.extui",
    "arith.trunci",
    "arith.sitofp",
    "arith.uitofp",
    "arith.fptosi",
    "arith.fptoui",
    "arith.bitcast",
    "arith.index_cast",
    "math.exp",
    "math.exp2",
    "math.expm1",
    "math.log",
    "math.log2",
    "math.log10",
    "math.log1p",
    "math.tanh",
    "math.sqrt",
    "math.rsqrt",
    "math.powf",
    "math.absf",
    "math.absi",
    "math.ceil",
    "math.floor",
    "math.round",
    "math.roundeven",
    "math.sin",
    "math.cos",
    "math.tan",
    "math.atan",
    "math.atan2",
    "math.erf",
    "math.fma",
    "math.copysign",
    "math.sinh",
    "math.cosh",
    "math.trunc",
];

pub(super) fn register(rules: &mut Entries) {
    // Adds and subtracts of tensors are linear in both (the lowering's add-of-sums peephole).
    for name in ["arith.addf", "arith.subf"] {
        rules.add_linear(name, |_| Some(super::Linear::All));
    }
    for name in ELEMENTWISE {
        rules.add(name, |op| {
            Rule::broadcasting_elementwise(&op.operands, &op.results)
        });
        rules.add_cost(name, Cost::Flops(1.0));
    }
    for name in TRANSCENDENTAL {
        rules.add_cost(name, Cost::Transcendental);
    }
    for name in ["arith.index_cast", "arith.index_castui"] {
        rules.add_cost(name, Cost::Free);
    }
    // Scalar ops in a linalg body: each is a FLOP unless it says otherwise.
    rules.add_dialect_cost("arith", Cost::Flops(1.0));
    rules.add_dialect_cost("math", Cost::Flops(1.0));
    for name in ["arith.mulf", "arith.muli"] {
        rules.add_multiply(name);
    }
    rules.add_cost("arith.constant", Cost::Free);
    // A constant is a source: its result may be produced tiled, when it is a splat.
    rules.add("arith.constant", |op| Ok(Rule::source(op.result(0)?, 0)));
    rules.add_retype("arith.constant", super::resplat_value);
    rules.add_tileable("arith.constant", super::splat_only);
    rules.add_fill("arith.constant", super::splat_fill);
}

/// Math ops XLA counts as transcendentals rather than FLOPs.
const TRANSCENDENTAL: &[&str] = &[
    "math.exp",
    "math.exp2",
    "math.expm1",
    "math.log",
    "math.log1p",
    "math.log2",
    "math.log10",
    "math.tanh",
    "math.sqrt",
    "math.rsqrt",
    "math.cbrt",
    "math.powf",
    "math.fpowi",
    "math.ipowi",
    "math.sin",
    "math.cos",
    "math.tan",
    "math.atan",
    "math.atan2",
    "math.erf",
    "math.erfc",
    "math.sinh",
    "math.cosh",
    "math.asin",
    "math.acos",
    "math.asinh",
    "math.acosh",
    "math.atanh",
];
