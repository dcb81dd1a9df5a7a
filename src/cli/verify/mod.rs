//! `partir verify ORIGINAL.mlir (--schedule S.toml | --partitioned OUT.mlir) (--ranks N |
//! --sequential)`: the equivalence check of docs/design.md#8-execution. The original program, its f64 twin (the
//! reference, see `judge`) and the partitioned program run on the same inputs; every output of
//! the partitioned program is judged against the reference, within the original's own rounding
//! noise. The partitioned program is either made here (`--schedule`) or by any pipeline
//! (`--partitioned`: PartIR:Core, checked by its sequential reading or lowered and run on MPI
//! ranks, or PartIR:HLO, run on MPI ranks).
//! - `--sequential`: the sequential reading of Core (`partir-sequential`: loops become `scf.for`)
//!   on one process;
//! - `--ranks N`: the PartIR:HLO program on N MPI ranks (`spmd`).

mod inputs;
mod judge;
mod program;
mod ranks;
mod report;
mod upstream;
mod xla;

use super::{
    args::{ModelArgs, VerifyArgs},
    error::CliError,
    partition::{partition, read_model},
    pipeline::Session,
    progress::{seconds_text, shown, Progress, Step},
    runner::{self, Input},
    spmd,
};
use crate::passes::Stage;
use inputs::{data_dir, inputs};
use judge::NoiseRule;

use program::{make_main_private, reference_harness, sequential_harness, signature, Signature};
use ranks::Spmd;
use report::{report, Runs};
use std::{io::Write, time::Instant};

/// What one run printed, decoded: one vector per output.
type Values = Vec<Vec<f64>>;

pub fn run(args: &VerifyArgs) -> Result<i32, CliError> {
    if !args.sequential && args.ranks.is_none() && !args.xla {
        return Err(CliError::new(
            "verify needs --ranks N (run the PartIR:HLO program on N MPI ranks), --sequential (check the sequential reading of the Core program on one process) or --xla (run a StableHLO program's partitioned form on XLA devices)",
        ));
    }
    if args.ranks == Some(0) {
        return Err(CliError::new("--ranks must be at least 1"));
    }
    for (flag, value) in [
        ("--tolerance", args.tolerance),
        ("--noise-factor", args.noise_factor),
    ] {
        if !(value >= 0.0 && value.is_finite()) {
            return Err(CliError::new(format!(
                "{flag} must be a non-negative number, got {value}"
            )));
        }
    }
    let rule = NoiseRule {
        factor: args.noise_factor,
        tolerance: args.tolerance,
    };
    let total = Instant::now();
    let model = &args.model;
    let session = Session::new(&shown(model));
    let text = read_model(model)?;
    let mut original = session.parse(&text)?;
    let signature = signature(&original)?;
    // Inputs first: a bad data directory fails before any long step.
    let data = data_dir(args)?;
    let (values, jax, origin) = inputs(&signature, data.as_ref(), args.seed)?;
    let inputs: Vec<Input> = signature
        .inputs
        .iter()
        .zip(&values)
        .map(|(ty, values)| Input::from_f64(ty.clone(), values))
        .collect();

    let mut partitioned = match (&args.schedule, &args.partitioned) {
        (Some(schedule), None) => partition(
            &session,
            &ModelArgs {
                model: model.clone(),
                schedule: schedule.clone(),
            },
        )?,
        (None, Some(path)) => {
            let step = Step::start(&format!("parsing {}", shown(path)));
            let text = std::fs::read_to_string(path).map_err(|error| {
                CliError::new(format!(
                    "cannot read the partitioned program '{}': {}",
                    path.display(),
                    super::error::os_error(&error)
                ))
            });
            let module = text.and_then(|text| session.parse(&text));
            match module {
                Ok(module) => {
                    step.done();
                    module
                }
                Err(error) => {
                    step.failed();
                    return Err(error);
                }
            }
        }
        _ => {
            return Err(CliError::new(
                "verify needs the partitioned program: --schedule S.toml (partition it here) or --partitioned OUT.mlir (a program made by any pipeline)",
            ))
        }
    };
    let form = Stage::of(partitioned.as_operation());
    if args.sequential && form == Stage::Hlo {
        return Err(CliError::new(
            "the partitioned program is PartIR:HLO (device-local, with collectives); it has no sequential reading: check it with --ranks N",
        ));
    }

    let shardy = crate::passes::export_sdy::is_annotated(partitioned.as_operation());
    if shardy && !args.xla {
        return Err(CliError::new(
            "the partitioned program is annotated for XLA's partitioner (sdy.mesh): check it with --xla",
        ));
    }
    if args.xla {
        let exported = if shardy {
            // Partitioned by XLA itself (Shardy), as it is.
            partitioned.as_operation().to_string()
        } else {
            xla::export(&session, &mut partitioned, form == Stage::Hlo)?
        };
        if let Some(dir) = &args.keep {
            keep(
                dir,
                &[("original.mlir", &text), ("partitioned.mlir", &exported)],
            )?;
        }
        eprintln!("partir: running the original, its f64 reference and the partitioned program on XLA on {origin} (in parallel)");
        let progress = Progress::spinner("running on XLA");
        let runs = xla::run(&progress, &text, &exported, &signature, &values);
        progress.finish();
        let runs = runs?;
        return verdict(
            &signature,
            &Runs {
                original: &runs.original,
                partitioned: &runs.partitioned,
                reference: runs.reference.as_deref(),
                jax: jax.as_deref(),
            },
            &rule,
            total,
        );
    }

    // On MPI ranks, a StableHLO original runs as linalg (the partitioned program is converted
    // after it is lowered, in `ranks`).
    let text = if args.ranks.is_some() && upstream::is_stablehlo(&original) {
        let step =
            Step::start("converting the StableHLO original to linalg (IREE's input pipeline)");
        match upstream::to_upstream(&session, &original, "the original") {
            Ok(module) => {
                step.done();
                original = module;
            }
            Err(error) => {
                step.failed();
                return Err(error);
            }
        }
        original.as_operation().to_string()
    } else {
        text
    };
    // The reference: the original, every f32 made f64.
    let reference = reference_harness(&session, &text, &values)?;

    let mut original_harness = None;
    let partitioned_job = if let Some(ranks) = args.ranks {
        let run = Spmd {
            args,
            ranks: ranks as usize,
            session: &session,
            signature: &signature,
            inputs: &inputs,
        };
        let (original_text, job) = run.prepare(&mut original, &mut partitioned, form)?;
        original_harness = Some(original_text);
        job
    } else {
        let (harness, unpad) =
            sequential_harness(&session, args, &mut partitioned, &inputs, &signature)?;
        Job::Single(harness, unpad)
    };
    let original_harness = match original_harness {
        Some(harness) => harness,
        None => {
            make_main_private(session.context(), &original)?;
            runner::harness(
                &original.as_operation().to_string(),
                &inputs,
                &signature.outputs,
            )?
        }
    };
    if let Some(dir) = &args.keep {
        let mut files = vec![("original.mlir", original_harness.as_str())];
        match &partitioned_job {
            Job::Single(text, _) => files.push(("partitioned.mlir", text)),
            Job::Spmd { mpi_program, .. } => files.push(("spmd.mlir", mpi_program)),
        }
        if let Some((text, _)) = &reference {
            files.push(("reference.mlir", text));
        }
        keep(dir, &files)?;
    }

    eprintln!(
        "partir: running the original, its f64 reference and the partitioned program on {origin} (in parallel)"
    );
    let progress = Progress::spinner("running");
    let progress = &progress;
    let (original_values, reference_values, partitioned_values) = std::thread::scope(|scope| {
        let original =
            scope.spawn(|| execute(progress, "original", &original_harness, &signature, &[]));
        let reference = reference.as_ref().map(|(harness, wide)| {
            scope.spawn(move || execute(progress, "f64 reference", harness, wide, &[]))
        });
        let partitioned = scope.spawn(|| match &partitioned_job {
            Job::Single(harness, unpad) => {
                execute(progress, "partitioned", harness, &signature, unpad)
            }
            Job::Spmd {
                mpi_program,
                ranks,
                unpad,
            } => {
                let lowered = timed(progress, "partitioned: lowered to LLVM", || {
                    spmd::lower(mpi_program)
                })?;
                let printed = timed(
                    progress,
                    &format!("partitioned: ran on {ranks} ranks ({})", spmd::MPIEXEC),
                    || spmd::execute(&lowered, *ranks),
                )?;
                decode_all("partitioned", &unpadded(printed, unpad), &signature)
            }
        });
        let join = |handle: std::thread::ScopedJoinHandle<'_, Result<Values, CliError>>| {
            handle
                .join()
                .unwrap_or_else(|_| Err(CliError::new("a runner thread panicked")))
        };
        (join(original), reference.map(join), join(partitioned))
    });
    progress.finish();
    let original_values = original_values?;
    let partitioned_values = partitioned_values?;
    let reference_values = match reference_values {
        Some(Ok(values)) => Some(values),
        Some(Err(error)) => {
            eprintln!(
                "partir: note: the f64 reference did not run ({error}); judging against the original within --tolerance"
            );
            None
        }
        None => None,
    };

    verdict(
        &signature,
        &Runs {
            original: &original_values,
            partitioned: &partitioned_values,
            reference: reference_values.as_deref(),
            jax: jax.as_deref(),
        },
        &rule,
        total,
    )
}

/// Prints the judgement of every output and the time taken; exit code 0, or the failure.
fn verdict(
    signature: &Signature,
    runs: &Runs,
    rule: &NoiseRule,
    total: Instant,
) -> Result<i32, CliError> {
    let verdict = report(signature, runs, rule);
    let took = format!(
        "partir: verify took {} in total",
        seconds_text(total.elapsed().as_secs_f64())
    );
    match verdict {
        Ok(line) => {
            println!("{line}");
            let _ = std::io::stdout().flush();
            eprintln!("{took}");
            Ok(0)
        }
        Err(line) => {
            let _ = std::io::stdout().flush();
            eprintln!("{took}");
            Err(CliError::new(line))
        }
    }
}

/// How the partitioned program runs.
enum Job {
    /// A harness for one process, and how to unpad its results.
    Single(String, Vec<Unpad>),
    /// An MPI program for `ranks` processes.
    Spmd {
        mpi_program: String,
        ranks: usize,
        unpad: Vec<Unpad>,
    },
}

fn keep(dir: &std::path::Path, files: &[(&str, &str)]) -> Result<(), CliError> {
    std::fs::create_dir_all(dir)
        .and_then(|()| {
            files
                .iter()
                .try_for_each(|(name, text)| std::fs::write(dir.join(name), text))
        })
        .map_err(|error| CliError::new(format!("cannot write into '{}': {error}", dir.display())))
}

/// Lowers and runs one harness; every output decoded to f64.
fn execute(
    progress: &Progress,
    what: &str,
    harness: &str,
    signature: &Signature,
    unpad: &[Unpad],
) -> Result<Vec<Vec<f64>>, CliError> {
    let lowered = timed(progress, &format!("{what}: lowered to LLVM"), || {
        runner::lower(harness, what)
    })?;
    let printed = timed(progress, &format!("{what}: ran"), || {
        runner::execute(&lowered, what)
    })?;
    decode_all(what, &unpadded(printed, unpad), signature)
}

/// A result's padding (docs/design.md#uneven-dims), when the partitioned program returns it
/// padded: its padded global shape and its `partir.padding` steps.
pub(super) type Unpad = Option<(Vec<usize>, Vec<i64>)>;

/// `printed` results with their padding dropped: the caller's arrays.
fn unpadded(printed: Vec<Vec<i64>>, unpad: &[Unpad]) -> Vec<Vec<i64>> {
    printed
        .into_iter()
        .zip(unpad.iter().chain(std::iter::repeat(&None)))
        .map(|(values, unpad)| match unpad {
            Some((shape, steps)) => crate::cli::padding::unpad(&values, shape, 1, steps),
            None => values,
        })
        .collect()
}

/// Runs `step`; when it succeeds, prints `partir:   {what} in {seconds}`.
fn timed<T>(
    progress: &Progress,
    what: &str,
    step: impl FnOnce() -> Result<T, CliError>,
) -> Result<T, CliError> {
    let start = Instant::now();
    let value = step()?;
    progress.println(&format!(
        "partir:   {what} in {}",
        seconds_text(start.elapsed().as_secs_f64())
    ));
    Ok(value)
}

/// Checks the printed results against the signature and decodes them to f64.
fn decode_all(
    what: &str,
    printed: &[Vec<i64>],
    signature: &Signature,
) -> Result<Vec<Vec<f64>>, CliError> {
    if printed.len() != signature.outputs.len() {
        return Err(CliError::new(format!(
            "the {what} program printed {} results, @main has {}",
            printed.len(),
            signature.outputs.len()
        )));
    }
    printed
        .iter()
        .zip(&signature.outputs)
        .zip(&signature.output_names)
        .map(|((values, ty), name)| {
            if values.len() != ty.len() {
                return Err(CliError::new(format!(
                    "the {what} program printed {} values for '{name}', its type {ty} has {}",
                    values.len(),
                    ty.len()
                )));
            }
            Ok(runner::decode(values, ty.elem))
        })
        .collect()
}
