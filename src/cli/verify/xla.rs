//! `partir verify --xla`: the partitioned program as XLA runs it. The PartIR:HLO program is
//! exported (`partir-export-stablehlo`) and compiled by XLA with one replica per device on N
//! CPU devices; the original runs on one device, in f32 and as its f64 twin (the reference).
//! XLA is driven through JAX's own client by `tools/partir_jax/xla_run.py`; inputs and outputs
//! travel as `.npy` files in a scratch directory.

use super::{program::Signature, Values};
use crate::cli::{
    error::CliError,
    npy,
    partition::{export_stablehlo, lower_to_hlo},
    pipeline::Session,
    progress::Progress,
    python,
};
use melior::ir::Module;
use std::path::{Path, PathBuf};

/// Exports the partitioned program for XLA: lowered to PartIR:HLO first if it is Core.
pub(super) fn export(
    session: &Session,
    partitioned: &mut Module,
    lowered: bool,
) -> Result<String, CliError> {
    if !lowered {
        lower_to_hlo(session, partitioned)?;
    }
    export_stablehlo(session, partitioned)?;
    Ok(partitioned.as_operation().to_string())
}

/// What XLA computed: the original (f32), its f64 twin (None when it did not run) and the
/// partitioned program, each one vector per output.
pub(super) struct XlaRuns {
    pub original: Values,
    pub reference: Option<Values>,
    pub partitioned: Values,
}

pub(super) fn run(
    progress: &Progress,
    original: &str,
    partitioned: &str,
    signature: &Signature,
    values: &[Vec<f64>],
) -> Result<XlaRuns, CliError> {
    // Fails early, before writing anything, when the venv is missing.
    python::module("verify --xla", "partir_jax.xla_run", 1)?;
    let dir = std::env::temp_dir().join(format!("partir-xla-{}", std::process::id()));
    let scratch = Scratch(dir.clone());
    let fail = |error: std::io::Error| {
        CliError::new(format!("cannot write into '{}': {error}", dir.display()))
    };
    std::fs::create_dir_all(dir.join("inputs")).map_err(fail)?;
    for (index, (ty, values)) in signature.inputs.iter().zip(values).enumerate() {
        npy::write(
            &dir.join(format!("inputs/arg{index}.npy")),
            &ty.shape,
            ty.elem.name(),
            values,
        )
        .map_err(CliError::new)?;
    }
    std::fs::write(dir.join("original.mlir"), original).map_err(fail)?;
    std::fs::write(dir.join("partitioned.mlir"), partitioned).map_err(fail)?;
    // The devices: one per replica (partir's export), or per partition (a program XLA
    // partitions itself: `--stage sdy`).
    let count = |key: &str| {
        partitioned
            .split(key)
            .nth(1)
            .and_then(|rest| rest.split(|c: char| !c.is_ascii_digit()).next())
            .and_then(|digits| digits.parse::<usize>().ok())
            .unwrap_or(1)
    };
    let replicas = count("mhlo.num_replicas = ").max(count("mhlo.num_partitions = "));
    let job = |what: &str, program: &str, out: &str, wide: bool| {
        let cached = (program == "original.mlir")
            .then(|| cached_runs(original, values, wide))
            .flatten();
        let read = |from: &Path| {
            (0..signature.outputs.len())
                .map(|index| {
                    npy::read(&from.join(format!("res{index}.npy")))
                        .map(|array| array.to_f64())
                        .map_err(CliError::new)
                })
                .collect::<Result<Values, CliError>>()
        };
        if let Some(kept) = cached.as_ref().filter(|kept| kept.exists()) {
            progress.println(&format!(
                "partir: {what}: as XLA ran it before ({})",
                kept.display()
            ));
            return read(kept);
        }
        let started = std::time::Instant::now();
        let mut command = python::module("verify --xla", "partir_jax.xla_run", replicas)?;
        command
            .arg("--program")
            .arg(dir.join(program))
            .arg("--inputs")
            .arg(dir.join("inputs"))
            .arg("--out")
            .arg(dir.join(out));
        if wide {
            command.arg("--f64");
        }
        let output = command.output().map_err(|error| {
            CliError::new(format!(
                "cannot start {} ({error})",
                command.get_program().to_string_lossy()
            ))
        })?;
        if !output.status.success() {
            return Err(CliError::new(format!(
                "XLA could not run the {what} program:\n{}",
                python::last_lines(&output.stderr, 6)
            )));
        }
        progress.println(&format!(
            "partir: {what}: ran on XLA ({} device{}) in {:.2} s",
            if what == "partitioned" { replicas } else { 1 },
            if what == "partitioned" && replicas != 1 {
                "s"
            } else {
                ""
            },
            started.elapsed().as_secs_f64()
        ));
        let values = read(&dir.join(out))?;
        if let Some(kept) = cached {
            keep(&dir.join(out), &kept);
        }
        Ok(values)
    };
    let (original, reference, partitioned) = std::thread::scope(|scope| {
        let original = scope.spawn(|| job("original", "original.mlir", "original", false));
        let reference = scope.spawn(|| job("f64 reference", "original.mlir", "reference", true));
        let partitioned =
            scope.spawn(|| job("partitioned", "partitioned.mlir", "partitioned", false));
        let join = |handle: std::thread::ScopedJoinHandle<'_, Result<Values, CliError>>| {
            handle
                .join()
                .unwrap_or_else(|_| Err(CliError::new("an XLA runner thread panicked")))
        };
        (join(original), join(reference), join(partitioned))
    });
    drop(scratch);
    let reference = match reference {
        Ok(values) => Some(values),
        Err(error) => {
            eprintln!("partir: note: the f64 reference did not run ({error}); judging against the original within --tolerance");
            None
        }
    };
    Ok(XlaRuns {
        original: original?,
        reference,
        partitioned: partitioned?,
    })
}

/// Where the original's runs (f32, or its f64 twin when `wide`) on `values` are kept, when
/// `$PARTIR_XLA_REFERENCE_CACHE` names a directory. The test suite sets it: each zoo model is
/// verified under every one of its schedules, and its two original runs, the same for each,
/// were two thirds of the XLA work.
fn cached_runs(original: &str, values: &[Vec<f64>], wide: bool) -> Option<PathBuf> {
    use std::hash::Hasher;
    let root = std::env::var_os("PARTIR_XLA_REFERENCE_CACHE")?;
    // SipHash with fixed keys: the same key in every process.
    let mut hasher = std::collections::hash_map::DefaultHasher::new();
    hasher.write(original.as_bytes());
    for value in values.iter().flatten() {
        hasher.write_u64(value.to_bits());
    }
    hasher.write_u8(wide as u8);
    // And the runner, whose changes would otherwise go unseen.
    hasher.write(&std::fs::read(python::tools().join("partir_jax/xla_run.py")).unwrap_or_default());
    Some(PathBuf::from(root).join(format!("{:016x}", hasher.finish())))
}

/// Copies a run's outputs into the cache: into a fresh directory first, then renamed, so that
/// a concurrent verification never reads half of it. Failing to keep them only costs time.
fn keep(outputs: &Path, kept: &Path) {
    let fresh = kept.with_extension(format!("part{}", std::process::id()));
    let copied = std::fs::create_dir_all(&fresh).is_ok()
        && std::fs::read_dir(outputs).is_ok_and(|entries| {
            entries
                .flatten()
                .all(|entry| std::fs::copy(entry.path(), fresh.join(entry.file_name())).is_ok())
        });
    if !copied || std::fs::rename(&fresh, kept).is_err() {
        let _ = std::fs::remove_dir_all(&fresh);
    }
}

/// A scratch directory, removed when done.
struct Scratch(PathBuf);

impl Drop for Scratch {
    fn drop(&mut self) {
        let _ = std::fs::remove_dir_all(&self.0);
    }
}
