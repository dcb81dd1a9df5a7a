"""partir from JAX: the importer (`importer`, `cli`), the model zoo (`models`), XLA execution of
partitioned modules (`xla_run`) and the user-facing `partition` (see `api`)."""


def partition(*args, **kwargs):
    """See `partir_jax.api.partition`."""
    from .api import partition as _partition

    return _partition(*args, **kwargs)
