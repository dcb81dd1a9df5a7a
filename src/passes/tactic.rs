//! One written tactic applied: its pins, its tiles, then propagation along its axis. What
//! `partir-schedule` does per tactic, and what the automatic search does per candidate plan.

use super::{
    names::SCHEDULE as PASS, propagate::Propagation, replicate::replicate, tile::tile, PassError,
};
use crate::{
    ir::{names, Mesh},
    schedule::Tactic,
    sim::report::SearchSummary,
};
use melior::{ir::Location, ir::OperationRef, Context};

/// What one tactic did, as its remark says it:
/// `partir-schedule: tactic 'BP' on axis 'batch': 2 values tiled, 0 pinned, 51 ops partitioned, 0 conflicts`.
#[derive(Clone, Debug)]
pub struct TacticOutcome {
    /// The tactic applied: the schedule's, or one an `auto` tactic found.
    pub tactic: Tactic,
    pub tiled: usize,
    pub pinned: usize,
    /// Ops propagation partitioned along the tactic's axis.
    pub partitioned: usize,
    pub conflicts: usize,
    /// Where and why propagation stopped along the tactic's axis.
    pub stops: Vec<crate::sim::report::PropagationStop>,
    /// For the first tactic an `auto` tactic found: what the search did.
    pub search: Option<SearchSummary>,
    /// No tactic follows: the module is the schedule's result (set by `schedule::apply`), so
    /// that a caller pricing it can keep the lowered copy as the output.
    pub last: bool,
}

impl std::fmt::Display for TacticOutcome {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(
            f,
            "{PASS}: tactic '{}' on axis '{}': {} values tiled, {} pinned, {} ops partitioned, {} conflicts",
            self.tactic.name, self.tactic.axis, self.tiled, self.pinned, self.partitioned, self.conflicts
        )
    }
}

/// Applies one (written) tactic: pins, tiles, then propagation along its axis.
pub fn apply_tactic<'c>(
    context: &'c Context,
    module: OperationRef<'c, '_>,
    tactic: &Tactic,
    location: Location<'c>,
    propagation: &mut Propagation<'c>,
) -> Result<TacticOutcome, PassError<'c>> {
    let mesh = Mesh::find(module).map(|(mesh, _)| mesh).ok_or_else(|| {
        PassError::new(
            location,
            format!("{PASS}: the module declares no partir.mesh"),
        )
    })?;
    let here = |error: PassError<'c>| PassError::new(location, error.message);
    let who = format!("{PASS}: tactic '{}'", tactic.name);
    let axis_size = mesh.axis_size(&tactic.axis).ok_or_else(|| {
        PassError::new(
            location,
            format!("{who}: axis '{}' is not in mesh {mesh}", tactic.axis),
        )
    })?;
    if let Some(settings) = &tactic.pipeline {
        let named = names::named_values(module);
        let plan = crate::rules::pipeline::PipelinePlan {
            axis: tactic.axis.clone(),
            stages: axis_size,
            microbatches: settings.microbatches,
            batch_dim: settings.batch_dim,
        };
        super::pipeline::pipeline(
            context,
            module,
            &named,
            &who,
            &settings.layers,
            &plan,
            location,
        )?;
    }
    // Pins and tiles add views and pins, never a named value: the names are read once.
    let named = names::named_values(module);
    let pinned = tactic
        .replicate
        .iter()
        .map(|selector| replicate(context, module, &named, &who, selector, &tactic.axis))
        .sum::<Result<usize, _>>()
        .map_err(here)?;
    let tiled = tactic
        .tile
        .iter()
        .map(|(selector, dim)| tile(context, module, &named, &who, selector, *dim, &tactic.axis))
        .sum::<Result<usize, _>>()
        .map_err(here)?;
    let (wrapped_before, conflicts_before, stops_before) = (
        propagation.wrapped_along(&tactic.axis),
        propagation.conflicts(),
        propagation.stop_count(),
    );
    for func in names::functions(module) {
        propagation.run(func, &tactic.axis, axis_size, tactic.reach);
    }
    Ok(TacticOutcome {
        tactic: tactic.clone(),
        tiled,
        pinned,
        partitioned: propagation.wrapped_along(&tactic.axis) - wrapped_before,
        conflicts: propagation.conflicts() - conflicts_before,
        stops: propagation.stops_from(stops_before).to_vec(),
        search: None,
        last: false,
    })
}
