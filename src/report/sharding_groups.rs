//! The final shardings grouped for reading. A training step's 170 arguments and results say a
//! few things many times: every layer's `wq` is split alike, Adam's two moments follow their
//! parameter, and the step returns what it was given. Grouped, the rows are:
//!
//! - **Optimizer state under its parameter.** Parameters are the values whose path starts with
//!   `params/`. A value whose path ends with a parameter's path below `params/`
//!   (`opt/m/layers/0/wq` or `opt_state/0/mu/params/layers/0/wq` for `params/layers/0/wq`) and
//!   whose whole shape is the parameter's is its state, shown in the parameter's row by its
//!   slot (`opt/m`, `opt_state/0/mu`).
//! - **Results not repeated.** A result split like the argument of the same name is counted,
//!   not listed.
//! - **Layers as `*`.** Path components that are numbers (layer indices) become `*`: values whose
//!   pattern, split, per-device shape and state agree are one row, `params/layers/*/wq x2`.

use crate::{
    ir::numbered,
    sim::report::{AxisSize, ValueSharding},
};

/// Values listed as one row: the same pattern, split, per-device shape and state.
#[derive(Debug)]
pub struct Group<'a> {
    /// `params/layers/*/wq`; `params/layers/{0,2}/wq` when other layers are split otherwise;
    /// the name itself for one value.
    pub label: String,
    /// The values in the row (at least one), in program order: all arguments or all results.
    pub values: Vec<&'a ValueSharding>,
    /// The row's optimizer state, one entry per way it is split.
    pub state: Vec<State>,
}

/// Optimizer state of a [`Group`]'s values split one way.
#[derive(Debug, PartialEq)]
pub struct State {
    /// `["opt/m", "opt/v"]`.
    pub slots: Vec<String>,
    pub axes: Vec<Vec<String>>,
    pub local_shape: Vec<i64>,
    /// How many values (members times slots).
    pub count: usize,
}

impl Group<'_> {
    pub fn first(&self) -> &ValueSharding {
        self.values[0]
    }

    pub fn is_result(&self) -> bool {
        self.first().is_result
    }

    /// Whether `state` is split like the group's values (then it is named, not drawn apart).
    pub fn splits_like(&self, state: &State) -> bool {
        state.axes == self.first().axes && state.local_shape == self.first().local_shape
    }
}

/// The rows for `values` (arguments, then results) on `mesh`.
#[derive(Debug)]
pub struct Groups<'a> {
    pub groups: Vec<Group<'a>>,
    /// Results left out because the argument of the same name is split the same way.
    pub repeated_results: usize,
}

/// A row of the grouped table, before the terminal's or the picture's markup.
pub enum Row<'g> {
    /// A group's values, with its state split alike named in the same row.
    Values {
        group: &'g Group<'g>,
        alike: Vec<&'g State>,
    },
    /// State split otherwise than its parameter: a row of its own below the parameter's.
    State(&'g State),
}

impl State {
    /// `["[batch, model]", "16x32"]`, as [`ValueSharding::cells`] writes a value's.
    pub fn cells(&self) -> [String; 2] {
        let [_, split, local] = ValueSharding {
            axes: self.axes.clone(),
            local_shape: self.local_shape.clone(),
            ..ValueSharding::default()
        }
        .cells();
        [split, local]
    }
}

impl Groups<'_> {
    /// The rows in order: each group's, then its state split otherwise.
    pub fn rows(&self) -> Vec<Row<'_>> {
        let mut rows = Vec::new();
        for group in &self.groups {
            let (alike, apart): (Vec<&State>, Vec<&State>) = group
                .state
                .iter()
                .partition(|state| group.splits_like(state));
            rows.push(Row::Values { group, alike });
            rows.extend(apart.into_iter().map(Row::State));
        }
        rows
    }

    /// What the rows stand for: `170 arguments and 171 results in 14 rows: layer numbers as *,
    /// optimizer state with its parameter; 170 results split like the argument of the same
    /// name not repeated`.
    pub fn note(&self, values: &[ValueSharding], rows: usize) -> String {
        let results = values.iter().filter(|value| value.is_result).count();
        let plural = |count: usize, what: &str| {
            format!("{count} {what}{}", if count == 1 { "" } else { "s" })
        };
        let mut note = format!(
            "{} and {} in {}: layer numbers as *, optimizer state with its parameter",
            plural(values.len() - results, "argument"),
            plural(results, "result"),
            plural(rows, "row"),
        );
        if self.repeated_results > 0 {
            note += &format!(
                "; {} split like the argument of the same name not repeated",
                plural(self.repeated_results, "result")
            );
        }
        note
    }
}

/// The key that makes values one row: pattern, split, per-device shape and state.
type Signature = (Vec<String>, Vec<Vec<String>>, Vec<i64>, Vec<State>);

/// A value with the optimizer state folded under it: `(slot, state)`.
type Folded<'a> = (&'a ValueSharding, Vec<(String, &'a ValueSharding)>);

/// The values of one pattern, by signature.
type Kinds<'a> = Vec<(Signature, Vec<&'a ValueSharding>)>;

pub fn group<'a>(values: &'a [ValueSharding], mesh: &[AxisSize]) -> Groups<'a> {
    let arguments: Vec<&ValueSharding> = values.iter().filter(|value| !value.is_result).collect();
    let mut results = Vec::new();
    let mut repeated_results = 0;
    for result in values.iter().filter(|value| value.is_result) {
        let repeats = arguments.iter().any(|argument| {
            argument.name == result.name
                && argument.axes == result.axes
                && argument.local_shape == result.local_shape
        });
        if repeats {
            repeated_results += 1;
        } else {
            results.push(result);
        }
    }
    let layers = numbered::most_numbered(values.iter().map(|value| value.name.as_str()));
    let layers = layers.as_ref().map(|(key, _)| key.as_str());
    let mut groups = rows(fold(&arguments, mesh), layers);
    groups.extend(rows(fold(&results, mesh), layers));
    Groups {
        groups,
        repeated_results,
    }
}

/// Each value that is not a parameter's state, with the state folded under it: `(slot, state)`.
fn fold<'a>(values: &[&'a ValueSharding], mesh: &[AxisSize]) -> Vec<Folded<'a>> {
    let parameter = |value: &ValueSharding| {
        let mut path = value.name.split('/');
        (path.next() == Some("params") && path.next().is_some())
            .then(|| value.name["params/".len()..].to_string())
    };
    let below_params: Vec<(usize, String)> = values
        .iter()
        .enumerate()
        .filter_map(|(index, value)| parameter(value).map(|rest| (index, rest)))
        .collect();
    let mut state_of: Vec<Option<(usize, String)>> = vec![None; values.len()];
    for (index, value) in values.iter().enumerate() {
        if parameter(value).is_some() {
            continue;
        }
        let path: Vec<&str> = value.name.split('/').collect();
        // The shortest slot first: the longest parameter path the value ends with.
        for split in 1..path.len() {
            let rest = path[split..].join("/");
            let Some((owner, _)) = below_params.iter().find(|(_, below)| *below == rest) else {
                continue;
            };
            let slot = &path[..split];
            let slot = match slot.split_last() {
                Some((&"params", before)) => before,
                _ => slot,
            };
            if !slot.is_empty() && value.global_shape(mesh) == values[*owner].global_shape(mesh) {
                state_of[index] = Some((*owner, slot.join("/")));
                break;
            }
        }
    }
    let mut folded: Vec<Folded> = Vec::new();
    let mut position = vec![usize::MAX; values.len()];
    for (index, value) in values.iter().enumerate() {
        if state_of[index].is_none() {
            position[index] = folded.len();
            folded.push((value, Vec::new()));
        }
    }
    for (index, value) in values.iter().enumerate() {
        if let Some((owner, slot)) = &state_of[index] {
            folded[position[*owner]].1.push((slot.clone(), value));
        }
    }
    folded
}

/// `params/layers/0/wq` as `["params", "layers", "*", "wq"]`; `layers` numbers the layers
/// when they are joined to a key (`block_0` as `block_*`).
fn pattern(name: &str, layers: Option<&str>) -> Vec<String> {
    numbered::starred(name, layers)
        .split('/')
        .map(str::to_string)
        .collect()
}

/// A value's state, one entry per way it is split, slots in program order.
fn states(state: &[(String, &ValueSharding)]) -> Vec<State> {
    let mut out: Vec<State> = Vec::new();
    for (slot, value) in state {
        match out
            .iter_mut()
            .find(|s| s.axes == value.axes && s.local_shape == value.local_shape)
        {
            Some(same) => {
                same.count += 1;
                if !same.slots.contains(slot) {
                    same.slots.push(slot.clone());
                }
            }
            None => out.push(State {
                slots: vec![slot.clone()],
                axes: value.axes.clone(),
                local_shape: value.local_shape.clone(),
                count: 1,
            }),
        }
    }
    out
}

/// Folded values as rows: by pattern in order of first appearance, then by signature.
fn rows<'a>(folded: Vec<Folded<'a>>, layers: Option<&str>) -> Vec<Group<'a>> {
    let mut by_pattern: Vec<(Vec<String>, Kinds<'a>)> = Vec::new();
    for (value, state) in folded {
        let pattern = pattern(&value.name, layers);
        let signature: Signature = (
            pattern.clone(),
            value.axes.clone(),
            value.local_shape.clone(),
            states(&state),
        );
        let kinds = match by_pattern.iter_mut().find(|(p, _)| *p == pattern) {
            Some((_, kinds)) => kinds,
            None => {
                by_pattern.push((pattern, Vec::new()));
                &mut by_pattern.last_mut().expect("pushed").1
            }
        };
        match kinds.iter_mut().find(|(s, _)| *s == signature) {
            Some((_, members)) => members.push(value),
            None => kinds.push((signature, vec![value])),
        }
    }
    let mut groups = Vec::new();
    for (pattern, kinds) in by_pattern {
        let alone = kinds.len() == 1;
        for ((_, _, _, state), members) in kinds {
            let times = |count: usize| -> Vec<State> {
                state
                    .iter()
                    .map(|state| State {
                        slots: state.slots.clone(),
                        axes: state.axes.clone(),
                        local_shape: state.local_shape.clone(),
                        count: state.count * count,
                    })
                    .collect()
            };
            match label(&members, alone.then_some(&pattern[..])) {
                Some(label) => groups.push(Group {
                    label,
                    state: times(members.len()),
                    values: members,
                }),
                // Layer sets that do not read as one pattern: one row per value.
                None => groups.extend(members.into_iter().map(|member| Group {
                    label: member.name.clone(),
                    values: vec![member],
                    state: times(1),
                })),
            }
        }
    }
    groups
}

/// The row's label: a number that all `members` share stays; one that varies is the
/// pattern's (`*`, `block_*`) when the row holds every value of its pattern (`alone`), else
/// the set `{0,2}`. `None` when the sets would name values that are not in the row (two
/// numbers varying together).
fn label(members: &[&ValueSharding], alone: Option<&[String]>) -> Option<String> {
    let paths: Vec<Vec<&str>> = members
        .iter()
        .map(|member| member.name.split('/').collect())
        .collect();
    if paths.len() == 1 {
        return Some(members[0].name.clone());
    }
    let mut parts = Vec::new();
    let mut combinations = 1;
    for (index, part) in paths[0].iter().enumerate() {
        let mut seen: Vec<&str> = Vec::new();
        for path in &paths {
            if !seen.contains(&path[index]) {
                seen.push(path[index]);
            }
        }
        if seen.len() == 1 {
            parts.push(part.to_string());
        } else {
            combinations *= seen.len();
            parts.push(match alone {
                Some(pattern) => pattern[index].clone(),
                None => format!("{{{}}}", seen.join(",")),
            });
        }
    }
    (combinations == members.len()).then(|| parts.join("/"))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn mesh() -> Vec<AxisSize> {
        AxisSize::mesh(&[("batch", 4), ("model", 2)])
    }

    /// `split` per dim: `""` for none, `"model*batch"` for two axes.
    fn value(name: &str, split: &[&str], local: &[i64], is_result: bool) -> ValueSharding {
        ValueSharding {
            name: name.into(),
            is_result,
            axes: split
                .iter()
                .map(|axes| {
                    axes.split('*')
                        .filter(|axis| !axis.is_empty())
                        .map(String::from)
                        .collect()
                })
                .collect(),
            local_shape: local.to_vec(),
        }
    }

    fn labels(groups: &Groups) -> Vec<String> {
        groups
            .groups
            .iter()
            .map(|group| {
                format!(
                    "{}{} x{}",
                    if group.is_result() { "-> " } else { "" },
                    group.label,
                    group.values.len()
                )
            })
            .collect()
    }

    /// A two-layer Adam step: every layer's wq split alike, its moments alike, and the step
    /// returns its parameters and state split as given.
    fn adam_step(split: [&str; 2], local: [i64; 2]) -> Vec<ValueSharding> {
        let mut values = Vec::new();
        for is_result in [false, true] {
            for prefix in ["params/", "opt/m/", "opt/v/"] {
                for layer in 0..2 {
                    let name = format!("{prefix}layers/{layer}/wq");
                    values.push(value(&name, &split, &local, is_result));
                }
            }
            values.push(value("opt/count", &[], &[], is_result));
        }
        values.push(value("tokens", &["batch", ""], &[2, 16], false));
        values.push(value("loss", &[], &[], true));
        values
    }

    #[test]
    fn layers_fold_into_a_pattern_and_state_under_its_parameter() {
        let values = adam_step(["batch", "model"], [16, 32]);
        let groups = group(&values, &mesh());
        assert_eq!(
            labels(&groups),
            [
                "params/layers/*/wq x2",
                "opt/count x1",
                "tokens x1",
                "-> loss x1"
            ]
        );
        let wq = &groups.groups[0];
        assert_eq!(
            wq.state,
            [State {
                slots: vec!["opt/m".into(), "opt/v".into()],
                axes: wq.first().axes.clone(),
                local_shape: vec![16, 32],
                count: 4,
            }]
        );
        assert!(wq.splits_like(&wq.state[0]));
        // Six tensors and the count returned as given.
        assert_eq!(groups.repeated_results, 7);
    }

    #[test]
    fn penzai_s_joined_layer_numbers_fold_too() {
        let mut values: Vec<ValueSharding> = (0..3)
            .map(|layer| {
                let name = format!("params/transformer/block_{layer}/mlp/in/Linear.weights");
                value(&name, &["", "model"], &[64, 32], false)
            })
            .collect();
        values.push(value("params/embed_0", &["", ""], &[8, 8], false));
        let groups = group(&values, &mesh());
        assert_eq!(
            labels(&groups),
            [
                "params/transformer/block_*/mlp/in/Linear.weights x3",
                "params/embed_0 x1"
            ]
        );
    }

    #[test]
    fn a_layer_split_otherwise_is_its_own_row() {
        let mut values: Vec<ValueSharding> = (0..3)
            .map(|layer| {
                let name = format!("params/layers/{layer}/wq");
                value(&name, &["", "model"], &[64, 32], false)
            })
            .collect();
        values[1] = value("params/layers/1/wq", &["batch", "model"], &[16, 32], false);
        let groups = group(&values, &mesh());
        assert_eq!(
            labels(&groups),
            ["params/layers/{0,2}/wq x2", "params/layers/1/wq x1"]
        );
        // Two numbers varying together that do not make every combination: one row each.
        let values = [
            value("params/stack/0/layers/0/w", &[""], &[8], false),
            value("params/stack/1/layers/1/w", &[""], &[8], false),
            value("params/stack/1/layers/0/w", &["batch"], &[2], false),
        ];
        assert_eq!(
            labels(&group(&values, &mesh())),
            [
                "params/stack/0/layers/0/w x1",
                "params/stack/1/layers/1/w x1",
                "params/stack/1/layers/0/w x1"
            ]
        );
    }

    #[test]
    fn state_split_otherwise_is_named_with_its_own_split() {
        // ZeRO-2: the moments are split over batch, the parameter is not.
        let values = [
            value("params/w", &["", "model"], &[64, 32], false),
            value("opt/m/w", &["batch", "model"], &[16, 32], false),
            value("opt/v/w", &["batch", "model"], &[16, 32], false),
        ];
        let groups = group(&values, &mesh());
        assert_eq!(labels(&groups), ["params/w x1"]);
        let w = &groups.groups[0];
        assert_eq!(w.state.len(), 1);
        assert_eq!(w.state[0].slots, ["opt/m", "opt/v"]);
        assert_eq!(w.state[0].local_shape, [16, 32]);
        assert!(!w.splits_like(&w.state[0]));
    }

    #[test]
    fn optax_state_paths_and_shapes_decide_what_is_state() {
        let values = [
            value("params/dense/kernel", &["", "model"], &[64, 32], false),
            value(
                "opt_state/0/mu/params/dense/kernel",
                &["", "model"],
                &[64, 32],
                false,
            ),
            // Ends like a parameter but holds another shape: not its state.
            value("stats/dense/kernel", &[""], &[7], false),
            // No parameter of that path.
            value("opt_state/0/mu/params/other", &[""], &[7], false),
        ];
        let groups = group(&values, &mesh());
        assert_eq!(
            labels(&groups),
            [
                "params/dense/kernel x1",
                "stats/dense/kernel x1",
                "opt_state/0/mu/params/other x1"
            ]
        );
        assert_eq!(groups.groups[0].state[0].slots, ["opt_state/0/mu"]);
    }

    #[test]
    fn results_split_otherwise_than_their_argument_stay() {
        let values = [
            value("params/w", &["", "model"], &[64, 32], false),
            value("params/w", &["batch", "model"], &[16, 32], true),
            value("result#1", &["batch"], &[2], true),
        ];
        let groups = group(&values, &mesh());
        assert_eq!(
            labels(&groups),
            ["params/w x1", "-> params/w x1", "-> result#1 x1"]
        );
        assert_eq!(groups.repeated_results, 0);
    }
}
