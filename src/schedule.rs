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
//! ```toml
//! [[tactic]]
//! name = "auto"
//! axis = "model"
//! auto = { memory = "16GiB", time_limit = 30, seed = 1 }   # or auto = true: searched (partir-auto)
//! ```
//! ```toml
//! [expand]                            # before any tactic: a fused dim seen as its factors
//! "params/*/c_attn/kernel" = { dim = 0, sizes = [3, 12, 64] }   # q|k|v x heads x head_dim
//! ```
//! Unknown keys are errors, so a typo never silently does nothing.

mod pipeline;

use crate::ir::MeshAxis;
pub use pipeline::PipelineSettings;
use pipeline::{pipeline_settings, RawPipeline};
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

/// How an `auto` tactic searches (docs/design.md#automatic-partitioning); unset fields take
/// the defaults of the command or pass that runs the schedule.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct AutoSettings {
    /// The memory budget per device, in bytes (default: the device's capacity).
    pub memory: Option<u64>,
    /// The device the search prices on (a preset or a device TOML file).
    pub device: Option<String>,
    /// Seconds the search may take per axis.
    pub time_limit: Option<f64>,
    pub seed: Option<u64>,
    /// At most this many distinct plans are priced per axis.
    pub evaluations: Option<usize>,
}

/// One tactic: actions on one axis, followed by propagation along it.
#[derive(Clone, Debug, PartialEq)]
pub struct Tactic {
    pub name: String,
    pub axis: String,
    /// (selector, dim) in file order.
    pub tile: Vec<(String, usize)>,
    pub replicate: Vec<String>,
    pub reach: Reach,
    /// Set for `auto` tactics: the tiles are searched for, not written.
    pub auto: Option<AutoSettings>,
    /// Set for pipeline tactics: the loops over the selected stacked layers become GPipe
    /// pipelines along the tactic's axis before its tiles apply.
    pub pipeline: Option<PipelineSettings>,
    /// Why the tactic is there, written above it as `#` lines when the schedule is written out
    /// (a searched plan says what each decision gained).
    pub comment: Vec<String>,
    /// The line of its `[[tactic]]` in the schedule file (1-based): remarks and errors about
    /// the tactic point there.
    pub line: usize,
}

/// A whole schedule: the mesh it expects and its tactics in order.
#[derive(Clone, Debug, PartialEq)]
pub struct Schedule {
    /// Empty when the file names no mesh (the module must then declare one).
    pub mesh: Vec<MeshAxis>,
    pub tactics: Vec<Tactic>,
    /// The file it was read from (empty when parsed from text): with [`Tactic::line`], where a
    /// tactic is written.
    pub file: String,
    /// TMR rules for `stablehlo.custom_call`s, by call target, in einsum notation (the
    /// `[rules]` table: `"lapack_spotrf_ffi" = "bij->bij"`): how an op partir cannot read
    /// partitions.
    pub rules: Vec<(String, String)>,
    /// Dims seen as their factors before any tactic (the `[expand]` table), in file order.
    pub expand: Vec<Expansion>,
}

/// `"selector" = { dim = 0, sizes = [3, 12, 64] }`: dim `dim` of the selected values (and of
/// every value it flows to) seen as `sizes` (`partir-expand-dim`), so that a tactic can split
/// one of them: a fused projection split by heads.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Expansion {
    pub selector: String,
    pub dim: usize,
    pub sizes: Vec<i64>,
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct RawExpansion {
    dim: usize,
    sizes: Vec<i64>,
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct RawSchedule {
    #[serde(default)]
    mesh: toml::Table,
    #[serde(default)]
    tactic: Vec<toml::Spanned<RawTactic>>,
    #[serde(default)]
    rules: toml::Table,
    #[serde(default)]
    expand: toml::Table,
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
    auto: Option<toml::Value>,
    pipeline: Option<RawPipeline>,
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct RawAuto {
    memory: Option<String>,
    device: Option<String>,
    time_limit: Option<f64>,
    seed: Option<u64>,
    evaluations: Option<usize>,
}

/// A size with its unit: `16GiB`, `512 MiB`, `1024B` (B, KiB, MiB, GiB, TiB; kB, MB, GB too).
pub fn parse_size(text: &str) -> Result<u64, String> {
    text.trim()
        .parse::<bytesize::ByteSize>()
        .map(|size| size.as_u64())
        .map_err(|_| format!("'{text}' is not a size; write it with a unit, e.g. 16GiB or 512MiB"))
}

fn auto_settings(value: toml::Value) -> Result<Option<AutoSettings>, String> {
    match value {
        toml::Value::Boolean(false) => Ok(None),
        toml::Value::Boolean(true) => Ok(Some(AutoSettings::default())),
        toml::Value::Table(table) => {
            let raw: RawAuto = table.try_into().map_err(|error: toml::de::Error| error.message().to_string())?;
            Ok(Some(AutoSettings {
                memory: raw.memory.as_deref().map(parse_size).transpose()?,
                device: raw.device,
                time_limit: raw.time_limit,
                seed: raw.seed,
                evaluations: raw.evaluations,
            }))
        }
        other => Err(format!("auto must be true or a table like {{ memory = \"16GiB\", time_limit = 30, seed = 1 }}, got {other}")),
    }
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
        // A mesh alone is a schedule: the program's own sharding annotations are the plan
        // (`passes::import_sdy`).
        if raw.tactic.is_empty() && mesh.is_empty() {
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
                let auto = tactic.auto.map(auto_settings).transpose().map_err(|error| format!("tactic '{name}': {error}"))?.flatten();
                if auto.is_some() && !(tile.is_empty() && tactic.replicate.is_empty() && tactic.propagate.is_empty()) {
                    return Err(format!("tactic '{name}' is searched (auto), so it cannot also tile, replicate or set propagate"));
                }
                if auto.is_none() && tactic.pipeline.is_none() && tile.is_empty() && tactic.replicate.is_empty() {
                    return Err(format!("tactic '{name}' neither tiles nor replicates anything"));
                }
                let reach = Reach::parse(&tactic.propagate).map_err(|error| format!("tactic '{name}': propagate = {error}"))?;
                let pipeline = tactic.pipeline.map(|raw| pipeline_settings(raw, &tile)).transpose().map_err(|error| format!("tactic '{name}': pipeline: {error}"))?;
                if pipeline.is_some() && auto.is_some() {
                    return Err(format!("tactic '{name}' is searched (auto), so it cannot also pipeline"));
                }
                let mut tile = tile;
                if let Some(pipeline) = &pipeline {
                    // Each stage holds its layers: the stacks split on their layer dim.
                    if !tile.iter().any(|(selector, _)| selector == &pipeline.layers) {
                        tile.insert(0, (pipeline.layers.clone(), 0));
                    }
                }
                Ok(Tactic { name, axis: tactic.axis, tile, replicate: tactic.replicate, reach, auto, pipeline, comment: Vec::new(), line })
            })
            .collect::<Result<Vec<_>, String>>()?;
        let rules = raw
            .rules
            .iter()
            .map(|(target, einsum)| match einsum.as_str() {
                Some(einsum) => crate::tmr::Rule::check_einsum(einsum)
                    .map(|()| (target.clone(), einsum.to_string()))
                    .map_err(|error| format!("[rules] '{target}' = '{einsum}': {error}")),
                None => Err(format!(
                    "[rules] '{target}' must be an einsum string (\"ij->ij\"), got {einsum}"
                )),
            })
            .collect::<Result<Vec<_>, _>>()?;
        let expand = raw
            .expand
            .into_iter()
            .map(|(selector, value)| {
                let raw: RawExpansion = value.try_into().map_err(|error: toml::de::Error| {
                    format!(
                        "[expand] '{selector}': {} (write {{ dim = 0, sizes = [3, 12, 64] }})",
                        error.message()
                    )
                })?;
                if raw.sizes.len() < 2 || raw.sizes.iter().any(|&size| size < 1) {
                    return Err(format!(
                        "[expand] '{selector}': sizes must be 2 or more positive sizes, got {:?}",
                        raw.sizes
                    ));
                }
                Ok(Expansion {
                    selector,
                    dim: raw.dim,
                    sizes: raw.sizes,
                })
            })
            .collect::<Result<Vec<_>, String>>()?;
        Ok(Schedule {
            mesh,
            tactics,
            file: String::new(),
            rules,
            expand,
        })
    }
}

impl Schedule {
    /// The schedule as TOML that [`Schedule::parse`] reads back the same (comments aside):
    /// what `partir auto` writes. `header` lines come first, as comments.
    pub fn to_toml(&self, header: &[String]) -> String {
        use std::fmt::Write;
        let quote = |text: &str| toml::Value::String(text.to_string()).to_string();
        let mut out = String::new();
        for line in header {
            let _ = writeln!(out, "# {line}");
        }
        if !self.mesh.is_empty() {
            let axes: Vec<String> = self
                .mesh
                .iter()
                .map(|axis| format!("{} = {}", axis.name, axis.size))
                .collect();
            let _ = writeln!(out, "mesh = {{ {} }}", axes.join(", "));
        }
        if !self.rules.is_empty() {
            let _ = writeln!(out, "\n[rules]");
            for (target, einsum) in &self.rules {
                let _ = writeln!(out, "{} = {}", quote(target), quote(einsum));
            }
        }
        if !self.expand.is_empty() {
            let _ = writeln!(out, "\n[expand]");
            for expansion in &self.expand {
                let sizes: Vec<String> = expansion.sizes.iter().map(ToString::to_string).collect();
                let _ = writeln!(
                    out,
                    "{} = {{ dim = {}, sizes = [{}] }}",
                    quote(&expansion.selector),
                    expansion.dim,
                    sizes.join(", ")
                );
            }
        }
        for tactic in &self.tactics {
            out.push('\n');
            for line in &tactic.comment {
                let _ = writeln!(out, "# {line}");
            }
            let _ = writeln!(
                out,
                "[[tactic]]\nname = {}\naxis = {}",
                quote(&tactic.name),
                quote(&tactic.axis)
            );
            if !tactic.tile.is_empty() {
                let tiles: Vec<String> = tactic
                    .tile
                    .iter()
                    .map(|(selector, dim)| format!("{} = {dim}", quote(selector)))
                    .collect();
                let _ = writeln!(out, "tile = {{ {} }}", tiles.join(", "));
            }
            if !tactic.replicate.is_empty() {
                let pins: Vec<String> = tactic
                    .replicate
                    .iter()
                    .map(|selector| quote(selector))
                    .collect();
                let _ = writeln!(out, "replicate = [{}]", pins.join(", "));
            }
            if tactic.reach == Reach::Elementwise {
                let _ = writeln!(out, "propagate = \"elementwise\"");
            }
            if let Some(pipeline) = &tactic.pipeline {
                let _ = writeln!(
                    out,
                    "pipeline = {{ layers = {}, microbatches = {}, batch_dim = {} }}",
                    quote(&pipeline.layers),
                    pipeline.microbatches,
                    pipeline.batch_dim
                );
            }
            if let Some(auto) = &tactic.auto {
                let mut fields = Vec::new();
                if let Some(memory) = auto.memory {
                    fields.push(format!("memory = {}", quote(&format!("{}B", memory))));
                }
                if let Some(device) = &auto.device {
                    fields.push(format!("device = {}", quote(device)));
                }
                if let Some(seconds) = auto.time_limit {
                    fields.push(format!("time_limit = {seconds:?}"));
                }
                if let Some(seed) = auto.seed {
                    fields.push(format!("seed = {seed}"));
                }
                if let Some(evaluations) = auto.evaluations {
                    fields.push(format!("evaluations = {evaluations}"));
                }
                match fields.is_empty() {
                    true => out.push_str("auto = true\n"),
                    false => {
                        let _ = writeln!(out, "auto = {{ {} }}", fields.join(", "));
                    }
                }
            }
        }
        out
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
        // A mesh alone is a schedule (the program's own annotations are the plan); nothing at
        // all is not.
        assert!(Schedule::parse("mesh = { b = 2 }\n").is_ok_and(|s| s.tactics.is_empty()));
        assert!(Schedule::parse("").unwrap_err().contains("no [[tactic]]"));
    }

    #[test]
    fn auto_tactics_parse_with_their_settings() {
        let schedule = Schedule::parse(
            "[[tactic]]\naxis = \"model\"\nauto = true\n[[tactic]]\naxis = \"batch\"\nauto = { memory = \"16GiB\", time_limit = 30, seed = 1 }\n",
        )
        .unwrap();
        assert_eq!(schedule.tactics[0].auto, Some(AutoSettings::default()));
        let settings = schedule.tactics[1].auto.clone().unwrap();
        assert_eq!(settings.memory, Some(16 << 30));
        assert_eq!((settings.time_limit, settings.seed), (Some(30.0), Some(1)));
        let error = Schedule::parse("[[tactic]]\naxis = \"b\"\nauto = { memory = \"lots\" }\n")
            .unwrap_err();
        assert!(error.contains("'lots' is not a size"), "{error}");
        let error = Schedule::parse("[[tactic]]\naxis = \"b\"\nauto = true\ntile = { x = 0 }\n")
            .unwrap_err();
        assert!(error.contains("cannot also tile"), "{error}");
    }

    #[test]
    fn written_schedules_read_back_the_same() {
        let mut schedule = Schedule::parse(MLP_BP_MP).unwrap();
        schedule.tactics[1].reach = Reach::Elementwise;
        schedule.tactics[1].comment = vec!["found by the search".into()];
        let text = schedule.to_toml(&["a plan".into()]);
        assert!(
            text.starts_with("# a plan\nmesh = { batch = 4, model = 2 }\n"),
            "{text}"
        );
        assert!(text.contains("# found by the search\n[[tactic]]"), "{text}");
        let mut again = Schedule::parse(&text).unwrap();
        for (tactic, original) in again.tactics.iter_mut().zip(&schedule.tactics) {
            tactic.line = original.line;
            tactic.comment = original.comment.clone();
        }
        assert_eq!(again, schedule);
    }

    #[test]
    fn expand_tables_are_read_checked_and_written_back() {
        let text = "mesh = { model = 2 }\n[expand]\n\"*/c_attn/kernel\" = { dim = 0, sizes = [3, 4, 16] }\n[[tactic]]\naxis = \"model\"\ntile = { \"*/c_attn/kernel\" = 1 }\n";
        let schedule = Schedule::parse(text).unwrap();
        assert_eq!(
            schedule.expand,
            vec![Expansion {
                selector: "*/c_attn/kernel".into(),
                dim: 0,
                sizes: vec![3, 4, 16]
            }]
        );
        let mut again = Schedule::parse(&schedule.to_toml(&[])).unwrap();
        again.tactics[0].line = schedule.tactics[0].line;
        assert_eq!(again, schedule);
        let one = text.replace("[3, 4, 16]", "[192]");
        let error = Schedule::parse(&one).unwrap_err();
        assert!(
            error.contains("sizes must be 2 or more positive sizes"),
            "{error}"
        );
        let typo = text.replace("sizes =", "size =");
        let error = Schedule::parse(&typo).unwrap_err();
        assert!(
            error.contains("[expand] '*/c_attn/kernel'") && error.contains("size"),
            "{error}"
        );
    }
}
