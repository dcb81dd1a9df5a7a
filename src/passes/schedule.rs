//! `partir-schedule{file=S.toml}`: apply a schedule's tactics in order. Each tactic pins
//! (replicate), tiles, then propagates along its axis; earlier decisions are never undone.
//! After each tactic a remark summarises it, e.g.
//! `partir-schedule: tactic 'BP' on axis 'batch': 2 values tiled, 0 pinned, 51 ops partitioned, 0 conflicts`.
//! With `device=D` the program after each tactic (and before the first) is simulated on a
//! lowered copy and a second remark gives its cost; `report=R.json` writes them all.

pub use super::tactic::{apply_tactic, TacticOutcome};
use super::{
    auto, program_location,
    propagate::{LaterSplits, Propagation},
    simulate, PassError, PassResult,
};
use super::{names::SCHEDULE as PASS, options::ScheduleOptions};
use crate::{
    ffi::{self, Severity},
    ir::Mesh,
    schedule::{Schedule, Tactic},
    sim::{report::PropagationSummary, Device, PartitionReport, TacticReport, DEFAULT_DEVICE},
};
use melior::{
    ir::{block::BlockLike, operation::OperationLike, Location, OperationRef, RegionLike},
    Context,
};
use std::path::Path;

pub fn run<'c>(
    context: &'c Context,
    module: OperationRef<'c, '_>,
    options: &ScheduleOptions,
) -> PassResult<'c> {
    let location = program_location(module);
    let file = options.file.as_str();
    if file.is_empty() {
        return Err(PassError::new(
            location,
            format!("{PASS}: no schedule given (file=PATH)"),
        ));
    }
    let fail = |message: String| PassError::new(location, format!("{PASS}: {message}"));
    let schedule = Schedule::load(Path::new(file)).map_err(fail)?;
    let device = options.device.as_str();
    if device.is_empty() {
        if !options.report.is_empty() {
            return Err(fail("report=PATH needs device=NAME".into()));
        }
        let device = Device::resolve(DEFAULT_DEVICE).map_err(fail)?;
        return apply(context, module, &schedule, &device, &mut |_, _| Ok(()));
    }
    let device = Device::resolve(device).map_err(fail)?;
    let mut story = PartitionReport {
        model: crate::ir::location::describe(location, "")
            .split(':')
            .next()
            .unwrap_or("")
            .to_string(),
        schedule: file.to_string(),
        device: device.name.clone(),
        ..PartitionReport::default()
    };
    apply(
        context,
        module,
        &schedule,
        &device.clone(),
        &mut |outcome, module| {
            let tactic = outcome.map(|outcome| &outcome.tactic);
            // The stops as propagation found them: the remarks say them too.
            let propagation = outcome.map(|outcome| PropagationSummary {
                ops_partitioned: outcome.partitioned,
                conflicts: outcome.conflicts,
                stops: outcome.stops.clone(),
            });
            let priced = price(context, module, outcome, &device, &mut story, propagation)?;
            let row = PartitionReport::cells(priced);
            let [tactic_name, _, collectives, step, compute, communication, peak, padding, fits] =
                &row[..]
            else {
                unreachable!("PartitionReport::cells has one cell per header column")
            };
            let padding = if padding == "-" {
                String::new()
            } else {
                format!(", padding {padding}")
            };
            ffi::emit(
                tactic_location(context, &schedule, tactic, location),
                Severity::Remark,
                &format!(
                    "partir-simulate: after '{tactic_name}' on {device}: collectives {collectives}, step {step} (compute {compute}, communication {communication}), peak memory {peak}{padding}, fits: {fits}",
                    device = device.name,
                ),
            );
            Ok(())
        },
    )?;
    simulate::write_report(&options.report, || story.json()).map_err(fail)
}

/// The name of the row before the first tactic.
pub use crate::sim::report::UNPARTITIONED;

/// Simulates `module` (as it is after `outcome`'s tactic, or before the first one) on `device` and adds
/// the report to `story`; the added row.
pub fn price<'c, 's>(
    context: &'c Context,
    module: OperationRef<'c, '_>,
    outcome: Option<&TacticOutcome>,
    device: &Device,
    story: &'s mut PartitionReport,
    propagation: Option<PropagationSummary>,
) -> Result<&'s TacticReport, PassError<'c>> {
    let report = simulate::simulate_module(context, module, device)?;
    let (name, axis) = outcome
        .map(|outcome| (outcome.tactic.name.as_str(), outcome.tactic.axis.as_str()))
        .unwrap_or((UNPARTITIONED, ""));
    story.push(name, axis, report);
    let last = story.tactics.last_mut().expect("just pushed");
    last.propagation = propagation;
    // An `auto` tactic's search stays with the row of the first tactic it found.
    last.search = outcome.and_then(|outcome| outcome.search.clone());
    Ok(last)
}

/// Applies `schedule` to `module`, calling `after` with the module before the first tactic
/// (`None`) and after each tactic (with what it did); `after` failing stops the schedule.
/// An `auto` tactic is searched (priced on `default_device` unless it names one) and the
/// tactics it finds are applied in its place.
pub fn apply<'c>(
    context: &'c Context,
    module: OperationRef<'c, '_>,
    schedule: &Schedule,
    default_device: &Device,
    after: &mut dyn FnMut(Option<&TacticOutcome>, OperationRef<'c, '_>) -> PassResult<'c>,
) -> PassResult<'c> {
    let location = program_location(module);
    // JAX's private helpers become part of the program, one copy per call site.
    super::frontend::run(context, module)?;
    // Fused dims seen as their factors, for every tactic (`[expand]`).
    for expansion in &schedule.expand {
        let location = tactic_location(context, schedule, None, location);
        let expanded = super::expand_dim::expand_dim(
            context,
            module,
            &format!("{PASS}: [expand] '{}'", expansion.selector),
            &expansion.selector,
            expansion.dim,
            &expansion.sizes,
        )
        .map_err(|error| PassError::new(location, error.message))?;
        ffi::emit(
            location,
            Severity::Remark,
            &format!(
                "{PASS}: [expand] '{}': {expanded} values expanded",
                expansion.selector
            ),
        );
    }
    crate::rules::register_custom_call_rules(&schedule.rules)
        .map_err(|error| PassError::new(location, format!("{PASS}: {error}")))?;
    declare_mesh(context, module, schedule)?;
    // The program's own annotations (`in_shardings`, `with_sharding_constraint`) first.
    let mesh = Mesh::find(module).map(|(mesh, _)| mesh).expect("declared");
    let mut imported = super::import_sdy::tactics(context, module, &mesh)?;
    // What the schedule itself writes (the same selector, dim and axis) it does itself.
    for tactic in &mut imported {
        tactic.tile.retain(|tile| {
            !schedule
                .tactics
                .iter()
                .any(|own| own.axis == tactic.axis && own.tile.contains(tile))
        });
    }
    imported.retain(|tactic| !tactic.tile.is_empty() || !tactic.replicate.is_empty());
    let annotated;
    let schedule = if imported.is_empty() {
        schedule
    } else {
        for tactic in &imported {
            ffi::emit(
                location,
                Severity::Remark,
                &format!(
                    "{PASS}: the program's sharding annotations tile {} values and pin {} along '{}' before the schedule",
                    tactic.tile.len(),
                    tactic.replicate.len(),
                    tactic.axis
                ),
            );
        }
        annotated = Schedule {
            tactics: imported
                .into_iter()
                .chain(schedule.tactics.clone())
                .collect(),
            ..schedule.clone()
        };
        &annotated
    };
    after(None, module)?;
    let mut propagation = Propagation::new(context);
    for (index, tactic) in schedule.tactics.iter().enumerate() {
        let location = tactic_location(context, schedule, Some(tactic), location);
        propagation.split_later(later_splits(module, &schedule.tactics[index + 1..]));
        let (found, mut search) = match &tactic.auto {
            None => (vec![tactic.clone()], None),
            Some(settings) => {
                let here = |message: String| PassError::new(location, message);
                let settings = auto::Settings::resolve(settings, default_device)
                    .map_err(|error| here(format!("{PASS}: tactic '{}': {error}", tactic.name)))?;
                let found = auto::search_axis(
                    context,
                    auto::Base::new(module),
                    &tactic.axis,
                    &settings,
                    auto::Phases::Both,
                    &tactic.name,
                    &mut |_, _, _| {},
                )
                .map_err(|error| PassError::new(location, error.message))?;
                // What the search did, also when it found nothing to do on this axis.
                ffi::emit(
                    location,
                    Severity::Remark,
                    &format!(
                        "{PASS}: tactic '{}' searched {}",
                        tactic.name,
                        auto::summary_line(&found)
                    ),
                );
                (found.tactics, Some(found.summary))
            }
        };
        let (count, tactics) = (found.len(), schedule.tactics.len());
        for (at, found) in found.into_iter().enumerate() {
            let mut outcome = apply_tactic(context, module, &found, location, &mut propagation)?;
            outcome.search = search.take();
            outcome.last = index + 1 == tactics && at + 1 == count;
            ffi::emit(location, Severity::Remark, &outcome.to_string());
            after(Some(&outcome), module)?;
        }
    }
    Ok(())
}

/// The values the written tactics in `later` tile, per axis, with the dims they tile (a
/// selector that matches nothing yet is that tactic's error to report, not this lookahead's).
/// Propagation enters a scan rather than tiling it whole along an axis on which a later
/// tactic splits what the scan carries on a dim its body sees (ZeRO-3 on stacked layer
/// weights after BP: `propagate::body`).
fn later_splits(module: OperationRef, later: &[Tactic]) -> LaterSplits {
    let mut splits = LaterSplits::new();
    let named = crate::ir::names::named_values(module);
    for tactic in later {
        for (selector, dim) in &tactic.tile {
            if let Ok(values) = super::select_values(module, &named, PASS, selector) {
                let axis = splits.entry(tactic.axis.clone()).or_default();
                for (_, named) in &values {
                    axis.entry(ffi::value_id(named.value))
                        .or_default()
                        .insert(*dim);
                }
            }
        }
    }
    splits
}

/// Where remarks and errors about `tactic` point: its `[[tactic]]` line in the schedule file,
/// so that they read `BP.toml:3:1: remark: ...` (with that one short line quoted), not the
/// program's function signature (which on an imported model is kilobytes long).
/// Without a tactic (the program before the first one), the schedule's first line.
fn tactic_location<'c>(
    context: &'c Context,
    schedule: &Schedule,
    tactic: Option<&Tactic>,
    program: Location<'c>,
) -> Location<'c> {
    let line = tactic.map_or(1, |tactic| tactic.line);
    if schedule.file.is_empty() || line == 0 {
        program
    } else {
        Location::new(context, &schedule.file, line, 1)
    }
}

/// The module's mesh must be the schedule's; a module without one gets it.
fn declare_mesh<'c>(
    context: &'c Context,
    module: OperationRef<'c, '_>,
    schedule: &Schedule,
) -> PassResult<'c> {
    let location = program_location(module);
    let wanted = Mesh {
        symbol: "mesh".into(),
        axes: schedule.mesh.clone(),
    };
    match Mesh::find(module) {
        Some((existing, _)) if schedule.mesh.is_empty() || existing.axes == schedule.mesh => Ok(()),
        Some((existing, mesh_location)) => Err(PassError::new(
            mesh_location,
            format!("{PASS}: the module declares mesh {existing} but the schedule asks for {wanted}"),
        )),
        None if schedule.mesh.is_empty() => Err(PassError::new(
            location,
            format!("{PASS}: neither the module nor the schedule declares a mesh (add mesh = {{ batch = 4 }} to the schedule)"),
        )),
        None => {
            let body = module.region(0).ok().and_then(|region| region.first_block()).expect("a module has a body");
            let mesh = wanted.build(context, location);
            match body.first_operation() {
                Some(first) => body.insert_operation_before(first, mesh),
                None => body.append_operation(mesh),
            };
            Ok(())
        }
    }
}
