//! The pipeline `partir auto` starts from when the program scans stacked layers: GPipe over
//! the mesh's major axis, with the microbatch count priced.

use super::{prepare, replayed, CliError, Session};
use crate::{
    ir::MeshAxis,
    schedule::{Schedule, Tactic},
    sim::Device,
};

/// FIXED with a GPipe pipeline over `axis` appended, when the program scans stacked layers:
/// as many stages as `axis` has devices, and the microbatch count priced fastest of 2 and 4 a
/// stage (each applied alone; more microbatches shrink the bubble (S-1)/(M+S-1) and each
/// tick's work, whose fixed costs then weigh more). A count the batch does not divide is not
/// a candidate. Not more than 4 a stage: priced alone, a smaller microbatch can look faster
/// and then not split over the axes searched after it (LLaMA-3 70B on `{stage=4, data=4,
/// fsdp=8, model=8}`: 32 microbatches priced fastest alone, and the plan after it, BP unable
/// to split microbatches over `data` x `fsdp`, did not fit: 16.9 s against 4.3 s with 16).
pub(super) fn pipeline_start(
    source: &str,
    text: &str,
    fixed: &Schedule,
    mesh: &[MeshAxis],
    axis: &str,
    device: &Device,
) -> Result<Option<Schedule>, CliError> {
    let Some(stages) = mesh.iter().find(|a| a.name == axis).map(|a| a.size) else {
        return Ok(None);
    };
    let session = Session::new(source);
    let module = session.parse(text)?;
    prepare(&session, &module)?;
    let Some((layers, count)) = crate::passes::pipeline::stacked_layers(module.as_operation())
    else {
        return Ok(None);
    };
    if stages < 2 || count % stages != 0 {
        return Ok(None);
    }
    let mut best: Option<(f64, Schedule)> = None;
    let mut priced = Vec::new();
    for per_stage in [2, 4] {
        let microbatches = per_stage * stages;
        let start = with_pipeline(fixed, axis, &layers, count / stages, microbatches);
        // A count the batch does not divide (or any loop the tactic cannot split) fails.
        let Ok(program) = replayed(&session, text, &start, device) else {
            session.take();
            continue;
        };
        let report = crate::passes::simulate::simulate_module(
            session.context(),
            program.as_operation(),
            device,
        )
        .map_err(|error| session.pass_error(error))?;
        let seconds = report.totals.step_seconds;
        priced.push(format!(
            "{microbatches} microbatches {}",
            crate::report::text::seconds(seconds)
        ));
        if best.as_ref().is_none_or(|(fastest, _)| seconds < *fastest) {
            best = Some((seconds, start));
        }
    }
    if let Some((_, start)) = &best {
        let chosen = start.tactics.last().and_then(|t| t.pipeline.as_ref());
        eprintln!(
            "partir: a pipeline over '{axis}' alone: {}; starting from {} microbatches",
            priced.join(", "),
            chosen.map_or(0, |p| p.microbatches)
        );
    }
    Ok(best.map(|(_, start)| start))
}

/// FIXED with GPipe over `axis` appended: the stacks `layers` split on their layer dim,
/// `per_stage` layers a stage.
fn with_pipeline(
    fixed: &Schedule,
    axis: &str,
    layers: &str,
    per_stage: i64,
    microbatches: i64,
) -> Schedule {
    let mut start = fixed.clone();
    start.tactics.push(Tactic {
        name: format!("auto-PP-{axis}"),
        axis: axis.to_string(),
        tile: vec![(layers.to_string(), 0)],
        replicate: Vec::new(),
        reach: crate::schedule::Reach::All,
        auto: None,
        pipeline: Some(crate::schedule::PipelineSettings {
            layers: layers.to_string(),
            microbatches,
            batch_dim: 0,
        }),
        comment: vec![format!(
            "Found by partir auto: GPipe over '{axis}', {per_stage} layers a stage, {microbatches} microbatches (the faster of 2 and 4 a stage, priced alone)."
        )],
        line: 0,
    });
    start
}
