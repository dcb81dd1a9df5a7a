"""partir from JAX: the importer (`importer`, `cli`), the model zoo (`models`), XLA execution of
partitioned modules (`xla_run`) and the user-facing `partition` (see `api`)."""


def stablehlo_text(source) -> str:
    """The program partir reads, from what JAX gives: a `jax.jit(f).lower(*args)` (a `Lowered`),
    a `jax.export.export(jax.jit(f))(*args)` (an `Exported`), or StableHLO module text in JAX's
    own syntax (`lowered.as_text()`, `exported.mlir_module()`). Returns it in MLIR's generic form
    (which an MLIR without the StableHLO dialect reads), with debug info: @main's arguments keep
    the pytree paths JAX gives them as locations, which partir takes as their names.

        open("step.mlir", "w").write(partir_jax.stablehlo_text(jax.jit(step).lower(*args)))
    """
    from jax._src.interpreters import mlir as jax_mlir
    from jax._src.lib.mlir import ir

    if hasattr(source, "compiler_ir"):
        module = source.compiler_ir("stablehlo")
        return module.operation.get_asm(print_generic_op_form=True, enable_debug_info=True)
    text = source.mlir_module() if hasattr(source, "mlir_module") else str(source)
    with jax_mlir.make_ir_context():
        module = ir.Module.parse(text)
        return module.operation.get_asm(print_generic_op_form=True, enable_debug_info=True)


def partition(*args, **kwargs):
    """See `partir_jax.api.partition`."""
    from .api import partition as _partition

    return _partition(*args, **kwargs)


def shardings(*args, **kwargs):
    """See `partir_jax.api.shardings`."""
    from .api import shardings as _shardings

    return _shardings(*args, **kwargs)


def auto(*args, **kwargs):
    """See `partir_jax.api.auto`."""
    from .api import auto as _auto

    return _auto(*args, **kwargs)


def logical_schedule(*args, **kwargs):
    """See `partir_jax.api.logical_schedule`."""
    from .api import logical_schedule as _logical_schedule

    return _logical_schedule(*args, **kwargs)
