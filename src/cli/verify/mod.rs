//! `partir verify ORIGINAL.mlir (--schedule S.toml | --partitioned OUT.mlir) (--ranks N |
//! --sequential)`: the equivalence check of DESIGN §8. The original program, its f64 twin (the
//! reference, see `judge`) and the partitioned program run on the same inputs; every output of
//! the partitioned program is judged against the reference, within the original's own rounding
//! noise. The partitioned program is either made here (`--schedule`) or by any pipeline
//! (`--partitioned`: PartIR:Core, checked by its sequential reading or lowered and run on MPI
//! ranks, or PartIR:HLO, run on MPI ranks).
//! - `--sequential`: the sequential reading of Core (`partir-sequential`: loops become `scf.for`)
//!   on one process;
//! - `--ranks N`: the PartIR:HLO program on N MPI ranks (`spmd`).

mod judge;

use super::{
    args::{ModelArgs, VerifyArgs},
    lower_to_hlo,
    manifest::Manifest,
    partition,
    pipeline::{table, Session},
    read_model,
    runner::{self, Elem, Input, TensorType},
    seconds_text, shown, spmd, CliError, Step,
};
use crate::{ffi, ir::names, random::SplitMix64};
use judge::{compare, judge, Judgement, NoiseRule};
use melior::{
    ir::{
        attribute::{ArrayAttribute, DictionaryAttribute, StringAttribute, TypeAttribute},
        operation::OperationLike,
        r#type::FunctionType,
        Module, OperationRef,
    },
    Context,
};
use std::{io::Write, path::PathBuf, time::Instant};

/// The signature of `@main`.
#[derive(Clone, Debug)]
pub struct Signature {
    pub inputs: Vec<TensorType>,
    pub outputs: Vec<TensorType>,
    /// Each result's `partir.name`, else `result#j`.
    pub output_names: Vec<String>,
}

/// Which form a partitioned program is in.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Form {
    /// PartIR:Core: global shapes, `partir.loop`s.
    Core,
    /// PartIR:HLO: device-local, arguments carry `partir_hlo.sharding`.
    Hlo,
}

fn form_of(module: &Module) -> Form {
    let mut hlo = false;
    ffi::walk(module.as_operation(), |op| {
        let name = op.name();
        let name = name.as_string_ref().as_str().unwrap_or("");
        if name.starts_with("partir_hlo.") {
            hlo = true;
        }
        if name == "func.func"
            && op
                .attribute("arg_attrs")
                .is_ok_and(|attrs| attrs.to_string().contains("partir_hlo.sharding"))
        {
            hlo = true;
        }
    });
    if hlo {
        Form::Hlo
    } else {
        Form::Core
    }
}

/// What one run printed, decoded: one vector per output.
type Values = Vec<Vec<f64>>;

pub fn run(args: &VerifyArgs) -> Result<i32, CliError> {
    if !args.sequential && args.ranks.is_none() {
        return Err(CliError::new(
            "verify needs --ranks N (run the PartIR:HLO program on N MPI ranks) or --sequential (check the sequential reading of the Core program on one process)",
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
                    super::os_error(&error)
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
    let form = form_of(&partitioned);
    if args.sequential && form == Form::Hlo {
        return Err(CliError::new(
            "the partitioned program is PartIR:HLO (device-local, with collectives); it has no sequential reading: check it with --ranks N",
        ));
    }

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
        Job::Single(sequential_harness(
            &session,
            args,
            &mut partitioned,
            &inputs,
            &signature,
        )?)
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
            Job::Single(text) => files.push(("partitioned.mlir", text)),
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
    let (original_values, reference_values, partitioned_values) = std::thread::scope(|scope| {
        let original = scope.spawn(|| execute("original", &original_harness, &signature));
        let reference = reference
            .as_ref()
            .map(|(harness, wide)| scope.spawn(move || execute("f64 reference", harness, wide)));
        let partitioned = scope.spawn(|| match &partitioned_job {
            Job::Single(harness) => execute("partitioned", harness, &signature),
            Job::Spmd { mpi_program, ranks } => {
                let lowered = timed("partitioned: lowered to LLVM", || spmd::lower(mpi_program))?;
                let printed = timed(
                    &format!("partitioned: ran on {ranks} ranks ({})", spmd::MPIEXEC),
                    || spmd::execute(&lowered, *ranks),
                )?;
                decode_all("partitioned", &printed, &signature)
            }
        });
        let join = |handle: std::thread::ScopedJoinHandle<'_, Result<Values, CliError>>| {
            handle
                .join()
                .unwrap_or_else(|_| Err(CliError::new("a runner thread panicked")))
        };
        (join(original), reference.map(join), join(partitioned))
    });
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

    let verdict = report(
        &signature,
        &Runs {
            original: &original_values,
            partitioned: &partitioned_values,
            reference: reference_values.as_deref(),
            jax: jax.as_deref(),
        },
        &rule,
    );
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
    /// A harness for one process.
    Single(String),
    /// An MPI program for `ranks` processes.
    Spmd { mpi_program: String, ranks: usize },
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

/// The sequential reading of a Core program, as a harness.
fn sequential_harness(
    session: &Session,
    args: &VerifyArgs,
    partitioned: &mut Module,
    inputs: &[Input],
    original: &Signature,
) -> Result<String, CliError> {
    let step = Step::start("making it sequential (partir-sequential)");
    let result = session
        .run(partitioned, "builtin.module(partir-sequential)")
        .and_then(|()| remove_partir_ops(partitioned, &shown(&args.model)));
    match result {
        Ok(()) => {
            step.done();
        }
        Err(error) => {
            step.failed();
            return Err(error);
        }
    }
    // Remarks of partir-sequential, if any, are not news.
    session.take();
    let local = signature(partitioned)?;
    if local.inputs != original.inputs || local.outputs != original.outputs {
        return Err(CliError::new(
            "the partitioned program's @main has another signature than the original's",
        ));
    }
    make_main_private(session.context(), partitioned)?;
    let text = partitioned.as_operation().to_string();
    if let Some(at) = text.find("#partir.").or_else(|| text.find("!partir.")) {
        let end = text[at..]
            .find([' ', '>', ',', '\n'])
            .map_or(text.len(), |e| at + e);
        return Err(CliError::new(format!(
            "the partitioned program still uses partir attributes or types ({}...) after partir-sequential",
            &text[at..end]
        )));
    }
    runner::harness(&text, inputs, &original.outputs)
}

/// The original program with every f32 made f64, as a harness on the same input values, and
/// its signature; None (with a note) when the program does not widen (an op that insists on
/// f32).
fn reference_harness(
    session: &Session,
    text: &str,
    values: &[Vec<f64>],
) -> Result<Option<(String, Signature)>, CliError> {
    let wide = session.parse(text)?;
    if !ffi::widen_f32_to_f64(wide.as_operation()) {
        session.take();
        eprintln!(
            "partir: note: the program does not run in f64 (an op insists on f32); judging against the original within --tolerance"
        );
        return Ok(None);
    }
    let wide_signature = signature(&wide)?;
    let inputs: Vec<Input> = wide_signature
        .inputs
        .iter()
        .zip(values)
        .map(|(ty, values)| Input::from_f64(ty.clone(), values))
        .collect();
    make_main_private(session.context(), &wide)?;
    let harness = runner::harness(
        &wide.as_operation().to_string(),
        &inputs,
        &wide_signature.outputs,
    )?;
    Ok(Some((harness, wide_signature)))
}

/// What `verify --ranks N` needs besides the two modules.
struct Spmd<'a> {
    args: &'a VerifyArgs,
    ranks: usize,
    session: &'a Session,
    signature: &'a Signature,
    inputs: &'a [Input],
}

impl Spmd<'_> {
    /// Lowers the partitioned module to PartIR:HLO (unless it is already) and makes the MPI
    /// program; (the original's harness, the partitioned job).
    fn prepare(
        &self,
        original: &mut Module,
        partitioned: &mut Module,
        form: Form,
    ) -> Result<(String, Job), CliError> {
        let session = self.session;
        if form == Form::Core {
            lower_to_hlo(session, partitioned)?;
        }
        let hlo = partitioned.as_operation().to_string();
        let mesh = spmd::Mesh::parse(&hlo)
            .ok_or_else(|| CliError::new("the partitioned program declares no partir.mesh"))?;
        if self.ranks != mesh.devices() {
            return Err(CliError::new(format!(
                "--ranks {} does not match the mesh @{} ({}): run on {} ranks, one per device",
                self.ranks,
                mesh.name,
                mesh.describe(),
                mesh.devices()
            )));
        }
        let (arg_shardings, res_shardings) = spmd::shardings(main_function(partitioned)?);
        let local = signature(partitioned)?;
        if local.inputs.len() != self.signature.inputs.len()
            || local.outputs.len() != self.signature.outputs.len()
        {
            return Err(CliError::new(format!(
                "the partitioned program's @main takes {} arguments and returns {} results; the original's {} and {}",
                local.inputs.len(),
                local.outputs.len(),
                self.signature.inputs.len(),
                self.signature.outputs.len()
            )));
        }
        let check = |what: &str, global: &TensorType, sharding, local: Option<&TensorType>| {
            let expected = spmd::local_type(global, sharding, &mesh)
                .map_err(|error| CliError::new(format!("@main {what}: {error}")))?;
            match local {
                Some(local) if *local == expected => Ok(()),
                _ => Err(CliError::new(format!(
                    "@main {what} of the PartIR:HLO program is {}, but its sharding makes {global} {expected} per device",
                    local.map_or("missing".into(), ToString::to_string)
                ))),
            }
        };
        for (i, ty) in self.signature.inputs.iter().enumerate() {
            check(
                &format!("argument {i}"),
                ty,
                arg_shardings.get(i).and_then(Option::as_ref),
                local.inputs.get(i),
            )?;
        }
        for (j, ty) in self.signature.outputs.iter().enumerate() {
            check(
                &format!("result {j}"),
                ty,
                res_shardings.get(j).and_then(Option::as_ref),
                local.outputs.get(j),
            )?;
        }
        make_main_private(session.context(), partitioned)?;
        let hlo = partitioned.as_operation().to_string();
        let harness_inputs: Vec<_> = self
            .inputs
            .iter()
            .enumerate()
            .map(|(i, input)| (input.clone(), arg_shardings.get(i).and_then(Option::as_ref)))
            .collect();
        let outputs: Vec<spmd::Sharded> = self
            .signature
            .outputs
            .iter()
            .enumerate()
            .map(|(j, global)| spmd::Sharded {
                global,
                sharding: res_shardings.get(j).and_then(Option::as_ref),
            })
            .collect();
        let spmd_harness = spmd::harness(&hlo, &mesh, &harness_inputs, &outputs)?;
        make_main_private(session.context(), original)?;
        let original_harness = runner::harness(
            &original.as_operation().to_string(),
            self.inputs,
            &self.signature.outputs,
        )?;
        if let Some(dir) = &self.args.keep {
            keep(dir, &[("spmd-harness.mlir", &spmd_harness)])?;
        }
        let step = Step::start("lowering the collectives to MPI (partir-to-mpi)");
        let mpi_program =
            spmd::to_mpi(session, &spmd_harness).inspect_err(|_| eprintln!("failed"))?;
        step.done();
        Ok((
            original_harness,
            Job::Spmd {
                mpi_program,
                ranks: self.ranks,
            },
        ))
    }
}

/// Lowers and runs one harness; every output decoded to f64.
fn execute(what: &str, harness: &str, signature: &Signature) -> Result<Vec<Vec<f64>>, CliError> {
    let lowered = timed(&format!("{what}: lowered to LLVM"), || {
        runner::lower(harness, what)
    })?;
    let printed = timed(&format!("{what}: ran"), || runner::execute(&lowered, what))?;
    decode_all(what, &printed, signature)
}

/// Runs `step`; when it succeeds, prints `partir:   {what} in {seconds}`.
fn timed<T>(what: &str, step: impl FnOnce() -> Result<T, CliError>) -> Result<T, CliError> {
    let start = Instant::now();
    let value = step()?;
    eprintln!(
        "partir:   {what} in {}",
        seconds_text(start.elapsed().as_secs_f64())
    );
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

/// The outputs of every run.
struct Runs<'a> {
    original: &'a [Vec<f64>],
    partitioned: &'a [Vec<f64>],
    /// The original in f64, when it ran.
    reference: Option<&'a [Vec<f64>]>,
    /// JAX's stored outputs, when present (a check of the importer, not of partitioning).
    jax: Option<&'a [Vec<f64>]>,
}

/// Prints the comparison table on stdout; Ok(verdict) when every output passes.
fn report(signature: &Signature, runs: &Runs, rule: &NoiseRule) -> Result<String, String> {
    let Some(reference) = runs.reference else {
        return report_against_original(signature, runs, rule.tolerance);
    };
    let mut header: Vec<String> = [
        "output",
        "type",
        "original vs f64",
        "partitioned vs f64",
        "ratio",
        "limit",
        "verdict",
        "worst element: partitioned vs f64",
    ]
    .map(String::from)
    .to_vec();
    if runs.jax.is_some() {
        header.push("JAX vs f64".into());
    }
    let mut rows = vec![header];
    let mut failures = Vec::new();
    let mut ill_conditioned = Vec::new();
    let mut importer_drift = Vec::new();
    let mut worst: Option<(usize, Judgement)> = None;
    for (j, ty) in signature.outputs.iter().enumerate() {
        let name = &signature.output_names[j];
        let judgement = judge(&runs.original[j], &runs.partitioned[j], &reference[j], rule);
        let ill = judgement.ill_conditioned(rule);
        let verdict = match (judgement.passed(), ill) {
            (false, _) => "FAIL",
            (true, true) => "ok (ill-conditioned)",
            (true, false) => "ok",
        };
        let mut row = vec![
            name.clone(),
            ty.to_string(),
            error_text(judgement.original.error),
            error_text(judgement.partitioned.error),
            ratio_text(judgement.ratio()),
            error_text(judgement.limit),
            verdict.to_string(),
            worst_text(&judgement.partitioned, ty),
        ];
        if let Some(jax) = runs.jax {
            let drift = compare(&jax[j], &reference[j]).error;
            row.push(error_text(drift));
            if drift > rule.limit(judgement.original.error) {
                importer_drift.push(format!("'{name}' ({})", error_text(drift)));
            }
        }
        rows.push(row);
        if !judgement.passed() {
            failures.push(j);
        }
        if ill {
            ill_conditioned.push(format!(
                "'{name}' (f32 rounding alone: {})",
                error_text(judgement.original.error)
            ));
        }
        if worst.as_ref().is_none_or(|(_, w)| {
            judgement.partitioned.error / judgement.limit > w.partitioned.error / w.limit
        }) {
            worst = Some((j, judgement));
        }
    }
    print!("{}", table(&rows));
    if !ill_conditioned.is_empty() {
        println!(
            "partir: ill-conditioned outputs, judged within {}x their own f32 error: {}",
            rule.factor,
            ill_conditioned.join(", ")
        );
    }
    if !importer_drift.is_empty() {
        println!(
            "partir: note: JAX's stored outputs differ from this MLIR program's f64 run beyond its f32 noise (an importer or data question, not partitioning): {}",
            importer_drift.join(", ")
        );
    }
    let worst = worst
        .map(|(j, judgement)| {
            format!(
                "worst: '{}', {} against a limit of {}",
                signature.output_names[j],
                error_text(judgement.partitioned.error),
                error_text(judgement.limit)
            )
        })
        .unwrap_or_else(|| "no outputs".into());
    let judged = format!(
        "the original (judged against it run in f64, within {}x its own f32 error or {:e})",
        rule.factor, rule.tolerance
    );
    if failures.is_empty() {
        Ok(format!(
            "partir: PASS: all {} outputs of the partitioned program match {judged}; {worst}",
            signature.outputs.len()
        ))
    } else {
        let names: Vec<String> = failures
            .iter()
            .map(|&j| format!("'{}'", signature.output_names[j]))
            .collect();
        Err(format!(
            "verification failed: {} of {} outputs of the partitioned program do not match {judged}; {worst}; failing: {}",
            failures.len(),
            signature.outputs.len(),
            names.join(", ")
        ))
    }
}

/// Without an f64 reference: the partitioned program against the original, within `tolerance`.
fn report_against_original(
    signature: &Signature,
    runs: &Runs,
    tolerance: f64,
) -> Result<String, String> {
    let header: Vec<String> = [
        "output",
        "type",
        "partitioned vs original",
        "verdict",
        "worst element",
    ]
    .map(String::from)
    .to_vec();
    let mut rows = vec![header];
    let mut failures = Vec::new();
    for (j, ty) in signature.outputs.iter().enumerate() {
        let comparison = compare(&runs.partitioned[j], &runs.original[j]);
        let passed = comparison.error <= tolerance;
        rows.push(vec![
            signature.output_names[j].clone(),
            ty.to_string(),
            error_text(comparison.error),
            if passed { "ok" } else { "FAIL" }.to_string(),
            worst_text(&comparison, ty),
        ]);
        if !passed {
            failures.push(format!("'{}'", signature.output_names[j]));
        }
    }
    print!("{}", table(&rows));
    if failures.is_empty() {
        Ok(format!(
            "partir: PASS: all {} outputs of the partitioned program match the original within {tolerance:e}",
            signature.outputs.len()
        ))
    } else {
        Err(format!(
            "verification failed: {} of {} outputs of the partitioned program differ from the original by more than {tolerance:e} (failing: {})",
            failures.len(),
            signature.outputs.len(),
            failures.join(", ")
        ))
    }
}

fn worst_text(comparison: &judge::Comparison, ty: &TensorType) -> String {
    match comparison.worst {
        Some((index, a, b)) => format!(
            "{:?}: {} vs {}",
            ty.unravel(index),
            value_text(a, ty.elem),
            value_text(b, ty.elem)
        ),
        None => "(no elements)".into(),
    }
}

fn ratio_text(ratio: f64) -> String {
    if ratio.is_infinite() {
        "inf".into()
    } else if ratio >= 100.0 {
        format!("{ratio:.0e}")
    } else {
        format!("{ratio:.2}")
    }
}

fn error_text(error: f64) -> String {
    if error == 0.0 {
        "0".into()
    } else {
        format!("{error:.2e}")
    }
}

fn value_text(value: f64, elem: Elem) -> String {
    match elem {
        Elem::F32 => format!("{:e}", value as f32),
        Elem::F64 => format!("{value:e}"),
        Elem::I32 | Elem::I64 => format!("{value}"),
    }
}

/// `@main` of a module.
fn main_function<'c, 'a>(module: &'a Module<'c>) -> Result<OperationRef<'c, 'a>, CliError> {
    names::functions(module.as_operation())
        .into_iter()
        .find(|func| {
            func.attribute("sym_name")
                .ok()
                .and_then(ffi::string_attribute)
                .is_some_and(|name| name == "main")
        })
        .ok_or_else(|| CliError::new("the program has no func.func @main with a body"))
}

/// The types and result names of `@main`.
pub fn signature(module: &Module) -> Result<Signature, CliError> {
    let main = main_function(module)?;
    let function_type = main
        .attribute("function_type")
        .ok()
        .and_then(|attr| TypeAttribute::try_from(attr).ok())
        .and_then(|attr| FunctionType::try_from(attr.value()).ok())
        .ok_or_else(|| CliError::new("@main has no function type"))?;
    let parse = |ty: melior::ir::Type, what: String| {
        TensorType::parse(&ty.to_string())
            .map_err(|error| CliError::new(format!("@main {what}: {error}")))
    };
    let inputs = (0..function_type.input_count())
        .map(|i| {
            parse(
                function_type.input(i).expect("i < count"),
                format!("argument {i}"),
            )
        })
        .collect::<Result<Vec<_>, _>>()?;
    let outputs = (0..function_type.result_count())
        .map(|j| {
            parse(
                function_type.result(j).expect("j < count"),
                format!("result {j}"),
            )
        })
        .collect::<Result<Vec<_>, _>>()?;
    let res_attrs = main
        .attribute("res_attrs")
        .ok()
        .and_then(|attr| ArrayAttribute::try_from(attr).ok());
    let output_names = (0..outputs.len())
        .map(|j| {
            res_attrs
                .and_then(|attrs| attrs.element(j).ok())
                .and_then(|dict| DictionaryAttribute::try_from(dict).ok())
                .and_then(|dict| dict.element_by_name("partir.name"))
                .and_then(ffi::string_attribute)
                .unwrap_or_else(|| format!("result#{j}"))
        })
        .collect();
    Ok(Signature {
        inputs,
        outputs,
        output_names,
    })
}

/// `@main` becomes the private `@partir_model` that a harness calls.
fn make_main_private(context: &Context, module: &Module) -> Result<(), CliError> {
    let main = main_function(module)?;
    ffi::set_attribute(
        main,
        "sym_visibility",
        StringAttribute::new(context, "private").into(),
    );
    ffi::set_attribute(
        main,
        "sym_name",
        StringAttribute::new(context, runner::MODEL).into(),
    );
    Ok(())
}

/// Erases the (declarative) mesh; any other partir op left after partir-sequential is an error.
fn remove_partir_ops(module: &Module, source: &str) -> Result<(), CliError> {
    let mut meshes = Vec::new();
    let mut others = Vec::new();
    ffi::walk(module.as_operation(), |op| {
        let name = op.name().as_string_ref().as_str().unwrap_or("").to_string();
        if name == "partir.mesh" {
            meshes.push(op);
        } else if name.starts_with("partir.") || name.starts_with("partir_hlo.") {
            others.push((name, op));
        }
    });
    if let Some((name, op)) = others.first() {
        return Err(CliError::located(format!(
            "{}: error: {} partir ops are left after partir-sequential, e.g. {name}; the sequential check needs a program of upstream ops",
            super::pipeline::describe(op.location(), source),
            others.len()
        )));
    }
    for mesh in meshes {
        // SAFETY: `mesh` is unused and no handle to it is used after this.
        unsafe { ffi::erase(mesh) };
    }
    Ok(())
}

/// The data directory: `--data`, else `<dir of MODEL>/data` when it has a manifest.json.
fn data_dir(args: &VerifyArgs) -> Result<Option<Manifest>, CliError> {
    if let Some(dir) = &args.data {
        return Manifest::load(dir).map(Some).map_err(CliError::new);
    }
    let default: PathBuf = args
        .model
        .parent()
        .map(|dir| dir.join("data"))
        .unwrap_or_else(|| PathBuf::from("data"));
    if default.join("manifest.json").is_file() {
        Manifest::load(&default).map(Some).map_err(CliError::new)
    } else {
        Ok(None)
    }
}

type Outputs = Option<Vec<Vec<f64>>>;

/// The input values (and JAX's outputs, when stored), and where they come from.
fn inputs(
    signature: &Signature,
    manifest: Option<&Manifest>,
    seed: u64,
) -> Result<(Values, Outputs, String), CliError> {
    let Some(manifest) = manifest else {
        let mut random = SplitMix64(seed);
        let inputs = signature
            .inputs
            .iter()
            .map(|ty| {
                let values: Vec<f64> = (0..ty.len())
                    .map(|_| {
                        if ty.elem.is_float() {
                            random.uniform() * 2.0 - 1.0
                        } else {
                            (random.next_u64() % 8) as f64
                        }
                    })
                    .collect();
                values
            })
            .collect();
        return Ok((
            inputs,
            None,
            format!(
                "generated inputs (seed {seed}: floats uniform in [-1, 1), integers in [0, 8))"
            ),
        ));
    };
    let dir = manifest.dir.display();
    if manifest.inputs.len() != signature.inputs.len() {
        return Err(CliError::new(format!(
            "the data in '{dir}' has {} inputs but @main has {} arguments",
            manifest.inputs.len(),
            signature.inputs.len()
        )));
    }
    let mut inputs = Vec::new();
    for (i, (entry, ty)) in manifest.inputs.iter().zip(&signature.inputs).enumerate() {
        if entry.shape != ty.shape {
            return Err(CliError::new(format!(
                "input {i} '{}' in '{dir}' has shape {:?} but @main's argument {i} is {ty}",
                entry.name, entry.shape
            )));
        }
        let array = manifest.read(entry)?;
        inputs.push(array.to_f64());
    }
    let jax = if manifest.outputs.len() == signature.outputs.len() {
        let mut outputs = Vec::new();
        for (entry, ty) in manifest.outputs.iter().zip(&signature.outputs) {
            if entry.shape != ty.shape {
                return Err(CliError::new(format!(
                    "output '{}' in '{dir}' has shape {:?} but @main returns {ty}",
                    entry.name, entry.shape
                )));
            }
            outputs.push(manifest.read(entry)?.to_f64());
        }
        Some(outputs)
    } else {
        None
    };
    Ok((inputs, jax, format!("the inputs in {dir}")))
}
