//! Ops with regions or callees: private functions and `func.call` (a helper called twice,
//! calls nested in helpers and loop bodies), `stablehlo.while` as `fori_loop`/`scan` lower
//! (a counter, carried values, stacked `[L, ...]` weights indexed by the counter, values
//! captured from above), `stablehlo.case` (branches capturing outer values), unknown
//! `custom_call`s and `optimization_barrier`.

use super::*;

/// Names JAX gives private functions.
const HELPERS: &[&str] = &["_inner", "closed_call", "relu", "_where", "silu", "_take"];

/// Targets no partir rule knows: partir must warn about them and carry on.
const TARGETS: &[&str] = &["my_fused_kernel", "lapack_sfuzz_ffi", "cu_fuzz_op"];

impl Builder<'_> {
    fn open(&mut self, isolated: bool, values: Vec<Value>) {
        self.depth += 1;
        self.scopes.push(Scope {
            lines: Vec::new(),
            values,
            isolated,
        });
    }

    fn close(&mut self) -> Scope {
        self.depth -= 1;
        self.scopes.pop().expect("an open scope")
    }

    /// `({` region `}, {` region `})`: each region's block arguments and lines.
    fn regions(&self, regions: &[(Vec<Value>, Vec<String>)]) -> String {
        let indent = self.indent();
        let rendered: Vec<String> = regions
            .iter()
            .map(|(args, lines)| {
                let mut text = String::from("{\n");
                if !args.is_empty() {
                    let args: Vec<String> = args
                        .iter()
                        .map(|v| format!("{}: {}", v.name, v.ty()))
                        .collect();
                    text.push_str(&format!("{indent}^bb0({}):\n", args.join(", ")));
                }
                for line in lines {
                    text.push_str(line);
                    text.push('\n');
                }
                text.push_str(&indent);
                text.push('}');
                text
            })
            .collect();
        format!("({})", rendered.join(", "))
    }

    /// Fresh block arguments of the values' types.
    fn block_args(&mut self, like: &[Value]) -> Vec<Value> {
        like.iter()
            .map(|v| Value {
                name: self.fresh_arg(),
                shape: v.shape.clone(),
                elem: v.elem,
            })
            .collect()
    }

    fn ret(&mut self, values: &[Value]) {
        self.push(format!(
            "\"stablehlo.return\"({}) : ({}) -> ()",
            names(values),
            types(values)
        ));
    }

    /// A private function of 1 or 2 parameters and 1 to 3 steps, called once or twice.
    pub(super) fn call(&mut self) {
        let params: Vec<Value> = (0..1 + self.random.below(2))
            .map(|_| self.value(1..=3))
            .collect();
        self.next_function += 1;
        let name = format!("{}_{}", self.random.pick(HELPERS), self.next_function);
        let args = self.block_args(&params);
        self.open(true, args.clone());
        for _ in 0..1 + self.random.below(3) {
            self.step();
        }
        let body = self.close();
        let floats: Vec<Value> = body
            .values
            .iter()
            .filter(|v| v.elem == Elem::F32)
            .cloned()
            .collect();
        let mut results = vec![floats.last().cloned().unwrap_or_else(|| args[0].clone())];
        if floats.len() > 1 && self.random.chance(0.3) {
            results.push(self.random.pick(&floats).clone());
        }
        let params_text: Vec<(Value, String, Option<String>)> = args
            .iter()
            .map(|v| (v.clone(), String::new(), None))
            .collect();
        let infos = vec![String::new(); results.len()];
        self.functions.push(function(
            &name,
            false,
            &params_text,
            &results,
            &infos,
            &body.lines,
        ));
        let outs: Vec<(Vec<i64>, Elem)> =
            results.iter().map(|v| (v.shape.clone(), v.elem)).collect();
        let out_types: Vec<String> = results.iter().map(Value::ty).collect();
        let calls = if self.random.chance(0.4) { 2 } else { 1 };
        for call in 0..calls {
            let operands: Vec<Value> = if call == 0 {
                params.clone()
            } else {
                params
                    .iter()
                    .map(|p| self.value_of(&p.shape, Elem::F32))
                    .collect()
            };
            let line = format!(
                "\"func.call\"({}) <{{callee = @{name}}}> : ({}) -> {}",
                names(&operands),
                types(&operands),
                result_types(&out_types)
            );
            if outs.len() == 1 {
                let (shape, elem) = outs[0].clone();
                self.define(shape, elem, |_| line);
            } else {
                self.define_many(&outs, line);
            }
        }
    }

    /// `lax.fori_loop`/`lax.scan`: a counter from 0 to L, a carried value updated by a layer
    /// (a slice `[i]` of stacked weights, carried or captured), other carried or captured
    /// values, sometimes stacked outputs `ys` written row by row, and sometimes a call in the
    /// body.
    pub(super) fn while_loop(&mut self) {
        let x = self.value(1..=3);
        let width = *x.shape.last().expect("rank at least 1");
        let trips = 2 + self.random.below(2) as i64;
        let stacked = self
            .random
            .chance(0.6)
            .then(|| self.argument(vec![trips, width, width], Elem::F32));
        let stacked_carried = stacked.is_some() && self.random.chance(0.6);
        let extra = self.random.chance(0.3).then(|| self.value(1..=3));
        let zero = self.constant(Elem::I32, "0");
        // Operands in JAX's order: scanned-over constants, the counter, the carry.
        let mut operands = Vec::new();
        if stacked_carried {
            operands.push(stacked.clone().expect("stacked"));
        }
        let counter_at = operands.len();
        operands.push(zero);
        let x_at = operands.len();
        operands.push(x.clone());
        let extra_at = extra.map(|extra| {
            operands.push(extra);
            operands.len() - 1
        });
        // lax.scan's stacked outputs `ys`: zeros [L, ...x], row i written at iteration i.
        let ys_at = self.random.chance(0.3).then(|| {
            let mut shape = vec![trips];
            shape.extend(&x.shape);
            let zeros = self.splat(&shape, Elem::F32, "0");
            operands.push(zeros);
            operands.len() - 1
        });

        // The condition: counter < L.
        let cond_args = self.block_args(&operands);
        self.open(false, Vec::new());
        let bound = self.constant(Elem::I32, &trips.to_string());
        let (c, b) = (cond_args[counter_at].name.clone(), bound.name.clone());
        let it = ty(&[], Elem::I32);
        let pt = ty(&[], Elem::I1);
        let flag = self.define(Vec::new(), Elem::I1, |_| {
            format!("\"stablehlo.compare\"({c}, {b}) <{{compare_type = #stablehlo<comparison_type SIGNED>, comparison_direction = #stablehlo<comparison_direction LT>}}> : ({it}, {it}) -> {pt}")
        });
        self.ret(&[flag]);
        let cond = self.close();

        // The body: block arguments are visible, and so is everything above (captures).
        let body_args = self.block_args(&operands);
        let carried: Vec<Value> = body_args
            .iter()
            .filter(|v| v.elem == Elem::F32 && v.shape.len() < 3)
            .cloned()
            .collect();
        self.open(false, carried);
        let mut current = body_args[x_at].clone();
        if let Some(stacked) = &stacked {
            let weights = if stacked_carried {
                body_args[0].clone()
            } else {
                stacked.clone()
            };
            let layer = self.layer(&weights, &body_args[counter_at]);
            current = self.contract_last(&current, &layer);
            current = self.unary_of(&current);
        }
        for _ in 0..self.random.below(3) {
            if self.random.chance(0.3) {
                self.step();
            } else if self.random.chance(0.5) {
                let other = self.value_of(&current.shape, Elem::F32);
                current = self.binary_of(&current, &other);
            } else {
                current = self.unary_of(&current);
            }
        }
        let one = self.constant(Elem::I32, "1");
        let (c, o) = (body_args[counter_at].name.clone(), one.name.clone());
        let next = self.define(Vec::new(), Elem::I32, |_| {
            format!("\"stablehlo.add\"({c}, {o}) : ({it}, {it}) -> {it}")
        });
        let mut yielded = body_args.clone();
        yielded[counter_at] = next;
        yielded[x_at] = current;
        if let Some(at) = extra_at.filter(|_| self.random.chance(0.7)) {
            let other = self.value_of(&yielded[at].shape, Elem::F32);
            yielded[at] = self.binary_of(&yielded[at].clone(), &other);
        }
        if let Some(at) = ys_at {
            yielded[at] = self.write_row(&body_args[at], &yielded[x_at], &body_args[counter_at]);
        }
        self.ret(&yielded);
        let body = self.close();

        let regions = self.regions(&[(cond_args, cond.lines), (body_args, body.lines)]);
        let all = types(&operands);
        let outs: Vec<(Vec<i64>, Elem)> =
            operands.iter().map(|v| (v.shape.clone(), v.elem)).collect();
        let line = format!(
            "\"stablehlo.while\"({}) {regions} : ({all}) -> ({all})",
            names(&operands)
        );
        let results = self.define_many(&outs, line);
        // The loop's result (and its stacked outputs) is what later ops most likely read.
        self.scope().values.push(results[x_at].clone());
        if let Some(at) = ys_at {
            self.scope().values.push(results[at].clone());
        }
    }

    /// `w[i]` of stacked weights `[L, d, d]`: a dynamic_slice at the counter, reshaped.
    fn layer(&mut self, weights: &Value, counter: &Value) -> Value {
        let width = weights.shape[1];
        let zero = self.constant(Elem::I32, "0");
        let (w, i, z) = (
            weights.name.clone(),
            counter.name.clone(),
            zero.name.clone(),
        );
        let (wt, it) = (weights.ty(), counter.ty());
        let slice_t = ty(&[1, width, width], Elem::F32);
        let slice = self.define(vec![1, width, width], Elem::F32, |_| {
            format!("\"stablehlo.dynamic_slice\"({w}, {i}, {z}, {z}) <{{slice_sizes = array<i64: 1, {width}, {width}>}}> : ({wt}, {it}, {it}, {it}) -> {slice_t}")
        });
        let (s, lt) = (slice.name.clone(), ty(&[width, width], Elem::F32));
        self.define(vec![width, width], Elem::F32, |_| {
            format!("\"stablehlo.reshape\"({s}) : ({slice_t}) -> {lt}")
        })
    }

    /// `ys.at[i].set(y)` as scan writes it: a dynamic_update_slice of `y[None]` at row `i`.
    fn write_row(&mut self, ys: &Value, y: &Value, counter: &Value) -> Value {
        let mut row = vec![1];
        row.extend(&y.shape);
        let (source, from, to) = (y.name.clone(), y.ty(), ty(&row, Elem::F32));
        let update = self.define(row, Elem::F32, |_| {
            format!("\"stablehlo.reshape\"({source}) : ({from}) -> {to}")
        });
        let zero = self.constant(Elem::I32, "0");
        let mut starts = vec![counter.name.clone()];
        starts.extend(std::iter::repeat_n(zero.name.clone(), y.shape.len()));
        let index_types = vec![counter.ty(); starts.len()].join(", ");
        let (b, u, bt, ut) = (ys.name.clone(), update.name.clone(), ys.ty(), update.ty());
        let starts = starts.join(", ");
        self.define(ys.shape.clone(), Elem::F32, |_| {
            format!("\"stablehlo.dynamic_update_slice\"({b}, {u}, {starts}) : ({bt}, {ut}, {index_types}) -> {bt}")
        })
    }

    /// `x @ w` over x's last dim: the shape of x.
    fn contract_last(&mut self, x: &Value, w: &Value) -> Value {
        let last = x.shape.len() - 1;
        let (a, b, at, bt) = (x.name.clone(), w.name.clone(), x.ty(), w.ty());
        self.define(x.shape.clone(), Elem::F32, |_| {
            format!("\"stablehlo.dot_general\"({a}, {b}) <{{dot_dimension_numbers = #stablehlo.dot<lhs_contracting_dimensions = [{last}], rhs_contracting_dimensions = [0]>, precision_config = [#stablehlo<precision DEFAULT>, #stablehlo<precision DEFAULT>]}}> : ({at}, {bt}) -> {at}")
        })
    }

    /// `lax.cond`/`lax.switch` on an integer argument, each branch computing from a value
    /// captured from above.
    pub(super) fn case(&mut self) {
        let branches = 2 + self.random.below(2);
        let index = self.argument(Vec::new(), Elem::I32);
        let it = ty(&[], Elem::I32);
        let index = if branches == 2 && self.random.chance(0.5) {
            // lax.cond: `index > 0` converted to an integer.
            let zero = self.constant(Elem::I32, "0");
            let (i, z, pt) = (index.name.clone(), zero.name.clone(), ty(&[], Elem::I1));
            let flag = self.define(Vec::new(), Elem::I1, |_| {
                format!("\"stablehlo.compare\"({i}, {z}) <{{compare_type = #stablehlo<comparison_type SIGNED>, comparison_direction = #stablehlo<comparison_direction GT>}}> : ({it}, {it}) -> {pt}")
            });
            let f = flag.name.clone();
            self.define(Vec::new(), Elem::I32, |_| {
                format!("\"stablehlo.convert\"({f}) : ({pt}) -> {it}")
            })
        } else {
            // lax.switch: the index clamped into range.
            let low = self.constant(Elem::I32, "0");
            let high = self.constant(Elem::I32, &(branches - 1).to_string());
            let (l, i, h) = (low.name.clone(), index.name.clone(), high.name.clone());
            self.define(Vec::new(), Elem::I32, |_| {
                format!("\"stablehlo.clamp\"({l}, {i}, {h}) : ({it}, {it}, {it}) -> {it}")
            })
        };
        let captured = self.value(1..=3);
        let mut regions = Vec::new();
        for _ in 0..branches {
            self.open(false, Vec::new());
            let result = match self.random.below(4) {
                0 => self.unary_of(&captured),
                1 => {
                    let two = self.splat(&captured.shape, Elem::F32, "2.000000e+00");
                    self.binary_of(&captured, &two)
                }
                2 => {
                    self.step();
                    let other = self.value_of(&captured.shape, Elem::F32);
                    self.binary_of(&captured, &other)
                }
                _ => captured.clone(),
            };
            self.ret(&[result]);
            regions.push((Vec::new(), self.close().lines));
        }
        let regions = self.regions(&regions);
        let t = captured.ty();
        let i = index.name.clone();
        self.define(captured.shape.clone(), Elem::F32, |_| {
            format!("\"stablehlo.case\"({i}) {regions} : ({it}) -> {t}")
        });
    }

    /// A custom call partir has no rule for; a schedule may give its rule in `[rules]`.
    pub(super) fn custom_call(&mut self) {
        let input = self.value(1..=3);
        let two = self.random.chance(0.3);
        let operands = if two {
            let other = self.value_of(&input.shape, Elem::F32);
            vec![input.clone(), other]
        } else {
            vec![input.clone()]
        };
        // One target per call site, so each given rule fits its op's operands.
        let target = format!("{}_{}", self.random.pick(TARGETS), self.custom_calls.len());
        let letters: String = "ijkl"[..input.shape.len()].to_string();
        let rule = if two {
            format!("{letters},{letters}->{letters}")
        } else {
            format!("{letters}->{letters}")
        };
        self.custom_calls.push((target.clone(), rule));
        let (list, all, t) = (names(&operands), types(&operands), input.ty());
        self.define(input.shape.clone(), Elem::F32, |_| {
            format!("\"stablehlo.custom_call\"({list}) <{{api_version = 2 : i32, backend_config = \"\", call_target_name = \"{target}\", called_computations = [], has_side_effect = false}}> : ({all}) -> {t}")
        });
    }

    /// `jax.checkpoint`'s barrier over 2 to 4 values.
    pub(super) fn barrier(&mut self) {
        let values: Vec<Value> = (0..2 + self.random.below(3))
            .map(|_| self.value(0..=3))
            .collect();
        let outs: Vec<(Vec<i64>, Elem)> =
            values.iter().map(|v| (v.shape.clone(), v.elem)).collect();
        let all = types(&values);
        let line = format!(
            "\"stablehlo.optimization_barrier\"({}) : ({all}) -> ({all})",
            names(&values)
        );
        self.define_many(&outs, line);
    }
}
