//! Einsum notation: the printer (`Display for Rule`) and the builder
//! ([`Rule::einsum`]) share one notation.
//!
//! ```text
//! {}   ([i,k],[k,j]) -> ([i,j]) reduction={k:sum}
//! {:#} ([i,k],[k,j]) -> ([i,j]) reduction={k:sum} sizes={i=32,k=64,j=256}
//! ```
//! A dim indexed by no factor prints as `_`; must-replicate factors are listed
//! as `replicate={x,y}`; a dynamic size prints as `?`. Clauses and `sizes`
//! entries are in factor order. Names come from the builder (einsum letters)
//! or from [`Rule::add_factor`]'s scheme (`i`, `j`, `k`, … by factor index).
//!
//! The builder also accepts the compact form `"ik,kj->ij"` (one character per
//! dim). Factors are numbered in the order of the `sizes` clause if any, then
//! of first appearance (operands, then results), so printing with `{:#}` and
//! building again gives the same rule (inits aside).

use std::fmt;

use super::rule::{FactorId, FactorKind, ReductionKind, Rule, TensorDims};

/// Something naming a factor of a rule: a `char`, a `&str` or a [`FactorId`].
pub trait FactorKey: fmt::Debug {
    /// The factor named, if any.
    fn find(&self, rule: &Rule) -> Option<FactorId>;
}

impl FactorKey for char {
    fn find(&self, rule: &Rule) -> Option<FactorId> {
        rule.factor_by_name(&self.to_string())
    }
}

impl FactorKey for &str {
    fn find(&self, rule: &Rule) -> Option<FactorId> {
        rule.factor_by_name(self)
    }
}

impl FactorKey for FactorId {
    fn find(&self, rule: &Rule) -> Option<FactorId> {
        (self.0 < rule.factors().len()).then_some(*self)
    }
}

/// A parsed spec before sizes are known.
struct Spec {
    names: Vec<String>,
    operands: Vec<Vec<Option<usize>>>,
    results: Vec<Vec<Option<usize>>>,
    kinds: Vec<(usize, FactorKind)>,
    sizes: Vec<Option<i64>>,
}

impl Rule {
    /// Builds a rule from einsum notation; `sizes` are per factor in factor
    /// order (may be empty if the spec has a `sizes={…}` clause). Factors are
    /// pass-through unless a `reduction`/`replicate` clause or the chained
    /// [`Rule::reduction`] / [`Rule::replicate`] say otherwise.
    ///
    /// ```text
    /// Rule::einsum("ik,kj->ij", &[32, 64, 256])?.reduction('k', ReductionKind::Sum)
    /// ```
    pub fn einsum(spec: &str, sizes: &[i64]) -> Result<Rule, String> {
        let mut s = parse(spec)?;
        if !sizes.is_empty() {
            if sizes.len() != s.names.len() {
                return Err(format!(
                    "{} sizes given for {} factors",
                    sizes.len(),
                    s.names.len()
                ));
            }
            s.sizes = sizes.iter().map(|&x| Some(x)).collect();
        }
        s.build()
    }

    /// Checks einsum notation without building a rule (sizes come later, from shapes).
    pub fn check_einsum(spec: &str) -> Result<(), String> {
        parse(spec).map(|_| ())
    }

    /// Builds a rule from einsum notation, taking factor sizes from the
    /// operand and result shapes (they must agree; dynamic sizes are allowed).
    pub fn einsum_shapes(
        spec: &str,
        operands: &[Vec<i64>],
        results: &[Vec<i64>],
    ) -> Result<Rule, String> {
        let mut s = parse(spec)?;
        for (what, dims, shapes) in [
            ("operands", &s.operands, operands),
            ("results", &s.results, results),
        ] {
            if dims.len() != shapes.len() {
                return Err(format!(
                    "{spec}: {} {what}, got {}",
                    dims.len(),
                    shapes.len()
                ));
            }
            for (v, (dims, shape)) in dims.iter().zip(shapes).enumerate() {
                if dims.len() != shape.len() {
                    return Err(format!("{spec}: rank of {what} {v} is {}", shape.len()));
                }
                for (f, &size) in dims.iter().zip(shape) {
                    let Some(f) = *f else { continue };
                    match s.sizes[f] {
                        Some(old) if old >= 0 && size >= 0 && old != size => {
                            let n = &s.names[f];
                            return Err(format!("{spec}: factor {n} is {old} and {size}"));
                        }
                        Some(old) if old >= 0 => {}
                        _ => s.sizes[f] = Some(size),
                    }
                }
            }
        }
        s.build()
    }

    /// Makes a factor a reduction of `kind`.
    ///
    /// # Panics
    /// If the rule has no such factor (a typo in a rule definition).
    pub fn reduction(mut self, factor: impl FactorKey, kind: ReductionKind) -> Self {
        let id = expect_factor(&self, &factor);
        self.set_kind(id, FactorKind::Reduction(kind));
        self
    }

    /// Makes a factor must-replicate.
    ///
    /// # Panics
    /// If the rule has no such factor (a typo in a rule definition).
    pub fn replicate(mut self, factor: impl FactorKey) -> Self {
        let id = expect_factor(&self, &factor);
        self.set_kind(id, FactorKind::MustReplicate);
        self
    }
}

fn expect_factor(rule: &Rule, key: &impl FactorKey) -> FactorId {
    key.find(rule)
        .unwrap_or_else(|| panic!("rule {rule} has no factor {key:?}"))
}

impl Spec {
    fn build(self) -> Result<Rule, String> {
        let mut rule = Rule::new();
        for (name, size) in self.names.iter().zip(&self.sizes) {
            let size = size.ok_or_else(|| format!("size of factor {name} unknown"))?;
            rule.add_named_factor(name.clone(), size, FactorKind::PassThrough);
        }
        let dims = |v: &Vec<Option<usize>>| TensorDims(v.iter().map(|f| f.map(FactorId)).collect());
        for v in &self.operands {
            rule.push_operand(dims(v));
        }
        for v in &self.results {
            rule.push_result(dims(v));
        }
        for &(f, kind) in &self.kinds {
            rule.set_kind(FactorId(f), kind);
        }
        Ok(rule)
    }

    fn id(&mut self, name: &str) -> Result<Option<usize>, String> {
        if name == "_" {
            return Ok(None);
        }
        if name.is_empty() || !name.chars().all(|c| c.is_alphanumeric()) {
            return Err(format!("bad factor name `{name}`"));
        }
        Ok(Some(match self.names.iter().position(|n| n == name) {
            Some(i) => i,
            None => {
                self.names.push(name.to_string());
                self.sizes.push(None);
                self.names.len() - 1
            }
        }))
    }
}

const CLAUSES: [&str; 3] = ["reduction=", "replicate=", "sizes="];

fn parse(spec: &str) -> Result<Spec, String> {
    let split = CLAUSES
        .iter()
        .filter_map(|c| spec.find(c))
        .min()
        .unwrap_or(spec.len());
    let (main, clauses) = spec.split_at(split);
    let (lhs, rhs) = main
        .split_once("->")
        .ok_or_else(|| format!("`{spec}`: no `->`"))?;
    let mut s = Spec {
        names: vec![],
        operands: vec![],
        results: vec![],
        kinds: vec![],
        sizes: vec![],
    };
    let clauses = parse_clauses(clauses)?;
    // The sizes clause fixes factor order first.
    for (key, items) in &clauses {
        if key == "sizes" {
            for item in items {
                let (n, v) = item
                    .split_once('=')
                    .ok_or_else(|| format!("bad size `{item}`"))?;
                let f = s.id(n.trim())?.ok_or("`_` has no size")?;
                let v = v.trim();
                s.sizes[f] = Some(if v == "?" {
                    super::rule::DYNAMIC
                } else {
                    v.parse().map_err(|_| format!("bad size `{item}`"))?
                });
            }
        }
    }
    let bracketed = main.contains('[');
    s.operands = parse_side(&mut s, lhs, bracketed)?;
    s.results = parse_side(&mut s, rhs, bracketed)?;
    for (key, items) in &clauses {
        for item in items {
            let (name, kind) = match key.as_str() {
                "reduction" => {
                    let (n, k) = item.split_once(':').unwrap_or((item, "sum"));
                    let k = ReductionKind::from_name(k.trim())
                        .ok_or_else(|| format!("bad reduction kind `{item}`"))?;
                    (n.trim(), FactorKind::Reduction(k))
                }
                "replicate" => (item.as_str(), FactorKind::MustReplicate),
                "moved" => (item.as_str(), FactorKind::Moved),
                _ => continue,
            };
            let f = s.id(name)?.ok_or("`_` is not a factor")?;
            s.kinds.push((f, kind));
        }
    }
    Ok(s)
}

/// `key={a,b,…}` clauses, in order.
fn parse_clauses(mut text: &str) -> Result<Vec<(String, Vec<String>)>, String> {
    let mut out = vec![];
    loop {
        text = text.trim_start();
        if text.is_empty() {
            return Ok(out);
        }
        let (key, rest) = text
            .split_once('=')
            .ok_or_else(|| format!("bad clause `{text}`"))?;
        let rest = rest
            .trim_start()
            .strip_prefix('{')
            .ok_or_else(|| format!("clause {key}: expected `{{`"))?;
        let (body, rest) = rest
            .split_once('}')
            .ok_or_else(|| format!("clause {key}: expected `}}`"))?;
        let items = body
            .split(',')
            .map(|i| i.trim().to_string())
            .filter(|i| !i.is_empty());
        out.push((key.trim().to_string(), items.collect()));
        text = rest;
    }
}

/// One side of `->`: `([a,b],[c])`, `[a,b],[c]`, `()` or compact `ab,c`.
fn parse_side(
    s: &mut Spec,
    side: &str,
    bracketed: bool,
) -> Result<Vec<Vec<Option<usize>>>, String> {
    let side: String = side.chars().filter(|c| !c.is_whitespace()).collect();
    let mut values = vec![];
    if !bracketed {
        if side.is_empty() {
            return Ok(values);
        }
        for v in side.split(',') {
            let dims = v.chars().map(|c| s.id(&c.to_string()));
            values.push(dims.collect::<Result<_, _>>()?);
        }
        return Ok(values);
    }
    let inner = side
        .strip_prefix('(')
        .and_then(|x| x.strip_suffix(')'))
        .unwrap_or(&side);
    let mut rest = inner;
    while !rest.is_empty() {
        let body = rest
            .strip_prefix('[')
            .ok_or_else(|| format!("expected `[` at `{rest}`"))?;
        let (list, tail) = body
            .split_once(']')
            .ok_or_else(|| format!("expected `]` in `{rest}`"))?;
        let dims = list.split(',').filter(|n| !n.is_empty()).map(|n| s.id(n));
        values.push(dims.collect::<Result<_, _>>()?);
        rest = tail.strip_prefix(',').unwrap_or(tail);
    }
    Ok(values)
}

impl fmt::Display for Rule {
    /// `{}` prints the einsum; `{:#}` appends `sizes={…}`.
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let list = |vals: &[TensorDims]| -> String {
            let vals: Vec<String> = vals
                .iter()
                .map(|d| {
                    let names: Vec<&str> =
                        d.0.iter()
                            .map(|x| x.map_or("_", |id| self.factor(id).name.as_str()))
                            .collect();
                    format!("[{}]", names.join(","))
                })
                .collect();
            format!("({})", vals.join(","))
        };
        write!(f, "{} -> {}", list(self.operands()), list(self.results()))?;
        let reds: Vec<String> = self
            .factors()
            .iter()
            .filter_map(|x| match x.kind {
                FactorKind::Reduction(k) => Some(format!("{}:{k}", x.name)),
                _ => None,
            })
            .collect();
        if !reds.is_empty() {
            write!(f, " reduction={{{}}}", reds.join(","))?;
        }
        let reps: Vec<&str> = self
            .factors()
            .iter()
            .filter(|x| x.kind == FactorKind::MustReplicate)
            .map(|x| x.name.as_str())
            .collect();
        if !reps.is_empty() {
            write!(f, " replicate={{{}}}", reps.join(","))?;
        }
        let moved: Vec<&str> = self
            .factors()
            .iter()
            .filter(|x| x.kind == FactorKind::Moved)
            .map(|x| x.name.as_str())
            .collect();
        if !moved.is_empty() {
            write!(f, " moved={{{}}}", moved.join(","))?;
        }
        if f.alternate() {
            let sizes: Vec<String> = self
                .factors()
                .iter()
                .map(|x| match x.size {
                    s if s < 0 => format!("{}=?", x.name),
                    s => format!("{}={s}", x.name),
                })
                .collect();
            write!(f, " sizes={{{}}}", sizes.join(","))?;
        }
        Ok(())
    }
}
