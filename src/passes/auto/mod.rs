//! `partir-auto{axis=A memory=SIZE device=D time-limit=S seed=N}`: automatic partitioning
//! along one axis (docs/design.md#automatic-partitioning), the papers' goal-oriented Monte
//! Carlo tree search. Also the `auto` tactic of schedules and the `partir auto` command.
//!
//! One axis is searched in two phases, each its own [`mcts`] problem over the actions
//! [`space`] finds:
//! 1. compute: tiles propagated through every op (batch, Megatron, ...) and replicates, for
//!    the best simulated step time within the memory budget;
//! 2. memory: shards propagated through elementwise ops only (ZeRO: parameters and optimizer
//!    state stored split, gathered for compute), conditioned on phase 1's plan. It makes plans
//!    fit, and it also speeds up big models: the optimizer's update runs on a shard (on the
//!    4-layer width-1024 Transformer, BP+MP+Z3 is faster than BP+MP). Its empty plan keeps
//!    phase 1's, so it never makes a plan slower.
//!
//! A phase's result is an ordinary tactic (`tile = {...}`, `replicate = [...]`, `propagate =
//! "elementwise"` for phase 2), so a found plan is a schedule `partir partition` replays.
//!
//! Plans are priced by [`evaluate`] on the whole program, or, for a program of repeated layers
//! (said by its ops' locations, or found from its dataflow by [`seams`]), on two cuts of it
//! ([`fold`]).

mod cut;
pub mod evaluate;
pub mod fold;
pub mod mcts;
mod phase;
mod seams;
pub mod space;

use crate::{
    ffi,
    ir::Mesh,
    passes::{
        names::AUTO as PASS, options::AutoOptions, program_location, propagate::Propagation,
        tactic::apply_tactic, PassError, PassResult,
    },
    schedule::{parse_size, AutoSettings, Reach, Tactic},
    sim::{report::SearchSummary, Device, DEFAULT_DEVICE},
};
use mcts::Score;
use melior::{ir::OperationRef, Context};
use std::time::{Duration, Instant};

/// Distinct plans priced per phase, unless told otherwise.
pub const DEFAULT_EVALUATIONS: usize = 100;
/// Seconds per phase, unless told otherwise.
pub const DEFAULT_TIME_LIMIT: f64 = 60.0;

/// How a search runs, resolved.
#[derive(Clone, Debug)]
pub struct Settings {
    pub device: Device,
    pub budget_bytes: f64,
    pub time_limit: Duration,
    pub seed: u64,
    pub evaluations: usize,
    /// A compute phase judges a plan's memory by what the memory phases after it could reach
    /// at best (see [`evaluate::Priced::anticipated`]): under a tight budget, a plan over it
    /// may fit once its state is sharded, and among those the fastest is wanted, not the one
    /// with the lowest peak now.
    pub anticipate: bool,
    /// How close to its fastest plan a simpler one may be and still be taken
    /// ([`mcts::NEAR`], wider before other axes: [`mcts::NEAR_BEFORE_LATER_AXES`]).
    pub near: f64,
}

impl Settings {
    /// `auto`'s settings with the defaults filled in: the device `default_device` unless it
    /// names one, a budget of the device's capacity.
    pub fn resolve(auto: &AutoSettings, default_device: &Device) -> Result<Settings, String> {
        let device = match &auto.device {
            Some(name) => Device::resolve(name)?,
            None => default_device.clone(),
        };
        let time_limit = auto.time_limit.unwrap_or(DEFAULT_TIME_LIMIT);
        if time_limit.is_nan() || time_limit <= 0.0 {
            return Err(format!("the time limit must be positive, got {time_limit}"));
        }
        Ok(Settings {
            budget_bytes: auto
                .memory
                .map(|bytes| bytes as f64)
                .unwrap_or(device.memory_bytes),
            device,
            time_limit: Duration::from_secs_f64(time_limit),
            seed: auto.seed.unwrap_or(0),
            evaluations: auto.evaluations.unwrap_or(DEFAULT_EVALUATIONS).max(1),
            anticipate: false,
            near: mcts::NEAR,
        })
    }
}

/// Which phases of an axis to search.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Phases {
    /// Compute only: `partir auto` searches every axis's compute first, memory after.
    Compute,
    /// Memory only (ZeRO-like sharding), on a program whose compute is decided.
    Memory,
    /// Compute, then memory.
    Both,
}

/// What a search found for one axis.
#[derive(Clone, Debug)]
pub struct Found {
    /// The tactics to apply, in order (none when everything stays as it is).
    pub tactics: Vec<Tactic>,
    pub summary: SearchSummary,
    /// The price after them.
    pub score: Score,
    pub fits: bool,
    /// The program's price after them on the whole program, when the last phase priced
    /// plans folded (its check of the fold): the next search on that program starts from it.
    pub whole: Option<evaluate::Priced>,
}

/// Progress of a long search: (phase, plans priced, best step time so far).
pub type ProgressFn<'p> = dyn FnMut(&str, usize, Option<f64>) + 'p;

pub fn run<'c>(
    context: &'c Context,
    module: OperationRef<'c, '_>,
    options: &AutoOptions,
) -> PassResult<'c> {
    let location = program_location(module);
    let fail = |message: String| PassError::new(location, format!("{PASS}: {message}"));
    if options.axis.is_empty() {
        return Err(fail("no axis given (axis=NAME)".into()));
    }
    super::frontend::run(context, module)?;
    let auto = AutoSettings {
        memory: match options.memory.as_str() {
            "" => None,
            text => Some(parse_size(text).map_err(fail)?),
        },
        device: (!options.device.is_empty()).then(|| options.device.clone()),
        time_limit: (options.time_limit > 0.0).then_some(options.time_limit),
        seed: Some(options.seed as u64),
        evaluations: (options.evaluations > 0).then_some(options.evaluations as usize),
    };
    let default_device = Device::resolve(DEFAULT_DEVICE).map_err(fail)?;
    let settings = Settings::resolve(&auto, &default_device).map_err(fail)?;
    let found = search_axis(
        context,
        Base::new(module),
        &options.axis,
        &settings,
        Phases::Both,
        "auto",
        &mut |_, _, _| {},
    )?;
    let mut propagation = Propagation::new(context);
    for tactic in &found.tactics {
        apply_tactic(context, module, tactic, location, &mut propagation)?;
    }
    ffi::emit(
        location,
        ffi::Severity::Remark,
        &format!("{PASS}: {}", summary_line(&found)),
    );
    for tactic in &found.tactics {
        ffi::emit(
            location,
            ffi::Severity::Remark,
            &format!("{PASS}: {}", tactic_line(tactic)),
        );
    }
    Ok(())
}

/// `axis 'model': 12 raw actions, 5 after analysis, 31 plans priced in 0.84 s (37/s); step
/// 34.6 us, peak 1.78 MiB`.
pub fn summary_line(found: &Found) -> String {
    let summary = &found.summary;
    format!(
        "axis '{}': {} raw actions, {} after analysis, {} plans priced (+{} probes) in {:.2} s ({:.0}/s){}{}; step {}, peak {}",
        summary.axis,
        summary.raw_actions,
        summary.reduced_actions,
        summary.evaluations,
        summary.probes,
        summary.seconds,
        (summary.evaluations + summary.probes) as f64 / summary.seconds.max(1e-9),
        if summary.exhausted { " (all of them)" } else if summary.timed_out { " (time limit)" } else { "" },
        if summary.pricing == fold::WHOLE { String::new() } else { format!(", {}", summary.pricing) },
        crate::report::text::seconds(found.score.seconds),
        crate::report::text::bytes(found.score.peak_bytes),
    )
}

/// `tactic 'auto-model' on 'model': tile { params/layers/*/w1 = 1 } replicate [ ... ]`.
pub fn tactic_line(tactic: &Tactic) -> String {
    let tiles: Vec<String> = tactic
        .tile
        .iter()
        .map(|(selector, dim)| format!("{selector} = {dim}"))
        .collect();
    let mut line = format!(
        "tactic '{}' on '{}': tile {{ {} }}",
        tactic.name,
        tactic.axis,
        tiles.join(", ")
    );
    if !tactic.replicate.is_empty() {
        line += &format!(" replicate [{}]", tactic.replicate.join(", "));
    }
    if tactic.reach == Reach::Elementwise {
        line += " propagate elementwise";
    }
    line
}

/// The program a search starts from, and its price on the whole program when a search
/// before priced it (see [`Found::whole`]).
#[derive(Clone, Copy)]
pub struct Base<'c, 'a> {
    pub module: OperationRef<'c, 'a>,
    pub known: Option<evaluate::Priced>,
}

impl<'c, 'a> Base<'c, 'a> {
    /// A program whose price nothing knows yet.
    pub fn new(module: OperationRef<'c, 'a>) -> Self {
        Base {
            module,
            known: None,
        }
    }
}

/// Searches `axis` of the base program (left unchanged) and returns the tactics found, named
/// after `name`. With [`Phases::Both`], a search that finds no plan within the budget is an error
/// naming the smallest peak it found (the other phases leave that to their caller, which may
/// search other axes first).
pub fn search_axis<'c>(
    context: &'c Context,
    base: Base<'c, '_>,
    axis: &str,
    settings: &Settings,
    phases: Phases,
    name: &str,
    progress: &mut ProgressFn,
) -> Result<Found, PassError<'c>> {
    let Base { module, known } = base;
    let start = Instant::now();
    let location = program_location(module);
    let fail = |message: String| PassError::new(location, format!("{PASS}: {message}"));
    let mesh = Mesh::find(module).map(|(mesh, _)| mesh).ok_or_else(|| {
        fail("the module declares no partir.mesh; run partir-mesh{axes=...} first".into())
    })?;
    let axis_size = mesh
        .axis_size(axis)
        .ok_or_else(|| fail(format!("axis '{axis}' is not in mesh {mesh}")))?;
    let phases_of = |compute: &Settings| -> Vec<(Reach, &'static str, Settings)> {
        let memory = (Reach::Elementwise, "-zero", settings.clone());
        match phases {
            Phases::Compute => vec![(Reach::All, "", compute.clone())],
            Phases::Memory => vec![memory],
            Phases::Both => vec![(Reach::All, "", compute.clone()), memory],
        }
    };
    let run = |list: Vec<(Reach, &'static str, Settings)>, progress: &mut ProgressFn| {
        let phases = phase::AxisRun {
            axis,
            axis_size,
            mesh: &mesh,
            name,
        };
        phases.run(context, module, &list, known, progress)
    };
    // Speed first: the compute phase looks for the fastest plan whatever its memory, and the
    // memory phase then makes it fit (ZeRO shards what BP and Megatron leave whole). When that
    // does not fit, the compute phase searches again for the fastest plan the memory phase
    // could still make fit.
    let mut found = if phases == Phases::Both {
        let unbounded = Settings {
            budget_bytes: f64::INFINITY,
            ..settings.clone()
        };
        run(phases_of(&unbounded), progress)?
    } else {
        run(phases_of(settings), progress)?
    };
    if phases == Phases::Both && !found.fits {
        let anticipating = Settings {
            anticipate: true,
            ..settings.clone()
        };
        let mut bounded = run(phases_of(&anticipating), progress)?;
        bounded.summary.evaluations += found.summary.evaluations;
        bounded.summary.probes += found.summary.probes;
        if bounded.fits || bounded.score.peak_bytes < found.score.peak_bytes {
            found = bounded;
        }
    }
    found.summary.seconds = start.elapsed().as_secs_f64();
    if !found.fits && phases == Phases::Both {
        return Err(fail(format!(
            "no plan found fits the memory budget of {} per device on axis '{axis}': the smallest peak found is {} ({} plans priced on {})",
            crate::report::text::bytes(settings.budget_bytes),
            crate::report::text::bytes(found.score.peak_bytes),
            found.summary.evaluations,
            settings.device.name
        )));
    }
    Ok(found)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn settings_default_to_the_device_capacity() {
        let device = Device::resolve("tpu-v3").unwrap();
        let settings = Settings::resolve(&AutoSettings::default(), &device).unwrap();
        assert_eq!(settings.budget_bytes, settings.device.memory_bytes);
        assert_eq!(settings.evaluations, DEFAULT_EVALUATIONS);
        let error = Settings::resolve(
            &AutoSettings {
                time_limit: Some(0.0),
                ..AutoSettings::default()
            },
            &device,
        )
        .unwrap_err();
        assert!(error.contains("positive"), "{error}");
    }
}
