//! Random small linalg programs, as MLIR text: a `@main` over f32 tensors built from the ops
//! JAX-imported training steps use (matmuls, elementwise and reduction generics, fills,
//! transposes, broadcasts, reshapes, slices, concats, pads) plus the shapes that broke partir
//! before (tiled values read inside an `scf.for` or a `linalg.generic` body, rank-reducing
//! slices, helper functions called from `@main`, accumulators that are not a fill of zero).
//!
//! Every program parses and verifies by construction; what partir does with it is the test.

mod ops;
/// The StableHLO generator (`--dialect stablehlo`): JAX-style programs in generic form.
pub mod stablehlo;

use partir::random::SplitMix64;

/// A tensor value of the program.
#[derive(Clone, Debug)]
struct Tensor {
    name: String,
    shape: Vec<i64>,
}

impl Tensor {
    fn ty(&self) -> String {
        tensor_type(&self.shape)
    }
}

fn tensor_type(shape: &[i64]) -> String {
    let mut text = String::from("tensor<");
    for size in shape {
        text.push_str(&format!("{size}x"));
    }
    text.push_str("f32>");
    text
}

fn dims(rank: usize) -> String {
    (0..rank)
        .map(|d| format!("d{d}"))
        .collect::<Vec<_>>()
        .join(", ")
}

fn map(rank: usize, results: &[usize]) -> String {
    let results: Vec<String> = results.iter().map(|d| format!("d{d}")).collect();
    format!("affine_map<({}) -> ({})>", dims(rank), results.join(", "))
}

fn identity(rank: usize) -> String {
    map(rank, &(0..rank).collect::<Vec<_>>())
}

fn iterators(kinds: &[&str]) -> String {
    kinds
        .iter()
        .map(|kind| format!("\"{kind}\""))
        .collect::<Vec<_>>()
        .join(", ")
}

/// A generated program: its text and the names a schedule can select.
pub struct Program {
    pub text: String,
    /// `partir.name`s of @main's arguments (or `argN`) and of named ops.
    pub names: Vec<String>,
    /// The shapes of the named values, by name.
    pub shapes: Vec<Vec<i64>>,
    /// Whether `partir verify` can run it (not with custom calls nobody implements).
    pub executable: bool,
    /// Custom call targets partir has no rule for, with a rule a schedule's `[rules]` may give.
    pub rules: Vec<(String, String)>,
}

struct Builder<'r> {
    random: &'r mut SplitMix64,
    args: Vec<(Tensor, Option<String>)>,
    body: Vec<String>,
    values: Vec<Tensor>,
    helpers: Vec<String>,
    named: Vec<(String, Vec<i64>)>,
    next: usize,
}

/// Sizes that split 2 and 4 ways, and a few that do not.
const SIZES: &[i64] = &[2, 4, 4, 4, 8, 8, 8, 8, 16, 16, 6, 12];

impl Builder<'_> {
    fn fresh(&mut self) -> String {
        self.next += 1;
        format!("%v{}", self.next)
    }

    fn size(&mut self) -> i64 {
        *self.random.pick(SIZES)
    }

    fn shape(&mut self, rank: usize) -> Vec<i64> {
        (0..rank).map(|_| self.size()).collect()
    }

    /// A new @main argument; most have a `partir.name`.
    fn argument(&mut self, shape: Vec<i64>) -> Tensor {
        let index = self.args.len();
        let tensor = Tensor {
            name: format!("%arg{index}"),
            shape,
        };
        let name = if self.random.chance(0.8) {
            let stems = ["x", "w", "b", "params/w", "params/layers/0/w", "opt/m", "y"];
            Some(format!("{}{index}", self.random.pick(&stems)))
        } else {
            None
        };
        self.named.push((
            name.clone().unwrap_or(format!("arg{index}")),
            tensor.shape.clone(),
        ));
        self.args.push((tensor.clone(), name));
        self.values.push(tensor.clone());
        tensor
    }

    /// An existing value of rank `rank` (or any rank from 1 when None), else a new argument.
    fn value(&mut self, rank: Option<usize>) -> Tensor {
        let candidates: Vec<Tensor> = self
            .values
            .iter()
            .filter(|value| match rank {
                Some(rank) => value.shape.len() == rank,
                None => !value.shape.is_empty(),
            })
            .cloned()
            .collect();
        if !candidates.is_empty() && self.random.chance(0.85) {
            return self.random.pick(&candidates).clone();
        }
        let rank = rank.unwrap_or(1 + self.random.below(3));
        let shape = self.shape(rank);
        self.argument(shape)
    }

    /// An existing value of exactly `shape`, else a new argument.
    fn value_of(&mut self, shape: &[i64]) -> Tensor {
        let candidates: Vec<Tensor> = self
            .values
            .iter()
            .filter(|value| value.shape == shape)
            .cloned()
            .collect();
        if !candidates.is_empty() && self.random.chance(0.7) {
            return self.random.pick(&candidates).clone();
        }
        self.argument(shape.to_vec())
    }

    /// Appends an op line defining a new value of `shape`; sometimes names it.
    fn define(&mut self, shape: Vec<i64>, op: impl FnOnce(&str) -> String) -> Tensor {
        let name = self.fresh();
        let mut line = op(&name);
        if self.random.chance(0.2) {
            let label = format!("t{}", self.next);
            if let Some(named) = attach_name(&line, &label) {
                line = named;
                self.named.push((label, shape.clone()));
            }
        }
        self.body.push(line);
        let tensor = Tensor { name, shape };
        self.values.push(tensor.clone());
        tensor
    }

    fn empty(&mut self, shape: &[i64]) -> String {
        let name = self.fresh();
        self.body.push(format!(
            "    {name} = tensor.empty() : {}",
            tensor_type(shape)
        ));
        name
    }

    fn fill(&mut self, shape: &[i64], value: &str) -> Tensor {
        let empty = self.empty(shape);
        let scalar = self.fresh();
        self.body
            .push(format!("    {scalar} = arith.constant {value} : f32"));
        let ty = tensor_type(shape);
        self.define(shape.to_vec(), |name| {
            format!("    {name} = linalg.fill ins({scalar} : f32) outs({empty} : {ty}) -> {ty}")
        })
    }

    /// An accumulator of `shape` for a sum: usually a fill of 0, sometimes something else (a
    /// fused bias, a fill of 1) that partir must combine after the loop.
    fn sum_init(&mut self, shape: &[i64]) -> Tensor {
        match self.random.below(10) {
            0..=5 => self.fill(shape, "0.000000e+00"),
            6 => self.fill(shape, "1.000000e+00"),
            _ => self.value_of(shape),
        }
    }
}

/// `[[0], [1, 2]]`-style groups over `rank` dims, dims `at` and `at+1` in one group (merged by
/// a collapse, split from one by an expand).
fn reassociation(rank: usize, at: usize) -> String {
    let mut groups = Vec::new();
    let mut dim = 0;
    while dim < rank {
        if dim == at {
            groups.push(format!("[{}, {}]", dim, dim + 1));
            dim += 2;
        } else {
            groups.push(format!("[{dim}]"));
            dim += 1;
        }
    }
    format!("[{}]", groups.join(", "))
}

/// `{partir.name = "label"}` on an op whose custom syntax takes an attribute dictionary right
/// after its name (the named linalg ops); None for the others.
fn attach_name(line: &str, label: &str) -> Option<String> {
    ["linalg.matmul ", "linalg.batch_matmul ", "linalg.fill "]
        .iter()
        .find(|op| line.contains(*op))
        .map(|op| line.replacen(op, &format!("{op}{{partir.name = \"{label}\"}} "), 1))
}

/// A random program of 2 to `max_ops` ops.
pub fn generate(random: &mut SplitMix64, max_ops: usize) -> Program {
    let mut builder = Builder {
        random,
        args: Vec::new(),
        body: Vec::new(),
        values: Vec::new(),
        helpers: Vec::new(),
        named: Vec::new(),
        next: 0,
    };
    let first_rank = 1 + builder.random.below(3);
    let shape = builder.shape(first_rank);
    builder.argument(shape);
    let ops = 2 + builder.random.below(max_ops.max(3) - 1);
    for _ in 0..ops {
        match builder.random.below(100) {
            0..=13 => builder.matmul(),
            14..=19 => builder.batch_matmul(),
            20..=31 => builder.binary(),
            32..=39 => builder.unary(),
            40..=51 => builder.reduction(),
            52..=56 => builder.transpose(),
            57..=60 => builder.broadcast(),
            61..=67 => builder.reshape(),
            68..=72 => builder.extract_slice(),
            73..=75 => builder.insert_slice(),
            76..=79 => builder.concat(),
            80..=82 => builder.pad(),
            83..=86 => builder.scf_for(),
            87..=90 => builder.extract_in_body(),
            91..=93 => builder.iota(),
            94..=96 => builder.call(),
            _ => builder.constant(),
        }
    }
    // Results: the last value, and sometimes others (an argument returned as is, too).
    let mut results = vec![builder.values.last().expect("at least one value").clone()];
    for _ in 0..builder.random.below(3) {
        let value = builder.random.pick(&builder.values).clone();
        results.push(value);
    }
    let args: Vec<String> = builder
        .args
        .iter()
        .map(|(tensor, name)| match name {
            Some(name) => format!(
                "{}: {} {{partir.name = \"{name}\"}}",
                tensor.name,
                tensor.ty()
            ),
            None => format!("{}: {}", tensor.name, tensor.ty()),
        })
        .collect();
    let result_types: Vec<String> = results.iter().map(Tensor::ty).collect();
    let result_names: Vec<String> = results.iter().map(|r| r.name.clone()).collect();
    let mut text = String::from("module {\n");
    for helper in &builder.helpers {
        text.push_str(helper);
        text.push('\n');
    }
    text.push_str(&format!(
        "  func.func @main({}) -> ({}) {{\n",
        args.join(", "),
        result_types.join(", ")
    ));
    for line in &builder.body {
        text.push_str(line);
        text.push('\n');
    }
    text.push_str(&format!(
        "    return {} : {}\n  }}\n}}\n",
        result_names.join(", "),
        result_types.join(", ")
    ));
    let (names, shapes) = builder.named.into_iter().unzip();
    Program {
        text,
        names,
        shapes,
        executable: true,
        rules: Vec::new(),
    }
}
