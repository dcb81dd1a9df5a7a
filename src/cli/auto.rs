//! `partir auto MODEL.mlir --mesh batch=4,model=2 [--schedule FIXED.toml] [--axes A,B]
//! [--device D] [--memory SIZE] [--time-limit S] [--seed N] -o PLAN.toml`: applies FIXED's
//! tactics, searches each axis (passes::auto: compute on every axis first, then memory sharding
//! on every axis), and writes the plan as an ordinary schedule. The
//! plan is then replayed by `partir partition`'s own code, which prints its per-tactic table:
//! what `partir partition -s PLAN.toml` will show.

use super::{
    args::{AutoArgs, ModelArgs},
    error::CliError,
    partition::{name_source, partition_priced, prepare, read_model, say_deferred, write_reports},
    pipeline::Session,
    progress::{seconds_text, shown, Progress, Step},
};
use crate::{
    ir::{Mesh, MeshAxis},
    passes::{
        auto::{self, Found, Phases, Settings},
        program_location,
        propagate::Propagation,
        schedule::{self, apply_tactic},
    },
    schedule::{parse_size, AutoSettings, Schedule, Tactic},
    sim::{report::SearchSummary, Device},
};
use melior::ir::Module;
use pipeline_start::pipeline_start;
use std::time::Instant;

mod pipeline_start;

pub fn auto_command(args: &AutoArgs) -> Result<i32, CliError> {
    let total = Instant::now();
    let source = shown(&args.model);
    let device = Device::resolve(&args.device).map_err(CliError::new)?;
    let settings = Settings::resolve(
        &AutoSettings {
            memory: args
                .memory
                .as_deref()
                .map(parse_size)
                .transpose()
                .map_err(CliError::new)?,
            device: None,
            time_limit: Some(args.time_limit),
            seed: Some(args.seed),
            evaluations: Some(args.evaluations),
        },
        &device,
    )
    .map_err(CliError::new)?;
    let fixed = match &args.schedule {
        Some(path) => Some(Schedule::load(path).map_err(CliError::new)?),
        None => None,
    };
    let mesh = mesh_of(args.mesh.as_deref(), fixed.as_ref())?;
    let axes: Vec<String> = if args.axes.is_empty() {
        mesh.iter().map(|axis| axis.name.clone()).collect()
    } else {
        args.axes.clone()
    };
    for axis in &axes {
        if !mesh.iter().any(|known| &known.name == axis) {
            let names: Vec<&str> = mesh.iter().map(|axis| axis.name.as_str()).collect();
            return Err(CliError::new(format!(
                "--axes names '{axis}', which is not in the mesh ({})",
                names.join(", ")
            )));
        }
    }

    let text = read_model(&args.model)?;
    let fixed = fixed.unwrap_or_else(|| Schedule {
        mesh: mesh.clone(),
        tactics: Vec::new(),
        file: String::new(),
        rules: Vec::new(),
        expand: Vec::new(),
    });
    // The axes are searched one after the other, each conditioned on those before, so the
    // order is a decision too: Megatron on `model` first and then batch parallelism on `batch`
    // can beat the best `batch` plan alone followed by the best `model` plan. By default both
    // orders of the mesh's axes are searched (every order would be n!; the two are the mesh's
    // and its reverse) and the faster plan that fits is kept.
    let mut orders = vec![axes.clone()];
    if args.axes.is_empty() && axes.len() > 1 {
        orders.push(axes.iter().rev().cloned().collect());
    }
    eprintln!(
        "partir: searching {} on {} (budget {} per device, seed {}, at most {} plans or {} per phase)",
        orders
            .iter()
            .map(|order| order.join(" then "))
            .collect::<Vec<_>>()
            .join(", and "),
        device.name,
        crate::report::text::bytes(settings.budget_bytes),
        settings.seed,
        settings.evaluations,
        seconds_text(settings.time_limit.as_secs_f64()),
    );
    // Speed first (the compute phases ignore the budget, the memory phases make the plan fit);
    // when that does not fit, the compute phases search again for the fastest plans the memory
    // phases could still make fit.
    let unbounded = Settings {
        budget_bytes: f64::INFINITY,
        ..settings.clone()
    };
    let anticipating = Settings {
        anticipate: true,
        ..settings.clone()
    };
    let mut attempts = Vec::new();
    for order in &orders {
        attempts.push((order, &unbounded, &fixed));
    }
    // A pipeline over the mesh's major axis (across nodes, as Megatron-LM and MaxText pipeline),
    // when the program scans stacked layers: one more start, the other axes searched after it.
    let pipelined = if args.axes.is_empty() && axes.len() > 1 {
        pipeline_start(&source, &text, &fixed, &mesh, &axes[0], &device)?
    } else {
        None
    };
    let rest: Vec<String> = axes.iter().skip(1).cloned().collect();
    if let Some(start) = &pipelined {
        attempts.push((&rest, &unbounded, start));
    }
    let mut best: Option<Searched> = None;
    let mut index = 0;
    while index < attempts.len() {
        let (order, compute, start) = attempts[index];
        index += 1;
        let searched =
            match search_in_order(&source, &text, start, order, compute, &settings, &device) {
                Ok(searched) => searched,
                // A pipeline start that does not build (a loop it cannot split) is no plan.
                Err(error) if !std::ptr::eq(start, &fixed) => {
                    eprintln!("partir: no pipeline over '{}': {error}", axes[0]);
                    continue;
                }
                Err(error) => return Err(error),
            };
        if !searched.last.fits && compute.budget_bytes.is_infinite() {
            attempts.push((order, &anticipating, start));
        }
        let better = match &best {
            None => true,
            Some(best) => match (searched.last.fits, best.last.fits) {
                (true, false) => true,
                (false, true) => false,
                (true, true) => searched.last.score.seconds < best.last.score.seconds,
                (false, false) => searched.last.score.peak_bytes < best.last.score.peak_bytes,
            },
        };
        if attempts.len() > 1 {
            eprintln!(
                "partir: order {}{}{}: step {}, peak {}{}",
                if std::ptr::eq(start, &fixed) {
                    ""
                } else {
                    "pipeline, then "
                },
                order.join(" then "),
                if compute.budget_bytes.is_infinite() {
                    ""
                } else {
                    ", compute within what ZeRO could fit"
                },
                crate::report::text::seconds(searched.last.score.seconds),
                crate::report::text::bytes(searched.last.score.peak_bytes),
                if searched.last.fits {
                    ""
                } else {
                    " (over the budget)"
                }
            );
        }
        if better {
            best = Some(searched);
        }
    }
    let Searched {
        mut plan,
        searches,
        last,
        order,
    } = best.expect("at least one order");
    if attempts.len() > 1 {
        let pipelined = plan.tactics.iter().find(|t| t.pipeline.is_some());
        eprintln!(
            "partir: kept the order {}{}",
            pipelined.map_or(String::new(), |t| format!(
                "pipeline over '{}', then ",
                t.axis
            )),
            order.join(" then ")
        );
    }
    if !last.fits {
        return Err(CliError::new(format!(
            "{source}: no plan found fits the memory budget of {} per device on {}: the smallest peak found is {}",
            crate::report::text::bytes(settings.budget_bytes),
            device.name,
            crate::report::text::bytes(last.score.peak_bytes)
        )));
    }
    if plan.tactics.is_empty() {
        // Nothing beats the replicated program (communication costs more than it saves): the
        // plan says so as a schedule, every value pinned whole on each axis searched.
        for axis in &axes {
            plan.tactics.push(Tactic {
                name: format!("auto-{axis}"),
                axis: axis.clone(),
                tile: Vec::new(),
                replicate: vec!["*".into()],
                reach: crate::schedule::Reach::All,
                auto: None,
                pipeline: None,
                comment: vec![format!(
                    "Found by partir auto: no split along '{axis}' is faster than keeping every value whole."
                )],
                line: 0,
            });
        }
    }
    let header = vec![
        format!(
            "Plan for {source}, found by `partir auto` on {}.",
            device.name
        ),
        format!(
            "Budget {} per device, seed {}. Apply it with: partir partition {source} -s {}",
            crate::report::text::bytes(settings.budget_bytes),
            settings.seed,
            shown(&args.output)
        ),
    ];
    std::fs::write(&args.output, plan.to_toml(&header)).map_err(|error| {
        CliError::new(format!("cannot write '{}': {error}", args.output.display()))
    })?;
    eprintln!(
        "partir: wrote the plan to {}; the plan, replayed:",
        shown(&args.output)
    );
    replay(args, &source, &device, &searches)?;
    eprintln!(
        "partir: searched in {} in total",
        seconds_text(total.elapsed().as_secs_f64())
    );
    Ok(0)
}

/// What searching the axes in one order found.
struct Searched {
    /// FIXED's tactics, then the found ones.
    plan: Schedule,
    /// Per found tactic (the first of each search), the search's summary.
    searches: Vec<(String, SearchSummary)>,
    /// The last search: the price of the whole plan.
    last: Found,
    order: Vec<String>,
}

/// Parses the model, applies FIXED, then searches compute on every axis of `order` (within
/// `compute`'s budget), then memory on every axis (ZeRO sharding before Megatron would block
/// Megatron's propagation).
fn search_in_order(
    source: &str,
    text: &str,
    fixed: &Schedule,
    order: &[String],
    compute: &Settings,
    settings: &Settings,
    device: &Device,
) -> Result<Searched, CliError> {
    let session = Session::new(source);
    let step = Step::start(&format!("parsing {source}"));
    let mut module = session.parse(text).inspect_err(|_| eprintln!("failed"))?;
    step.done();
    prepare(&session, &module)?;
    let context = session.context();
    let mut plan = Schedule {
        mesh: fixed.mesh.clone(),
        tactics: Vec::new(),
        file: String::new(),
        rules: fixed.rules.clone(),
        expand: fixed.expand.clone(),
    };
    crate::rules::register_custom_call_rules(&fixed.rules).map_err(CliError::new)?;
    let mut searches: Vec<(String, SearchSummary)> = Vec::new();
    // FIXED's tactics (its own `auto` tactics searched in place), kept as applied.
    schedule::apply(
        context,
        module.as_operation(),
        fixed,
        device,
        &mut |outcome, _| {
            if let Some(outcome) = outcome {
                if let Some(search) = &outcome.search {
                    searches.push((outcome.tactic.name.clone(), search.clone()));
                }
                plan.tactics.push(outcome.tactic.clone());
            }
            Ok(())
        },
    )
    .map_err(|error| session.pass_error(error))?;
    session.take();
    let mut last: Option<Found> = None;
    // The program's whole price, from the search before (see Found::whole).
    let mut known = None;
    for phase in [Phases::Compute, Phases::Memory] {
        for axis in order {
            let name = format!("auto-{axis}");
            let before_later_axes = Settings {
                near: crate::passes::auto::mcts::NEAR_BEFORE_LATER_AXES,
                ..compute.clone()
            };
            let phase_settings = match phase {
                Phases::Compute if order.last() != Some(axis) => &before_later_axes,
                Phases::Compute => compute,
                _ => settings,
            };
            let found = search(&session, &module, axis, phase_settings, phase, &name, known)?;
            known = found.whole;
            plan.tactics.extend(found.tactics.iter().cloned());
            if revisits_an_axis(&plan.tactics, found.tactics.len()) {
                // A found tactic splits what a scan carries, on an axis an earlier tactic
                // tiled that scan whole along: replayed, the earlier tactic enters the scan
                // instead (`propagate::body`), so the next search starts from the replay.
                module = replayed(&session, text, &plan, device)?;
                known = None;
            } else {
                let mut propagation = Propagation::new(context);
                let location = program_location(module.as_operation());
                for tactic in &found.tactics {
                    apply_tactic(
                        context,
                        module.as_operation(),
                        tactic,
                        location,
                        &mut propagation,
                    )
                    .map_err(|error| session.pass_error(error))?;
                }
            }
            session.take();
            if let Some(first) = found.tactics.first() {
                searches.push((first.name.clone(), found.summary.clone()));
            }
            eprintln!("partir: {}", auto::summary_line(&found));
            for decision in &found.summary.decisions {
                eprintln!("  {}: {}", decision.group, decision.decision);
            }
            if found.tactics.is_empty() {
                eprintln!("  (nothing: every value stays whole along '{axis}')");
            }
            last = Some(found);
        }
    }
    let mut last = last.expect("at least one axis");
    // The plan as `partir partition` will price it: a last phase's tactics can change how an
    // earlier tactic of their axis propagates (the lookahead), which that phase's search, on
    // the program as it was, did not see.
    if revisits_an_axis(&plan.tactics, last.tactics.len()) {
        let program = replayed(&session, text, &plan, device)?;
        let report =
            crate::passes::simulate::simulate_module(context, program.as_operation(), device)
                .map_err(|error| session.pass_error(error))?;
        let (seconds, peak) = (report.totals.step_seconds, report.totals.peak_memory_bytes);
        if (seconds - last.score.seconds).abs() > 0.01 * last.score.seconds
            || (peak - last.score.peak_bytes).abs() > 0.1 * last.score.peak_bytes
        {
            eprintln!(
                "partir: order {}: replayed, the plan costs step {}, peak {} (its last search priced it at step {}, peak {})",
                order.join(" then "),
                crate::report::text::seconds(seconds),
                crate::report::text::bytes(peak),
                crate::report::text::seconds(last.score.seconds),
                crate::report::text::bytes(last.score.peak_bytes),
            );
        }
        last.score.seconds = seconds;
        last.score.peak_bytes = peak;
        last.fits = peak <= settings.budget_bytes;
    }
    Ok(Searched {
        plan,
        searches,
        last,
        order: order.to_vec(),
    })
}

/// Whether the last `found` tactics of `tactics` act on an axis a tactic before them did: only
/// then can replaying the plan differ from applying them in turn (the lookahead of
/// `schedule::apply`: an earlier tactic enters a scan whose carry a later one splits).
fn revisits_an_axis(tactics: &[Tactic], found: usize) -> bool {
    let (before, after) = tactics.split_at(tactics.len() - found);
    after
        .iter()
        .any(|tactic| before.iter().any(|earlier| earlier.axis == tactic.axis))
}

/// The program with `plan` applied as `partir partition` applies it (its lookahead included):
/// what the plan so far is when replayed.
fn replayed<'s>(
    session: &'s Session,
    text: &str,
    plan: &Schedule,
    device: &Device,
) -> Result<Module<'s>, CliError> {
    let module = session.parse(text)?;
    prepare(session, &module)?;
    schedule::apply(
        session.context(),
        module.as_operation(),
        plan,
        device,
        &mut |_, _| Ok(()),
    )
    .map_err(|error| session.pass_error(error))?;
    session.take();
    Ok(module)
}

/// One axis's search, with a progress bar of plans priced and the best step time so far.
fn search(
    session: &Session,
    module: &Module,
    axis: &str,
    settings: &Settings,
    phase: Phases,
    name: &str,
    known: Option<auto::evaluate::Priced>,
) -> Result<Found, CliError> {
    let bar = Progress::bar(settings.evaluations, "plans priced");
    // Plans are priced on every core (see passes::auto::evaluate::Evaluator::prefetch).
    let _threads = crate::ffi::threads::Multithreaded::new(session.context());
    let found = auto::search_axis(
        session.context(),
        auto::Base {
            module: module.as_operation(),
            known,
        },
        axis,
        settings,
        phase,
        name,
        &mut |what, priced, best| {
            let best = best
                .map(|seconds| format!(", best step {}", crate::report::text::seconds(seconds)))
                .unwrap_or_default();
            bar.set(priced, &format!("({what}{best})"));
        },
    );
    bar.finish();
    found.map_err(|error| session.pass_error(error))
}

/// `partir partition`'s priced run of the written plan: its table, and the reports.
fn replay(
    args: &AutoArgs,
    source: &str,
    device: &Device,
    searches: &[(String, SearchSummary)],
) -> Result<(), CliError> {
    let session = Session::new(source);
    let model = ModelArgs {
        model: args.model.clone(),
        schedule: args.output.clone(),
    };
    let (_, story, lowered) = partition_priced(&session, &model, Some(device), false, true)?;
    let mut story = story.expect("priced");
    for tactic in &mut story.tactics {
        name_source(&mut tactic.report, source);
        if let Some((_, search)) = searches.iter().find(|(name, _)| name == &tactic.tactic) {
            tactic.search = Some(search.clone());
        }
    }
    story.model = source.to_string();
    story.schedule = shown(&args.output);
    if let Some(last) = story.tactics.last() {
        eprint!("{}", last.report.text());
    }
    if let Some(lowered) = lowered {
        story.shardings = crate::passes::simulate::value_shardings(lowered.as_operation());
        say_deferred(&mut story, device);
    }
    write_reports(&story, args.report.as_deref(), args.html.as_deref())
}

/// The mesh: `--mesh`, else the fixed schedule's; both given, they must agree.
fn mesh_of(text: Option<&str>, fixed: Option<&Schedule>) -> Result<Vec<MeshAxis>, CliError> {
    let given = text
        .map(|text| Mesh::parse_axes(&text.split(',').collect::<Vec<_>>()))
        .transpose()
        .map_err(|error| CliError::new(format!("--mesh: {error}")))?;
    let scheduled = fixed
        .map(|fixed| fixed.mesh.clone())
        .filter(|mesh| !mesh.is_empty());
    match (given, scheduled) {
        (Some(given), Some(scheduled)) if given != scheduled => Err(CliError::new(format!(
            "--mesh {} differs from the fixed schedule's mesh {}",
            text.unwrap_or_default(),
            scheduled
                .iter()
                .map(|axis| format!("{}={}", axis.name, axis.size))
                .collect::<Vec<_>>()
                .join(",")
        ))),
        (Some(mesh), _) | (None, Some(mesh)) => Ok(mesh),
        (None, None) => Err(CliError::new(
            "no mesh: give --mesh batch=4,model=2 (or a fixed schedule with a mesh)",
        )),
    }
}
