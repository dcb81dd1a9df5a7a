//! A tactic's `pipeline` table: which stacked layers to pipeline along the tactic's axis, and
//! in how many microbatches (docs/design.md, "Pipelining").

use serde::Deserialize;

/// `pipeline = { layers = "params/layers/*", microbatches = 4 }`: the loops over the selected
/// stacked layers (dim 0 the layer) run as a pipeline along the tactic's axis, each stage
/// holding `layers / stages` contiguous layers, the batch cut into `microbatches`
/// (docs/design.md, "Pipelining").
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct PipelineSettings {
    pub layers: String,
    pub microbatches: i64,
    /// Which dim of the loops' carried activations is the batch (0 as JAX writes them).
    pub batch_dim: usize,
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
pub(super) struct RawPipeline {
    pub(super) layers: String,
    pub(super) microbatches: i64,
    #[serde(default)]
    pub(super) schedule: Option<String>,
    #[serde(default)]
    pub(super) batch_dim: usize,
}

pub(super) fn pipeline_settings(
    raw: RawPipeline,
    tile: &[(String, usize)],
) -> Result<PipelineSettings, String> {
    match raw.schedule.as_deref() {
        None | Some("gpipe") => {}
        Some(other @ ("1f1b" | "circular")) => {
            return Err(format!(
                "schedule \"{other}\" is not built yet; \"gpipe\" is"
            ))
        }
        Some(other) => {
            return Err(format!(
                "\"{other}\" is not a pipeline schedule; use \"gpipe\""
            ))
        }
    }
    if raw.microbatches < 1 {
        return Err(format!(
            "microbatches must be positive, got {}",
            raw.microbatches
        ));
    }
    if let Some((_, dim)) = tile.iter().find(|(selector, _)| selector == &raw.layers) {
        if *dim != 0 {
            return Err(format!(
                "the layers '{}' are split on their layer dim 0, not {dim}",
                raw.layers
            ));
        }
    }
    Ok(PipelineSettings {
        layers: raw.layers,
        microbatches: raw.microbatches,
        batch_dim: raw.batch_dim,
    })
}
