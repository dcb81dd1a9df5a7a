#!/usr/bin/env python3
"""JAX training steps whose dims the mesh's axes do not divide, lowered as `jax.jit(f).lower(...)`
emits them (generic form), for partir's uneven tiles (`src/passes/pad_dim/`, `tests/uneven.rs`):

- `examples/uneven/mlp_batch6.mlir`: a 2-layer MLP's SGD step (softmax cross-entropy on one-hot
  labels) on a batch of 6, which `schedules/BP.toml` splits 4 ways;
- `examples/uneven/attention_heads12.mlir`: a self-attention layer's SGD step with 12 heads, each
  projection holding the heads as a dim of its own (`[d, heads, head_dim]`), which
  `schedules/MP.toml` splits 8 ways (Megatron by heads).

    tools/.venv/bin/python tools/uneven_fixtures.py           # write the fixtures
    tools/.venv/bin/python tools/uneven_fixtures.py --check   # regenerate in memory and compare
"""
from __future__ import annotations

import sys
from pathlib import Path

import jax
import jax.numpy as jnp

sys.path.insert(0, str(Path(__file__).resolve().parent))
from partir_jax import stablehlo_text  # noqa: E402

OUT = Path(__file__).resolve().parent.parent / "examples" / "uneven"
F32 = jnp.float32


def spec(*shape):
    return jax.ShapeDtypeStruct(shape, F32)


def mlp_batch6_spec():
    """(step, abstract arguments, argument names, result names): for this file's StableHLO
    fixture, and for `tools/import-jax --module tools/uneven_fixtures.py:mlp_batch6_spec` (its
    linalg form, which `verify --ranks` runs)."""
    def loss(w1, w2, x, y):
        logits = jnp.tanh(x @ w1) @ w2
        return jnp.mean(jax.nn.logsumexp(logits, axis=-1) - jnp.sum(logits * y, axis=-1))

    def step(w1, w2, x, y):
        value, (g1, g2) = jax.value_and_grad(loss, argnums=(0, 1))(w1, w2, x, y)
        return value, w1 - 0.1 * g1, w2 - 0.1 * g2

    return (step, (spec(16, 32), spec(32, 10), spec(6, 16), spec(6, 10)), ["w1", "w2", "x", "y"],
            ["loss", "w1", "w2"])


def mlp_batch6() -> str:
    step, args, _, _ = mlp_batch6_spec()
    return portable(stablehlo_text(jax.jit(step).lower(*args)))


def portable(text: str) -> str:
    """The program with this file's locations relative to the repository, so that a fresh clone
    anywhere regenerates it byte for byte."""
    return text.replace(f'"{Path(__file__).resolve()}"', '"tools/uneven_fixtures.py"')


def attention_heads12_spec():
    """As `mlp_batch6_spec`, for the self-attention step."""
    def loss(wq, wk, wv, wo, x):
        q = jnp.einsum("bsd,dhk->bhsk", x, wq)
        k = jnp.einsum("bsd,dhk->bhsk", x, wk)
        v = jnp.einsum("bsd,dhk->bhsk", x, wv)
        p = jax.nn.softmax(jnp.einsum("bhsk,bhtk->bhst", q, k) / 4.0, axis=-1)
        out = jnp.einsum("bhst,bhtk,hkd->bsd", p, v, wo)
        return jnp.mean(out ** 2)

    def step(wq, wk, wv, wo, x):
        value, grads = jax.value_and_grad(loss, argnums=(0, 1, 2, 3))(wq, wk, wv, wo, x)
        return (value,) + tuple(w - 0.1 * g for w, g in zip((wq, wk, wv, wo), grads))

    d, heads, head_dim = 32, 12, 8
    args = (spec(d, heads, head_dim), spec(d, heads, head_dim), spec(d, heads, head_dim),
            spec(heads, head_dim, d), spec(2, 8, d))
    return step, args, ["wq", "wk", "wv", "wo", "x"], ["loss", "wq", "wk", "wv", "wo"]


def attention_heads12() -> str:
    step, args, _, _ = attention_heads12_spec()
    return portable(stablehlo_text(jax.jit(step).lower(*args)))


FIXTURES = {"mlp_batch6.mlir": mlp_batch6, "attention_heads12.mlir": attention_heads12}


def main() -> int:
    check = "--check" in sys.argv[1:]
    stale = []
    for name, make in FIXTURES.items():
        text = make()
        path = OUT / name
        if check:
            if not path.exists() or path.read_text() != text:
                stale.append(name)
        else:
            OUT.mkdir(parents=True, exist_ok=True)
            path.write_text(text)
    if stale:
        print(f"stale: {', '.join(stale)} (run tools/uneven_fixtures.py)", file=sys.stderr)
        return 1
    print("uneven fixtures " + ("up to date" if check else "written"))
    return 0


if __name__ == "__main__":
    sys.exit(main())
