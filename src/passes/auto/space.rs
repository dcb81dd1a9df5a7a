//! The search's actions, and the analysis that shrinks them (docs/design.md#automatic-partitioning).
//!
//! Raw: a tile per (argument, divisible dim) and a replicate per argument. Then:
//! 1. repeated layers are one group: `params/layers/0/wq` and `params/layers/1/wq` (same shape)
//!    are decided together as `params/layers/*/wq`, so the count depends on a layer's shape, not
//!    on the number of layers;
//! 2. each group's tile is applied alone and propagated: one that fails (non-divisible, pinned,
//!    tiled already) or changes nothing is dropped, and tiles whose propagation reaches the same
//!    arguments are one action (tiling `params/.../w1` on dim 1 also tiles its Adam moments and
//!    its gradient's producer; tiling `tokens` on dim 0 tiles `targets`);
//! 3. in the compute phase, a tile that alone returns state split differently from how it
//!    takes it is left to the memory phase (see `analyse`);
//! 4. a replicate is kept only for a group some other tile reaches, and the search takes it only
//!    together with such a tile: pinning what nothing tiles changes nothing.

use super::evaluate::{Evaluator, State};
use crate::{
    ir::numbered,
    schedule::{Reach, Tactic},
};
use std::collections::BTreeMap;

/// Arguments one decision covers.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Group {
    /// The selector a schedule names them by (`params/layers/*/wq`, or the one name).
    pub selector: String,
    /// Argument indices.
    pub members: Vec<usize>,
    pub shape: Vec<i64>,
}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Kind {
    /// Tile on a dim, propagated through every op the TMR allows.
    Tile(usize),
    /// Tile on a dim, propagated through elementwise ops only (ZeRO: state sharded, compute
    /// not).
    Shard(usize),
    Replicate,
}

impl Kind {
    pub fn describe(self) -> String {
        match self {
            Kind::Tile(dim) => format!("tile dim {dim}"),
            Kind::Shard(dim) => format!("shard dim {dim} (elementwise)"),
            Kind::Replicate => "replicate".into(),
        }
    }
}

#[derive(Clone, Debug)]
pub struct Action {
    pub group: usize,
    pub kind: Kind,
    /// The other arguments (name, dim) the action's propagation tiles.
    pub ties: Vec<(String, usize)>,
    /// The other groups it tiles some member of (a replicate of one of them may then matter).
    pub reaches: Vec<usize>,
    /// The plan of this action alone, priced (for tiles): how promising it looks.
    pub alone: Option<super::evaluate::Priced>,
    /// State arguments (name, dim) the action tiles too, because alone it would return them
    /// split on that dim while they come in whole (a Megatron kernel's Adam moments).
    pub with: Vec<(String, usize)>,
}

/// The reduced action space of one phase of one axis.
#[derive(Clone, Debug, Default)]
pub struct Space {
    pub groups: Vec<Group>,
    pub actions: Vec<Action>,
    /// The raw count.
    pub raw: usize,
}

/// An argument the search may decide about.
#[derive(Clone, Debug)]
pub struct Candidate {
    pub index: usize,
    pub name: String,
    pub shape: Vec<i64>,
    /// Tiled along the axis already (by a tactic before): nothing to decide.
    pub decided: bool,
    /// For each dim, how many ways it is split already (along other axes).
    pub parts: Vec<i64>,
}

/// Repeated layers as groups: names that differ only in their layer numbers
/// ([`crate::ir::numbered::starred`]) and have one shape share a selector with `*` for the
/// numbers, when that selector names exactly them.
pub fn layer_groups(candidates: &[Candidate], all_names: &[String]) -> Vec<Group> {
    let layers = numbered::most_numbered(all_names.iter().map(String::as_str));
    let pattern =
        |name: &str| numbered::starred(name, layers.as_ref().map(|(key, _)| key.as_str()));
    let mut by_pattern: BTreeMap<(String, Vec<i64>), Vec<&Candidate>> = BTreeMap::new();
    let mut order = Vec::new();
    for candidate in candidates {
        let key = (pattern(&candidate.name), candidate.shape.clone());
        if !by_pattern.contains_key(&key) {
            order.push(key.clone());
        }
        by_pattern.entry(key).or_default().push(candidate);
    }
    let mut groups = Vec::new();
    for key in order {
        let members = &by_pattern[&key];
        let selector = crate::ir::Selector::new(&key.0).expect("a non-empty name");
        let matched = all_names
            .iter()
            .filter(|name| selector.matches(name))
            .count();
        if members.len() > 1 && matched == members.len() {
            groups.push(Group {
                selector: key.0.clone(),
                members: members.iter().map(|member| member.index).collect(),
                shape: key.1.clone(),
            });
        } else {
            groups.extend(members.iter().map(|member| Group {
                selector: member.name.clone(),
                members: vec![member.index],
                shape: member.shape.clone(),
            }));
        }
    }
    groups
}

/// Raw actions: per candidate, a tile (or shard) per splittable dim, and a replicate.
pub fn raw_count(candidates: &[Candidate], axis_size: i64, reach: Reach) -> usize {
    candidates
        .iter()
        .filter(|candidate| !candidate.decided)
        .map(|candidate| {
            let dims = splittable_dims(&candidate.shape, &candidate.parts, axis_size).len();
            dims + usize::from(reach == Reach::All)
        })
        .sum()
}

/// The dims a tile along the axis may split: those it divides (with the axes splitting them
/// already), and those it does not when padding them to whole tiles adds at most an eighth
/// (docs/design.md#uneven-dims: LLaMA-3's vocabulary 1024 ways, +0.6%; not a batch of 6 on 4,
/// +33%, which a user may still write). The bound keeps the search's probes to splits worth
/// pricing.
fn splittable_dims(shape: &[i64], parts: &[i64], axis_size: i64) -> Vec<usize> {
    (0..shape.len())
        .filter(|&dim| {
            let parts = parts.get(dim).copied().unwrap_or(1);
            let ways = parts * axis_size;
            let size = shape[dim];
            if size < ways || size % parts != 0 {
                return false;
            }
            // Each of the `parts` tiles is padded at its end to a multiple of the axis.
            let tile = size / parts;
            let padding = parts * ((tile + axis_size - 1) / axis_size * axis_size - tile);
            8 * padding <= size
        })
        .collect()
}

/// The tactic applying `actions` (of `space`) along `axis`.
pub fn tactic(space: &Space, actions: &[usize], axis: &str, name: &str, reach: Reach) -> Tactic {
    let mut tactic = Tactic {
        name: name.to_string(),
        axis: axis.to_string(),
        tile: Vec::new(),
        replicate: Vec::new(),
        reach,
        auto: None,
        pipeline: None,
        comment: Vec::new(),
        line: 0,
    };
    for &index in actions {
        let action = &space.actions[index];
        let selector = space.groups[action.group].selector.clone();
        match action.kind {
            Kind::Tile(dim) | Kind::Shard(dim) => tactic.tile.push((selector, dim)),
            Kind::Replicate => tactic.replicate.push(selector),
        }
        for tile in &action.with {
            // Two actions may both take a moment in: it is tiled once.
            if !tactic.tile.contains(tile) {
                tactic.tile.push(tile.clone());
            }
        }
    }
    tactic
}

/// Analyses the actions of one phase (`reach`) on `axis`: applies each group's tile alone,
/// keeps those that apply and change something, merges those that reach the same arguments.
/// Probing stops at `deadline` (the search's time limit).
pub fn analyse(
    evaluator: &mut Evaluator,
    candidates: &[Candidate],
    all_names: &[String],
    axis_size: i64,
    reach: Reach,
    deadline: std::time::Instant,
    progress: &mut dyn FnMut(usize),
) -> Space {
    let open: Vec<Candidate> = candidates
        .iter()
        .filter(|candidate| !candidate.decided)
        .cloned()
        .collect();
    let raw = raw_count(&open, axis_size, reach);
    let groups = layer_groups(&open, all_names);
    let base = evaluator.base_state();
    let name_of = |index: usize| {
        candidates
            .iter()
            .find(|candidate| candidate.index == index)
            .map(|candidate| candidate.name.clone())
            .unwrap_or_else(|| format!("arg{index}"))
    };
    let mut space = Space {
        groups: groups.clone(),
        actions: Vec::new(),
        raw,
    };
    let mut seen: BTreeMap<State, usize> = BTreeMap::new();
    // Groups some tile reaches by propagation.
    let mut reached: Vec<usize> = Vec::new();
    // Every group's tile on every dim the axis splits (divides, or pads a little), each alone.
    let mut probes: Vec<(usize, Kind, Tactic)> = Vec::new();
    for (group_index, group) in groups.iter().enumerate() {
        let parts = open
            .iter()
            .find(|candidate| candidate.index == group.members[0])
            .map(|candidate| candidate.parts.clone())
            .unwrap_or_default();
        for dim in splittable_dims(&group.shape, &parts, axis_size) {
            let kind = match reach {
                Reach::All => Kind::Tile(dim),
                Reach::Elementwise => Kind::Shard(dim),
            };
            let probe = Space {
                groups: groups.clone(),
                actions: vec![Action {
                    group: group_index,
                    kind,
                    ties: Vec::new(),
                    reaches: Vec::new(),
                    alone: None,
                    with: Vec::new(),
                }],
                raw: 0,
            };
            let tactic = tactic(&probe, &[0], evaluator.axis(), "probe", reach);
            probes.push((group_index, kind, tactic));
        }
    }
    let batch = evaluator.parallelism();
    // Each probe's state and price, in probe order (None: refused, or out of time).
    let mut results: Vec<Option<(State, Option<super::evaluate::Priced>)>> = Vec::new();
    for (index, (_, _, tactic)) in probes.iter().enumerate() {
        if std::time::Instant::now() >= deadline {
            // Out of time: the groups not probed yet are not offered to the search.
            break;
        }
        if index % batch == 0 {
            let ahead: Vec<Vec<Tactic>> = probes[index..(index + batch).min(probes.len())]
                .iter()
                .map(|(_, _, tactic)| vec![tactic.clone()])
                .collect();
            evaluator.prefetch(&ahead);
        }
        progress(1);
        results.push(evaluator.state_and_price(std::slice::from_ref(tactic)));
    }
    // Whether the tile of argument `name` on `dim`, probed alone, returned everything as it
    // took it: such a tile is a decision of its own, not a partner to take along.
    let consistent_alone = |name: &str, dim: usize| {
        let Some(argument) = candidates.iter().find(|candidate| candidate.name == name) else {
            return false;
        };
        probes
            .iter()
            .zip(&results)
            .any(|((group_index, kind, _), result)| {
                groups[*group_index].members.contains(&argument.index)
                    && *kind == Kind::Tile(dim)
                    && result.as_ref().is_some_and(|(_, alone)| {
                        alone.is_some_and(|priced| priced.deferred == 0.0)
                    })
            })
    };
    for (&(group_index, kind, ref tactic), result) in probes.iter().zip(results.iter()) {
        let group = &groups[group_index];
        let Some((mut state, mut alone)) = result.clone() else {
            continue; // refused: non-divisible, pinned, already tiled
        };
        let mut with = Vec::new();
        if reach == Reach::All && alone.is_some_and(|priced| priced.deferred > 0.0) {
            // Returns some state split differently from how it takes it. When tiling that state
            // in as well makes the plan consistent (a Megatron kernel of a scanned layer with its
            // partners, which propagation does not reach through the loop), that is the action; otherwise (tiling an Adam moment splits the parameter's
            // update, not its use) it is a storage decision, which the memory phase makes with
            // the state split both ways.
            with = evaluator.returned_splits(std::slice::from_ref(tactic));
            // Partners only: tiles no better alone (Megatron's column split of q with the row
            // split of o). A moment's tile would take its parameter's, a decision already.
            if with.iter().any(|(name, dim)| consistent_alone(name, *dim)) {
                continue;
            }
            let mut extended = tactic.clone();
            extended.tile.extend(with.iter().cloned());
            // ... and only when together they are faster than the program as it is (Megatron's
            // pairs are; a width split that drags every weight along is not).
            let before = evaluator.price(&[]).map(|priced| priced.score.seconds);
            match evaluator.state_and_price(std::slice::from_ref(&extended)) {
                Some((wider, priced))
                    if !with.is_empty()
                        && priced.is_some_and(|priced| {
                            priced.deferred == 0.0
                                && before.is_some_and(|before| priced.score.seconds < before)
                        }) =>
                {
                    (state, alone) = (wider, priced);
                }
                _ => continue,
            }
        }
        // Actions are told apart by what they tile (and how many ops, how many conflicts), not
        // by the exact ops: tiles that reach the same arguments are one decision.
        let state = state.tied();
        if state == base.tied() || seen.contains_key(&state) {
            continue; // changes nothing, or the same as an action kept already
        }
        let ties: Vec<(String, usize)> = state
            .tiled
            .iter()
            .filter(|(argument, _)| !group.members.contains(argument))
            .filter(|tied| !base.tiled.contains(tied))
            .map(|&(argument, dim)| (name_of(argument), dim))
            .collect();
        let reaches: Vec<usize> = groups
            .iter()
            .enumerate()
            .filter(|(other, member_group)| {
                *other != group_index
                    && state
                        .tiled
                        .iter()
                        .any(|(argument, _)| member_group.members.contains(argument))
            })
            .map(|(other, _)| other)
            .collect();
        for &other in &reaches {
            if !reached.contains(&other) {
                reached.push(other);
            }
        }
        seen.insert(state, space.actions.len());
        space.actions.push(Action {
            group: group_index,
            kind,
            ties,
            reaches,
            alone,
            with,
        });
    }
    if reach == Reach::Elementwise {
        drop_dominated_shards(&mut space.actions);
    }
    if reach == Reach::All {
        for group_index in 0..groups.len() {
            if reached.contains(&group_index) {
                space.actions.push(Action {
                    group: group_index,
                    kind: Kind::Replicate,
                    ties: Vec::new(),
                    reaches: Vec::new(),
                    alone: None,
                    with: Vec::new(),
                });
            }
        }
    }
    space
}

/// Drops a memory phase's shard of a group that another shard of the same group, tying the same
/// arguments, beats alone: no slower and no larger (one strictly). Two dims of one tensor save
/// the same bytes, so what tells them apart is what each costs: LLaMA-3 70B's stacked q, k, v, o
/// projections `[80, 8192, ...]` sharded on `data` (16) on their layer dim, which the scans
/// read one block at a time by the loop's index, are gathered whole in every step (the search
/// kept that dim and its plan priced 32.87 s against the expert's 6.13 s); on dim 1 only each
/// layer's share moves, as ZeRO-3 does.
fn drop_dominated_shards(actions: &mut Vec<Action>) {
    let score = |action: &Action| action.alone.map(|priced| priced.score);
    fn tied(action: &Action) -> Vec<&str> {
        let mut names: Vec<&str> = action.ties.iter().map(|(name, _)| name.as_str()).collect();
        names.sort_unstable();
        names
    }
    let dominated: Vec<bool> = actions
        .iter()
        .enumerate()
        .map(|(index, action)| {
            let (Kind::Shard(_), Some(mine)) = (action.kind, score(action)) else {
                return false;
            };
            actions.iter().enumerate().any(|(other_index, other)| {
                other_index != index
                    && other.group == action.group
                    && matches!(other.kind, Kind::Shard(_))
                    && tied(other) == tied(action)
                    && score(other).is_some_and(|theirs| {
                        theirs.seconds <= mine.seconds
                            && theirs.peak_bytes <= mine.peak_bytes
                            && (theirs.seconds < mine.seconds
                                || theirs.peak_bytes < mine.peak_bytes)
                    })
            })
        })
        .collect();
    let mut dominated = dominated.into_iter();
    actions.retain(|_| !dominated.next().unwrap_or(false));
}

#[cfg(test)]
mod tests {
    use super::*;

    fn candidate(index: usize, name: &str, shape: &[i64]) -> Candidate {
        Candidate {
            index,
            name: name.into(),
            shape: shape.to_vec(),
            decided: false,
            parts: vec![1; shape.len()],
        }
    }

    fn shard(group: usize, dim: usize, seconds: f64, peak_gib: f64, tied: &str) -> Action {
        Action {
            group,
            kind: Kind::Shard(dim),
            ties: vec![(tied.to_string(), dim)],
            reaches: Vec::new(),
            alone: Some(super::super::evaluate::Priced {
                score: crate::passes::auto::mcts::Score {
                    seconds,
                    peak_bytes: peak_gib * 2f64.powi(30),
                },
                deferred: 0.0,
                state_bytes: 0.0,
            }),
            with: Vec::new(),
        }
    }

    #[test]
    fn a_shard_another_dim_of_its_group_beats_is_dropped() {
        // q_proj [80, 8192, 8192] on `data`: the layer dim (gathered whole in every scan step)
        // and dim 1 save the same bytes; dim 1 is faster. Another group's slower shard stays, and
        // so does one that saves more memory for its time.
        let mut actions = vec![
            shard(0, 0, 32.9, 60.0, "opt/mu/q"),
            shard(0, 1, 6.1, 60.0, "opt/mu/q"),
            shard(1, 0, 40.0, 60.0, "opt/mu/o"),
            shard(2, 0, 9.0, 50.0, "opt/mu/k"),
            shard(2, 1, 6.0, 60.0, "opt/mu/k"),
        ];
        drop_dominated_shards(&mut actions);
        let kept: Vec<(usize, Kind)> = actions.iter().map(|a| (a.group, a.kind)).collect();
        assert_eq!(
            kept,
            vec![
                (0, Kind::Shard(1)),
                (1, Kind::Shard(0)),
                (2, Kind::Shard(0)),
                (2, Kind::Shard(1))
            ]
        );
    }

    #[test]
    fn repeated_layers_are_one_group() {
        let mut candidates = Vec::new();
        for layer in 0..48 {
            candidates.push(candidate(
                2 * layer,
                &format!("params/layers/{layer}/wq"),
                &[64, 64],
            ));
            candidates.push(candidate(
                2 * layer + 1,
                &format!("params/layers/{layer}/b1"),
                &[128],
            ));
        }
        candidates.push(candidate(96, "params/embed", &[64, 64]));
        let names: Vec<String> = candidates.iter().map(|c| c.name.clone()).collect();
        let groups = layer_groups(&candidates, &names);
        let selectors: Vec<&str> = groups.iter().map(|g| g.selector.as_str()).collect();
        assert_eq!(
            selectors,
            ["params/layers/*/wq", "params/layers/*/b1", "params/embed"]
        );
        assert_eq!(groups[0].members.len(), 48);
    }

    #[test]
    fn joined_layer_numbers_group_but_a_layer_s_own_numbers_do_not() {
        // flax's names: `Block_<i>` numbers the layers; `Dense_0` and `Dense_1` are two
        // parameters of one layer that happen to share a shape.
        let mut candidates = Vec::new();
        for layer in 0..4 {
            for dense in 0..2 {
                let name = format!("params/Block_{layer}/Dense_{dense}/kernel");
                candidates.push(candidate(candidates.len(), &name, &[64, 64]));
            }
        }
        let names: Vec<String> = candidates.iter().map(|c| c.name.clone()).collect();
        let groups = layer_groups(&candidates, &names);
        let selectors: Vec<&str> = groups.iter().map(|g| g.selector.as_str()).collect();
        assert_eq!(
            selectors,
            [
                "params/Block_*/Dense_0/kernel",
                "params/Block_*/Dense_1/kernel"
            ]
        );
        assert_eq!(groups[0].members, [0, 2, 4, 6]);
    }

    #[test]
    fn layers_of_different_shapes_stay_apart() {
        // A UNet's blocks: same role, different widths. A `*` selector would tile both.
        let candidates = [
            candidate(0, "params/down/0/conv", &[3, 3, 8, 16]),
            candidate(1, "params/down/1/conv", &[3, 3, 16, 32]),
            candidate(2, "params/up/0/conv", &[3, 3, 8, 16]),
        ];
        let names: Vec<String> = candidates.iter().map(|c| c.name.clone()).collect();
        let groups = layer_groups(&candidates, &names);
        let selectors: Vec<&str> = groups.iter().map(|g| g.selector.as_str()).collect();
        assert_eq!(
            selectors,
            [
                "params/down/0/conv",
                "params/down/1/conv",
                "params/up/0/conv"
            ]
        );
    }

    #[test]
    fn raw_actions_count_splittable_dims_and_a_replicate() {
        let candidates = [
            candidate(0, "w", &[64, 6]),
            candidate(1, "b", &[6]),
            candidate(2, "count", &[]),
        ];
        assert_eq!(raw_count(&candidates, 4, Reach::All), 2 + 1 + 1);
        assert_eq!(raw_count(&candidates, 2, Reach::All), 3 + 2 + 1);
        assert_eq!(raw_count(&candidates, 2, Reach::Elementwise), 2 + 1);
        // 130 on 4 pads to 132 (+1.5%): offered; 6 on 4 pads to 8 (+33%): not.
        let uneven = [candidate(0, "v", &[130, 6])];
        assert_eq!(raw_count(&uneven, 4, Reach::All), 1 + 1);
    }
}
