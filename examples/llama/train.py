"""Trains the zoo's LLaMA-style model for a few steps with batch parallelism and Megatron
(BP+MP on a 4x2 mesh of XLA CPU devices), partitioned by partir from JAX, and prints the loss.

    XLA_FLAGS=--xla_force_host_platform_device_count=8 tools/.venv/bin/python examples/llama/train.py
"""
import os
import sys
from pathlib import Path

os.environ.setdefault("XLA_FLAGS", "--xla_force_host_platform_device_count=8")
sys.path.insert(0, str(Path(__file__).resolve().parents[2] / "tools"))

import jax  # noqa: E402
import numpy as np  # noqa: E402

import partir_jax  # noqa: E402
from partir_jax.models import llama  # noqa: E402

spec = llama.make(**llama.PRESETS["small"])
params, opt, tokens, targets = spec.args
step = partir_jax.partition(
    spec.fn, spec.args, mesh={"batch": 4, "model": 2},
    schedule=Path(__file__).parent / "schedules" / "BP_MP.toml",
    arg_names=["params", "opt", "tokens", "targets"])
print(step.table)
reference = jax.jit(spec.fn)(params, opt, tokens, targets)
for i in range(5):
    params, opt, loss = step(params, opt, tokens, targets)
    if i == 0:  # partir's step computes what jax.jit(step) computes
        np.testing.assert_allclose(loss, reference[2], rtol=1e-5)
    print(f"step {i}: loss {float(loss):.4f}")
