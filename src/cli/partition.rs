//! `partir partition` and `partir simulate`: parse a model, apply a schedule tactic by tactic
//! (a table row per tactic, priced on a device when asked), lower to PartIR:HLO, report.

use super::{
    args::{ModelArgs, PartitionArgs, SimulateArgs, Stage},
    error::{os_error, CliError},
    pipeline::{table, Diag, Level, Session},
    progress::{seconds_text, shown, Progress, Step},
};
use crate::{
    passes::{schedule, simulate},
    schedule::Schedule,
    sim::{
        deferred,
        report::{stop_reason, PropagationSummary},
        Device, PartitionReport, Report, TacticReport,
    },
};
use melior::ir::{operation::OperationLike, Module, OperationRef};
use std::{path::Path, time::Instant};

pub fn partition_command(args: &PartitionArgs) -> Result<i32, CliError> {
    let total = Instant::now();
    let source = shown(&args.model.model);
    let session = Session::new(&source);
    let device = Device::resolve(&args.device).map_err(CliError::new)?;
    let tagged = (args.stage == Stage::Sdy).then(|| tagged_input(&session, &args.model));
    let tagged = tagged.transpose()?;
    let (mut module, mut story, lowered) = partition_priced(
        &session,
        &args.model,
        Some(&device),
        args.stage == Stage::Sdy,
        args.stage != Stage::Core,
    )?;
    let mut shardings = Vec::new();
    let mut annotated = None;
    let what = match args.stage {
        Stage::Core => "Core",
        Stage::Hlo => {
            module = into_hlo(&session, module, lowered)?;
            shardings = simulate::value_shardings(module.as_operation());
            "PartIR:HLO"
        }
        Stage::Xla => {
            module = into_hlo(&session, module, lowered)?;
            shardings = simulate::value_shardings(module.as_operation());
            export_stablehlo(&session, &mut module)?;
            "StableHLO SPMD"
        }
        Stage::Sdy => {
            let input = tagged.expect("tagged for the sdy stage");
            let plan = crate::passes::export_sdy::plan(module.as_operation());
            module = into_hlo(&session, module, lowered)?;
            shardings = simulate::value_shardings(module.as_operation());
            annotate_input(&session, &input, &module, &plan)?;
            annotated = Some(input);
            "Shardy-annotated"
        }
    };
    let text = annotated
        .as_ref()
        .unwrap_or(&module)
        .as_operation()
        .to_string();
    if let Some(story) = story.as_mut() {
        for tactic in &mut story.tactics {
            name_source(&mut tactic.report, &source);
        }
        story.model = source.clone();
        story.schedule = shown(&args.model.schedule);
        if let Some(last) = story.tactics.last() {
            eprint!("{}", last.report.text());
        }
        story.shardings = shardings;
        if !story.shardings.is_empty() {
            eprintln!("partir: how the program's arguments and results are split:");
            eprint!("{}", story.sharding_table());
        }
        say_deferred(story, &device);
        write_reports(story, args.report.as_deref(), args.html.as_deref())?;
    }
    match &args.output {
        Some(path) => std::fs::write(path, &text).map_err(|error| {
            CliError::new(format!("cannot write '{}': {error}", path.display()))
        })?,
        None => print!("{text}"),
    }
    eprintln!(
        "partir: wrote the {what} program{} in {} in total",
        args.output
            .as_ref()
            .map(|path| format!(" to {}", path.display()))
            .unwrap_or_default(),
        seconds_text(total.elapsed().as_secs_f64())
    );
    Ok(0)
}

/// Prices and says the state the step returns split otherwise than it came in (the next
/// step gathers it back): a schedule that splits Adam's moments on an axis updates the
/// parameters split on it too, and returns them so while they came in whole.
pub(super) fn say_deferred(story: &mut PartitionReport, device: &Device) {
    let Some(last) = story.tactics.last() else {
        return;
    };
    let mesh: Vec<crate::ir::MeshAxis> = (last.report.mesh.iter())
        .map(|axis| crate::ir::MeshAxis {
            name: axis.name.clone(),
            size: axis.size,
        })
        .collect();
    let step = last.report.totals.step_seconds;
    let resharded = deferred::resharded(&story.shardings);
    story.deferred_seconds = deferred::state_resharding(&story.shardings, &mesh, device);
    let Some((first, _)) = resharded.first() else {
        return;
    };
    let more = match resharded.len() {
        1 => String::new(),
        count => format!(" and {} more", count - 1),
    };
    eprintln!(
        "partir: the step returns state split otherwise than it came in ({}{more}): the next step gathers it back, {} (with the step: {})",
        first.name,
        crate::report::text::seconds(story.deferred_seconds),
        crate::report::text::seconds(step + story.deferred_seconds)
    );
}

/// The input as partition reads it (calls inlined, names adopted), every op tagged with its
/// id (`export_sdy::tag`) so that the plan can be written back onto it.
fn tagged_input<'s>(session: &'s Session, args: &ModelArgs) -> Result<Module<'s>, CliError> {
    let module = session.parse(&read_model(&args.model)?)?;
    prepare(session, &module)?;
    crate::passes::export_sdy::tag(session.context(), module.as_operation());
    Ok(module)
}

/// Writes `plan` (read off the partitioned Core program) and the lowered program's argument
/// and result shardings onto the tagged `input` as Shardy annotations.
fn annotate_input(
    session: &Session,
    input: &Module,
    lowered: &Module,
    plan: &crate::passes::export_sdy::Plan,
) -> Result<(), CliError> {
    let Some((mesh, _)) = crate::ir::Mesh::find(lowered.as_operation()) else {
        return Err(CliError::new("the partitioned program declares no mesh"));
    };
    let main = crate::ir::names::entry_functions(lowered.as_operation())
        .into_iter()
        .next()
        .ok_or_else(|| CliError::new("the partitioned program has no entry function"))?;
    let arguments = crate::ir::Sharding::of_function(main, "arg_attrs");
    let results = crate::ir::Sharding::of_function(main, "res_attrs");
    crate::passes::export_sdy::annotate(
        session.context(),
        input.as_operation(),
        &mesh,
        plan,
        &arguments,
        &results,
    );
    Ok(())
}

/// Writes the JSON report and the picture where asked.
pub(super) fn write_reports(
    story: &PartitionReport,
    json: Option<&Path>,
    html: Option<&Path>,
) -> Result<(), CliError> {
    let write = |path: &Path, text: String, what: &str| {
        std::fs::write(path, text)
            .map_err(|error| {
                CliError::new(format!(
                    "cannot write '{}': {}",
                    path.display(),
                    os_error(&error)
                ))
            })
            .map(|()| eprintln!("partir: wrote the {what} to {}", path.display()))
    };
    if let Some(path) = json {
        write(path, story.json(), "report")?;
    }
    if let Some(path) = html {
        write(path, crate::report::html::page(story), "picture")?;
    }
    Ok(())
}

/// Locations in a program parsed from a string have no file name (`:12:5`): give them the
/// file's.
pub(super) fn name_source(report: &mut Report, source: &str) {
    for op in &mut report.top_ops {
        if op.location.starts_with(':') {
            op.location.insert_str(0, source);
        }
    }
    let at = format!(" at {source}:");
    report.memory.peak_at = report.memory.peak_at.replace(" at :", &at);
    for live in &mut report.memory.live_at_peak {
        live.defined_at = live.defined_at.replace(" at :", &at);
    }
}

/// `partir simulate OUT.mlir --device D`: the report of an existing program (HLO, or Core
/// lowered on a copy).
pub fn simulate_command(args: &SimulateArgs) -> Result<i32, CliError> {
    let source = shown(&args.program);
    let session = Session::new(&source);
    let device = Device::resolve(&args.device).map_err(CliError::new)?;
    let text = read_model(&args.program)?;
    let module = session.parse(&text)?;
    let mut report = simulate::simulate_module(session.context(), module.as_operation(), &device)
        .map_err(|error| session.pass_error(error))?;
    name_source(&mut report, &source);
    eprint!("{}", report.text());
    if let Some(path) = &args.report {
        std::fs::write(path, report.json()).map_err(|error| {
            CliError::new(format!(
                "cannot write '{}': {}",
                path.display(),
                os_error(&error)
            ))
        })?;
        eprintln!("partir: wrote the report to {}", path.display());
    }
    Ok(0)
}

/// PartIR:HLO → a StableHLO SPMD module for XLA (`partir-export-stablehlo`).
pub fn export_stablehlo(session: &Session, module: &mut Module) -> Result<(), CliError> {
    let step = Step::start("exporting to StableHLO for XLA (partir-export-stablehlo)");
    let pipeline = format!("builtin.module({})", crate::passes::names::EXPORT_STABLEHLO);
    let result = session.run(module, &pipeline);
    match &result {
        Ok(()) => {
            step.done();
        }
        Err(_) => step.failed(),
    }
    result
}

/// Lowers a partitioned Core module to PartIR:HLO (`partir-lower-to-hlo`, `cse`, then
/// `partir-combine-collectives` with XLA's default threshold).
pub fn lower_to_hlo(session: &Session, module: &mut Module) -> Result<(), CliError> {
    let step = Step::start(&format!("lowering to PartIR:HLO ({})", lowering_passes()));
    let result = lower_quietly(session, module);
    match &result {
        Ok(_) => {
            step.done();
        }
        Err(_) => step.failed(),
    }
    for diag in result? {
        eprintln!("{diag}");
    }
    Ok(())
}

/// The passes that lower a partitioned Core module to PartIR:HLO, in order.
const LOWERING: [&str; 3] = [
    crate::passes::names::LOWER_TO_HLO,
    "cse",
    crate::passes::names::COMBINE_COLLECTIVES,
];

fn lowering_passes() -> String {
    LOWERING.join(", ")
}

/// [`lower_to_hlo`] without its progress line: the diagnostics worth printing (warnings, and
/// combining's remark, which says what it did to peak memory), for the caller to print.
fn lower_quietly(session: &Session, module: &mut Module) -> Result<Vec<Diag>, CliError> {
    use crate::passes::names::COMBINE_COLLECTIVES;
    let pipeline = format!("builtin.module({})", LOWERING.join(","));
    session.run(module, &pipeline)?;
    Ok(session
        .take()
        .into_iter()
        .filter(|diag| diag.level != Level::Remark || diag.message.starts_with(COMBINE_COLLECTIVES))
        .collect())
}

/// A copy of the partitioned Core program `op` lowered as the output is, with what lowering
/// said; `None` when lowering fails (the output's own lowering then says why).
fn lowered_copy<'s>(
    session: &'s Session,
    op: OperationRef<'s, '_>,
) -> Option<(Module<'s>, Vec<Diag>)> {
    let mut copy = Module::from_operation(crate::ffi::clone_operation(op))?;
    let said = lower_quietly(session, &mut copy).ok()?;
    Some((copy, said))
}

/// The partitioned program in PartIR:HLO: the copy lowered when the last tactic was priced,
/// else `module` lowered now.
fn into_hlo<'s>(
    session: &'s Session,
    mut module: Module<'s>,
    lowered: Option<Module<'s>>,
) -> Result<Module<'s>, CliError> {
    match lowered {
        Some(lowered) => {
            eprintln!(
                "partir: lowered to PartIR:HLO ({}) when the last tactic was priced",
                lowering_passes()
            );
            Ok(lowered)
        }
        None => {
            lower_to_hlo(session, &mut module)?;
            Ok(module)
        }
    }
}

/// Reads, parses and partitions the model with its schedule; prints diagnostics and the tactic
/// table on stderr.
pub fn partition<'s>(session: &'s Session, args: &ModelArgs) -> Result<Module<'s>, CliError> {
    partition_priced(session, args, None, false, false).map(|(module, _, _)| module)
}

/// What every tactic starts from: the program as JAX emits it made partir's (calls inlined,
/// names adopted: `passes::frontend`), and batch dims an importer merged (attention's
/// [batch*heads]) separate again, so that each can be tiled on its own axis.
pub fn prepare(session: &Session, module: &Module) -> Result<(), CliError> {
    crate::passes::frontend::run(session.context(), module.as_operation())
        .map_err(|error| session.pass_error(error))?;
    crate::passes::unmerge::run(module.as_operation())
        .map_err(|error| session.pass_error(error))?;
    Ok(())
}

/// [`partition`], and with a device, the program priced before the first tactic and after
/// each one: a table row per tactic (long schedules show a progress bar on terminals). With
/// `tag`, every op carries its id (`export_sdy::tag`), as [`tagged_input`]'s copy does. With
/// `keep_lowered` and a device, the schedule's result is priced on a copy lowered as the
/// output is, and that copy is returned too: lowering the 70B step's 54k ops once, not again
/// for the output, is a seventh of its `partir partition` time.
pub fn partition_priced<'s>(
    session: &'s Session,
    args: &ModelArgs,
    device: Option<&Device>,
    tag: bool,
    keep_lowered: bool,
) -> Result<PartitionedModule<'s>, CliError> {
    let text = read_model(&args.model)?;
    check_schedule(&args.schedule)?;
    let schedule = Schedule::load(&args.schedule).map_err(CliError::new)?;
    let step = Step::start(&format!("parsing {}", shown(&args.model)));
    let module = session.parse(&text).inspect_err(|_| eprintln!("failed"))?;
    step.done();
    prepare(session, &module)?;
    if tag {
        crate::passes::export_sdy::tag(session.context(), module.as_operation());
    }
    eprintln!(
        "partir: partitioning with {} (partir-schedule{})",
        shown(&args.schedule),
        device
            .map(|device| format!(", priced on {}", device.name))
            .unwrap_or_default()
    );
    let mut story = PartitionReport {
        device: device.map(|device| device.name.clone()).unwrap_or_default(),
        ..PartitionReport::default()
    };
    let mut rows = TacticRows::new(device.is_some(), schedule.tactics.len());
    let mut deferred = Vec::new();
    let mut lowered = None;
    let mut tactic_start = Instant::now();
    let context = session.context();
    // An `auto` tactic in an unpriced run still prices its candidates, on the default device.
    let default_device = Device::resolve(crate::sim::DEFAULT_DEVICE).map_err(CliError::new)?;
    // `auto` tactics price their plans on every core (partir's own passes run in Rust here,
    // outside any pass manager, so nothing else runs in parallel).
    let _threads = schedule
        .tactics
        .iter()
        .any(|tactic| tactic.auto.is_some())
        .then(|| crate::ffi::threads::Multithreaded::new(context));
    let result = schedule::apply(
        context,
        module.as_operation(),
        &schedule,
        device.unwrap_or(&default_device),
        &mut |outcome: Option<&schedule::TacticOutcome>, op| {
            let tactic = outcome.map(|outcome| &outcome.tactic);
            let diags = session.take();
            let propagation = outcome.map(|outcome| PropagationSummary {
                ops_partitioned: outcome.partitioned,
                conflicts: outcome.conflicts,
                stops: (outcome.stops.iter())
                    .map(|stop| stop.clone().located_in(session.source()))
                    .collect(),
            });
            // The tactic's remark is its table row; propagation's remarks go after the table,
            // so that its rows stay together.
            if let Some(outcome) = outcome {
                let remark = outcome.to_string();
                deferred.extend(diags.into_iter().filter(|diag| diag.message != remark));
            } else {
                deferred.extend(diags);
            }
            let priced = match device {
                Some(device) => {
                    let last = outcome.is_some_and(|outcome| outcome.last);
                    let kept = (keep_lowered && last)
                        .then(|| lowered_copy(session, op))
                        .flatten();
                    let priced_op = kept.as_ref().map_or(op, |(copy, _)| copy.as_operation());
                    let priced = schedule::price(
                        context,
                        priced_op,
                        outcome,
                        device,
                        &mut story,
                        propagation,
                    )?;
                    if let Some((copy, said)) = kept {
                        deferred.extend(said);
                        lowered = Some(copy);
                    }
                    Some(priced)
                }
                None => None,
            };
            if tactic.is_some() || priced.is_some() {
                rows.push(outcome, priced, tactic_start.elapsed().as_secs_f64());
            }
            tactic_start = Instant::now();
            Ok(())
        },
    );
    rows.print();
    report_diagnostics(&deferred);
    if let Err(error) = result {
        return Err(session.pass_error(error));
    }
    if !module.as_operation().verify() {
        return Err(CliError::new("the partitioned program does not verify"));
    }
    report_diagnostics(&session.take());
    Ok((module, device.map(|_| story), lowered))
}

/// What [`partition_priced`] returns: the partitioned Core module, its report when priced, and
/// the copy lowered to PartIR:HLO when it kept one.
pub type PartitionedModule<'s> = (Module<'s>, Option<PartitionReport>, Option<Module<'s>>);

/// The per-tactic table: a row per tactic (and one for the program before the first when
/// priced), printed whole once the schedule is done; meanwhile a progress bar counts tactics
/// on terminals.
struct TacticRows {
    header: Vec<String>,
    rows: Vec<Vec<String>>,
    /// Per row, its pipelines' bubble (`-` for none): a column only when some row has one.
    bubbles: Vec<String>,
    progress: Progress,
}

impl TacticRows {
    fn new(priced: bool, tactics: usize) -> Self {
        let mut header = vec!["ops partitioned".to_string(), "conflicts".into()];
        if priced {
            let mut all = PartitionReport::header();
            all.splice(2..2, header);
            header = all;
        } else {
            header.splice(0..0, ["tactic".to_string(), "axis".into()]);
        }
        header.push("took".into());
        Self {
            header,
            rows: Vec::new(),
            bubbles: Vec::new(),
            progress: Progress::bar(tactics, "tactics applied"),
        }
    }

    fn push(
        &mut self,
        outcome: Option<&schedule::TacticOutcome>,
        priced: Option<&TacticReport>,
        seconds: f64,
    ) {
        let count = |count: fn(&schedule::TacticOutcome) -> usize| {
            outcome
                .map(|outcome| count(outcome).to_string())
                .unwrap_or_else(|| "-".into())
        };
        let mut cells = vec![
            count(|outcome| outcome.partitioned),
            count(|outcome| outcome.conflicts),
        ];
        match priced {
            Some(priced) => {
                let mut row = PartitionReport::cells(priced);
                row.splice(2..2, cells);
                cells = row;
            }
            None => {
                let tactic = &outcome.expect("a tactic's row").tactic;
                cells.splice(0..0, [tactic.name.clone(), tactic.axis.clone()]);
            }
        }
        cells.push(seconds_text(seconds));
        self.rows.push(cells);
        self.bubbles.push(
            priced
                .map(|priced| crate::report::text::bubble(&priced.report.pipelines))
                .unwrap_or_else(|| "-".into()),
        );
        if let Some(outcome) = outcome {
            self.progress.advance(&format!(
                "{} on {}",
                outcome.tactic.name, outcome.tactic.axis
            ));
        }
    }

    fn print(mut self) {
        self.progress.finish();
        // The bubble goes before `took`, the last column.
        if self.bubbles.iter().any(|bubble| bubble != "-") {
            let at = self.header.len() - 1;
            self.header.insert(at, "bubble".into());
            for (row, bubble) in self.rows.iter_mut().zip(self.bubbles) {
                row.insert(at, bubble);
            }
        }
        let mut lines = vec![self.header];
        lines.extend(self.rows);
        eprint!("{}", table(&lines));
    }
}

pub fn read_model(path: &Path) -> Result<String, CliError> {
    std::fs::read_to_string(path).map_err(|error| {
        CliError::new(format!(
            "cannot read the model '{}': {}",
            path.display(),
            os_error(&error)
        ))
    })
}

fn check_schedule(path: &Path) -> Result<(), CliError> {
    std::fs::File::open(path).map(|_| ()).map_err(|error| {
        CliError::new(format!(
            "cannot read the schedule '{}': {}",
            path.display(),
            os_error(&error)
        ))
    })
}

/// Prints warnings and remarks (tactic summaries are table rows, not remarks, here); a
/// remark repeated at many places (the same reason; propagation stops differ only in what they
/// mean at each place, after `STOP_DETAIL`) is printed once, at its first place, with the count
/// of the others.
fn report_diagnostics(diags: &[Diag]) {
    let reason = |diag: &Diag| stop_reason(&diag.message).to_string();
    let mut shown: Vec<(&Diag, usize)> = Vec::new();
    for diag in diags {
        match shown
            .iter_mut()
            .find(|(first, _)| first.level == diag.level && reason(first) == reason(diag))
        {
            Some((_, more)) if diag.level != Level::Error => *more += 1,
            _ => shown.push((diag, 0)),
        }
    }
    for (diag, more) in shown {
        match more {
            0 => eprintln!("{diag}"),
            1 => eprintln!("{diag} (and at 1 more place)"),
            _ => eprintln!("{diag} (and at {more} more places)"),
        }
    }
}
