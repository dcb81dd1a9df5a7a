//! `partir verify --sequential`: the equivalence check of DESIGN §8 on one process. The original
//! program and the sequential reading of its partitioned form (`partir-sequential`: Core loops
//! become `scf.for`) run with `mlir-runner` on the same inputs; every output is compared by its
//! normalised error max|a−b| / max|b|, and both against JAX's stored outputs when present.
//! `partir verify --ranks N` makes the same check of the PartIR:HLO program run on N MPI ranks
//! (`spmd`).

use super::{
    args::VerifyArgs,
    lower_to_hlo,
    manifest::Manifest,
    partition,
    pipeline::{table, Session},
    read_model,
    runner::{self, Elem, Input, TensorType},
    seconds_text, shown, spmd, CliError, Step,
};
use crate::{ffi, ir::names};
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

/// The normalised error of one output and its worst element.
#[derive(Clone, Debug, PartialEq)]
pub struct Comparison {
    /// max|a−b| / max|b| (b the reference); infinite when NaNs disagree.
    pub error: f64,
    /// (flat index, a, b) of the largest |a−b|.
    pub worst: Option<(usize, f64, f64)>,
}

/// Compares `got` with the reference `want` (same length).
pub fn compare(got: &[f64], want: &[f64]) -> Comparison {
    let scale = want
        .iter()
        .filter(|v| v.is_finite())
        .fold(0.0f64, |m, v| m.max(v.abs()))
        .max(1e-30);
    let mut worst: Option<(usize, f64, f64)> = None;
    let mut largest = -1.0;
    for (index, (&a, &b)) in got.iter().zip(want).enumerate() {
        let difference = if a == b || (a.is_nan() && b.is_nan()) {
            0.0
        } else {
            let d = (a - b).abs();
            if d.is_nan() {
                f64::INFINITY
            } else {
                d
            }
        };
        if difference > largest {
            largest = difference;
            worst = Some((index, a, b));
        }
    }
    Comparison {
        error: largest.max(0.0) / scale,
        worst,
    }
}

pub fn run(args: &VerifyArgs) -> Result<i32, CliError> {
    if !args.sequential && args.ranks.is_none() {
        return Err(CliError::new(
            "verify needs --ranks N (run the PartIR:HLO program on N MPI ranks) or --sequential (check the sequential reading of the Core program on one process)",
        ));
    }
    if args.ranks == Some(0) {
        return Err(CliError::new("--ranks must be at least 1"));
    }
    if !(args.tolerance >= 0.0 && args.tolerance.is_finite()) {
        return Err(CliError::new(format!(
            "--tolerance must be a non-negative number, got {}",
            args.tolerance
        )));
    }
    let total = Instant::now();
    let model = &args.model.model;
    let session = Session::new(&shown(model));
    let text = read_model(model)?;
    let mut original = session.parse(&text)?;
    let signature = signature(&original)?;
    // Inputs first: a bad data directory fails before any long step.
    let data = data_dir(args)?;
    let (inputs, jax, origin) = inputs(&signature, data.as_ref(), args.seed)?;

    let mut partitioned = partition(&session, &args.model)?;
    if let Some(ranks) = args.ranks {
        let run = Spmd {
            args,
            ranks: ranks as usize,
            session: &session,
            signature: &signature,
            inputs: &inputs,
            origin: &origin,
        };
        let (original_values, partitioned_values) = run.run(&mut original, &mut partitioned)?;
        return finish(
            &signature,
            &original_values,
            &partitioned_values,
            jax.as_deref(),
            args.tolerance,
            total,
        );
    }
    let step = Step::start("making it sequential (partir-sequential)");
    let result = session
        .run(&mut partitioned, "builtin.module(partir-sequential)")
        .and_then(|()| remove_partir_ops(&partitioned, &shown(model)));
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

    let mut programs = Vec::new();
    for (what, module) in [
        ("original", &mut original),
        ("partitioned", &mut partitioned),
    ] {
        make_main_private(session.context(), module)?;
        let text = module.as_operation().to_string();
        if let Some(at) = text.find("#partir.").or_else(|| text.find("!partir.")) {
            let end = text[at..]
                .find([' ', '>', ',', '\n'])
                .map_or(text.len(), |e| at + e);
            return Err(CliError::new(format!(
                "the {what} program still uses partir attributes or types ({}...) after partir-sequential",
                &text[at..end]
            )));
        }
        let harness = runner::harness(&text, &inputs, &signature.outputs)?;
        if let Some(dir) = &args.keep {
            std::fs::create_dir_all(dir)
                .and_then(|()| std::fs::write(dir.join(format!("{what}.mlir")), &harness))
                .map_err(|error| {
                    CliError::new(format!("cannot write into '{}': {error}", dir.display()))
                })?;
        }
        programs.push((what, harness));
    }

    eprintln!(
        "partir: running the original and the partitioned program on {origin} (mlir-opt, then mlir-runner; in parallel)"
    );
    let results: Vec<Result<Vec<Vec<f64>>, CliError>> = std::thread::scope(|scope| {
        let handles: Vec<_> = programs
            .iter()
            .map(|(what, harness)| {
                let signature = &signature;
                scope.spawn(move || execute(what, harness, signature))
            })
            .collect();
        handles
            .into_iter()
            .map(|handle| {
                handle
                    .join()
                    .unwrap_or_else(|_| Err(CliError::new("a runner thread panicked")))
            })
            .collect()
    });
    let mut results = results.into_iter();
    let original_values = results.next().expect("two programs")?;
    let partitioned_values = results.next().expect("two programs")?;

    finish(
        &signature,
        &original_values,
        &partitioned_values,
        jax.as_deref(),
        args.tolerance,
        total,
    )
}

/// Prints the comparison and the verdict; exit code 0 when every output is within tolerance.
fn finish(
    signature: &Signature,
    original_values: &[Vec<f64>],
    partitioned_values: &[Vec<f64>],
    jax: Option<&[Vec<f64>]>,
    tolerance: f64,
    total: Instant,
) -> Result<i32, CliError> {
    let verdict = report(
        signature,
        original_values,
        partitioned_values,
        jax,
        tolerance,
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

/// What `verify --ranks N` needs besides the two modules.
struct Spmd<'a> {
    args: &'a VerifyArgs,
    ranks: usize,
    session: &'a Session,
    signature: &'a Signature,
    inputs: &'a [Input],
    origin: &'a str,
}

impl Spmd<'_> {
    /// Lowers the partitioned module to PartIR:HLO, runs it on the ranks and the original on one
    /// process (in parallel); (original outputs, SPMD outputs).
    #[allow(clippy::type_complexity)]
    fn run(
        &self,
        original: &mut Module,
        partitioned: &mut Module,
    ) -> Result<(Vec<Vec<f64>>, Vec<Vec<f64>>), CliError> {
        let session = self.session;
        lower_to_hlo(session, partitioned)?;
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
            std::fs::create_dir_all(dir)
                .and_then(|()| std::fs::write(dir.join("original.mlir"), &original_harness))
                .and_then(|()| std::fs::write(dir.join("spmd.mlir"), &spmd_harness))
                .map_err(|error| {
                    CliError::new(format!("cannot write into '{}': {error}", dir.display()))
                })?;
        }
        let step = Step::start("lowering the collectives to MPI (partir-to-mpi)");
        let mpi_program =
            spmd::to_mpi(session, &spmd_harness).inspect_err(|_| eprintln!("failed"))?;
        step.done();

        eprintln!(
            "partir: running the original program on one process and the partitioned one on {} MPI ranks on {} (in parallel)",
            self.ranks, self.origin
        );
        let signature = self.signature;
        let ranks = self.ranks;
        std::thread::scope(|scope| {
            let original = scope.spawn(|| execute("original", &original_harness, signature));
            let partitioned = scope.spawn(|| -> Result<Vec<Vec<f64>>, CliError> {
                let lowered = timed("partitioned: lowered to LLVM", || spmd::lower(&mpi_program))?;
                let printed = timed(
                    &format!("partitioned: ran on {ranks} ranks ({})", spmd::MPIEXEC),
                    || spmd::execute(&lowered, ranks),
                )?;
                decode_all("partitioned", &printed, signature)
            });
            let join =
                |handle: std::thread::ScopedJoinHandle<'_, Result<Vec<Vec<f64>>, CliError>>| {
                    handle
                        .join()
                        .unwrap_or_else(|_| Err(CliError::new("a runner thread panicked")))
                };
            let original = join(original);
            let partitioned = join(partitioned);
            Ok((original?, partitioned?))
        })
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

/// Prints the comparison table on stdout; Ok(verdict) when every output is within tolerance.
fn report(
    signature: &Signature,
    original: &[Vec<f64>],
    partitioned: &[Vec<f64>],
    jax: Option<&[Vec<f64>]>,
    tolerance: f64,
) -> Result<String, String> {
    let mut header = vec![
        "output".to_string(),
        "type".to_string(),
        "error".to_string(),
        "worst element: partitioned vs original".to_string(),
    ];
    if jax.is_some() {
        header.push("original vs JAX".into());
        header.push("partitioned vs JAX".into());
    }
    let mut rows = vec![header];
    let mut failures = Vec::new();
    let mut worst_overall: Option<(usize, f64)> = None;
    for (j, ((a, b), ty)) in partitioned
        .iter()
        .zip(original)
        .zip(&signature.outputs)
        .enumerate()
    {
        let name = &signature.output_names[j];
        let comparison = compare(a, b);
        let worst = match comparison.worst {
            Some((index, a, b)) => format!(
                "{:?}: {} vs {}",
                ty.unravel(index),
                value_text(a, ty.elem),
                value_text(b, ty.elem)
            ),
            None => "(no elements)".into(),
        };
        // JAX's stored outputs are a second reference: the partitioned program must match
        // them too (the original's distance to JAX is shown, as a check of the importer).
        let jax_error = jax.map(|jax| compare(a, &jax[j]).error);
        let failed = comparison.error > tolerance || jax_error.is_some_and(|e| e > tolerance);
        let mut row = vec![
            name.clone(),
            ty.to_string(),
            format!(
                "{}{}",
                error_text(comparison.error),
                if comparison.error > tolerance {
                    " FAIL"
                } else {
                    ""
                }
            ),
            worst,
        ];
        if let Some(jax) = jax {
            row.push(error_text(compare(b, &jax[j]).error));
            let jax_error = jax_error.unwrap_or(0.0);
            row.push(format!(
                "{}{}",
                error_text(jax_error),
                if jax_error > tolerance { " FAIL" } else { "" }
            ));
        }
        rows.push(row);
        if failed {
            failures.push(j);
        }
        if worst_overall.is_none_or(|(_, e)| comparison.error > e) {
            worst_overall = Some((j, comparison.error));
        }
    }
    print!("{}", table(&rows));
    let worst = worst_overall
        .map(|(j, e)| {
            format!(
                "worst: '{}', error {}",
                signature.output_names[j],
                error_text(e)
            )
        })
        .unwrap_or_else(|| "no outputs".into());
    if failures.is_empty() {
        Ok(format!(
            "partir: PASS: all {} outputs of the partitioned program match the original{} within tolerance {tolerance:e} ({worst})",
            signature.outputs.len(),
            if jax.is_some() { " and JAX" } else { "" }
        ))
    } else {
        let names: Vec<String> = failures
            .iter()
            .map(|&j| format!("'{}'", signature.output_names[j]))
            .collect();
        Err(format!(
            "verification failed: {} of {} outputs of the partitioned program exceed tolerance {tolerance:e} against the original or JAX ({worst}; failing: {})",
            failures.len(),
            signature.outputs.len(),
            names.join(", ")
        ))
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
                .and_then(|name| StringAttribute::try_from(name).ok())
                .is_some_and(|name| name.value() == "main")
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
                .and_then(|name| StringAttribute::try_from(name).ok())
                .map(|name| name.value().to_string())
                .unwrap_or_else(|| format!("result#{j}"))
        })
        .collect();
    Ok(Signature {
        inputs,
        outputs,
        output_names,
    })
}

fn make_main_private(context: &Context, module: &Module) -> Result<(), CliError> {
    let main = main_function(module)?;
    ffi::set_attribute(
        main,
        "sym_visibility",
        StringAttribute::new(context, "private").into(),
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
        ffi::erase(mesh);
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

/// The inputs (and JAX's outputs, when stored), and where they come from.
fn inputs(
    signature: &Signature,
    manifest: Option<&Manifest>,
    seed: u64,
) -> Result<(Vec<Input>, Outputs, String), CliError> {
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
                            (random.next() % 8) as f64
                        }
                    })
                    .collect();
                Input::from_f64(ty.clone(), &values)
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
        inputs.push(Input::from_f64(ty.clone(), &array.to_f64()));
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

/// A small deterministic generator (SplitMix64).
struct SplitMix64(u64);

impl SplitMix64 {
    fn next(&mut self) -> u64 {
        self.0 = self.0.wrapping_add(0x9E37_79B9_7F4A_7C15);
        let mut z = self.0;
        z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
        z ^ (z >> 31)
    }

    /// Uniform in [0, 1) with 24 random bits (exact in f32).
    fn uniform(&mut self) -> f64 {
        (self.next() >> 40) as f64 / (1u64 << 24) as f64
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn normalised_error_and_worst_element() {
        let c = compare(&[1.0, 2.0, 3.5], &[1.0, 2.0, 4.0]);
        assert_eq!(c.error, 0.5 / 4.0);
        assert_eq!(c.worst, Some((2, 3.5, 4.0)));
        assert_eq!(compare(&[1.0], &[1.0]).error, 0.0);
        assert_eq!(compare(&[f64::NAN], &[f64::NAN]).error, 0.0);
        assert!(compare(&[f64::NAN], &[1.0]).error.is_infinite());
    }

    #[test]
    fn generated_inputs_are_deterministic() {
        let mut a = SplitMix64(7);
        let mut b = SplitMix64(7);
        assert_eq!(a.next(), b.next());
        let u = a.uniform();
        assert!((0.0..1.0).contains(&u));
    }
}
