//! The search of one axis: UCT Monte Carlo tree search over *sets* of actions (the papers'
//! goal-oriented MCTS, "Automatic Discovery of Composite SPMD Partitioning Strategies").
//!
//! A greedy pass comes first (see [`Search::greedy`]). A state is the set of actions taken so
//! far (ascending action indices, so each set has one path: the tree is the lattice of
//! combinations, not of orderings). Every state is a complete
//! plan: "stop here" is always allowed, so each new node is priced as it is, and then a random
//! rollout from it adds more actions and is priced too. Prices are cached by state, so a
//! re-visited plan costs nothing; the search is anytime (the best plan that fits is kept) and
//! deterministic under a seed as long as it ends by its evaluation budget, not by the clock.
//!
//! Reward of a plan: `reference / step time` when it fits the memory budget (the reference is
//! the empty plan's step time, so rewards sit near 1), else `0.1 · budget / peak`: below every
//! plan that fits, and higher the closer it comes to fitting.

use crate::random::SplitMix64;
use std::collections::HashMap;
use std::time::{Duration, Instant};

/// What a plan costs per device.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Score {
    pub seconds: f64,
    pub peak_bytes: f64,
}

/// The search problem of one axis.
pub trait Problem {
    fn action_count(&self) -> usize;
    /// Whether `action` may be added to `chosen` (ascending; e.g. one decision per group).
    fn compatible(&self, chosen: &[usize], action: usize) -> bool;
    /// Prices the plan `chosen` (ascending); `None` when it cannot be applied.
    fn evaluate(&mut self, chosen: &[usize]) -> Option<Score>;
    /// How promising `action` looks on its own (higher first): children are expanded in this
    /// order, ties in a seeded random order.
    fn prior(&self, _action: usize) -> f64 {
        0.0
    }
    /// How many plans the problem prices at once (threads).
    fn parallelism(&self) -> usize {
        1
    }
    /// Plans that `evaluate` will be asked for next, to price at once; what `evaluate` then
    /// returns must not depend on whether they were (the search stays deterministic).
    fn prefetch(&mut self, _plans: &[Vec<usize>]) {}
}

/// When the search stops, and what fits.
#[derive(Clone, Debug)]
pub struct Limits {
    pub budget_bytes: f64,
    /// At most this many distinct plans are priced.
    pub evaluations: usize,
    pub time_limit: Duration,
    pub seed: u64,
    /// How close to the fastest plan a simpler one may be and still be taken ([`NEAR`]).
    pub near: f64,
}

/// A plan and its price.
#[derive(Clone, Debug, PartialEq)]
pub struct Plan {
    pub actions: Vec<usize>,
    pub score: Score,
}

#[derive(Clone, Debug, Default)]
pub struct Outcome {
    /// The fastest plan that fits (fewer actions among equals).
    pub best: Option<Plan>,
    /// The plan to take: the one with the fewest actions among those that fit within
    /// `Limits::near` of `best` (see [`Search::simplest_near_best`]).
    pub simplest: Option<Plan>,
    /// The plan with the smallest peak memory: what to build on when nothing fits yet.
    pub smallest: Option<Plan>,
    /// Distinct plans priced.
    pub evaluations: usize,
    /// (evaluations so far, best step time so far) each time the best improved.
    pub curve: Vec<(usize, f64)>,
    /// Every plan reachable was priced (the optimum is exact).
    pub exhausted: bool,
    /// The clock stopped the search (the result may depend on the machine's speed).
    pub timed_out: bool,
}

struct Node {
    chosen: Vec<usize>,
    untried: Vec<usize>,
    children: Vec<usize>,
    visits: f64,
    total: f64,
    /// The best reward seen below.
    best: f64,
    exhausted: bool,
}

/// Exploration weight of UCT: rewards are near 1, improvements tens of percent.
const EXPLORATION: f64 = 0.3;
/// Children a node may have per square root of its visits (progressive widening).
const WIDENING: f64 = 2.0;
/// How close to the fastest plan a simpler one may be and still be chosen (see
/// [`Search::simplest_near_best`]).
pub const NEAR: f64 = 0.01;
/// [`NEAR`] for an axis that other axes are searched after: its simpler plans leave them more
/// to do. LLaMA-3 8B on `{data = 8, model = 8}`: BP with Megatron's MLP on `data` prices
/// 3.99 s, BP alone 4.06 s (1.7% slower); the first leaves `model` only the attention and a
/// sequence split (1.37 s in the end), BP alone the experts' BP_MP (0.97 s; BP_MP 1.03 s). The
/// last axis keeps [`NEAR`] (3% there made the width-1024 Transformer's plan 1.6% slower).
pub const NEAR_BEFORE_LATER_AXES: f64 = 0.03;

/// How much a branch's best plan counts against its average.
const MAX_WEIGHT: f64 = 0.5;
/// A rollout adds another action with this probability.
const ROLLOUT_CONTINUE: f64 = 0.5;
/// Iterations in a row that price nothing new before the search gives up (every path it
/// prefers is cached).
const STALE_ITERATIONS: usize = 2000;

struct Search<'p, P: Problem> {
    problem: &'p mut P,
    limits: Limits,
    random: SplitMix64,
    cache: HashMap<Vec<usize>, Option<Score>>,
    reference: f64,
    outcome: Outcome,
    nodes: Vec<Node>,
}

pub fn search<P: Problem>(problem: &mut P, limits: &Limits) -> Outcome {
    let start = Instant::now();
    let mut search = Search {
        problem,
        limits: limits.clone(),
        random: SplitMix64(limits.seed),
        cache: HashMap::new(),
        reference: f64::NAN,
        outcome: Outcome::default(),
        nodes: Vec::new(),
    };
    let root = search.node(Vec::new());
    let empty = search.price(&[]);
    search.reference = match empty {
        Some(score) if score.seconds > 0.0 => score.seconds,
        _ => 1.0,
    };
    search.greedy(start);
    let mut stale = 0;
    while !search.nodes[root].exhausted && stale < STALE_ITERATIONS {
        if search.outcome.evaluations >= limits.evaluations {
            break;
        }
        if start.elapsed() >= limits.time_limit {
            search.outcome.timed_out = true;
            break;
        }
        let before = search.outcome.evaluations;
        search.iterate(root);
        stale = if search.outcome.evaluations == before {
            stale + 1
        } else {
            0
        };
    }
    search.outcome.exhausted = search.nodes[root].exhausted;
    search.outcome.simplest = search.simplest_near_best();
    search.outcome
}

impl<P: Problem> Search<'_, P> {
    fn node(&mut self, chosen: Vec<usize>) -> usize {
        let after = chosen.last().map_or(0, |last| last + 1);
        let mut untried: Vec<usize> = (after..self.problem.action_count())
            .filter(|&action| self.problem.compatible(&chosen, action))
            .collect();
        // Seeded shuffle (Fisher-Yates), then the most promising last: `pop` tries it first.
        for index in (1..untried.len()).rev() {
            untried.swap(index, self.random.below(index + 1));
        }
        untried.sort_by(|&a, &b| self.problem.prior(a).total_cmp(&self.problem.prior(b)));
        self.nodes.push(Node {
            chosen,
            untried,
            children: Vec::new(),
            visits: 0.0,
            total: 0.0,
            best: 0.0,
            exhausted: false,
        });
        self.nodes.len() - 1
    }

    /// The warm start: from the empty plan, adds each action in order of promise when it makes
    /// the plan better (first-improvement hill climbing, one price per action). Actions that
    /// each help alone mostly help together (ZeRO sharding of 16 parameter groups is 16 such
    /// actions, 16 levels down the tree), which a tree search finds late and this finds at
    /// once; the tree search then looks for what a greedy pass misses (interactions).
    fn greedy(&mut self, start: Instant) {
        let mut order: Vec<usize> = (0..self.problem.action_count()).collect();
        order.sort_by(|&a, &b| self.problem.prior(b).total_cmp(&self.problem.prior(a)));
        let mut chosen: Vec<usize> = Vec::new();
        let mut reward = self.reward(&chosen);
        for (position, &action) in order.iter().enumerate() {
            if self.outcome.evaluations >= self.limits.evaluations
                || start.elapsed() >= self.limits.time_limit
            {
                return;
            }
            if !self.problem.compatible(&chosen, action) {
                continue;
            }
            let next = with(&chosen, action);
            // This candidate and the next ones, priced at once: if this one improves the plan
            // the others were priced for nothing, but improvements are few.
            let ahead: Vec<Vec<usize>> = order[position..]
                .iter()
                .filter(|&&later| self.problem.compatible(&chosen, later))
                .map(|&later| with(&chosen, later))
                .collect();
            self.prefetch(ahead);
            let next_reward = self.reward(&next);
            if next_reward > reward {
                (chosen, reward) = (next, next_reward);
            }
        }
    }

    /// Has the problem price at once the first of `plans` not priced yet, as many as it prices
    /// at once (the calls of [`Self::price`] that follow find them ready).
    fn prefetch(&mut self, plans: Vec<Vec<usize>>) {
        let room = self.problem.parallelism();
        if room <= 1 {
            return;
        }
        let mut fresh: Vec<Vec<usize>> = Vec::new();
        for plan in plans {
            if fresh.len() == room {
                break;
            }
            if !self.cache.contains_key(&plan) && !fresh.contains(&plan) {
                fresh.push(plan);
            }
        }
        self.problem.prefetch(&fresh);
    }

    /// Among the plans that fit and are within `Limits::near` of the fastest, the one with the fewest
    /// actions (then the fastest): a plan that saves 1% with three more decisions spends what
    /// later axes could use better. LLaMA-3 70B on `{data = 128, model = 8}`: Megatron and BP
    /// together on `data` price 39.75 s, BP alone 40.14 s; taking the first leaves `model` no
    /// Megatron to do (21.8 s in the end), BP alone leaves it the Megatron of experts.
    fn simplest_near_best(&self) -> Option<Plan> {
        let fastest = self.outcome.best.as_ref()?;
        let limit = fastest.score.seconds * (1.0 + self.limits.near);
        self.cache
            .iter()
            .filter_map(|(actions, score)| score.map(|score| (actions, score)))
            .filter(|(_, score)| {
                score.peak_bytes <= self.limits.budget_bytes && score.seconds <= limit
            })
            .min_by(|(a, one), (b, other)| {
                a.len()
                    .cmp(&b.len())
                    .then(one.seconds.total_cmp(&other.seconds))
                    .then(a.cmp(b))
            })
            .map(|(actions, score)| Plan {
                actions: actions.clone(),
                score,
            })
    }

    /// The price of `chosen`, from the cache or the problem; keeps the best plans.
    fn price(&mut self, chosen: &[usize]) -> Option<Score> {
        if let Some(known) = self.cache.get(chosen) {
            return *known;
        }
        let score = self.problem.evaluate(chosen);
        self.cache.insert(chosen.to_vec(), score);
        self.outcome.evaluations += 1;
        if let Some(score) = score {
            let plan = || Plan {
                actions: chosen.to_vec(),
                score,
            };
            let fits = score.peak_bytes <= self.limits.budget_bytes;
            let better = |best: &Option<Plan>| match best {
                None => true,
                Some(best) => {
                    score.seconds < best.score.seconds
                        || (score.seconds == best.score.seconds
                            && chosen.len() < best.actions.len())
                }
            };
            if fits && better(&self.outcome.best) {
                self.outcome.best = Some(plan());
                self.outcome
                    .curve
                    .push((self.outcome.evaluations, score.seconds));
            }
            let smaller = match &self.outcome.smallest {
                None => true,
                Some(smallest) => score.peak_bytes < smallest.score.peak_bytes,
            };
            if smaller {
                self.outcome.smallest = Some(plan());
            }
        }
        score
    }

    fn reward(&mut self, chosen: &[usize]) -> f64 {
        match self.price(chosen) {
            None => 0.0,
            Some(score) if score.peak_bytes <= self.limits.budget_bytes => {
                self.reference / score.seconds.max(1e-15)
            }
            Some(score) => 0.1 * (self.limits.budget_bytes / score.peak_bytes).min(1.0),
        }
    }

    /// One selection, expansion, rollout and backup.
    fn iterate(&mut self, root: usize) {
        let mut path = vec![root];
        let mut current = root;
        while !self.widens(current) {
            match self.select(current) {
                Some(child) => {
                    current = child;
                    path.push(child);
                }
                None => break,
            }
        }
        let value = match self.nodes[current].untried.pop() {
            Some(action) => {
                let mut chosen = self.nodes[current].chosen.clone();
                chosen.push(action);
                let child = self.node(chosen.clone());
                self.nodes[current].children.push(child);
                path.push(child);
                // The rollout's plan does not depend on the child's price: both are priced at
                // once, and with room left the parent's next children (expanded the next times
                // it widens, most promising first), so that no thread idles.
                let rollout = self.rollout(chosen.clone());
                let parent = &self.nodes[current];
                let siblings = parent
                    .untried
                    .iter()
                    .rev()
                    .map(|&sibling| with(&parent.chosen, sibling));
                let plans: Vec<Vec<usize>> = std::iter::once(chosen.clone())
                    .chain(rollout.clone())
                    .chain(siblings)
                    .collect();
                self.prefetch(plans);
                let own = self.reward(&chosen);
                match rollout {
                    Some(rollout) if self.outcome.evaluations < self.limits.evaluations => {
                        own.max(self.reward(&rollout))
                    }
                    _ => own,
                }
            }
            None => {
                // A leaf with nothing left to add: its own (cached) price.
                let chosen = self.nodes[current].chosen.clone();
                self.nodes[current].exhausted = true;
                self.reward(&chosen)
            }
        };
        for &node in path.iter().rev() {
            let node_ref = &mut self.nodes[node];
            node_ref.visits += 1.0;
            node_ref.total += value;
            node_ref.best = node_ref.best.max(value);
        }
        // Exhaustion climbs back up: a node whose children are all exhausted is too.
        for &node in path.iter().rev() {
            let done = self.nodes[node].untried.is_empty()
                && self.nodes[node]
                    .children
                    .iter()
                    .all(|&child| self.nodes[child].exhausted);
            if !done {
                break;
            }
            self.nodes[node].exhausted = true;
        }
    }

    /// Whether `node` gets a new child now: progressive widening (Coulom; Chaslot et al.)
    /// lets a node have `1 + WIDENING · sqrt(visits)` children, its most promising first, so
    /// that the search goes deep along good actions instead of trying every sibling first: a
    /// plan that shards 16 groups is 16 levels down.
    fn widens(&self, node: usize) -> bool {
        let node = &self.nodes[node];
        if node.untried.is_empty() {
            return false;
        }
        let allowed = 1 + (WIDENING * node.visits.sqrt()) as usize;
        node.children.len() < allowed
            || node
                .children
                .iter()
                .all(|&child| self.nodes[child].exhausted)
    }

    /// The child with the highest UCT value that still has something to explore.
    fn select(&self, node: usize) -> Option<usize> {
        let parent_visits = self.nodes[node].visits.max(1.0);
        self.nodes[node]
            .children
            .iter()
            .copied()
            .filter(|&child| !self.nodes[child].exhausted)
            .max_by(|&a, &b| {
                self.uct(a, parent_visits)
                    .total_cmp(&self.uct(b, parent_visits))
            })
    }

    fn uct(&self, node: usize, parent_visits: f64) -> f64 {
        let node = &self.nodes[node];
        if node.visits == 0.0 {
            return f64::INFINITY;
        }
        // Single-player search: a branch is as good as the best plan in it, tempered by its
        // average (Schadd et al., "Single-Player Monte-Carlo Tree Search").
        let value = MAX_WEIGHT * node.best + (1.0 - MAX_WEIGHT) * node.total / node.visits;
        value + EXPLORATION * (parent_visits.ln() / node.visits).sqrt()
    }

    /// Adds random compatible actions (each time with probability `ROLLOUT_CONTINUE`): the
    /// plan to price, None when none was added.
    fn rollout(&mut self, mut chosen: Vec<usize>) -> Option<Vec<usize>> {
        let start = chosen.len();
        loop {
            if !self.random.chance(ROLLOUT_CONTINUE) {
                break;
            }
            let after = chosen.last().map_or(0, |last| last + 1);
            let options: Vec<usize> = (after..self.problem.action_count())
                .filter(|&action| self.problem.compatible(&chosen, action))
                .collect();
            if options.is_empty() {
                break;
            }
            chosen.push(*self.random.pick(&options));
        }
        (chosen.len() > start).then_some(chosen)
    }
}

/// `chosen` with `action` added, ascending.
fn with(chosen: &[usize], action: usize) -> Vec<usize> {
    let mut next = chosen.to_vec();
    next.push(action);
    next.sort_unstable();
    next
}

#[cfg(test)]
mod tests;
