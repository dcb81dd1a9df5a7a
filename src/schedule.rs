//! Schedules of tactics (docs/design.md#6-schedules), read from TOML:
//!
//! ```toml
//! mesh = { batch = 4, model = 2 }     # axes major to minor (file order)
//! [[tactic]]
//! name = "MP"
//! axis = "model"
//! tile = { "*w1" = 1, "*w2" = 0 }      # selector = dim
//! replicate = ["*bias*"]
//! [[tactic]]
//! name = "Z3"
//! axis = "batch"
//! tile = { "params/*" = 0, "opt/*" = 0 }
//! propagate = "elementwise"           # ZeRO: shard state and its update, gather it for compute
//! ```
//! Unknown keys are errors, so a typo never silently does nothing.

use crate::ir::MeshAxis;
use serde::Deserialize;
use std::path::Path;

/// How far a tactic's tiling spreads.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub enum Reach {
    /// Through every op the TMR allows (batch and model parallelism).
    #[default]
    All,
    /// Only through elementwise ops: the tiled values and their elementwise updates (an
    /// optimizer step) are split, every other user (a matmul, a transpose) reads the value
    /// whole, gathered. ZeRO / FSDP: state is stored sharded, compute is not partitioned.
    Elementwise,
}

impl Reach {
    pub fn parse(text: &str) -> Result<Self, String> {
        match text {
            "" | "all" => Ok(Reach::All),
            "elementwise" => Ok(Reach::Elementwise),
            other => Err(format!(
                "\"{other}\" is not a propagation reach; use \"all\" (the default) or \"elementwise\" (ZeRO: shard state and its update only)"
            )),
        }
    }
}

/// One tactic: actions on one axis, followed by propagation along it.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Tactic {
    pub name: String,
    pub axis: String,
    /// (selector, dim) in file order.
    pub tile: Vec<(String, usize)>,
    pub replicate: Vec<String>,
    pub reach: Reach,
    /// The line of its `[[tactic]]` in the schedule file (1-based): remarks and errors about
    /// the tactic point there.
    pub line: usize,
}

/// A whole schedule: the mesh it expects and its tactics in order.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Schedule {
    /// Empty when the file names no mesh (the module must then declare one).
    pub mesh: Vec<MeshAxis>,
    pub tactics: Vec<Tactic>,
    /// The file it was read from (empty when parsed from text): with [`Tactic::line`], where a
    /// tactic is written.
    pub file: String,
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct RawSchedule {
    #[serde(default)]
    mesh: toml::Table,
    #[serde(default)]
    tactic: Vec<toml::Spanned<RawTactic>>,
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct RawTactic {
    name: Option<String>,
    axis: String,
    #[serde(default)]
    tile: toml::Table,
    #[serde(default)]
    replicate: Vec<String>,
    #[serde(default)]
    propagate: String,
}

impl Schedule {
    /// Reads and checks a schedule file; errors name the file.
    pub fn load(path: &Path) -> Result<Schedule, String> {
        let text = std::fs::read_to_string(path)
            .map_err(|error| format!("cannot read schedule '{}': {error}", path.display()))?;
        let mut schedule = Schedule::parse(&text)
            .map_err(|error| format!("schedule '{}': {error}", path.display()))?;
        schedule.file = path.display().to_string();
        Ok(schedule)
    }

    pub fn parse(text: &str) -> Result<Schedule, String> {
        let raw: RawSchedule = toml::from_str(text)
            .map_err(|error| error.message().to_string() + &line_of(text, &error))?;
        let mesh = raw
            .mesh
            .iter()
            .map(|(name, size)| {
                crate::ir::Mesh::check_axis_name(name)?;
                match size.as_integer() {
                    Some(size) if size > 0 => Ok(MeshAxis {
                        name: name.clone(),
                        size,
                    }),
                    _ => Err(format!(
                        "mesh axis '{name}' must have a positive integer size, got {size}"
                    )),
                }
            })
            .collect::<Result<Vec<_>, _>>()?;
        if raw.tactic.is_empty() {
            return Err("no [[tactic]] entries".into());
        }
        let tactics = raw
            .tactic
            .into_iter()
            .enumerate()
            .map(|(index, spanned)| {
                let line = line_at(text, spanned.span().start);
                let tactic = spanned.into_inner();
                let name = tactic.name.unwrap_or_else(|| format!("tactic {}", index + 1));
                if !mesh.is_empty() && !mesh.iter().any(|axis| axis.name == tactic.axis) {
                    let axes: Vec<&str> = mesh.iter().map(|axis| axis.name.as_str()).collect();
                    return Err(format!("tactic '{name}' uses axis '{}', which is not in the mesh ({})", tactic.axis, axes.join(", ")));
                }
                let tile = tactic
                    .tile
                    .iter()
                    .map(|(selector, dim)| match dim.as_integer() {
                        Some(dim) if dim >= 0 => Ok((selector.clone(), dim as usize)),
                        _ => Err(format!("tactic '{name}': tile dim of '{selector}' must be a non-negative integer, got {dim}")),
                    })
                    .collect::<Result<Vec<_>, _>>()?;
                if tile.is_empty() && tactic.replicate.is_empty() {
                    return Err(format!("tactic '{name}' neither tiles nor replicates anything"));
                }
                let reach = Reach::parse(&tactic.propagate).map_err(|error| format!("tactic '{name}': propagate = {error}"))?;
                Ok(Tactic { name, axis: tactic.axis, tile, replicate: tactic.replicate, reach, line })
            })
            .collect::<Result<Vec<_>, String>>()?;
        Ok(Schedule {
            mesh,
            tactics,
            file: String::new(),
        })
    }
}

/// " (line N)" for a TOML error with a span.
fn line_of(text: &str, error: &toml::de::Error) -> String {
    error
        .span()
        .map(|span| format!(" (line {})", line_at(text, span.start)))
        .unwrap_or_default()
}

/// The 1-based line of byte `offset`.
fn line_at(text: &str, offset: usize) -> usize {
    text[..offset.min(text.len())].matches('\n').count() + 1
}

#[cfg(test)]
mod tests {
    use super::*;

    const MLP_BP_MP: &str = r#"
mesh = { batch = 4, model = 2 }
[[tactic]]
name = "BP"
axis = "batch"
tile = { "x" = 0, "y" = 0 }
[[tactic]]
name = "MP"
axis = "model"
tile = { "*w1" = 1, "*w2" = 0 }
replicate = ["*bias*"]
"#;

    #[test]
    fn parses_tactics_in_order_with_mesh_order() {
        let schedule = Schedule::parse(MLP_BP_MP).unwrap();
        let axes: Vec<_> = schedule
            .mesh
            .iter()
            .map(|axis| (axis.name.as_str(), axis.size))
            .collect();
        assert_eq!(axes, vec![("batch", 4), ("model", 2)]);
        assert_eq!(
            schedule.tactics[0].tile,
            vec![("x".to_string(), 0), ("y".to_string(), 0)]
        );
        assert_eq!(schedule.tactics[1].name, "MP");
        let lines: Vec<usize> = schedule.tactics.iter().map(|tactic| tactic.line).collect();
        assert_eq!(lines, [3, 7], "the lines of the [[tactic]] headers");
        assert_eq!(schedule.tactics[1].replicate, vec!["*bias*".to_string()]);
    }

    #[test]
    fn unknown_keys_are_errors() {
        let error =
            Schedule::parse("[[tactic]]\naxis = \"batch\"\ntiles = { x = 0 }\n").unwrap_err();
        assert!(error.contains("unknown field `tiles`"), "{error}");
        assert!(error.contains("line 3"), "{error}");
    }

    #[test]
    fn unknown_axis_is_an_error() {
        let error = Schedule::parse(
            "mesh = { batch = 4 }\n[[tactic]]\naxis = \"model\"\ntile = { x = 0 }\n",
        )
        .unwrap_err();
        assert!(
            error.contains("axis 'model', which is not in the mesh (batch)"),
            "{error}"
        );
    }

    #[test]
    fn bad_dims_and_sizes_are_errors() {
        assert!(
            Schedule::parse("[[tactic]]\naxis = \"b\"\ntile = { x = -1 }\n")
                .unwrap_err()
                .contains("non-negative")
        );
        assert!(
            Schedule::parse("mesh = { b = 0 }\n[[tactic]]\naxis = \"b\"\ntile = { x = 0 }\n")
                .unwrap_err()
                .contains("positive")
        );
        assert!(Schedule::parse("[[tactic]]\naxis = \"b\"\n")
            .unwrap_err()
            .contains("neither tiles nor replicates"));
        assert!(Schedule::parse("mesh = { b = 2 }\n")
            .unwrap_err()
            .contains("no [[tactic]]"));
    }
}
