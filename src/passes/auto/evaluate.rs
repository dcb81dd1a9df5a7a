//! Pricing a candidate plan: the base program (Core, with every decision taken before) is
//! cloned, the plan's tactics are applied and propagated as `partir partition` applies them,
//! and the result is lowered in place and simulated, exactly as `partir-simulate` prices it.
//! Prices are cached by sharding state (which arguments the plan tiles, how many ops it
//! partitions, how many conflicts it met): plans that propagate to the same program are
//! priced once.

use super::{
    fold::{self, Folded},
    mcts::Score,
};
use crate::{
    ffi,
    ir::{core, names},
    passes::{
        program_location, propagate::Propagation, simulate, tactic::apply_tactic, tile, PassError,
    },
    schedule::Tactic,
    sim::{
        self,
        deferred::{state_pairs, state_resharding},
        Device,
    },
};
use melior::{
    ir::{Module, OperationRef, ValueLike},
    Context,
};
use std::collections::HashMap;

/// What a plan did to the program, as far as the search tells plans apart.
#[derive(Clone, Debug, Default, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct State {
    /// (argument index, dim) tiled along the axis searched.
    pub tiled: Vec<(usize, usize)>,
    pub partitioned: usize,
    pub conflicts: usize,
    /// Which ops are partitioned along the axis, and how ([`partitioning_digest`]): plans that
    /// tile the same arguments and partition as many ops can still partition different ones.
    pub partitioning: u64,
}

impl State {
    /// The state as the analysis groups actions: without [`State::partitioning`].
    pub fn tied(&self) -> State {
        State {
            partitioning: 0,
            ..self.clone()
        }
    }
}

pub struct Evaluator<'c, 'm> {
    context: &'c Context,
    base: OperationRef<'c, 'm>,
    /// The cuts plans are priced on when the base folds (see [`fold`]).
    folded: Option<Folded<'c>>,
    /// How plans are priced, for the search summary.
    pub pricing: String,
    device: Device,
    axis: String,
    by_state: HashMap<State, Option<Priced>>,
    /// Plans priced ahead by [`Evaluator::prefetch`], by [`plan_key`]: their state and, when
    /// that state was not known then, its price.
    prefetched: HashMap<String, Option<Ran>>,
    /// Programs lowered and simulated (cache misses).
    pub priced: usize,
    base_state: State,
}

impl<'c, 'm> Evaluator<'c, 'm> {
    /// `known`: `base`'s price on the whole program, when known already.
    pub fn new(
        context: &'c Context,
        base: OperationRef<'c, 'm>,
        device: &Device,
        axis: &str,
        known: Option<Priced>,
    ) -> Self {
        let (folded, pricing) = fold::checked(context, base, device, known);
        // States are the priced program's: the larger cut's when folded, its arguments
        // told as the whole program's.
        let (priced, fold) = match &folded {
            Some(folded) => (folded.cuts[1].as_operation(), Some(&folded.fold)),
            None => (base, None),
        };
        let tiled = tiled_arguments(priced, axis);
        let base_state = State {
            tiled: match fold {
                Some(fold) => fold.tiled(&tiled),
                None => tiled,
            },
            partitioning: partitioning_digest(priced, axis),
            ..State::default()
        };
        Self {
            context,
            base,
            folded,
            pricing,
            device: device.clone(),
            axis: axis.to_string(),
            by_state: HashMap::new(),
            prefetched: HashMap::new(),
            priced: 0,
            base_state,
        }
    }

    pub fn axis(&self) -> &str {
        &self.axis
    }

    /// The state of the base program, before any action of this axis.
    pub fn base_state(&self) -> State {
        self.base_state.clone()
    }

    /// The state after `tactics` and its price, or `None` when they do not apply.
    pub fn state_and_price(&mut self, tactics: &[Tactic]) -> Option<(State, Option<Priced>)> {
        let outcome = match self.prefetched.remove(&plan_key(tactics)) {
            Some(outcome) => outcome,
            None => {
                let _quiet = Quiet::new(self.context);
                self.job().run(self.context, &self.targets(), tactics)
            }
        };
        let Ran { state, new_price } = outcome?;
        if let Some(known) = self.by_state.get(&state) {
            return Some((state, *known));
        }
        self.priced += 1;
        let fresh = new_price.expect("a state not known yet is priced");
        self.by_state.insert(state.clone(), fresh);
        Some((state, fresh))
    }

    /// The state values (by name, with the dim) that `tactics` return split along the axis on
    /// a dim their argument does not come in split on: what a plan's `deferred` gathers back.
    /// Tiling a stacked Megatron kernel alone returns its Adam moments split (their update
    /// reads its split gradient) while they come in whole.
    pub fn returned_splits(&self, tactics: &[Tactic]) -> Vec<(String, usize)> {
        let _quiet = Quiet::new(self.context);
        // Folded, on the larger cut, its names read as the whole program's: applying and
        // lowering the whole 48-layer Transformer for each of the compute phase's probes that
        // return state split made its search 12x the 4-layer one's (6 plans per second).
        let base = match &self.folded {
            Some(folded) => folded.cuts[1].as_operation(),
            None => self.base,
        };
        let Some((_, copy)) = self.job().apply(self.context, base, tactics) else {
            return Vec::new();
        };
        let Ok(lowered) = simulate::lower_in_place(self.context, copy) else {
            return Vec::new();
        };
        let shardings = simulate::value_shardings(lowered.as_operation());
        let mut found = Vec::new();
        for (argument, result) in state_pairs(&shardings) {
            for (dim, axes) in result.axes.iter().enumerate() {
                let split_in = argument
                    .axes
                    .get(dim)
                    .is_some_and(|axes| axes.contains(&self.axis));
                if axes.contains(&self.axis) && !split_in {
                    match &self.folded {
                        Some(folded) => found.extend(
                            folded
                                .fold
                                .whole_names(&result.name)
                                .into_iter()
                                .map(|name| (name, dim)),
                        ),
                        None => found.push((result.name.clone(), dim)),
                    }
                }
            }
        }
        found
    }

    /// The price after `tactics`, or `None` when they do not apply or cannot be lowered.
    pub fn price(&mut self, tactics: &[Tactic]) -> Option<Priced> {
        self.state_and_price(tactics).and_then(|(_, priced)| priced)
    }

    /// Whether plans are priced on cuts of the program ([`fold`]), not on all of it.
    pub fn is_folded(&self) -> bool {
        self.folded.is_some()
    }

    /// The price after `tactics` on the whole program, folded or not: what `partir-simulate`
    /// says of the plan.
    pub fn price_whole(&mut self, tactics: &[Tactic]) -> Option<Priced> {
        if !self.is_folded() {
            return self.price(tactics);
        }
        let _quiet = Quiet::new(self.context);
        let known = HashMap::new();
        let job = Job {
            fold: None,
            known: &known,
            ..self.job()
        };
        job.run(self.context, &[self.base], tactics)?.new_price?
    }

    /// What plans are priced on: the two cuts when folded, else the base.
    fn targets(&self) -> Vec<OperationRef<'c, '_>> {
        match &self.folded {
            Some(folded) => folded.cuts.iter().map(|cut| cut.as_operation()).collect(),
            None => vec![self.base],
        }
    }

    /// How many plans [`Self::prefetch`] prices at once.
    pub fn parallelism(&self) -> usize {
        ffi::threads::parallelism(self.context)
    }

    /// Prices `plans` at once on several threads (when the context allows), so that the
    /// calls of [`Self::state_and_price`] that follow, in any order, find them ready. What
    /// those calls return does not change: the state cache is consulted as if each plan were
    /// priced at its call.
    pub fn prefetch(&mut self, plans: &[Vec<Tactic>]) {
        if self.parallelism() <= 1 {
            return;
        }
        let mut keys = Vec::new();
        let mut todo: Vec<&Vec<Tactic>> = Vec::new();
        for plan in plans {
            let key = plan_key(plan);
            if !self.prefetched.contains_key(&key) && !keys.contains(&key) {
                keys.push(key);
                todo.push(plan);
            }
        }
        if todo.len() <= 1 {
            return;
        }
        let job = self.job();
        let _quiet = Quiet::new(self.context);
        let targets = self.targets();
        let outcomes =
            ffi::threads::map_shared(self.context, &targets, &todo, |context, bases, plan| {
                job.run(context, bases, plan)
            });
        self.prefetched.extend(keys.into_iter().zip(outcomes));
    }

    fn job(&self) -> Job<'_> {
        Job {
            device: &self.device,
            axis: &self.axis,
            base_state: &self.base_state,
            known: &self.by_state,
            fold: self.folded.as_ref().map(|folded| &folded.fold),
        }
    }
}

/// A plan's identity for the prefetched prices.
fn plan_key(tactics: &[Tactic]) -> String {
    format!("{tactics:?}")
}

/// One plan applied: its state, and its price when that state was not known yet
/// (`Some(None)`: the plan could not be lowered).
struct Ran {
    state: State,
    new_price: Option<Option<Priced>>,
}

/// Pricing one plan: what a thread needs, all read-only.
struct Job<'e> {
    device: &'e Device,
    axis: &'e str,
    base_state: &'e State,
    /// States already priced: not priced again.
    known: &'e HashMap<State, Option<Priced>>,
    /// What the two bases are cuts of, when folded.
    fold: Option<&'e fold::Fold>,
}

impl Job<'_> {
    /// The state after `tactics` (None when they do not apply), and its price unless its
    /// state is known already. `bases`: the program, or its two cuts when folded (the
    /// state is the larger cut's).
    fn run<'c>(
        &self,
        context: &'c Context,
        bases: &[OperationRef<'c, '_>],
        tactics: &[Tactic],
    ) -> Option<Ran> {
        let (last, others) = bases.split_last().expect("a program to price");
        let (mut state, copy) = self.apply(context, *last, tactics)?;
        if let Some(fold) = self.fold {
            state.tiled = fold.tiled(&state.tiled);
        }
        if self.known.contains_key(&state) {
            return Some(Ran {
                state,
                new_price: None,
            });
        }
        let priced = match (self.fold, others) {
            (Some(fold), [first]) => {
                let (_, first) = self.apply(context, *first, tactics)?;
                let one = price_core(context, first, self.device).ok();
                let two = price_core(context, copy, self.device).ok();
                one.zip(two).map(|(one, two)| fold.extrapolate(one, two))
            }
            _ => price_core(context, copy, self.device).ok(),
        };
        Some(Ran {
            state,
            new_price: Some(priced),
        })
    }

    /// A copy of `base` with `tactics` applied, and its state.
    fn apply<'c>(
        &self,
        context: &'c Context,
        base: OperationRef<'c, '_>,
        tactics: &[Tactic],
    ) -> Option<(State, Module<'c>)> {
        let copy = Module::from_operation(ffi::clone_operation(base))
            .expect("a module's clone is a module");
        let mut propagation = Propagation::new(context);
        let location = program_location(copy.as_operation());
        let mut state = self.base_state.clone();
        for tactic in tactics {
            let outcome = apply_tactic(
                context,
                copy.as_operation(),
                tactic,
                location,
                &mut propagation,
            )
            .ok()?;
            state.partitioned += outcome.partitioned;
            state.conflicts += outcome.conflicts;
        }
        state.tiled = tiled_arguments(copy.as_operation(), self.axis);
        state.partitioning = partitioning_digest(copy.as_operation(), self.axis);
        Some((state, copy))
    }
}

/// A plan's price: `score.seconds` is partir-simulate's step time plus `deferred`.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Priced {
    pub score: Score,
    /// What the next step would pay to take this step's state back (see
    /// [`state_resharding`]); zero when the state comes out split as it went in.
    pub deferred: f64,
    /// The arguments' bytes per device: the state a memory phase could still split.
    pub state_bytes: f64,
}

impl Priced {
    /// The score as a compute phase that anticipates the memory phases sees it: the peak less
    /// what sharding the state over all `devices` could save at best.
    pub fn anticipated(&self, devices: f64) -> Score {
        Score {
            peak_bytes: (self.score.peak_bytes - self.state_bytes * (1.0 - 1.0 / devices)).max(0.0),
            ..self.score
        }
    }
}

/// Lowers a Core module (a copy: it is consumed) and prices it as `partir-simulate` does,
/// plus what the next step would pay to take this step's state back (see [`state_resharding`]).
pub fn price_core<'c>(
    context: &'c Context,
    copy: Module<'c>,
    device: &Device,
) -> Result<Priced, PassError<'c>> {
    let lowered = simulate::lower_in_place(context, copy)?;
    let profile = simulate::profile_hlo(lowered.as_operation(), false)?;
    let report = sim::simulate(&profile, device);
    let shardings = simulate::value_shardings(lowered.as_operation());
    let deferred = state_resharding(&shardings, &profile.mesh, device);
    Ok(Priced {
        score: Score {
            seconds: report.totals.step_seconds + deferred,
            peak_bytes: report.totals.peak_memory_bytes,
        },
        deferred,
        state_bytes: report.memory.arguments_bytes,
    })
}

/// An entry function's argument (static shapes only) and how it is split so far.
pub struct ArgumentSplit {
    pub index: usize,
    pub name: String,
    pub shape: Vec<i64>,
    /// Per dim, the mesh axes splitting it.
    pub axes: Vec<Vec<String>>,
}

/// Every argument of the entry functions with a static shape, with its splits.
pub fn argument_splits(module: OperationRef) -> Vec<ArgumentSplit> {
    names::named_values(module)
        .into_iter()
        .filter_map(|(name, named)| {
            let names::Site::Argument { index, .. } = named.site else {
                return None;
            };
            let shape = crate::ir::core::static_shape(named.value.r#type())?;
            let axes = (0..shape.len())
                .map(|dim| tile::split_along(named.value, dim))
                .collect();
            Some(ArgumentSplit {
                index,
                name,
                shape,
                axes,
            })
        })
        .collect()
}

/// A digest of every loop over `axis` in `module`: its place in program order and its
/// actions. Equal for two programs partitioned alike along `axis` (the same program, the same
/// loops), different otherwise but for hash collisions (one in 2^64).
pub fn partitioning_digest(module: OperationRef, axis: &str) -> u64 {
    use std::hash::{Hash, Hasher};
    // SipHash with fixed keys: the same digest on every run.
    let mut hasher = std::collections::hash_map::DefaultHasher::new();
    let mut position = 0usize;
    ffi::walk(module, |op| {
        position += 1;
        if core::is_loop_over(op, axis) {
            position.hash(&mut hasher);
            core::actions(op).hash(&mut hasher);
        }
    });
    hasher.finish()
}

/// (argument index, dim) of the entry function's arguments split along `axis`.
pub fn tiled_arguments(module: OperationRef, axis: &str) -> Vec<(usize, usize)> {
    argument_splits(module)
        .into_iter()
        .flat_map(|argument| {
            let index = argument.index;
            argument
                .axes
                .into_iter()
                .enumerate()
                .filter(|(_, axes)| axes.iter().any(|other| other == axis))
                .map(move |(dim, _)| (index, dim))
        })
        .collect()
}

/// Silences diagnostics while it lives: the search applies thousands of plans whose remarks
/// (propagation stops, tactic summaries) are not the user's.
pub struct Quiet<'c> {
    context: &'c Context,
    id: melior::diagnostic::DiagnosticHandlerId,
}

impl<'c> Quiet<'c> {
    pub fn new(context: &'c Context) -> Self {
        let id = context.attach_diagnostic_handler(|_| true);
        Self { context, id }
    }
}

impl Drop for Quiet<'_> {
    fn drop(&mut self) {
        self.context.detach_diagnostic_handler(self.id);
    }
}

#[cfg(test)]
mod tests;
