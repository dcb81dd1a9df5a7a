//! One axis's phases: each a tree search ([`mcts`]) over the actions the analysis ([`space`])
//! leaves, priced by [`evaluate`], its best plan a tactic with a comment saying what it ties.

use super::{evaluate, mcts, space, Found, ProgressFn, Settings, PASS};
use crate::{
    ffi,
    ir::{names, Mesh},
    passes::{program_location, propagate::Propagation, tactic::apply_tactic, PassError},
    schedule::{Reach, Tactic},
    sim::report::{Decision, SearchSummary},
};
use evaluate::Evaluator;
use mcts::{Limits, Score};
use melior::{
    ir::{Module, OperationRef},
    Context,
};
use space::{Candidate, Space};
use std::time::Instant;

/// One axis's phases in a row, each on the program the previous left.
pub(super) struct AxisRun<'a> {
    pub(super) axis: &'a str,
    pub(super) axis_size: i64,
    pub(super) mesh: &'a Mesh,
    pub(super) name: &'a str,
}

impl AxisRun<'_> {
    pub(super) fn run<'c>(
        &self,
        context: &'c Context,
        module: OperationRef<'c, '_>,
        list: &[(Reach, &str, Settings)],
        known: Option<evaluate::Priced>,
        progress: &mut ProgressFn,
    ) -> Result<Found, PassError<'c>> {
        let location = program_location(module);
        let work = Module::from_operation(ffi::clone_operation(module))
            .expect("a module's clone is a module");
        let mut summary = SearchSummary {
            axis: self.axis.to_string(),
            ..SearchSummary::default()
        };
        let mut tactics = Vec::new();
        let mut result: Option<(Score, bool)> = None;
        let mut propagation = Propagation::new(context);
        // The whole program's price of the plan a phase found is the next phase's base price.
        let mut known = known;
        for (reach, suffix, settings) in list {
            let phase = Phase {
                axis: self.axis,
                axis_size: self.axis_size,
                reach: *reach,
                name: format!("{}{suffix}", self.name),
                known,
            };
            let found = phase.search(
                context,
                work.as_operation(),
                self.mesh,
                settings,
                &mut summary,
                progress,
            )?;
            known = found.whole;
            result = Some((found.score, found.fits));
            if let Some(tactic) = found.tactic {
                let _quiet = evaluate::Quiet::new(context);
                apply_tactic(
                    context,
                    work.as_operation(),
                    &tactic,
                    location,
                    &mut propagation,
                )?;
                tactics.push(tactic);
            }
        }
        let (score, fits) = result.expect("at least one phase");
        Ok(Found {
            tactics,
            summary,
            score,
            fits,
            whole: known,
        })
    }
}

struct Phase<'a> {
    axis: &'a str,
    axis_size: i64,
    reach: Reach,
    name: String,
    /// The base program's price on the whole program, when the phase before priced it.
    known: Option<evaluate::Priced>,
}

struct PhaseResult {
    tactic: Option<Tactic>,
    score: Score,
    fits: bool,
    /// The plan's price on the whole program, when plans were priced folded.
    whole: Option<evaluate::Priced>,
}

impl Phase<'_> {
    fn search<'c>(
        &self,
        context: &'c Context,
        base: OperationRef<'c, '_>,
        mesh: &Mesh,
        settings: &Settings,
        summary: &mut SearchSummary,
        progress: &mut ProgressFn,
    ) -> Result<PhaseResult, PassError<'c>> {
        let location = program_location(base);
        let label = match self.reach {
            Reach::All => "compute",
            Reach::Elementwise => "memory",
        };
        let mut evaluator = Evaluator::new(context, base, &settings.device, self.axis, self.known);
        let (candidates, all_names) = candidates(base, mesh, self.axis);
        let mut probed = 0;
        let started = Instant::now();
        let space = space::analyse(
            &mut evaluator,
            &candidates,
            &all_names,
            self.axis_size,
            self.reach,
            started + settings.time_limit,
            &mut |count| {
                probed += count;
                progress(
                    &format!("analysing {label} actions on '{}'", self.axis),
                    probed,
                    None,
                );
            },
        );
        if std::env::var_os("PARTIR_AUTO_DEBUG").is_some() {
            for action in &space.actions {
                eprintln!(
                    "action {} {:?} ties {:?}",
                    space.groups[action.group].selector, action.kind, action.ties
                );
            }
        }
        summary.pricing = evaluator.pricing.clone();
        summary.raw_actions += space.raw;
        summary.probes += probed;
        summary.reduced_actions += space.actions.len();
        let mut problem = AxisProblem {
            space: &space,
            evaluator,
            phase: self,
            best: None,
            budget: settings.budget_bytes,
            anticipate: (settings.anticipate && self.reach == Reach::All)
                .then(|| mesh.devices() as f64),
            priced: 0,
            progress,
            label: format!("searching {label} on '{}'", self.axis),
        };
        let limits = Limits {
            budget_bytes: settings.budget_bytes,
            evaluations: settings.evaluations,
            // The analysis and the search share the phase's time.
            time_limit: settings.time_limit.saturating_sub(started.elapsed()),
            seed: settings.seed,
            near: settings.near,
        };
        let outcome = mcts::search(&mut problem, &limits);
        let offset = summary.evaluations;
        summary.evaluations += outcome.evaluations;
        summary.exhausted = outcome.exhausted;
        summary.timed_out |= outcome.timed_out;
        summary.curve.extend(
            outcome
                .curve
                .iter()
                .map(|&(count, seconds)| (offset + count, seconds)),
        );
        let taken = outcome.simplest.as_ref().or(outcome.best.as_ref());
        let (mut plan, mut fits) = match (taken, &outcome.smallest) {
            (Some(best), _) => (best.clone(), true),
            (None, Some(smallest)) => (smallest.clone(), false),
            (None, None) => {
                return Err(PassError::new(
                    location,
                    format!("{PASS}: no plan on axis '{}' could be priced", self.axis),
                ))
            }
        };
        let mut whole_price = None;
        if problem.evaluator.is_folded() {
            // The plan found on the cuts, priced on the whole program: what is reported, and
            // what must fit.
            let tactics = problem.tactics(&plan.actions);
            let whole = problem.evaluator.price_whole(&tactics).ok_or_else(|| {
                PassError::new(
                    location,
                    format!(
                        "{PASS}: the plan found on axis '{}' cannot be priced on the whole program",
                        self.axis
                    ),
                )
            })?;
            plan.score = problem.seen(whole);
            fits = plan.score.peak_bytes <= settings.budget_bytes;
            whole_price = Some(whole);
        }
        let decisions: Vec<Decision> = plan
            .actions
            .iter()
            .map(|&index| {
                let action = &space.actions[index];
                Decision {
                    group: space.groups[action.group].selector.clone(),
                    decision: action.kind.describe(),
                    ties: action
                        .ties
                        .iter()
                        .map(|(name, dim)| format!("{name} dim {dim}"))
                        .collect(),
                }
            })
            .collect();
        let tactic = (!plan.actions.is_empty()).then(|| {
            let mut tactic =
                space::tactic(&space, &plan.actions, self.axis, &self.name, self.reach);
            tactic.comment = comment(&decisions, &outcome, fits.then_some(plan.score), self.reach);
            tactic
        });
        summary.decisions.extend(decisions);
        Ok(PhaseResult {
            tactic,
            score: plan.score,
            fits,
            whole: whole_price,
        })
    }
}

/// The comment above a found tactic: what the search compared, the best plan's price (`best`,
/// when it fits: on the whole program) and what each decision ties.
fn comment(
    decisions: &[Decision],
    outcome: &mcts::Outcome,
    best: Option<Score>,
    reach: Reach,
) -> Vec<String> {
    let mut lines = vec![format!(
        "Found by partir auto ({} search): {} plans priced{}, best step {} with peak {}.",
        match reach {
            Reach::All => "compute",
            Reach::Elementwise => "memory",
        },
        outcome.evaluations,
        if outcome.exhausted {
            " (every plan of the reduced space)"
        } else {
            ""
        },
        best.map(|best| crate::report::text::seconds(best.seconds))
            .unwrap_or_else(|| "-".into()),
        best.map(|best| crate::report::text::bytes(best.peak_bytes))
            .unwrap_or_else(|| "-".into()),
    )];
    for decision in decisions {
        let mut line = format!("  {}: {}", decision.group, decision.decision);
        if !decision.ties.is_empty() {
            line += &format!(
                "; propagation also tiles {}{}",
                decision.ties[..decision.ties.len().min(4)].join(", "),
                if decision.ties.len() > 4 {
                    format!(" and {} more", decision.ties.len() - 4)
                } else {
                    String::new()
                }
            );
        }
        lines.push(line);
    }
    lines
}

/// The entry functions' arguments with static shapes, and every name a selector can match.
fn candidates(module: OperationRef, mesh: &Mesh, axis: &str) -> (Vec<Candidate>, Vec<String>) {
    let all_names = names::named_values(module)
        .into_iter()
        .map(|(name, _)| name)
        .collect();
    let candidates = evaluate::argument_splits(module)
        .into_iter()
        .map(|argument| Candidate {
            index: argument.index,
            decided: argument
                .axes
                .iter()
                .any(|axes| axes.iter().any(|other| other == axis)),
            parts: argument
                .axes
                .iter()
                .map(|axes| {
                    axes.iter()
                        .map(|other| mesh.axis_size(other).unwrap_or(1))
                        .product()
                })
                .collect(),
            name: argument.name,
            shape: argument.shape,
        })
        .collect();
    (candidates, all_names)
}

struct AxisProblem<'s, 'c, 'm, 'p> {
    space: &'s Space,
    evaluator: Evaluator<'c, 'm>,
    phase: &'s Phase<'s>,
    best: Option<f64>,
    budget: f64,
    /// The device count, when plans are judged by the peak the memory phases could reach.
    anticipate: Option<f64>,
    priced: usize,
    progress: &'p mut ProgressFn<'p>,
    label: String,
}

impl AxisProblem<'_, '_, '_, '_> {
    /// The tactics of the plan `chosen` (none for the empty plan).
    fn tactics(&self, chosen: &[usize]) -> Vec<Tactic> {
        if chosen.is_empty() {
            return Vec::new();
        }
        vec![space::tactic(
            self.space,
            chosen,
            self.phase.axis,
            &self.phase.name,
            self.phase.reach,
        )]
    }

    /// A price as this phase judges it.
    fn seen(&self, priced: evaluate::Priced) -> Score {
        match self.anticipate {
            Some(devices) => priced.anticipated(devices),
            None => priced.score,
        }
    }
}

impl mcts::Problem for AxisProblem<'_, '_, '_, '_> {
    fn action_count(&self) -> usize {
        self.space.actions.len()
    }

    fn compatible(&self, chosen: &[usize], action: usize) -> bool {
        let action = &self.space.actions[action];
        let group = action.group;
        let free = chosen
            .iter()
            .all(|&other| self.space.actions[other].group != group);
        // Pinning a group matters only when a chosen tile would reach it.
        free && (action.kind != space::Kind::Replicate
            || chosen
                .iter()
                .any(|&other| self.space.actions[other].reaches.contains(&group)))
    }

    fn prior(&self, action: usize) -> f64 {
        match self.space.actions[action]
            .alone
            .map(|priced| self.seen(priced))
        {
            Some(score) if score.peak_bytes <= self.budget => 1.0 / score.seconds.max(1e-15),
            Some(score) => 1e-3 * self.budget / score.peak_bytes,
            None => 0.0,
        }
    }

    fn parallelism(&self) -> usize {
        self.evaluator.parallelism()
    }

    fn prefetch(&mut self, plans: &[Vec<usize>]) {
        let plans: Vec<Vec<Tactic>> = plans.iter().map(|chosen| self.tactics(chosen)).collect();
        self.evaluator.prefetch(&plans);
    }

    fn evaluate(&mut self, chosen: &[usize]) -> Option<Score> {
        let tactics = self.tactics(chosen);
        let score = self
            .evaluator
            .price(&tactics)
            .map(|priced| self.seen(priced));
        self.priced += 1;
        if let Some(score) = score {
            if score.peak_bytes <= self.budget && self.best.is_none_or(|best| score.seconds < best)
            {
                self.best = Some(score.seconds);
            }
        }
        (self.progress)(&self.label, self.priced, self.best);
        score
    }
}
