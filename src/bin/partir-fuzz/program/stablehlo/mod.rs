//! Random small StableHLO programs in the generic form JAX prints
//! (`jax.jit(f).lower(...).as_text(debug_info=True)` printed generically, as
//! `partir_jax.stablehlo_text` writes it): quoted op names, `func.func public @main` whose
//! arguments carry JAX's pytree-path locations (`loc("params['w']")`, sometimes also a
//! `partir.name`) and whose results carry `jax.result_info`, private helpers reached by
//! `func.call`; half of them with JAX's debug-info op locations. The ops are the ones JAX
//! emits for training steps: elementwise ops, `dot_general`, `reduce`, broadcasts,
//! transposes, reshapes, converts, compare/select, calls (a helper called twice, nested
//! calls), `while` (fori_loop/scan over stacked weights, stacked outputs),
//! `case`, the gathers and scatters of embeddings, `take_along_axis`, `.at[].add/set` and
//! `segment_sum`, unknown `custom_call`s and `optimization_barrier`.
//!
//! Every program parses by construction (it is run through XLA when executed, so it must also
//! be valid StableHLO). Values stay finite and continuous in the inputs (no division, no
//! `exp` of sums, converts only of exact values), so a partitioned program that reorders sums
//! is judged by its rounding, not by a jump.

mod control;
mod indexing;
mod ops;

use super::Program;
use partir::random::SplitMix64;

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Elem {
    F32,
    I32,
    I1,
}

impl Elem {
    fn name(self) -> &'static str {
        match self {
            Elem::F32 => "f32",
            Elem::I32 => "i32",
            Elem::I1 => "i1",
        }
    }
}

/// A value of the program: its SSA name (`%7`, `%7#1`, `%arg3`), shape and element type.
#[derive(Clone, Debug)]
struct Value {
    name: String,
    shape: Vec<i64>,
    elem: Elem,
}

impl Value {
    fn ty(&self) -> String {
        ty(&self.shape, self.elem)
    }
}

fn ty(shape: &[i64], elem: Elem) -> String {
    let mut text = String::from("tensor<");
    for size in shape {
        text.push_str(&format!("{size}x"));
    }
    text.push_str(elem.name());
    text.push('>');
    text
}

fn ints(values: &[usize]) -> String {
    values
        .iter()
        .map(ToString::to_string)
        .collect::<Vec<_>>()
        .join(", ")
}

/// `array<i64: 0, 2>` (`array<i64>` when empty), as JAX prints dense dim lists.
fn array(values: &[usize]) -> String {
    if values.is_empty() {
        "array<i64>".into()
    } else {
        format!("array<i64: {}>", ints(values))
    }
}

fn types(values: &[Value]) -> String {
    values.iter().map(Value::ty).collect::<Vec<_>>().join(", ")
}

fn names(values: &[Value]) -> String {
    values
        .iter()
        .map(|v| v.name.clone())
        .collect::<Vec<_>>()
        .join(", ")
}

/// `tensor<..>` or `(tensor<..>, tensor<..>)`: a result type list as the generic form prints.
fn result_types(values: &[String]) -> String {
    if values.len() == 1 {
        values[0].clone()
    } else {
        format!("({})", values.join(", "))
    }
}

/// A block being generated: the lines so far and the values it defines. A function body is
/// isolated (nothing from outside is visible); a `while`/`case` region sees what encloses it.
struct Scope {
    lines: Vec<String>,
    values: Vec<Value>,
    isolated: bool,
}

/// Sizes that split 2 and 4 ways, and a few that do not.
const SIZES: &[i64] = &[2, 4, 4, 4, 8, 8, 8, 8, 16, 6, 12];

/// Pytree paths as JAX prints them in argument locations, with the name partir reads.
const PATHS: &[(&str, &str)] = &[
    ("x", "x"),
    ("y", "y"),
    ("params['w']", "params/w"),
    ("params['layers'][0]['w']", "params/layers/0/w"),
    ("params['embed']", "params/embed"),
    ("opt_state[0].mu['w']", "opt_state/0/mu/w"),
];

/// Paths of integer arguments: ids, and scalars (a flag, a step count).
const ID_PATHS: &[(&str, &str)] = &[
    ("batch['tokens']", "batch/tokens"),
    ("ids", "ids"),
    ("labels", "labels"),
];
const SCALAR_PATHS: &[(&str, &str)] = &[
    ("flag", "flag"),
    ("index", "index"),
    ("opt_state[0].count", "opt_state/0/count"),
];

struct Builder<'r> {
    random: &'r mut SplitMix64,
    /// @main's arguments: the block argument, its location text and `partir.name` if any.
    args: Vec<(Value, String, Option<String>)>,
    scopes: Vec<Scope>,
    /// Private functions, rendered.
    functions: Vec<String>,
    named: Vec<(String, Vec<i64>)>,
    next: usize,
    next_function: usize,
    /// Unknown custom call targets, and the rule a schedule may give each.
    custom_calls: Vec<(String, String)>,
    /// How deep calls and regions nest here (bounded so programs stay small).
    depth: usize,
    /// Whether ops carry JAX's debug-info locations (`as_text(debug_info=True)`).
    debug_info: bool,
}

impl Builder<'_> {
    fn fresh(&mut self) -> String {
        self.next += 1;
        format!("%{}", self.next)
    }

    fn fresh_arg(&mut self) -> String {
        self.next += 1;
        format!("%arg{}", self.next)
    }

    fn size(&mut self) -> i64 {
        *self.random.pick(SIZES)
    }

    fn shape(&mut self, rank: usize) -> Vec<i64> {
        (0..rank).map(|_| self.size()).collect()
    }

    fn indent(&self) -> String {
        " ".repeat(2 + 2 * self.scopes.len())
    }

    fn scope(&mut self) -> &mut Scope {
        self.scopes.last_mut().expect("a scope")
    }

    /// Inside a helper function nothing of @main is visible and no argument can be added.
    fn in_helper(&self) -> bool {
        self.scopes.iter().skip(1).any(|scope| scope.isolated)
    }

    fn visible(&self) -> Vec<Value> {
        let mut found = Vec::new();
        for scope in self.scopes.iter().rev() {
            found.extend(scope.values.iter().cloned());
            if scope.isolated {
                break;
            }
        }
        found
    }

    /// Appends an op line (already holding `{result}` where the result name goes).
    fn push(&mut self, line: String) {
        let indent = self.indent();
        self.scope().lines.push(format!("{indent}{line}"));
    }

    /// Defines one value by an op: `op` gets the result name and gives the rest of the line.
    /// Ops are sometimes named (`{partir.name = "tN"}`), for schedules.
    fn define(&mut self, shape: Vec<i64>, elem: Elem, op: impl FnOnce(&str) -> String) -> Value {
        let name = self.fresh();
        let mut line = op(&name);
        // Mostly in @main's body; now and then inside a loop, a branch or a helper (inlined
        // once per call: one name, several values).
        let chance = if self.scopes.len() == 1 { 0.12 } else { 0.04 };
        if elem == Elem::F32 && self.random.chance(chance) {
            let label = format!("t{}", self.next);
            line = name_op(&line, &label);
            self.named.push((label, shape.clone()));
        }
        let line = self.locate(line);
        self.push(format!("{name} = {line}"));
        let value = Value { name, shape, elem };
        self.scope().values.push(value.clone());
        value
    }

    /// With `debug_info`, the location JAX gives an op: its name stack over the Python line
    /// (`loc("jit(step)/dot_general"("/src/model.py":41:12))`), sometimes under a call site.
    /// Diagnostics then point at the Python line, which must still count as located.
    fn locate(&mut self, line: String) -> String {
        if !self.debug_info {
            return line;
        }
        let op = line
            .split('"')
            .nth(1)
            .and_then(|name| name.rsplit('.').next())
            .unwrap_or("op")
            .to_string();
        let scope = *self.random.pick(&["", "layers/0/", "mlp/", "attn/"]);
        let source = format!(
            "\"/src/model.py\":{}:{}",
            1 + self.random.below(300),
            1 + self.random.below(40)
        );
        let named = format!("\"jit(step)/{scope}{op}\"({source})");
        if self.random.chance(0.3) {
            let caller = format!("\"/src/train.py\":{}:5", 1 + self.random.below(90));
            format!("{line} loc(callsite({named} at {caller}))")
        } else {
            format!("{line} loc({named})")
        }
    }

    /// Defines an op of several results (`%n:3 = ...`), each becoming a value.
    fn define_many(&mut self, results: &[(Vec<i64>, Elem)], line: String) -> Vec<Value> {
        let name = self.fresh();
        let line = self.locate(line);
        self.push(format!("{name}:{} = {line}", results.len()));
        let values: Vec<Value> = results
            .iter()
            .enumerate()
            .map(|(index, (shape, elem))| Value {
                name: format!("{name}#{index}"),
                shape: shape.clone(),
                elem: *elem,
            })
            .collect();
        self.scope().values.extend(values.iter().cloned());
        values
    }

    /// A new @main argument (a pytree leaf). Inside a helper, a constant instead.
    fn argument(&mut self, shape: Vec<i64>, elem: Elem) -> Value {
        if self.in_helper() {
            return self.splat(&shape, elem, "1");
        }
        let name = self.fresh_arg();
        let index = self.args.len();
        let (path, tree) = *self.random.pick(match (elem, shape.is_empty()) {
            (Elem::F32, _) => PATHS,
            (_, false) => ID_PATHS,
            (_, true) => SCALAR_PATHS,
        });
        // Unique paths: the leaf's index goes into its last key, as a list index would.
        let (location, partir_name) = match self.random.below(10) {
            // An argument JAX left no path for (a positional argument): `argN` in schedules.
            0 => (String::new(), format!("arg{index}")),
            _ if path.ends_with("']") => (
                format!("{}{index}']", &path[..path.len() - 2]),
                format!("{tree}{index}"),
            ),
            _ if path.ends_with(']') || !path.contains('.') => {
                (format!("{path}{index}"), format!("{tree}{index}"))
            }
            // `opt_state[0].count` keeps its key; the index goes into the first one.
            _ => (
                path.replacen("[0]", &format!("[{index}]"), 1),
                tree.replacen("/0/", &format!("/{index}/"), 1),
            ),
        };
        // JAX's own text has only the location; partir_jax.stablehlo_text adds partir.name.
        let attribute =
            (!location.is_empty() && self.random.chance(0.3)).then(|| partir_name.clone());
        self.named.push((partir_name, shape.clone()));
        let value = Value { name, shape, elem };
        self.args.push((value.clone(), location, attribute));
        self.scopes[0].values.push(value.clone());
        value
    }

    /// A visible f32 value of rank in `ranks` (else a new argument of such a rank).
    /// A visible f32 value of `shape`, or a new argument of it.
    fn value_shaped(&mut self, shape: Vec<i64>) -> Value {
        let candidates: Vec<Value> = self
            .visible()
            .into_iter()
            .filter(|v| v.elem == Elem::F32 && v.shape == shape)
            .collect();
        if !candidates.is_empty() && self.random.chance(0.7) {
            return self.random.pick(&candidates).clone();
        }
        self.argument(shape, Elem::F32)
    }

    fn value(&mut self, ranks: std::ops::RangeInclusive<usize>) -> Value {
        let candidates: Vec<Value> = self
            .visible()
            .into_iter()
            .filter(|v| v.elem == Elem::F32 && ranks.contains(&v.shape.len()))
            .collect();
        if !candidates.is_empty() && self.random.chance(0.85) {
            return self.random.pick(&candidates).clone();
        }
        let (low, high) = (*ranks.start(), *ranks.end());
        let rank = low + self.random.below(high - low + 1);
        let shape = self.shape(rank);
        self.argument(shape, Elem::F32)
    }

    /// A visible value of exactly this shape and type, else a new argument.
    fn value_of(&mut self, shape: &[i64], elem: Elem) -> Value {
        let candidates: Vec<Value> = self
            .visible()
            .into_iter()
            .filter(|v| v.elem == elem && v.shape == shape)
            .collect();
        if !candidates.is_empty() && self.random.chance(0.7) {
            return self.random.pick(&candidates).clone();
        }
        self.argument(shape.to_vec(), elem)
    }

    fn constant(&mut self, elem: Elem, literal: &str) -> Value {
        let t = ty(&[], elem);
        self.define(Vec::new(), elem, |_| {
            format!("\"stablehlo.constant\"() <{{value = dense<{literal}> : {t}}}> : () -> {t}")
        })
    }

    /// A scalar constant broadcast to `shape`, as JAX writes `x * 2.0`.
    fn splat(&mut self, shape: &[i64], elem: Elem, literal: &str) -> Value {
        let literal = match (elem, literal) {
            (Elem::F32, "1") => "1.000000e+00",
            (Elem::F32, "0") => "0.000000e+00",
            (Elem::I1, _) => "true",
            _ => literal,
        };
        let scalar = self.constant(elem, literal);
        if shape.is_empty() {
            return scalar;
        }
        self.broadcast_to(&scalar, shape, &[])
    }

    fn broadcast_to(&mut self, value: &Value, shape: &[i64], dims: &[usize]) -> Value {
        let (source, from, to) = (value.name.clone(), value.ty(), ty(shape, value.elem));
        let dims = array(dims);
        self.define(shape.to_vec(), value.elem, |_| {
            format!("\"stablehlo.broadcast_in_dim\"({source}) <{{broadcast_dimensions = {dims}}}> : ({from}) -> {to}")
        })
    }

    /// One random op (or small pattern of ops) in the current scope.
    fn step(&mut self) {
        let control = self.depth < 2;
        match self.random.below(100) {
            0..=13 => self.binary(),
            14..=21 => self.unary(),
            22..=33 => self.dot_general(),
            34..=41 => self.reduce(),
            42..=45 => self.broadcast(),
            46..=49 => self.transpose(),
            50..=53 => self.reshape(),
            54..=56 => self.convert(),
            57..=60 => self.compare_select(),
            61..=65 if control => self.call(),
            66..=70 if control && !self.in_helper() => self.while_loop(),
            71..=74 if control && !self.in_helper() => self.case(),
            75..=84 if !self.in_helper() => self.gather(),
            85..=91 if !self.in_helper() => self.scatter(),
            92..=94 => self.custom_call(),
            95..=96 => self.barrier(),
            97..=99 => self.along_dim(),
            _ => self.unary(),
        }
    }
}

/// Adds `{partir.name = "label"}` (a discardable attribute) before the line's type signature.
fn name_op(line: &str, label: &str) -> String {
    let at = line.rfind(" : (").expect("a generic op's signature");
    format!(
        "{} {{partir.name = \"{label}\"}}{}",
        &line[..at],
        &line[at..]
    )
}

/// Renders a function in the generic form JAX prints.
fn function(
    name: &str,
    public: bool,
    params: &[(Value, String, Option<String>)],
    results: &[Value],
    result_info: &[String],
    lines: &[String],
) -> String {
    let param_types: Vec<String> = params.iter().map(|(v, _, _)| v.ty()).collect();
    let out_types: Vec<String> = results.iter().map(Value::ty).collect();
    let mut properties = Vec::new();
    if params.iter().any(|(_, _, n)| n.is_some()) || !public {
        let attrs: Vec<String> = params
            .iter()
            .map(|(_, _, n)| match n {
                Some(n) => format!("{{partir.name = \"{n}\"}}"),
                None => "{}".into(),
            })
            .collect();
        properties.push(format!("arg_attrs = [{}]", attrs.join(", ")));
    }
    properties.push(format!(
        "function_type = ({}) -> {}",
        param_types.join(", "),
        result_types(&out_types)
    ));
    let infos: Vec<String> = result_info
        .iter()
        .map(|info| {
            if info.is_empty() {
                "{}".into()
            } else {
                format!("{{jax.result_info = \"{info}\"}}")
            }
        })
        .collect();
    properties.push(format!("res_attrs = [{}]", infos.join(", ")));
    properties.push(format!("sym_name = \"{name}\""));
    properties.push(format!(
        "sym_visibility = \"{}\"",
        if public { "public" } else { "private" }
    ));
    let block_args: Vec<String> = params
        .iter()
        .map(|(v, location, _)| {
            if location.is_empty() {
                format!("{}: {}", v.name, v.ty())
            } else {
                format!("{}: {} loc(\"{location}\")", v.name, v.ty())
            }
        })
        .collect();
    let mut text = format!(
        "  \"func.func\"() <{{{}}}> ({{\n  ^bb0({}):\n",
        properties.join(", "),
        block_args.join(", ")
    );
    for line in lines {
        text.push_str(line);
        text.push('\n');
    }
    text.push_str(&format!(
        "    \"func.return\"({}) : ({}) -> ()\n  }}) : () -> ()\n",
        names(results),
        out_types.join(", ")
    ));
    text
}

/// A random program of 2 to `max_ops` steps.
pub fn generate(random: &mut SplitMix64, max_ops: usize) -> Program {
    let mut builder = Builder {
        random,
        args: Vec::new(),
        scopes: vec![Scope {
            lines: Vec::new(),
            values: Vec::new(),
            isolated: true,
        }],
        functions: Vec::new(),
        named: Vec::new(),
        next: 0,
        next_function: 0,
        custom_calls: Vec::new(),
        depth: 0,
        debug_info: false,
    };
    builder.debug_info = builder.random.chance(0.5);
    let rank = 1 + builder.random.below(3);
    let shape = builder.shape(rank);
    builder.argument(shape, Elem::F32);
    let steps = 2 + builder.random.below(max_ops.max(3) - 1);
    for _ in 0..steps {
        builder.step();
    }
    let main = builder.scopes.pop().expect("main's scope");
    // Results: the last f32 value, sometimes others (an argument returned as is, an integer).
    let returnable: Vec<Value> = main
        .values
        .iter()
        .filter(|v| v.elem != Elem::I1)
        .cloned()
        .collect();
    let last = main
        .values
        .iter()
        .rev()
        .find(|v| v.elem == Elem::F32)
        .cloned()
        .unwrap_or_else(|| returnable[0].clone());
    let mut results = vec![last];
    for _ in 0..builder.random.below(3) {
        results.push(builder.random.pick(&returnable).clone());
    }
    let info: Vec<String> = if results.len() == 1 {
        vec!["result".into()]
    } else {
        (0..results.len()).map(|i| format!("result[{i}]")).collect()
    };
    let module = if builder.random.chance(0.5) {
        "jit_step"
    } else {
        "jit_f"
    };
    let mut text = format!("\"builtin.module\"() <{{sym_name = \"{module}\"}}> ({{\n");
    text.push_str(&function(
        "main",
        true,
        &builder.args,
        &results,
        &info,
        &main.lines,
    ));
    for helper in &builder.functions {
        text.push_str(helper);
    }
    text.push_str("}) {mhlo.num_partitions = 1 : i32, mhlo.num_replicas = 1 : i32} : () -> ()\n");
    let (names, shapes) = builder.named.into_iter().unzip();
    Program {
        text,
        names,
        shapes,
        executable: builder.custom_calls.is_empty(),
        rules: builder.custom_calls,
    }
}
