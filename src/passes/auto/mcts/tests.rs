//! The search on toy problems whose optimum is known by exhaustive enumeration.

use super::*;

/// A toy partitioning problem: `groups` groups of `options` mutually exclusive actions;
/// each action saves some time and memory, and pairs of actions interact (a resharding
/// between them costs time).
struct Toy {
    groups: usize,
    options: usize,
    saving: Vec<f64>,
    memory: Vec<f64>,
    clash: Vec<Vec<f64>>,
    priced: usize,
    /// Every plan priced, in order.
    order: Vec<Vec<usize>>,
}

impl Toy {
    fn new(groups: usize, options: usize, seed: u64) -> Self {
        let count = groups * options;
        let mut random = SplitMix64(seed);
        let saving = (0..count).map(|_| random.uniform() * 3.0 - 1.0).collect();
        let memory = (0..count).map(|_| random.uniform() * 4.0).collect();
        let clash = (0..count)
            .map(|_| {
                (0..count)
                    .map(|_| {
                        if random.chance(0.3) {
                            random.uniform() * 2.0
                        } else {
                            0.0
                        }
                    })
                    .collect()
            })
            .collect();
        Toy {
            groups,
            options,
            saving,
            memory,
            clash,
            priced: 0,
            order: Vec::new(),
        }
    }

    fn price(&self, chosen: &[usize]) -> Score {
        let mut seconds = 20.0;
        let mut peak = 20.0;
        for (index, &a) in chosen.iter().enumerate() {
            seconds -= self.saving[a];
            peak -= self.memory[a];
            for &b in &chosen[index + 1..] {
                seconds += self.clash[a][b];
            }
        }
        Score {
            seconds,
            peak_bytes: peak,
        }
    }

    /// The optimum by enumerating every plan (each group: none or one of its options).
    fn optimum(&self, budget: f64) -> Option<f64> {
        let mut best: Option<f64> = None;
        let plans = (self.options + 1).pow(self.groups as u32);
        for code in 0..plans {
            let mut chosen = Vec::new();
            let mut rest = code;
            for group in 0..self.groups {
                let pick = rest % (self.options + 1);
                rest /= self.options + 1;
                if pick > 0 {
                    chosen.push(group * self.options + pick - 1);
                }
            }
            let score = self.price(&chosen);
            if score.peak_bytes <= budget && best.is_none_or(|best| score.seconds < best) {
                best = Some(score.seconds);
            }
        }
        best
    }
}

impl Problem for Toy {
    fn action_count(&self) -> usize {
        self.groups * self.options
    }
    fn compatible(&self, chosen: &[usize], action: usize) -> bool {
        chosen
            .iter()
            .all(|&other| other / self.options != action / self.options)
    }
    fn evaluate(&mut self, chosen: &[usize]) -> Option<Score> {
        self.priced += 1;
        self.order.push(chosen.to_vec());
        Some(self.price(chosen))
    }
}

fn limits(budget: f64, evaluations: usize, seed: u64) -> Limits {
    Limits {
        budget_bytes: budget,
        evaluations,
        time_limit: Duration::from_secs(60),
        seed,
        near: super::NEAR,
    }
}

#[test]
fn finds_the_exhaustive_optimum_of_small_problems() {
    for seed in 0..20 {
        let mut toy = Toy::new(4, 3, seed);
        let budget = 14.0;
        let optimum = toy.optimum(budget);
        let outcome = search(&mut toy, &limits(budget, 10_000, seed));
        assert!(outcome.exhausted, "256 plans: the search prices them all");
        assert_eq!(outcome.evaluations, 256, "each plan priced once (cached)");
        assert_eq!(toy.priced, 256);
        assert_eq!(
            outcome.best.map(|plan| plan.score.seconds),
            optimum,
            "seed {seed}"
        );
    }
}

#[test]
fn finds_the_optimum_pricing_a_fraction_of_the_plans() {
    // 6 groups of 3: 4096 plans. UCT concentrates on the good branches.
    let mut found = 0;
    for seed in 0..10 {
        let mut toy = Toy::new(6, 3, 100 + seed);
        let optimum = toy.optimum(f64::INFINITY).unwrap();
        let outcome = search(&mut toy, &limits(f64::INFINITY, 1000, seed));
        assert!(outcome.evaluations <= 1000);
        let best = outcome.best.unwrap().score.seconds;
        assert!(best <= optimum + 1.0, "seed {seed}: {best} vs {optimum}");
        found += usize::from(best == optimum);
    }
    assert!(found >= 8, "the exact optimum in {found} of 10 problems");
}

#[test]
fn plans_over_budget_are_never_best() {
    let mut toy = Toy::new(4, 3, 7);
    let outcome = search(&mut toy, &limits(-1.0, 10_000, 1));
    assert!(outcome.best.is_none(), "nothing fits a negative budget");
    let smallest = outcome.smallest.unwrap();
    let least = (0..1)
        .map(|_| toy.price(&smallest.actions).peak_bytes)
        .next()
        .unwrap();
    assert_eq!(smallest.score.peak_bytes, least);
    for seed in 0..5 {
        let mut toy = Toy::new(4, 3, seed);
        let outcome = search(&mut toy, &limits(12.0, 10_000, seed));
        if let Some(best) = outcome.best {
            assert!(best.score.peak_bytes <= 12.0);
        }
    }
}

#[test]
fn a_seed_determines_the_search() {
    let run = |seed| {
        let mut toy = Toy::new(6, 3, 3);
        let outcome = search(&mut toy, &limits(f64::INFINITY, 200, seed));
        (outcome.best, outcome.curve, toy.order)
    };
    assert_eq!(run(5), run(5));
    assert_ne!(run(5).2, run(6).2, "another seed explores in another order");
}

#[test]
fn the_greedy_pass_comes_first() {
    // Independent actions that each help: the greedy pass takes all of them, one price each.
    let mut toy = Toy::new(8, 1, 0);
    toy.saving = vec![1.0; 8];
    toy.clash = vec![vec![0.0; 8]; 8];
    let outcome = search(&mut toy, &limits(f64::INFINITY, 9, 0));
    assert_eq!(
        outcome.evaluations, 9,
        "the empty plan, then one per action"
    );
    assert_eq!(outcome.best.unwrap().actions, (0..8).collect::<Vec<_>>());
}

#[test]
fn the_curve_only_improves() {
    let mut toy = Toy::new(6, 3, 11);
    let outcome = search(&mut toy, &limits(f64::INFINITY, 500, 2));
    assert!(outcome
        .curve
        .windows(2)
        .all(|pair| pair[1].1 < pair[0].1 && pair[1].0 > pair[0].0));
    assert_eq!(
        outcome.curve.last().map(|point| point.1),
        outcome.best.map(|plan| plan.score.seconds)
    );
}
