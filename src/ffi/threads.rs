//! Jobs on several threads over one MLIR context, for pricing many candidate plans at once.
//!
//! Each job gets the context and one operation it may only read (the program every job
//! clones); a job changes only IR it creates itself. MLIR allows this when the context is
//! multithreaded: its type and attribute uniquers lock, and IR that no two threads share
//! needs no lock. A context that is not (`--mlir-disable-threading`) runs the jobs in order
//! on the calling thread.
//!
//! Example: `map_shared(context, base, &plans, |context, base, plan| price(context, base,
//! plan))` prices two plans at once on a 2-core machine, results in the order of `plans`.

use melior::{ir::OperationRef, Context};
use std::sync::atomic::{AtomicUsize, Ordering};

/// Threads at most: pricing a plan allocates a copy of the program; more threads than this
/// gain little and hold more copies.
const MAX_THREADS: usize = 8;

fn is_multithreaded(context: &Context) -> bool {
    // SAFETY: a live context.
    unsafe { super::glue::bridge::context_is_multithreaded(super::glue::Context(context.to_raw())) }
}

/// How many jobs `map_shared` runs at once on this machine with this context: the cores, at
/// most `MAX_THREADS`, or `PARTIR_THREADS` when set (1: everything on the calling thread).
pub fn parallelism(context: &Context) -> usize {
    if !is_multithreaded(context) {
        return 1;
    }
    let cores = std::thread::available_parallelism().map_or(1, |count| count.get());
    std::env::var("PARTIR_THREADS")
        .ok()
        .and_then(|text| text.parse::<usize>().ok())
        .unwrap_or(cores)
        .clamp(1, MAX_THREADS)
}

/// Makes a context multithreaded while it lives (and single-threaded again after, if it was):
/// for a tool that owns its context, such as `partir auto`. A pass leaves the choice to its
/// host (`mlir-opt --mlir-disable-threading`).
pub struct Multithreaded<'c> {
    context: &'c Context,
    was: bool,
}

impl<'c> Multithreaded<'c> {
    pub fn new(context: &'c Context) -> Self {
        let was = is_multithreaded(context);
        if !was {
            context.enable_multi_threading(true);
        }
        Self { context, was }
    }
}

impl Drop for Multithreaded<'_> {
    fn drop(&mut self) {
        if !self.was {
            self.context.enable_multi_threading(false);
        }
    }
}

/// The context and the read-only operations, handed to other threads.
#[derive(Clone, Copy)]
struct Shared<'c, 'a, 's> {
    context: &'c Context,
    operations: &'s [OperationRef<'c, 'a>],
}

// SAFETY: see the module docs: the context is multithreaded (`parallelism` checks it) and the
// jobs only read `operations` while `map_shared` runs; each writes only IR it creates.
unsafe impl Send for Shared<'_, '_, '_> {}
unsafe impl Sync for Shared<'_, '_, '_> {}

/// `work(context, operations, item)` for every item, on up to [`parallelism`] threads; the
/// results in the order of `items`.
pub fn map_shared<'c, 'a, I: Sync, T: Send>(
    context: &'c Context,
    operations: &[OperationRef<'c, 'a>],
    items: &[I],
    work: impl Fn(&'c Context, &[OperationRef<'c, 'a>], &I) -> T + Sync,
) -> Vec<T> {
    let threads = parallelism(context).min(items.len());
    if threads <= 1 {
        return items
            .iter()
            .map(|item| work(context, operations, item))
            .collect();
    }
    let shared = Shared {
        context,
        operations,
    };
    let next = AtomicUsize::new(0);
    let mut results: Vec<Option<T>> = items.iter().map(|_| None).collect();
    std::thread::scope(|scope| {
        let workers: Vec<_> = (0..threads)
            .map(|_| {
                scope.spawn(|| {
                    let shared = &shared;
                    let mut done = Vec::new();
                    loop {
                        let index = next.fetch_add(1, Ordering::Relaxed);
                        let Some(item) = items.get(index) else {
                            return done;
                        };
                        done.push((index, work(shared.context, shared.operations, item)));
                    }
                })
            })
            .collect();
        for worker in workers {
            // A job that panicked panics here, on the calling thread, where the FFI boundary
            // catches it.
            let done = worker
                .join()
                .unwrap_or_else(|panic| std::panic::resume_unwind(panic));
            for (index, result) in done {
                results[index] = Some(result);
            }
        }
    });
    results
        .into_iter()
        .map(|result| result.expect("every job ran"))
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;
    use melior::{dialect::DialectRegistry, ir::Module, utility::register_all_dialects};

    fn context(threads: bool) -> Context {
        let registry = DialectRegistry::new();
        register_all_dialects(&registry);
        Context::new_with_registry(&registry, threads)
    }

    #[test]
    fn a_single_threaded_context_runs_jobs_on_the_calling_thread() {
        let context = context(false);
        assert_eq!(parallelism(&context), 1);
        {
            let _threads = Multithreaded::new(&context);
            assert!(is_multithreaded(&context));
        }
        assert!(!is_multithreaded(&context));
    }

    #[test]
    fn jobs_clone_one_program_on_several_threads_in_order() {
        let context = context(true);
        context.get_or_load_dialect("func");
        let module = Module::parse(
            &context,
            "func.func @f(%a: tensor<4xf32>) -> tensor<4xf32> { return %a : tensor<4xf32> }",
        )
        .expect("parses");
        let items: Vec<usize> = (0..16).collect();
        let names = map_shared(
            &context,
            &[module.as_operation()],
            &items,
            |_, ops, item| {
                let text = crate::ffi::clone_operation(ops[0]).to_string();
                (text.contains("func.func @f"), *item)
            },
        );
        assert_eq!(names.len(), 16);
        assert!(names.iter().all(|(found, _)| *found));
        assert_eq!(
            names.iter().map(|(_, item)| *item).collect::<Vec<_>>(),
            items
        );
    }
}
