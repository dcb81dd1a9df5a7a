//! In-process MLIR: a context with every upstream dialect plus partir's, a parser, a pass
//! pipeline runner, and a diagnostic handler that collects errors, warnings and remarks with
//! readable `file:line:col` locations.

use super::error::CliError;
use melior::{
    diagnostic::DiagnosticSeverity,
    dialect::DialectRegistry,
    ir::Module,
    pass::PassManager,
    utility::{parse_pass_pipeline, register_all_dialects, register_all_passes},
    Context,
};
use std::{cell::RefCell, fmt, rc::Rc};

pub use crate::{ir::location::describe, text::table};

/// How loud a collected diagnostic is.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Level {
    Error,
    Warning,
    Remark,
    Note,
}

impl fmt::Display for Level {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(match self {
            Level::Error => "error",
            Level::Warning => "warning",
            Level::Remark => "remark",
            Level::Note => "note",
        })
    }
}

/// One diagnostic: `location: level: message`.
#[derive(Clone, Debug)]
pub struct Diag {
    pub level: Level,
    pub location: String,
    pub message: String,
}

impl fmt::Display for Diag {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}: {}: {}", self.location, self.level, self.message)
    }
}

/// An MLIR context set up for partir, with its collected diagnostics.
pub struct Session {
    context: Context,
    diags: Rc<RefCell<Vec<Diag>>>,
    /// The file buffer locations refer to.
    source: String,
}

impl Session {
    /// The file buffer locations refer to (what `describe` gets for them).
    pub fn source(&self) -> &str {
        &self.source
    }

    /// A single-threaded context with all upstream dialects and partir's; partir's passes are
    /// registered. `source` names the file that buffer locations refer to.
    pub fn new(source: &str) -> Self {
        let registry = DialectRegistry::new();
        register_all_dialects(&registry);
        crate::ffi::register_dialects(&registry);
        crate::ffi::register_passes();
        // Upstream passes too (cse after partir-lower-to-hlo).
        register_all_passes();
        let context = Context::new_with_registry(&registry, false);
        // StableHLO (JAX's own IR) is read as unregistered ops, as a stock mlir-opt reads it
        // with --allow-unregistered-dialect; unknown ops of registered dialects stay errors.
        context.set_allow_unregistered_dialects(true);
        context.get_or_load_dialect("partir");
        context.get_or_load_dialect("partir_hlo");
        let diags = Rc::new(RefCell::new(Vec::new()));
        let sink = Rc::clone(&diags);
        let named = source.to_string();
        let source = source.to_string();
        context.attach_diagnostic_handler(move |diagnostic| {
            let level = match diagnostic.severity() {
                DiagnosticSeverity::Error => Level::Error,
                DiagnosticSeverity::Warning => Level::Warning,
                DiagnosticSeverity::Remark => Level::Remark,
                DiagnosticSeverity::Note => Level::Note,
            };
            let mut sink = sink.borrow_mut();
            sink.push(Diag {
                level,
                location: describe(diagnostic.location(), &source),
                message: diagnostic.to_string(),
            });
            for index in 0..diagnostic.note_count() {
                if let Ok(note) = diagnostic.note(index) {
                    sink.push(Diag {
                        level: Level::Note,
                        location: describe(note.location(), &source),
                        message: note.to_string(),
                    });
                }
            }
            true
        });
        Self {
            context,
            diags,
            source: named,
        }
    }

    pub fn context(&self) -> &Context {
        &self.context
    }

    /// Parses (and verifies) a module; on failure, the parser's first error.
    pub fn parse(&self, text: &str) -> Result<Module<'_>, CliError> {
        Module::parse(&self.context, text).ok_or_else(|| {
            let error = self.failure("cannot parse the program");
            // JAX's `lowered.as_text()` prints StableHLO in its own syntax, which only a build
            // with the dialect reads: say how to get the generic form every MLIR 22 reads.
            let said = error.to_string();
            if ["`stablehlo'", "`chlo'", "`sdy'"]
                .iter()
                .any(|dialect| said.contains(&format!("Dialect {dialect} not found for custom op")))
            {
                CliError::new(format!(
                    "partir reads dialects it does not register (StableHLO) in MLIR's generic form: write the program with `jax.jit(f).lower(*args).compiler_ir(\"stablehlo\").operation.get_asm(print_generic_op_form=True, enable_debug_info=True)`, or `partir_jax.stablehlo_text(lowered)`\n{error}"
                ))
            } else {
                error
            }
        })
    }

    /// Runs a textual pipeline (`builtin.module(...)`) on `module`, verifying after each pass.
    pub fn run(&self, module: &mut Module, pipeline: &str) -> Result<(), CliError> {
        let manager = PassManager::new(&self.context);
        manager.enable_verifier(true);
        parse_pass_pipeline(manager.as_operation_pass_manager(), pipeline).map_err(|error| {
            CliError::new(format!("invalid pass pipeline '{pipeline}': {error}"))
        })?;
        manager
            .run(module)
            .map_err(|_| self.failure(&format!("the pass pipeline {pipeline} failed")))
    }

    /// The error for a pass that failed outside a pass manager: reported through the
    /// context (so it reads like every other diagnostic), then collected.
    pub fn pass_error(&self, error: crate::passes::PassError) -> CliError {
        crate::ffi::emit(error.location, crate::ffi::Severity::Error, &error.message);
        self.failure(&error.message)
    }

    /// Takes the diagnostics collected so far.
    pub fn take(&self) -> Vec<Diag> {
        std::mem::take(&mut self.diags.borrow_mut())
    }

    /// The error for a failed step: the collected errors (with their notes), or `fallback`
    /// when MLIR said nothing.
    fn failure(&self, fallback: &str) -> CliError {
        let diags = self.take();
        let mut lines = Vec::new();
        let mut in_error = false;
        for diag in &diags {
            match diag.level {
                Level::Error => {
                    in_error = true;
                    lines.push(diag.to_string());
                }
                // MLIR's boilerplate notes (the dialect list, an op dump) are not news.
                Level::Note
                    if in_error
                        && !diag.message.starts_with("Available dialects")
                        && !diag.message.starts_with("see current operation") =>
                {
                    lines.push(diag.to_string())
                }
                _ => in_error = false,
            }
        }
        if lines.is_empty() {
            CliError::new(fallback)
        } else {
            CliError::located(lines.join("\n"))
        }
    }
}
