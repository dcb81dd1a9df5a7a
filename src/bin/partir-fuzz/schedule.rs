//! Random schedules over a program's named values: meshes of 1 to 3 axes (now and then a
//! hostile axis name), tactics tiling and pinning selected values (now and then a selector or
//! dim that does not exist, a dim the axis does not divide), and `[rules]` for custom calls.

use crate::program::Program;
use partir::random::SplitMix64;

/// Axis names a user might write, and a few hostile ones (empty, quotes, escapes, blanks).
const AXES: &[&str] = &["a", "b", "c", "batch", "model"];
const HOSTILE_AXES: &[&str] = &[
    "",
    "x y",
    "q\"t",
    "back\\slash",
    "new\nline",
    "tab\tbed",
    "é",
];

/// A schedule over 1 to 3 axes, 1 to 3 tactics tiling selected values (mostly names that exist,
/// on dims that exist) and sometimes pinning some. `careful` schedules mostly tile a named
/// value on a dim the axis divides, so that most cases reach propagation and lowering.
pub fn schedule(random: &mut SplitMix64, program: &Program, careful: bool) -> (String, i64) {
    // Careful schedules are hostile less often.
    let hostile = if careful { 0.01 } else { 0.03 };
    let axis_count = 1 + random.below(3);
    let mut axes: Vec<(String, i64)> = Vec::new();
    for _ in 0..axis_count {
        let name = if random.chance(hostile) {
            random.pick(HOSTILE_AXES).to_string()
        } else {
            random.pick(AXES).to_string()
        };
        if axes.iter().any(|(existing, _)| *existing == name) {
            continue;
        }
        let size = match random.below(30) {
            0 => 1,
            1 => 3,
            2..=17 => 2,
            _ => 4,
        };
        axes.push((name, size));
    }
    let devices = axes.iter().map(|(_, size)| size).product();
    let mut mesh = toml::Table::new();
    for (name, size) in &axes {
        mesh.insert(name.clone(), toml::Value::Integer(*size));
    }
    let mut tactics = Vec::new();
    // Names a careful schedule tiled already (tiling one twice is mostly a conflict).
    let mut used: Vec<String> = Vec::new();
    for index in 0..1 + random.below(3) {
        let mut tactic = toml::Table::new();
        tactic.insert("name".into(), format!("T{index}").into());
        // Mostly one tactic per axis, in mesh order, as expert schedules are written.
        let axis = if random.chance(hostile) {
            "nope".to_string()
        } else if index < axes.len() && random.chance(if careful { 0.95 } else { 0.8 }) {
            axes[index].0.clone()
        } else {
            random.pick(&axes).0.clone()
        };
        let size = axes
            .iter()
            .find(|(name, _)| *name == axis)
            .map_or(1, |(_, size)| *size);
        tactic.insert("axis".into(), axis.into());
        let mut tile = toml::Table::new();
        let entries = if careful {
            1 + random.below(2)
        } else {
            1 + random.below(3)
        };
        for _ in 0..entries {
            if careful && random.chance(0.97) {
                if let Some((selector, dim)) = divisible_tile(random, program, size, &used) {
                    used.push(selector.clone());
                    tile.insert(selector, toml::Value::Integer(dim as i64));
                    continue;
                }
            }
            let at = random.below(program.names.len());
            let (selector, rank) = select(random, program, at);
            let dim = if random.chance(0.02) {
                rank + 1
            } else {
                random.below(rank.max(1))
            };
            tile.insert(selector, toml::Value::Integer(dim as i64));
        }
        tactic.insert("tile".into(), tile.into());
        if random.chance(0.2) {
            // A ZeRO-style tactic: the split reaches elementwise ops only.
            tactic.insert("propagate".into(), "elementwise".into());
        }
        if random.chance(if careful { 0.05 } else { 0.1 }) {
            let at = random.below(program.names.len());
            let (selector, _) = select(random, program, at);
            tactic.insert("replicate".into(), vec![toml::Value::from(selector)].into());
        }
        tactics.push(toml::Value::Table(tactic));
    }
    let mut file = toml::Table::new();
    file.insert("mesh".into(), mesh.into());
    file.insert("tactic".into(), tactics.into());
    // Rules for custom calls partir cannot read, as `[rules]` gives them; now and then one
    // malformed (a located error, not a crash).
    let mut rules = toml::Table::new();
    for (target, rule) in &program.rules {
        if random.chance(0.5) {
            let rule = if random.chance(0.05) {
                rule.replace("->", "=")
            } else {
                rule.clone()
            };
            rules.insert(target.clone(), rule.into());
        }
    }
    if !rules.is_empty() {
        file.insert("rules".into(), rules.into());
    }
    (
        toml::to_string(&file).expect("a schedule serialises"),
        devices,
    )
}

/// A named value and one of its dims that `size` divides, or now and then one it does not (a
/// few tries), by its exact name.
fn divisible_tile(
    random: &mut SplitMix64,
    program: &Program,
    size: i64,
    used: &[String],
) -> Option<(String, usize)> {
    for _ in 0..8 {
        let at = random.below(program.names.len());
        if used.contains(&program.names[at]) {
            continue;
        }
        let shape = &program.shapes[at];
        // Now and then a dim `size` does not divide: partir pads it (docs/design.md#uneven-dims).
        let uneven = random.chance(0.25);
        let dims: Vec<usize> = (0..shape.len())
            .filter(|&d| shape[d] >= size && (shape[d] % size == 0 || uneven))
            .collect();
        if !dims.is_empty() {
            return Some((program.names[at].clone(), *random.pick(&dims)));
        }
    }
    None
}

/// A selector for name `at`: the name itself, a glob, or one that matches nothing; with the
/// rank of what it names.
fn select(random: &mut SplitMix64, program: &Program, at: usize) -> (String, usize) {
    let name = &program.names[at];
    let rank = program.shapes[at].len();
    let selector = match random.below(100) {
        0..=84 => name.clone(),
        85..=89 => format!("{}*", &name[..name.len().min(1)]),
        90..=93 => "arg*".into(),
        94..=95 => "*".into(),
        96..=97 => "arg0".into(),
        _ => "no/such/value".into(),
    };
    (selector, rank)
}
