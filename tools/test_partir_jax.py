#!/usr/bin/env python3
"""partir from JAX (`partir_jax.partition`): on zoo models, the partitioned step's outputs equal
`jax.jit(step)`'s (normalised error max|a-b|/max|b| per output, within 1e-4: the two programs
sum in different orders; the observed worst is about 1e-6).

    tools/.venv/bin/python tools/test_partir_jax.py [MODEL:SCHEDULE ...]
"""
import os
import sys
from pathlib import Path

os.environ.setdefault("XLA_FLAGS", "--xla_force_host_platform_device_count=8")
TOOLS = Path(__file__).resolve().parent
sys.path.insert(0, str(TOOLS))

import jax  # noqa: E402
import numpy as np  # noqa: E402

import partir_jax  # noqa: E402
from partir_jax import models  # noqa: E402

CASES = ["mlp:BP_MP_Z3", "transformer:BP_MP", "llama:BP_MP", "llama:BP_MP_Z3", "unet:BP_MP"]
TOLERANCE = 1e-4


def worst(spec, schedule):
    step = partir_jax.partition(spec.fn, spec.args, mesh={"batch": 4, "model": 2}, schedule=schedule,
                                arg_names=spec.arg_names, result_names=spec.result_names)
    got = jax.tree_util.tree_leaves(step(*spec.args))
    want = jax.tree_util.tree_leaves(jax.jit(spec.fn)(*spec.args))
    names = partir_jax.importer.named_flat(jax.jit(spec.fn)(*spec.args), spec.result_names)
    errors = []
    for name, a, b in zip(names, got, want):
        a, b = np.asarray(a, np.float64), np.asarray(b, np.float64)
        errors.append((float(np.abs(a - b).max(initial=0) / max(np.abs(b).max(initial=0), 1e-30)), name))
    return max(errors)


def main(argv):
    failed = 0
    for case in argv or CASES:
        model, schedule = case.split(":")
        spec, _ = models.spec(model)
        path = TOOLS.parent / "examples" / model / "schedules" / f"{schedule}.toml"
        error, name = worst(spec, path)
        ok = error <= TOLERANCE
        failed += not ok
        print(f"{'ok  ' if ok else 'FAIL'} {case:24s} worst normalised error {error:.2e} ({name})", flush=True)
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
