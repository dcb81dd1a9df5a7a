//! The registry: op name -> rule builder over a plain op description.
//!
//! ```text
//! let mut reg = Registry::with_defaults();
//! reg.register("my.matmul", |op| {
//!     Ok(Rule::einsum_shapes("ik,kj->ij", &op.operands, &op.results)?
//!         .reduction('k', ReductionKind::Sum))
//! });
//! let rule = reg.rule_for(&op)?; // None: no rule for this op name
//! ```

use std::collections::HashMap;
use std::fmt;

use super::affine::{loop_sizes_from_shapes, AffineMapLite, IteratorType};
use super::reshape::infer_reassociation;
use super::rule::{ReductionKind, Rule};

/// Op-specific attributes, as plain values; each builder reads what it needs.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct OpAttrs {
    /// Dims/axes (`tosa.reduce_* axis`, `linalg.reduce`/`broadcast`
    /// `dimensions`, `tensor.concat dim`).
    pub dims: Vec<i64>,
    /// `permutation` / `perms`: result dim `i` is input dim `permutation[i]`.
    pub permutation: Vec<i64>,
    /// Reassociation groups (expand/collapse shape).
    pub reassociation: Vec<Vec<usize>>,
    /// Indexing maps of a linalg structured op, one per operand.
    pub indexing_maps: Vec<AffineMapLite>,
    /// Iterator types of a linalg structured op.
    pub iterator_types: Vec<IteratorType>,
    /// Static loop sizes; inferred from shapes and maps when empty.
    pub loop_sizes: Vec<i64>,
    /// The combiner of a reduction (linalg region analysed by the caller).
    pub combiner: Option<ReductionKind>,
    /// Static offsets (slices) or low padding (`tensor.pad`).
    pub static_offsets: Vec<i64>,
    /// Static sizes (slices) or high padding (`tensor.pad`).
    pub static_sizes: Vec<i64>,
    /// Static strides (slices).
    pub static_strides: Vec<i64>,
}

/// A plain description of one op: shapes of its operands and results
/// (non-tensor operands are rank 0) plus attributes.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct OpShapeInfo {
    /// Op name, e.g. `tosa.matmul`.
    pub name: String,
    /// Operand shapes.
    pub operands: Vec<Vec<i64>>,
    /// Result shapes.
    pub results: Vec<Vec<i64>>,
    /// Attributes.
    pub attrs: OpAttrs,
}

impl OpShapeInfo {
    /// An op with no attributes.
    pub fn new(name: impl Into<String>, operands: Vec<Vec<i64>>, results: Vec<Vec<i64>>) -> Self {
        OpShapeInfo {
            name: name.into(),
            operands,
            results,
            attrs: OpAttrs::default(),
        }
    }

    /// Shape of operand `i`.
    pub fn operand(&self, i: usize) -> Result<&[i64], String> {
        self.operands
            .get(i)
            .map(Vec::as_slice)
            .ok_or_else(|| format!("{}: no operand {i}", self.name))
    }

    /// Shape of result `i`.
    pub fn result(&self, i: usize) -> Result<&[i64], String> {
        self.results
            .get(i)
            .map(Vec::as_slice)
            .ok_or_else(|| format!("{}: no result {i}", self.name))
    }

    /// Ranks of operands from `from` on (extra operands used whole).
    pub fn ranks_from(&self, from: usize) -> Vec<usize> {
        self.operands.iter().skip(from).map(Vec::len).collect()
    }

    /// `attrs.dims` as dims, checked against `rank`.
    pub fn dims(&self, rank: usize) -> Result<Vec<usize>, String> {
        to_dims(&self.attrs.dims, rank, &self.name)
    }
}

fn to_dims(v: &[i64], rank: usize, name: &str) -> Result<Vec<usize>, String> {
    v.iter()
        .map(|&d| {
            usize::try_from(d)
                .ok()
                .filter(|&d| d < rank)
                .ok_or_else(|| format!("{name}: dim {d} out of rank {rank}"))
        })
        .collect()
}

/// A rule builder.
pub type RuleFn = Box<dyn Fn(&OpShapeInfo) -> Result<Rule, String> + Send + Sync>;

/// Map from op name to rule builder.
#[derive(Default)]
pub struct Registry {
    rules: HashMap<String, RuleFn>,
}

impl fmt::Debug for Registry {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Registry")
            .field("ops", &self.names())
            .finish()
    }
}

/// `arith` and `math` ops that are elementwise on tensors.
pub const ARITH_MATH_ELEMENTWISE: &[&str] = &[
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

/// `tosa` elementwise ops (numpy broadcasting of unit dims; extra rank-1
/// operands such as zero points are used whole).
pub const TOSA_ELEMENTWISE: &[&str] = &[
    "tosa.add",
    "tosa.sub",
    "tosa.mul",
    "tosa.maximum",
    "tosa.minimum",
    "tosa.pow",
    "tosa.exp",
    "tosa.log",
    "tosa.tanh",
    "tosa.sigmoid",
    "tosa.abs",
    "tosa.negate",
    "tosa.reciprocal",
    "tosa.rsqrt",
    "tosa.clamp",
    "tosa.cast",
    "tosa.select",
    "tosa.equal",
    "tosa.greater",
    "tosa.greater_equal",
    "tosa.logical_and",
    "tosa.logical_or",
    "tosa.logical_xor",
    "tosa.logical_not",
    "tosa.bitwise_and",
    "tosa.bitwise_or",
    "tosa.bitwise_xor",
    "tosa.bitwise_not",
    "tosa.floor",
    "tosa.ceil",
    "tosa.erf",
    "tosa.sin",
    "tosa.cos",
    "tosa.int_div",
    "tosa.logical_left_shift",
    "tosa.logical_right_shift",
    "tosa.arithmetic_right_shift",
];

/// Linalg structured ops registered with [`structured_rule`] (the caller
/// supplies indexing maps and iterator types).
pub const LINALG_STRUCTURED: &[&str] = &[
    "linalg.generic",
    "linalg.map",
    "linalg.elementwise",
    "linalg.matmul",
    "linalg.batch_matmul",
    "linalg.batch_reduce_matmul",
    "linalg.matvec",
    "linalg.vecmat",
    "linalg.dot",
    "linalg.contract",
    "linalg.conv_1d",
    "linalg.conv_2d",
    "linalg.conv_2d_nhwc_hwcf",
    "linalg.conv_2d_nchw_fchw",
    "linalg.depthwise_conv_2d_nhwc_hwc",
    "linalg.pooling_nhwc_sum",
    "linalg.pooling_nhwc_max",
    "linalg.copy",
    "linalg.add",
    "linalg.sub",
    "linalg.mul",
    "linalg.div",
    "linalg.exp",
    "linalg.max",
    "linalg.min",
];

impl Registry {
    /// An empty registry.
    pub fn new() -> Self {
        Self::default()
    }

    /// Registers (or replaces) the rule builder of `name`.
    pub fn register<F>(&mut self, name: impl Into<String>, f: F)
    where
        F: Fn(&OpShapeInfo) -> Result<Rule, String> + Send + Sync + 'static,
    {
        self.rules.insert(name.into(), Box::new(f));
    }

    /// Registers [`Rule::broadcasting_elementwise`] for each name.
    pub fn register_elementwise(&mut self, names: &[&str]) {
        for name in names {
            self.register(*name, |op| {
                Rule::broadcasting_elementwise(&op.operands, &op.results)
            });
        }
    }

    /// Whether `name` has a rule.
    pub fn contains(&self, name: &str) -> bool {
        self.rules.contains_key(name)
    }

    /// Registered op names, sorted.
    pub fn names(&self) -> Vec<&str> {
        let mut v: Vec<&str> = self.rules.keys().map(String::as_str).collect();
        v.sort_unstable();
        v
    }

    /// The rule for `op`: `None` if its name has no rule, `Some(Err)` if the
    /// builder rejects this instance (the message says why).
    pub fn rule_for(&self, op: &OpShapeInfo) -> Option<Result<Rule, String>> {
        self.rules.get(&op.name).map(|f| f(op))
    }

    /// A registry with the built-in rules (see the module docs of
    /// [`super`] for the list).
    pub fn with_defaults() -> Self {
        let mut r = Registry::new();
        r.register_elementwise(ARITH_MATH_ELEMENTWISE);
        r.register_elementwise(TOSA_ELEMENTWISE);
        for name in LINALG_STRUCTURED {
            r.register(*name, structured_rule);
        }
        r.register("arith.constant", |op| Ok(Rule::source(op.result(0)?, 0)));
        r.register("tensor.empty", |op| {
            Ok(Rule::source(op.result(0)?, op.operands.len()))
        });
        r.register("func.return", |op| Ok(Rule::identity(&op.operands)));
        r.register("tosa.matmul", |op| {
            let (a, b) = (op.operand(0)?.to_vec(), op.operand(1)?.to_vec());
            Ok(Rule::einsum_shapes("bik,bkj->bij", &[a, b], &op.results)?
                .reduction('k', ReductionKind::Sum)
                .with_whole_operands(&op.ranks_from(2)))
        });
        r.register("tosa.transpose", |op| {
            let perm = to_dims(&op.attrs.permutation, op.operand(0)?.len(), &op.name)?;
            Ok(Rule::transpose(op.operand(0)?, &perm)?.with_whole_operands(&op.ranks_from(1)))
        });
        r.register("tosa.reshape", |op| {
            let (src, dst) = (op.operand(0)?, op.result(0)?);
            let groups = infer_reassociation(src, dst).ok_or_else(|| {
                format!("tosa.reshape {src:?} -> {dst:?} is not a pure merge or split of dims")
            })?;
            Ok(Rule::reshape(src, dst, &groups)?.with_whole_operands(&op.ranks_from(1)))
        });
        for (name, kind) in [
            ("tosa.reduce_sum", ReductionKind::Sum),
            ("tosa.reduce_max", ReductionKind::Max),
            ("tosa.reduce_min", ReductionKind::Min),
            ("tosa.reduce_prod", ReductionKind::Mul),
        ] {
            r.register(name, move |op| {
                let input = op.operand(0)?;
                let dims = op.dims(input.len())?;
                if dims.is_empty() {
                    return Err(format!("{} without an axis", op.name));
                }
                Rule::reduce(input, &dims, kind, true)
            });
        }
        for name in ["tensor.expand_shape", "tensor.collapse_shape"] {
            r.register(name, |op| {
                let rule = Rule::reshape(op.operand(0)?, op.result(0)?, &op.attrs.reassociation)?;
                Ok(rule.with_whole_operands(&op.ranks_from(1)))
            });
        }
        r.register("tensor.extract_slice", |op| {
            let a = &op.attrs;
            let (src, res) = (op.operand(0)?, op.result(0)?);
            let rule = Rule::extract_slice(
                src,
                &a.static_offsets,
                &a.static_sizes,
                &a.static_strides,
                res,
            )?;
            Ok(rule.with_whole_operands(&op.ranks_from(1)))
        });
        r.register("tensor.insert_slice", |op| {
            let a = &op.attrs;
            let (src, dest) = (op.operand(0)?, op.operand(1)?);
            let rule = Rule::insert_slice(
                src,
                dest,
                &a.static_offsets,
                &a.static_sizes,
                &a.static_strides,
            )?;
            Ok(rule.with_whole_operands(&op.ranks_from(2)))
        });
        r.register("tensor.concat", |op| {
            let rank = op.operand(0)?.len();
            match op.dims(rank)?[..] {
                [d] => Rule::concat(&op.operands, d),
                _ => Err("tensor.concat needs one dim".into()),
            }
        });
        r.register("tensor.pad", |op| {
            let a = &op.attrs;
            let rule = Rule::pad(op.operand(0)?, &a.static_offsets, &a.static_sizes)?;
            Ok(rule.with_whole_operands(&op.ranks_from(1)))
        });
        r.register("linalg.fill", |op| Ok(Rule::fill(op.result(0)?)));
        r.register("linalg.transpose", |op| {
            let perm = to_dims(&op.attrs.permutation, op.operand(0)?.len(), &op.name)?;
            Ok(Rule::transpose(op.operand(0)?, &perm)?.with_inits())
        });
        r.register("linalg.broadcast", |op| {
            let res = op.result(0)?;
            Ok(Rule::broadcast(res, &op.dims(res.len())?)?.with_inits())
        });
        r.register("linalg.reduce", linalg_reduce);
        r
    }
}

/// `linalg.reduce`: `n` inputs, `n` inits, `n` results, one combiner.
fn linalg_reduce(op: &OpShapeInfo) -> Result<Rule, String> {
    let n = op.results.len();
    if n == 0 || op.operands.len() != 2 * n {
        return Err(format!(
            "linalg.reduce with {} operands, {n} results",
            op.operands.len()
        ));
    }
    let input = op.operand(0)?;
    let kind = op.attrs.combiner.unwrap_or(ReductionKind::Other);
    let one = Rule::reduce(input, &op.dims(input.len())?, kind, false)?;
    let mut rule = Rule {
        factors: one.factors.clone(),
        ..Rule::new()
    };
    for _ in 0..n {
        rule.push_operand(one.operands[0].clone());
    }
    for _ in 0..n {
        rule.push_result(one.results[0].clone());
    }
    Ok(rule.with_inits())
}

/// The rule of any linalg structured op from `attrs.indexing_maps`,
/// `iterator_types`, `loop_sizes` (or shapes) and `combiner`. Operands are
/// inputs then inits; one result per init. Without a combiner, a name with
/// `_max`/`_min` uses max/min, `linalg.generic` an unknown combiner (never
/// tiled), other named ops sum.
pub fn structured_rule(op: &OpShapeInfo) -> Result<Rule, String> {
    let a = &op.attrs;
    if a.indexing_maps.is_empty() {
        return Err(format!("{}: no indexing maps supplied", op.name));
    }
    let sizes = if a.loop_sizes.is_empty() {
        loop_sizes_from_shapes(&a.indexing_maps, a.iterator_types.len(), &op.operands)?
    } else {
        a.loop_sizes.clone()
    };
    Rule::from_indexing_maps(
        &a.indexing_maps,
        &a.iterator_types,
        &sizes,
        op.results.len(),
        a.combiner.unwrap_or_else(|| default_combiner(&op.name)),
    )
}

fn default_combiner(name: &str) -> ReductionKind {
    match name {
        "linalg.generic" => ReductionKind::Other,
        n if n.contains("_max") => ReductionKind::Max,
        n if n.contains("_min") => ReductionKind::Min,
        _ => ReductionKind::Sum,
    }
}
