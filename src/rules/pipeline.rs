//! What a loop over stacked layers becomes when a tactic pipelines it (GPipe, in the one-program
//! form GSPMD and MaxText write by hand: docs/design.md, "Pipelining"). The family of the loop
//! op builds its pipelined form ([`super::pipeline_loop`]); the pass
//! (`passes/pipeline.rs`) finds the loops and inlines what the family built.

/// Marks the copy of a loop that one stage runs per tick: a gradient it leaves partial may be
/// widened (bf16 to f32) before the reduce, which then moves out of the ticks once for all
/// ([`super::linear_in_loop_sums`]); in a plain scan each layer's reduce stays in bf16, half
/// the bytes, overlapping the backward pass.
pub const STAGE_LOOP_ATTR: &str = "partir.pipeline_stage";

/// How to pipeline: the stage axis, its size, how many microbatches the batch is cut into, and
/// which dim of the loop's carried activations is the batch.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct PipelinePlan {
    pub axis: String,
    pub stages: i64,
    pub microbatches: i64,
    pub batch_dim: usize,
}

/// What one loop became, for the tactic's remark.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Pipelined {
    /// Layers the loop runs (its trip count), `layers / stages` per stage.
    pub layers: i64,
    /// The loop walks its layers last to first (JAX's transpose of a scan: the backward pass),
    /// so its stages run last to first too.
    pub reversed: bool,
    /// Carried activations, split into microbatches and handed from stage to stage.
    pub activations: usize,
    /// Stacked per-layer outputs: written per microbatch, or summed over microbatches (a
    /// weight's gradient).
    pub stacked_outputs: usize,
    pub summed_outputs: usize,
}

/// The family's builder: rewrites the loop `op` (in place, inside `op`'s module) into its
/// pipelined form, named after `id` so that several loops get distinct helper functions.
pub type PipelineLoop = for<'c, 'a> fn(
    &'c melior::Context,
    melior::ir::OperationRef<'c, 'a>,
    &PipelinePlan,
    usize,
) -> Result<Pipelined, String>;
