//! StableHLO programs on MPI ranks. MLIR 22's CPU pipeline (`runner::LOWER`) lowers upstream
//! dialects only, so `verify --ranks` converts a StableHLO program, the original and its
//! device-local partitioned form alike, to linalg with the importer's conversion (IREE's
//! StableHLO input pipeline, `python -m partir_jax.legalize`), after partitioning: the tactics
//! (the pipeline's rewrite of `stablehlo.while` included) see JAX's own program. partir's
//! collectives pass through the conversion untouched and `partir-to-mpi` lowers them after it.

use crate::cli::{error::CliError, pipeline::Session, python};
use crate::{ffi, rules};
use melior::ir::{
    operation::{OperationLike, OperationPrintingFlags},
    Module,
};
use std::{io::Write, process::Stdio};

/// Whether `module` holds StableHLO ops (JAX's program, read as unregistered ops).
pub(super) fn is_stablehlo(module: &Module) -> bool {
    let mut found = false;
    ffi::walk(module.as_operation(), |op| {
        found = found || rules::is_stablehlo(op)
    });
    found
}

/// `module` in upstream dialects, parsed in `session`; `what` names it in errors ("the
/// original", "the partitioned program").
pub(super) fn to_upstream<'s>(
    session: &'s Session,
    module: &Module,
    what: &str,
) -> Result<Module<'s>, CliError> {
    let text = module
        .as_operation()
        .to_string_with_flags(OperationPrintingFlags::new().print_generic_operation_form())
        .map_err(|error| CliError::new(format!("cannot print {what}: {error}")))?;
    let mut command = python::module(
        "verify --ranks on a StableHLO program",
        "partir_jax.legalize",
        1,
    )?;
    let program = command.get_program().to_string_lossy().into_owned();
    let start = |error: std::io::Error| CliError::new(format!("cannot start {program} ({error})"));
    let mut child = command
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .map_err(start)?;
    // Written from its own thread: the converter prints while it reads.
    let mut stdin = child.stdin.take().expect("a piped stdin");
    let output = std::thread::scope(|scope| {
        scope.spawn(move || stdin.write_all(text.as_bytes()));
        child.wait_with_output()
    })
    .map_err(|error| CliError::new(format!("the StableHLO conversion failed: {error}")))?;
    if !output.status.success() {
        return Err(CliError::new(format!(
            "{what} cannot run on MPI ranks: its StableHLO does not convert to upstream MLIR (IREE's StableHLO input pipeline): {}; run it on XLA with --xla",
            python::last_lines(&output.stderr, 4)
        )));
    }
    session.parse(&String::from_utf8_lossy(&output.stdout))
}
