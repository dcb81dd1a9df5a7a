"""Op-form coverage: small JAX functions, one StableHLO op form each, exactly as
`jax.jit(f, keep_unused=True).lower(*args)` emits them (private functions and `func.call`s kept,
no lowering rule patched, nothing inlined), each with a batch-parallel schedule on the mesh
`{ batch = 8 }`. `tools/op_forms_check.py` partitions every form with partir and runs it on 8 XLA
CPU devices against JAX; `docs/op_forms.md` is its table.

    tools/.venv/bin/python tools/op_forms.py            # rewrite examples/op_forms/
    tools/.venv/bin/python tools/op_forms.py --check    # regenerate in memory, compare byte for byte
    tools/.venv/bin/python tools/op_forms.py --list     # the forms, one a line

Each form writes `examples/op_forms/<form>.mlir` (generic form, as a stock mlir-opt 22 prints it
with `--allow-unregistered-dialect`; no op locations; @main's block arguments keep the
location JAX gives them, their pytree path such as `loc("params['w']")`, and carry a
`partir.name` attribute, the path as the importer spells it, `params/w`) and
`examples/op_forms/<form>.toml` (one `BP` tactic tiling the per-example arguments along `batch`).

Every form's ops are per-example along the batch dim unless its `note` says otherwise: a
perfect partitioner needs no all_gather (sums over the batch, a loss or a weight gradient, are
all_reduces). Forms with a `note` need communication by construction (a slice of the batch
dim) or cannot be split without changing what they compute (a random stream that depends on
the whole shape); they are in the suite to see how partir handles them.
"""
from __future__ import annotations

import argparse
import inspect
import os
import subprocess
import sys
import zlib
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Callable

import numpy as np

TOOLS = Path(__file__).resolve().parent
ROOT = TOOLS.parent
OUT = ROOT / "examples" / "op_forms"
MESH = {"batch": 8}
B = 8  # the batch: dim 0 of every per-example argument

# Forms that pass through with the current partir (exit 0, no stop, no all_gather, XLA agrees
# with JAX). `op_forms_check.py` fails when one of these stops passing; grow it as partir
# learns more forms.
EXPECTED_TO_PASS: set[str] = {
    "argmax", "argmin", "cond", "cond_sum", "constant_table", "switch", "embed_vocab", "xent_vocab", "embed_head_vocab_sgd", "index_per_example", "label_logits", "argsort", "attention", "attention_scores", "avg_pool", "avg_pool_grad",
    "broadcast_bias", "broadcast_outer", "checkpoint", "cholesky", "clamp", "clamp_per_example",
    "compare_select", "concatenate", "conv", "conv_depthwise", "conv_depthwise_grad",
    "conv_dilated", "conv_grad", "conv_grouped", "conv_nchw", "conv_strided", "conv_transposed",
    "convert", "cummax", "cumprod", "cumsum", "dot_batch_dims", "dot_vector", "dynamic_slice",
    "dynamic_slice_vmap", "dynamic_update_slice", "dynamic_update_slice_vmap", "einsum",
    "elementwise", "fori_loop", "gather_grad", "gather_vmap_rows", "gather_vmap_scalar", "gelu",
    "index_columns", "integer_ops", "iota", "iota_batch", "kv_cache_write", "layer_norm",
    "log_softmax", "matmul", "matmul_batch_minor", "matmul_grad", "max_pool", "max_pool_grad",
    "mean_loss", "mlp_sgd", "nested_jit", "one_hot_matmul", "pad", "pad_interior", "random_bits",
    "random_rbg", "random_uniform", "reduce_max", "reduce_sum", "relu", "reshape_merge",
    "reshape_regroup", "reshape_split", "reverse", "reverse_2d", "reverse_batch",
    "slice_batch", "slice_batch_sum", "pad_batch_uneven", "slice_batch_halo", "concatenate_batch", "concatenate_batch_unequal", "pad_batch", "rng_bit_generator",
    "scan_layers", "scan_outputs", "scan_remat", "scatter_add", "scatter_set", "scatter_vmap_add", "segment_sum",
    "silu", "slice", "slice_strided", "softmax", "softplus", "sort", "take_along_axis",
    "take_along_axis_grad", "take_table", "top_k", "transpose", "transpose_batch_minor",
    "triangular_solve", "while_loop", "xent_int_labels",
}


@dataclass
class Form:
    name: str
    fn: Callable
    args: tuple  # example arguments: pytrees of NumPy f32/i32 arrays
    tile: dict[str, int]  # selector (argument name) -> dim tiled along `batch`
    what: str
    note: str = ""  # why the form is not per-example, when it is not
    arg_names: list[str] = field(default_factory=list)  # top-level: the function's parameters
    rules: dict[str, str] = field(default_factory=dict)  # custom call target -> einsum ([rules])

    def leaf_names(self) -> list[str]:
        from partir_jax.importer import named_flat

        return named_flat(self.args, self.arg_names)

    def leaves(self) -> list[np.ndarray]:
        import jax

        return [np.asarray(leaf) for leaf in jax.tree_util.tree_leaves(self.args)]


FORMS: dict[str, Form] = {}


class Data:
    """Deterministic example values, seeded by the form's name."""

    def __init__(self, name: str):
        self.rng = np.random.default_rng(zlib.crc32(name.encode()))

    def f(self, *shape, scale: float = 1.0) -> np.ndarray:
        return (self.rng.standard_normal(shape) * scale).astype(np.float32)

    def pos(self, *shape) -> np.ndarray:
        """Positive values away from 0 (for products, logs, divisions)."""
        return self.rng.uniform(0.5, 1.5, shape).astype(np.float32)

    def i(self, high: int, *shape) -> np.ndarray:
        return self.rng.integers(0, high, shape).astype(np.int32)

    def distinct(self, high: int, count: int) -> np.ndarray:
        """`count` distinct indices below `high` (for overwriting scatters)."""
        return self.rng.permutation(high)[:count].astype(np.int32)

    def rows(self, high: int, count: int) -> np.ndarray:
        """Per example, `count` distinct indices below `high`: [B, count]."""
        return np.stack([self.distinct(high, count) for _ in range(B)])

    def key(self, words: int = 2) -> np.ndarray:
        """A PRNG key's data as i32 (the function bitcasts it to u32)."""
        return self.rng.integers(-2**31, 2**31 - 1, (words,), dtype=np.int64).astype(np.int32)

    def spd(self, n: int) -> np.ndarray:
        """B symmetric positive definite n x n matrices."""
        a = self.f(B, n, n)
        return (a @ a.transpose(0, 2, 1) + n * np.eye(n, dtype=np.float32)).astype(np.float32)


def form(tile: dict[str, int], what: str, note: str = "", name: str | None = None,
         rules: dict[str, str] | None = None):
    """Registers `builder(data) -> (fn, args)` as the form named like the builder (or `name`)."""

    def register(builder):
        name_ = name or builder.__name__
        if name_ in FORMS:
            raise ValueError(f"duplicate form {name_}")
        fn, args = builder(Data(name_))
        fn.__name__ = fn.__qualname__ = name_  # the module is `jit_<name>`
        names = list(inspect.signature(fn).parameters)
        if len(names) != len(args):
            raise ValueError(f"{name_}: {len(names)} parameters, {len(args)} example arguments")
        FORMS[name_] = Form(name_, fn, tuple(args), dict(tile), what, note, names, dict(rules or {}))
        return builder

    return register


def _jax():
    import jax
    import jax.numpy as jnp
    from jax import lax

    return jax, jnp, lax


jax, jnp, lax = _jax()
X = {"x": 0}

# --- elementwise and broadcasts ---------------------------------------------------------------


@form(X, "unary and binary elementwise ops")
def elementwise(d):
    def f(x):
        return jnp.tanh(x) * x + jnp.exp(-jnp.abs(x)) / (1.0 + x * x) - jnp.sqrt(x * x + 1.0)

    return f, (d.f(B, 4),)


@form(X, "a bias and a scalar broadcast onto the batch (broadcast_in_dim)")
def broadcast_bias(d):
    def f(x, b):
        return x * 2.0 + b

    return f, (d.f(B, 4), d.f(4))


@form({"x": 0, "y": 0}, "per-example outer product (broadcast_in_dim of both operands)")
def broadcast_outer(d):
    def f(x, y):
        return x[:, :, None] * y[:, None, :]

    return f, (d.f(B, 4), d.f(B, 3))


@form(X, "compare and select (jnp.where)")
def compare_select(d):
    def f(x):
        return jnp.where(x > 0, x, 0.1 * x)

    return f, (d.f(B, 4),)


@form({"n": 0}, "i32 arithmetic, shifts, bitwise ops and a convert")
def integer_ops(d):
    def f(n):
        m = (n * 3 + 1) // 2 % 7
        return (jnp.left_shift(m, 2) ^ n) | (n >> 1), m.astype(jnp.float32) * 0.5

    return f, (d.i(100, B, 4),)


@form(X, "f32 -> i32 -> f32 converts")
def convert(d):
    def f(x):
        return (x * 4.0).astype(jnp.int32).astype(jnp.float32) + x

    return f, (d.f(B, 4),)


@form(X, "lax.clamp with scalar bounds")
def clamp(d):
    def f(x):
        return lax.clamp(jnp.float32(-0.5), x, jnp.float32(0.5))

    return f, (d.f(B, 4),)


@form({"x": 0, "lo": 0}, "lax.clamp with per-example lower bounds")
def clamp_per_example(d):
    def f(x, lo):
        return lax.clamp(lo, x, lo + 1.0)

    return f, (d.f(B, 4), d.f(B, 4))


@form(X, "iota on a non-batch dim (jnp.arange)")
def iota(d):
    def f(x):
        return x + jnp.arange(4, dtype=jnp.float32)

    return f, (d.f(B, 4),)


@form(X, "iota along the batch dim (each example's global index)")
def iota_batch(d):
    def f(x):
        return x * lax.broadcasted_iota(jnp.float32, x.shape, 0)

    return f, (d.f(B, 4),)


# --- reductions -------------------------------------------------------------------------------


@form(X, "sum over a non-batch dim")
def reduce_sum(d):
    def f(x):
        return jnp.sum(x, axis=1)

    return f, (d.f(B, 6),)


@form(X, "max over two non-batch dims")
def reduce_max(d):
    def f(x):
        return jnp.max(x, axis=(1, 2))

    return f, (d.f(B, 3, 4),)


@form({"x": 0, "y": 0}, "mean squared error over the batch (a scalar: all_reduce)")
def mean_loss(d):
    def f(x, y):
        return jnp.mean((x - y) ** 2)

    return f, (d.f(B, 4), d.f(B, 4))


@form(X, "jnp.argmax over a non-batch dim (2-operand reduce)")
def argmax(d):
    def f(x):
        return jnp.argmax(x, axis=1)

    return f, (d.f(B, 6),)


@form(X, "jnp.argmin over a non-batch dim (2-operand reduce)")
def argmin(d):
    def f(x):
        return jnp.argmin(x, axis=1)

    return f, (d.f(B, 6),)


# --- dot_general ------------------------------------------------------------------------------


@form(X, "x @ w, w replicated (dot_general without batch dims)")
def matmul(d):
    def f(x, w):
        return x @ w

    return f, (d.f(B, 4), d.f(4, 3))


@form(X, "w.T @ x.T: the batch on the result's minor dim")
def matmul_batch_minor(d):
    def f(x, w):
        return w.T @ x.T

    return f, (d.f(B, 4), d.f(4, 3))


@form(X, "jax.grad of a matmul: dx per example, dw summed over the batch")
def matmul_grad(d):
    def f(x, w):
        return jax.grad(lambda x, w: jnp.sum(jnp.tanh(x @ w)), argnums=(0, 1))(x, w)

    return f, (d.f(B, 4), d.f(4, 3))


@form({"a": 0, "c": 0}, "batched matmul (dot_general with batch dims)")
def dot_batch_dims(d):
    def f(a, c):
        return jnp.einsum("bij,bjk->bik", a, c)

    return f, (d.f(B, 3, 4), d.f(B, 4, 2))


@form({"q": 0, "k": 0}, "attention scores bqhd,bkhd->bhqk (two batch dims)")
def attention_scores(d):
    def f(q, k):
        return jnp.einsum("bqhd,bkhd->bhqk", q, k)

    return f, (d.f(B, 5, 2, 4), d.f(B, 5, 2, 4))


@form(X, "jnp.einsum bsd,dhk->bshk")
def einsum(d):
    def f(x, w):
        return jnp.einsum("bsd,dhk->bshk", x, w)

    return f, (d.f(B, 3, 4), d.f(4, 2, 3))


@form({"x": 0, "y": 0}, "per-example dot product bi,bi->b")
def dot_vector(d):
    def f(x, y):
        return jnp.einsum("bi,bi->b", x, y)

    return f, (d.f(B, 4), d.f(B, 4))


# --- convolution ------------------------------------------------------------------------------

NHWC = ("NHWC", "HWIO", "NHWC")


def _conv(x, w, **kw):
    return lax.conv_general_dilated(x, w, kw.pop("strides", (1, 1)), kw.pop("padding", "SAME"),
                                    dimension_numbers=NHWC, **kw)


@form(X, "3x3 SAME convolution, NHWC/HWIO")
def conv(d):
    def f(x, w):
        return _conv(x, w)

    return f, (d.f(B, 6, 6, 2), d.f(3, 3, 2, 4))


@form(X, "convolution with window strides 2")
def conv_strided(d):
    def f(x, w):
        return _conv(x, w, strides=(2, 2))

    return f, (d.f(B, 6, 6, 2), d.f(3, 3, 2, 4))


@form(X, "convolution with rhs (kernel) dilation 2")
def conv_dilated(d):
    def f(x, w):
        return _conv(x, w, rhs_dilation=(2, 2))

    return f, (d.f(B, 6, 6, 2), d.f(3, 3, 2, 4))


@form(X, "transposed convolution: lhs (input) dilation 2")
def conv_transposed(d):
    def f(x, w):
        return _conv(x, w, padding=((1, 1), (1, 1)), lhs_dilation=(2, 2))

    return f, (d.f(B, 4, 4, 2), d.f(3, 3, 2, 4))


@form(X, "depthwise convolution (feature_group_count = channels)")
def conv_depthwise(d):
    def f(x, w):
        return _conv(x, w, feature_group_count=4)

    return f, (d.f(B, 6, 6, 4), d.f(3, 3, 1, 4))


@form(X, "grouped convolution (feature_group_count = 2)")
def conv_grouped(d):
    def f(x, w):
        return _conv(x, w, feature_group_count=2)

    return f, (d.f(B, 6, 6, 4), d.f(3, 3, 2, 4))


@form(X, "convolution in JAX's default layout NCHW/OIHW")
def conv_nchw(d):
    def f(x, w):
        return lax.conv(x, w, (1, 1), "SAME")

    return f, (d.f(B, 2, 6, 6), d.f(4, 2, 3, 3))


@form(X, "jax.grad of a convolution: input gradient per example, weight gradient over the batch")
def conv_grad(d):
    def f(x, w):
        return jax.grad(lambda x, w: jnp.sum(_conv(x, w) ** 2), argnums=(0, 1))(x, w)

    return f, (d.f(B, 6, 6, 2), d.f(3, 3, 2, 4))


@form(X, "jax.grad of a depthwise convolution (weight gradient: batch_group_count > 1)")
def conv_depthwise_grad(d):
    def f(x, w):
        return jax.grad(lambda x, w: jnp.sum(_conv(x, w, feature_group_count=4) ** 2), argnums=(0, 1))(x, w)

    return f, (d.f(B, 6, 6, 4), d.f(3, 3, 1, 4))


# --- gather -----------------------------------------------------------------------------------


@form({"ids": 0}, "jnp.take on a replicated table (embedding lookup)")
def take_table(d):
    def f(table, ids):
        return jnp.take(table, ids, axis=0)

    return f, (d.f(16, 4), d.i(16, B, 5))


@form(X, "x[:, idx]: the same columns of every example (replicated indices)")
def index_columns(d):
    def f(x, idx):
        return x[:, idx]

    return f, (d.f(B, 6), d.distinct(6, 3))


@form({"x": 0, "idx": 0}, "x[arange(B)[:, None], idx]: per-example rows by advanced indexing")
def index_per_example(d):
    def f(x, idx):
        return x[jnp.arange(B)[:, None], idx]

    return f, (d.f(B, 6, 4), d.i(6, B, 3))


@form({"x": 0, "idx": 0}, "jnp.take_along_axis on a non-batch dim")
def take_along_axis(d):
    def f(x, idx):
        return jnp.take_along_axis(x, idx, axis=1)

    return f, (d.f(B, 6), d.i(6, B, 3))


@form({"ids": 0}, "one_hot(ids) @ table")
def one_hot_matmul(d):
    def f(table, ids):
        return jax.nn.one_hot(ids, 16) @ table

    return f, (d.f(16, 4), d.i(16, B))


@form({"logits": 0, "labels": 0}, "logits[jnp.arange(B), labels]")
def label_logits(d):
    def f(logits, labels):
        return logits[jnp.arange(B), labels]

    return f, (d.f(B, 10), d.i(10, B))


@form({"logits": 0, "labels": 0},
      "optax-style softmax_cross_entropy_with_integer_labels (take_along_axis label lookup)")
def xent_int_labels(d):
    def f(logits, labels):
        logits = logits - lax.stop_gradient(jnp.max(logits, axis=-1, keepdims=True))
        label = jnp.take_along_axis(logits, labels[..., None], axis=-1)[..., 0]
        return jnp.log(jnp.sum(jnp.exp(logits), axis=-1)) - label

    return f, (d.f(B, 10), d.i(10, B))


@form({"tables": 0, "ids": 0}, "vmapped t[ids]: gather with operand batching dims")
def gather_vmap_rows(d):
    def f(tables, ids):
        return jax.vmap(lambda t, i: t[i])(tables, ids)

    return f, (d.f(B, 6, 4), d.i(6, B, 3))


@form({"x": 0, "i": 0}, "vmapped x[i] with a scalar index per example")
def gather_vmap_scalar(d):
    def f(x, i):
        return jax.vmap(lambda xi, ii: xi[ii])(x, i)

    return f, (d.f(B, 6), d.i(6, B))


# --- scatter ----------------------------------------------------------------------------------


@form({"x": 0, "u": 0}, "x.at[:, idx].add(u) (replicated indices)")
def scatter_add(d):
    def f(x, idx, u):
        return x.at[:, idx].add(u)

    return f, (d.f(B, 6), d.i(6, 3), d.f(B, 3))


@form({"x": 0, "u": 0}, "x.at[:, idx].set(u): overwrite (replicated indices)")
def scatter_set(d):
    def f(x, idx, u):
        return x.at[:, idx].set(u)

    return f, (d.f(B, 6), d.distinct(6, 3), d.f(B, 3))


@form({"x": 0, "idx": 0, "u": 0}, "vmapped xi.at[i].add(ui): scatter with batching dims")
def scatter_vmap_add(d):
    def f(x, idx, u):
        return jax.vmap(lambda xi, ii, ui: xi.at[ii].add(ui))(x, idx, u)

    return f, (d.f(B, 6), d.i(6, B, 3), d.f(B, 3))


@form({"data": 0, "segments": 0}, "vmapped jax.ops.segment_sum")
def segment_sum(d):
    def f(data, segments):
        return jax.vmap(lambda x, s: jax.ops.segment_sum(x, s, num_segments=4))(data, segments)

    return f, (d.f(B, 6, 2), d.i(4, B, 6))


@form({"cache": 0, "pos": 0, "new": 0}, "vmapped KV-cache write cache.at[:, pos].set(new)")
def kv_cache_write(d):
    def f(cache, pos, new):
        return jax.vmap(lambda c, p, n: c.at[:, p].set(n))(cache, pos, new)

    return f, (d.f(B, 2, 6, 4), d.i(6, B), d.f(B, 2, 4))


@form({"ids": 0, "y": 0}, "jax.grad of jnp.take: scatter-add into the table, summed over the batch")
def gather_grad(d):
    def f(table, ids, y):
        return jax.grad(lambda t: jnp.sum(jnp.take(t, ids, axis=0) * y))(table)

    return f, (d.f(16, 4), d.i(16, B, 5), d.f(B, 5, 4))


@form({"x": 0, "idx": 0}, "jax.grad of take_along_axis: a per-example scatter-add")
def take_along_axis_grad(d):
    def f(x, idx):
        return jax.grad(lambda x: jnp.sum(jnp.take_along_axis(x, idx, axis=1) ** 2))(x)

    return f, (d.f(B, 6), d.i(6, B, 3))


# --- reduce_window, select_and_scatter ------------------------------------------------------


@form(X, "x + a numpy table (a non-splat constant over the batch dim, as RoPE tables are)")
def constant_table(d):
    table = np.arange(B * 4, dtype=np.float32).reshape(B, 4) * 0.5

    def f(x):
        return x + table

    return f, (d.f(B, 4),)


@form(X, "jnp.cumsum on a non-batch dim (reduce_window)")
def cumsum(d):
    def f(x):
        return jnp.cumsum(x, axis=1)

    return f, (d.f(B, 6),)


@form(X, "jnp.cumprod on a non-batch dim (reduce_window)")
def cumprod(d):
    def f(x):
        return jnp.cumprod(x, axis=1)

    return f, (d.pos(B, 6),)


@form(X, "lax.cummax on a non-batch dim (reduce_window)")
def cummax(d):
    def f(x):
        return lax.cummax(x, axis=1)

    return f, (d.f(B, 6),)


def _max_pool(x):
    return lax.reduce_window(x, -jnp.inf, lax.max, (1, 2, 2, 1), (1, 2, 2, 1), "VALID")


@form(X, "2x2 max pool (lax.reduce_window max on the spatial dims)")
def max_pool(d):
    def f(x):
        return _max_pool(x)

    return f, (d.f(B, 4, 4, 2),)


@form(X, "2x2 average pool (lax.reduce_window add on the spatial dims)")
def avg_pool(d):
    def f(x):
        return lax.reduce_window(x, 0.0, lax.add, (1, 2, 2, 1), (1, 2, 2, 1), "VALID") / 4.0

    return f, (d.f(B, 4, 4, 2),)


@form(X, "jax.grad of a max pool (select_and_scatter)")
def max_pool_grad(d):
    def f(x):
        return jax.grad(lambda x: jnp.sum(_max_pool(x) ** 2))(x)

    return f, (d.f(B, 4, 4, 2),)


@form(X, "jax.grad of a 3x3 stride-1 SAME average pool (pad + reduce_window)")
def avg_pool_grad(d):
    def f(x):
        pool = lambda x: lax.reduce_window(x, 0.0, lax.add, (1, 3, 3, 1), (1, 1, 1, 1), "SAME")
        return jax.grad(lambda x: jnp.sum(pool(x) ** 2))(x)

    return f, (d.f(B, 4, 4, 2),)


# --- sort -------------------------------------------------------------------------------------


@form(X, "jnp.sort on a non-batch dim")
def sort(d):
    def f(x):
        return jnp.sort(x, axis=1)

    return f, (d.f(B, 6),)


@form(X, "jnp.argsort on a non-batch dim (2-operand sort)")
def argsort(d):
    def f(x):
        return jnp.argsort(x, axis=1)

    return f, (d.f(B, 6),)


@form(X, "lax.top_k (chlo.top_k)")
def top_k(d):
    def f(x):
        return lax.top_k(x, 3)

    return f, (d.f(B, 6),)


# --- random -----------------------------------------------------------------------------------


def _key(k, impl=None):
    return jax.random.wrap_key_data(lax.bitcast_convert_type(k, jnp.uint32), impl=impl)


@form(X, "x + jax.random.uniform(key, x.shape), threefry (key data as an i32 argument)")
def random_uniform(d):
    def f(key, x):
        return x + jax.random.uniform(_key(key), x.shape)

    return f, (d.key(), d.f(B, 4))


@form({"n": 0}, "jax.random.bits (threefry) mixed into i32 data")
def random_bits(d):
    def f(key, n):
        bits = jax.random.bits(_key(key), n.shape, jnp.uint32)
        return n ^ lax.bitcast_convert_type(bits, jnp.int32)

    return f, (d.key(), d.i(100, B, 4))


@form(X, "jax.random.key(seed, impl='rbg') and jax.random.normal (rng_bit_generator)",
      note="rng_bit_generator's stream depends on the whole shape: the op can only run whole")
def random_rbg(d):
    def f(seed, x):
        return x + jax.random.normal(jax.random.key(seed, impl="rbg"), x.shape)

    return f, (np.int32(7), d.f(B, 4))


@form(X, "lax.rng_bit_generator on a u32[4] key",
      note="rng_bit_generator's stream depends on the whole shape: the op can only run whole")
def rng_bit_generator(d):
    def f(key, x):
        _, bits = lax.rng_bit_generator(lax.bitcast_convert_type(key, jnp.uint32), x.shape)
        return x + (bits >> 9).astype(jnp.float32) * (1.0 / 2**23)

    return f, (d.key(4), d.f(B, 4))


# --- layout: reverse, reshape, transpose, slice, concatenate, pad -----------------------------


@form(X, "jnp.flip on a non-batch dim (reverse)")
def reverse(d):
    def f(x):
        return jnp.flip(x, axis=1)

    return f, (d.f(B, 6),)


@form(X, "reshape [8,4,6] -> [8,24] (a pure merge)")
def reshape_merge(d):
    def f(x):
        return x.reshape(B, 24)

    return f, (d.f(B, 4, 6),)


@form(X, "reshape [8,24] -> [8,4,6] (a pure split)")
def reshape_split(d):
    def f(x):
        return x.reshape(B, 4, 6)

    return f, (d.f(B, 24),)


@form(X, "reshape [8,4,6] -> [8,2,12]: dim 0 kept, the rest regrouped")
def reshape_regroup(d):
    def f(x):
        return x.reshape(B, 2, 12)

    return f, (d.f(B, 4, 6),)


@form(X, "transpose of the non-batch dims")
def transpose(d):
    def f(x):
        return jnp.transpose(x, (0, 2, 1))

    return f, (d.f(B, 3, 4),)


@form(X, "x.T: the batch moves to the minor dim")
def transpose_batch_minor(d):
    def f(x):
        return x.T * 2.0

    return f, (d.f(B, 4),)


@form(X, "x[:, 1:5] (slice on a non-batch dim)", name="slice")
def slice_(d):
    def f(x):
        return x[:, 1:5]

    return f, (d.f(B, 6),)


@form(X, "x[:, ::2] (strided slice on a non-batch dim)")
def slice_strided(d):
    def f(x):
        return x[:, ::2]

    return f, (d.f(B, 6),)


@form(X, "x[2:6] (slice on the batch dim)",
      note="4 result rows on 8 devices: the slice grows to 8 rows (the last 4 padding), one collective_permute")
def slice_batch(d):
    def f(x):
        return x[2:6] * 2.0

    return f, (d.f(B, 4),)


@form(X, "x[2:5, 1:3] summed over its rows (a 2-D slice on the batch dim, then a reduction)",
      note="3 result rows on 8 devices, grown to 8: the sum reads the 5 padding rows masked")
def slice_batch_sum(d):
    def f(x):
        return jnp.sum(x[2:5, 1:3] * 2.0, axis=0)

    return f, (d.f(B, 4),)


@form(X, "x[4:12] of 16 rows (slice on the batch dim, a whole share per device)",
      note="each device's rows live on its neighbours: collective_permutes")
def slice_batch_halo(d):
    def f(x):
        return x[4:12] * 2.0

    return f, (d.f(2 * B, 4),)


@form({"x": 0, "y": 0}, "concatenate on a non-batch dim")
def concatenate(d):
    def f(x, y):
        return jnp.concatenate([x, y], axis=1)

    return f, (d.f(B, 4), d.f(B, 2))


@form({"x": 0, "y": 0}, "concatenate on the batch dim",
      note="the result's blocks of 2 rows are not the blocks the devices hold: collective_permutes")
def concatenate_batch(d):
    def f(x, y):
        return jnp.concatenate([x, y], axis=0)

    return f, (d.f(B, 4), d.f(B, 4))


@form({"x": 0, "y": 0}, "concatenate of 8 and 16 rows on the batch dim",
      note="3 result rows per device from 1 and 2 held: collective_permutes")
def concatenate_batch_unequal(d):
    def f(x, y):
        return jnp.concatenate([x, y], axis=0)

    return f, (d.f(B, 4), d.f(2 * B, 4))


@form(X, "jnp.pad on a non-batch dim")
def pad(d):
    def f(x):
        return jnp.pad(x, ((0, 0), (1, 2)))

    return f, (d.f(B, 4),)


@form(X, "lax.pad with interior padding on a non-batch dim")
def pad_interior(d):
    def f(x):
        return lax.pad(x, jnp.float32(0), ((0, 0, 0), (1, 1, 1)))

    return f, (d.f(B, 4),)


@form(X, "jnp.pad on the batch dim (8 -> 16 rows)",
      note="padding rows shifts the batch across devices: collective_permutes")
def pad_batch(d):
    def f(x):
        return jnp.pad(x, ((4, 4), (0, 0)))

    return f, (d.f(B, 4),)


@form(X, "jnp.pad on the batch dim (8 -> 10 rows), then a sum over the rows",
      note="10 rows on 8 devices: the pad grows to 16 rows (the last 6 padding), the sum reads them masked")
def pad_batch_uneven(d):
    def f(x):
        return jnp.sum(jnp.pad(x, ((1, 1), (0, 0)), constant_values=3.0), axis=0)

    return f, (d.f(B, 4),)


@form(X, "jnp.flip of the batch dim", note="device r reverses device 7-r's rows: one collective_permute")
def reverse_batch(d):
    def f(x):
        return jnp.flip(x, axis=0) + 1.0

    return f, (d.f(B, 4),)


@form(X, "jnp.flip of two non-batch dims")
def reverse_2d(d):
    def f(x):
        return jnp.flip(x, axis=(1, 2))

    return f, (d.f(B, 3, 4),)


# --- dynamic slices ---------------------------------------------------------------------------


@form(X, "lax.dynamic_slice on a non-batch dim, replicated start")
def dynamic_slice(d):
    def f(x, start):
        return lax.dynamic_slice_in_dim(x, start, 3, axis=1)

    return f, (d.f(B, 6), np.int32(2))


@form({"x": 0, "starts": 0}, "vmapped lax.dynamic_slice with a start per example")
def dynamic_slice_vmap(d):
    def f(x, starts):
        return jax.vmap(lambda xi, s: lax.dynamic_slice_in_dim(xi, s, 3))(x, starts)

    return f, (d.f(B, 6), d.i(4, B))


@form({"x": 0, "u": 0}, "lax.dynamic_update_slice on a non-batch dim, replicated start")
def dynamic_update_slice(d):
    def f(x, u, start):
        return lax.dynamic_update_slice_in_dim(x, u, start, axis=1)

    return f, (d.f(B, 6), d.f(B, 2), np.int32(3))


@form({"x": 0, "u": 0, "starts": 0}, "vmapped lax.dynamic_update_slice with a start per example")
def dynamic_update_slice_vmap(d):
    def f(x, u, starts):
        return jax.vmap(lambda xi, ui, s: lax.dynamic_update_slice_in_dim(xi, ui, s, 0))(x, u, starts)

    return f, (d.f(B, 6), d.f(B, 2), d.i(5, B))


# --- control flow -----------------------------------------------------------------------------


def _layer(h, p):
    w, b = p
    return jnp.tanh(h @ w + b)


@form(X, "lax.scan over stacked parameters [L, ...], the batch carried, one layer per iteration")
def scan_layers(d):
    def f(params, x):
        return lax.scan(lambda h, p: (_layer(h, p), None), x, (params["w"], params["b"]))[0]

    return f, ({"w": d.f(3, 4, 4, scale=0.5), "b": d.f(3, 4)}, d.f(B, 4))


@form(X, "lax.scan stacking per-layer outputs [L, B, ...] (the batch on dim 1)")
def scan_outputs(d):
    def f(params, x):
        def step(h, p):
            h = _layer(h, p)
            return h, h

        return lax.scan(step, x, (params["w"], params["b"]))[1]

    return f, ({"w": d.f(3, 4, 4, scale=0.5), "b": d.f(3, 4)}, d.f(B, 4))


@form(X, "jax.grad through lax.scan with a jax.checkpoint (remat) body")
def scan_remat(d):
    def f(params, x):
        def loss(params, x):
            step = jax.checkpoint(lambda h, p: (_layer(h, p), None))
            return jnp.sum(lax.scan(step, x, (params["w"], params["b"]))[0] ** 2)

        return jax.grad(loss, argnums=(0, 1))(params, x)

    return f, ({"w": d.f(3, 4, 4, scale=0.5), "b": d.f(3, 4)}, d.f(B, 4))


@form(X, "lax.fori_loop applying one layer three times")
def fori_loop(d):
    def f(w, x):
        return lax.fori_loop(0, 3, lambda i, h: jnp.tanh(h @ w), x)

    return f, (d.f(4, 4, scale=0.5), d.f(B, 4))


@form(X, "lax.while_loop with a counter and the batch in the carry")
def while_loop(d):
    def f(x):
        return lax.while_loop(lambda c: c[0] < 3, lambda c: (c[0] + 1, c[1] * 0.5 + 1.0), (0, x))[1]

    return f, (d.f(B, 4),)


@form(X, "jax.grad through a jax.checkpoint'ed function (optimization_barrier)")
def checkpoint(d):
    def f(x):
        return jax.grad(lambda x: jnp.sum(jax.checkpoint(lambda y: jnp.sin(y) * jnp.cos(y))(x)))(x)

    return f, (d.f(B, 4),)


@form(X, "lax.cond on a replicated flag, branches capturing the batched value")
def cond(d):
    def f(flag, x):
        return lax.cond(flag > 0, lambda: x * 2.0, lambda: jnp.sin(x))

    return f, (np.int32(1), d.f(B, 4))


@form(X, "lax.cond whose branches sum over the batch (a loss under a flag): the result is a partial sum")
def cond_sum(d):
    def f(flag, x):
        return lax.cond(flag > 0, lambda: jnp.sum(x * x, axis=0), lambda: jnp.sum(2.0 * x, axis=0))

    return f, (np.int32(1), d.f(B, 4))


@form(X, "lax.switch on a replicated index, three branches capturing the batched value")
def switch(d):
    def f(index, x):
        return lax.switch(index, [lambda: x * 2.0, lambda: jnp.sin(x), lambda: x - 1.0])

    return f, (np.int32(1), d.f(B, 4))


# --- calls: nested jits and jax.nn ------------------------------------------------------------


@jax.jit
def _inner(a):
    return jnp.tanh(a) * 2.0


@form({"x": 0, "y": 0}, "a nested jax.jit called twice (func.call twice)")
def nested_jit(d):
    def f(x, y):
        return _inner(x) + _inner(y)

    return f, (d.f(B, 4), d.f(B, 4))


@form(X, "jax.nn.relu (a private function)")
def relu(d):
    def f(x):
        return jax.nn.relu(x)

    return f, (d.f(B, 4),)


@form(X, "jax.nn.gelu (not a jit in JAX 0.10.2: its ops are inline)")
def gelu(d):
    def f(x):
        return jax.nn.gelu(x)

    return f, (d.f(B, 4),)


@form(X, "jax.nn.softmax over a non-batch dim (not a jit in JAX 0.10.2: inline)")
def softmax(d):
    def f(x):
        return jax.nn.softmax(x, axis=-1)

    return f, (d.f(B, 6),)


@form(X, "jax.nn.log_softmax over a non-batch dim (a private function)")
def log_softmax(d):
    def f(x):
        return jax.nn.log_softmax(x, axis=-1)

    return f, (d.f(B, 6),)


@form(X, "jax.nn.silu (a private function)")
def silu(d):
    def f(x):
        return jax.nn.silu(x)

    return f, (d.f(B, 4),)


@form(X, "jax.nn.softplus (a private function)")
def softplus(d):
    def f(x):
        return jax.nn.softplus(x)

    return f, (d.f(B, 4),)


# --- custom calls -----------------------------------------------------------------------------


@form({"a": 0}, "jnp.linalg.cholesky of a batch of matrices (LAPACK custom_call on CPU; its rule given in the schedule's [rules])",
      rules={"lapack_spotrf_ffi": "bij->bij,b replicate={i,j}"})
def cholesky(d):
    def f(a):
        return jnp.linalg.cholesky(a)

    return f, (d.spd(4),)


@form({"a": 0, "b": 0}, "lax.linalg.triangular_solve of a batch (LAPACK custom_call on CPU; its rule given in the schedule's [rules])",
      rules={"lapack_strsm_ffi": "bij,bjk->bik replicate={i,j,k}"})
def triangular_solve(d):
    def f(a, b):
        return lax.linalg.triangular_solve(a, b, left_side=True, lower=True)

    return f, (np.tril(d.spd(4)).astype(np.float32), d.f(B, 4, 2))


# --- small models -----------------------------------------------------------------------------


@form(X, "layer norm over the features, with scale and bias")
def layer_norm(d):
    def f(params, x):
        mean = jnp.mean(x, axis=-1, keepdims=True)
        var = jnp.mean((x - mean) ** 2, axis=-1, keepdims=True)
        return (x - mean) * lax.rsqrt(var + 1e-5) * params["scale"] + params["bias"]

    return f, ({"scale": d.pos(6), "bias": d.f(6)}, d.f(B, 6))


@form(X, "single-head self-attention per example (q, k, v projections, softmax)")
def attention(d):
    def f(params, x):
        q, k, v = (x @ params[n] for n in ("wq", "wk", "wv"))
        probs = jax.nn.softmax(jnp.einsum("bqd,bkd->bqk", q, k) / 2.0, axis=-1)
        return jnp.einsum("bqk,bkd->bqd", probs, v)

    return f, ({"wq": d.f(4, 4), "wk": d.f(4, 4), "wv": d.f(4, 4)}, d.f(B, 5, 4))


@form({"x": 0, "labels": 0}, "a 2-layer MLP training step: cross-entropy, jax.grad, SGD (no optax)")
def mlp_sgd(d):
    def f(params, x, labels):
        def loss(p):
            h = jax.nn.relu(x @ p["w1"] + p["b1"])
            logp = jax.nn.log_softmax(h @ p["w2"] + p["b2"])
            return -jnp.mean(jnp.take_along_axis(logp, labels[:, None], axis=1))

        value, grads = jax.value_and_grad(loss)(params)
        return jax.tree.map(lambda p, g: p - 0.1 * g, params, grads), value

    params = {"w1": d.f(4, 8, scale=0.5), "b1": d.f(8), "w2": d.f(8, 3, scale=0.5), "b2": d.f(3)}
    return f, (params, d.f(B, 4), d.i(3, B))


# --- vocab-parallel: the table or the logits split on the vocabulary ------------------------
# The mesh axis is still called `batch`; these forms split the vocabulary on it (Megatron's
# vocab-parallel embedding and cross-entropy): masked lookups and all_reduces, no all_gather.


@form({"table": 0}, "table[ids] with the table split on its rows (vocab-parallel embedding)")
def embed_vocab(d):
    def f(table, ids):
        return table[ids]

    return f, (d.f(64, 4), d.i(64, 3, 5))


@form({"logits": 1},
      "optax softmax_cross_entropy_with_integer_labels on logits split on the vocabulary")
def xent_vocab(d):
    def f(logits, labels):
        logits = logits - lax.stop_gradient(jnp.max(logits, axis=-1, keepdims=True))
        label = jnp.take_along_axis(logits, labels[..., None], axis=-1)[..., 0]
        return jnp.mean(jnp.log(jnp.sum(jnp.exp(logits), axis=-1)) - label)

    return f, (d.f(4, 64), d.i(64, 4))


@form({"params/embed": 0, "params/head": 1},
      "embedding, LM head, cross-entropy, jax.grad and SGD with both split on the vocabulary")
def embed_head_vocab_sgd(d):
    def f(params, ids, labels):
        def loss(p):
            logits = p["embed"][ids] @ p["head"]
            logz = jax.nn.logsumexp(logits, axis=-1)
            label = jnp.take_along_axis(logits, labels[..., None], axis=-1)[..., 0]
            return jnp.mean(logz - label)

        value, grads = jax.value_and_grad(loss)(params)
        return jax.tree.map(lambda p, g: p - 0.1 * g, params, grads), value

    params = {"embed": d.f(64, 4), "head": d.f(4, 64, scale=0.5)}
    return f, (params, d.i(64, 3, 5), d.i(64, 3, 5))


if EXPECTED_TO_PASS - FORMS.keys():
    raise ValueError(f"EXPECTED_TO_PASS names no form: {sorted(EXPECTED_TO_PASS - FORMS.keys())}")

# --- the generator ----------------------------------------------------------------------------

MLIR_OPT = os.environ.get("PARTIR_MLIR_OPT", "/usr/lib/llvm-22/bin/mlir-opt")


def _skip_string(text: str, i: int) -> int:
    """The index after the string literal starting at text[i] == '"'."""
    i += 1
    while text[i] != '"':
        i += 2 if text[i] == "\\" else 1
    return i + 1


def _location_end(text: str, i: int) -> int:
    """The index after the `loc(...)` starting at text[i]."""
    depth, i = 0, i + len("loc")
    while True:
        c = text[i]
        if c == '"':
            i = _skip_string(text, i)
            continue
        depth += c == "("
        depth -= c == ")"
        i += 1
        if depth == 0:
            return i


def _main_arguments_span(text: str) -> tuple[int, int]:
    """Where @main's entry block arguments are: `^bb0(...)` after `sym_name = "main"`."""
    start = text.index("^bb0(", text.index('sym_name = "main"'))
    depth, i = 0, start + len("^bb0")
    while True:
        c = text[i]
        if c == '"':
            i = _skip_string(text, i)
            continue
        depth += c == "("
        depth -= c == ")"
        i += 1
        if depth == 0:
            return start, i


def _unknown_locations_but_main_arguments(text: str) -> str:
    """Every ` loc(...)` made `loc(unknown)`, except those of @main's block arguments (JAX's
    pytree paths). `text` is printed with `use_local_scope` (no location aliases)."""
    keep = _main_arguments_span(text)
    out, i = [], 0
    while i < len(text):
        c = text[i]
        if c == '"':
            j = _skip_string(text, i)
            out.append(text[i:j])
            i = j
        elif text.startswith("loc(", i) and (i == 0 or not (text[i - 1].isalnum() or text[i - 1] == "_")):
            j = _location_end(text, i)
            out.append(text[i:j] if keep[0] <= i < keep[1] else "loc(unknown)")
            i = j
        else:
            out.append(c)
            i += 1
    return "".join(out)


def lower(f: Form) -> str:
    """The form's module: JAX's StableHLO, generic form, `partir.name` on @main's arguments."""
    from jax._src.lib.mlir import ir

    lowered = jax.jit(f.fn, keep_unused=True).lower(*f.args)
    module = lowered.compiler_ir("stablehlo")
    names = f.leaf_names()
    with module.context:
        main = next(op for op in module.body.operations
                    if op.operation.name == "func.func" and ir.StringAttr(op.attributes["sym_name"]).value == "main")
        ftype = ir.FunctionType(ir.TypeAttr(main.attributes["function_type"]).value)
        if len(ftype.inputs) != len(names):
            raise RuntimeError(f"{f.name}: @main has {len(ftype.inputs)} arguments, the pytree {len(names)} leaves")
        old = list(ir.ArrayAttr(main.attributes["arg_attrs"])) if "arg_attrs" in main.attributes else []
        attrs = []
        for i, name in enumerate(names):
            entries = {a.name: a.attr for a in ir.DictAttr(old[i])} if i < len(old) else {}
            entries["partir.name"] = ir.StringAttr.get(name)
            attrs.append(ir.DictAttr.get(entries))
        main.attributes["arg_attrs"] = ir.ArrayAttr.get(attrs)
        text = module.operation.get_asm(print_generic_op_form=True, enable_debug_info=True, use_local_scope=True)
    text = _unknown_locations_but_main_arguments(text)
    done = subprocess.run([MLIR_OPT, "--allow-unregistered-dialect", "--mlir-print-op-generic",
                           "--mlir-print-debuginfo", "--mlir-print-local-scope", "-"],
                          input=text, capture_output=True, text=True)
    if done.returncode != 0:
        raise RuntimeError(f"{f.name}: mlir-opt failed:\n{done.stderr[-3000:]}")
    text = done.stdout.replace(" loc(unknown)", "")
    if "loc(" in text.replace(text[slice(*_main_arguments_span(text))], ""):
        raise RuntimeError(f"{f.name}: a location is left outside @main's arguments")
    header = f"// {f.name}: {f.what}.\n"
    if f.note:
        header += f"// Not per-example: {f.note}.\n"
    header += "// Generated by tools/op_forms.py (rewrite: python tools/op_forms.py); do not edit.\n"
    return header + text


def schedule(f: Form) -> str:
    lines = [f"# {f.name}: batch parallelism, the per-example arguments tiled on the batch dim."]
    lines.append("# Generated by tools/op_forms.py; do not edit.")
    lines.append("mesh = { " + ", ".join(f"{axis} = {size}" for axis, size in MESH.items()) + " }")
    lines += ["", "[[tactic]]", 'name = "BP"', 'axis = "batch"']
    lines.append("tile = { " + ", ".join(f'"{sel}" = {dim}' for sel, dim in f.tile.items()) + " }")
    if f.rules:
        # How the custom calls partir cannot read partition, given by the user.
        lines += ["", "[rules]"] + [f'"{target}" = "{einsum}"' for target, einsum in f.rules.items()]
    return "\n".join(lines) + "\n"


def files(f: Form) -> dict[str, str]:
    names = f.leaf_names()
    for selector, dim in f.tile.items():
        if selector not in names:
            raise RuntimeError(f"{f.name}: tiles '{selector}', which is not an argument ({names})")
        leaf = f.leaves()[names.index(selector)]
        if dim >= leaf.ndim or leaf.shape[dim] % MESH["batch"]:
            raise RuntimeError(f"{f.name}: '{selector}' {leaf.shape} cannot be tiled on dim {dim}")
    return {f"{f.name}.mlir": lower(f), f"{f.name}.toml": schedule(f)}


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("forms", nargs="*", help="only these forms (default: all)")
    parser.add_argument("--check", action="store_true", help="compare with the committed files, write nothing")
    parser.add_argument("--list", action="store_true", help="print the forms and what each is")
    args = parser.parse_args(argv)
    unknown = [name for name in args.forms if name not in FORMS]
    if unknown:
        parser.error(f"unknown forms {unknown} (--list names them)")
    if args.list:
        for f in FORMS.values():
            print(f"{f.name:28} {f.what}")
        return 0
    chosen = [FORMS[name] for name in args.forms] if args.forms else list(FORMS.values())
    expected = {}
    for f in chosen:
        expected.update(files(f))
    if args.check:
        problems = []
        for name, text in expected.items():
            path = OUT / name
            if not path.exists():
                problems.append(f"missing: {path.relative_to(ROOT)}")
            elif path.read_text() != text:
                problems.append(f"differs: {path.relative_to(ROOT)}")
        if not args.forms and OUT.exists():
            stale = sorted(p.name for p in OUT.iterdir() if p.name not in expected)
            problems += [f"not generated (stale): examples/op_forms/{name}" for name in stale]
        for line in problems:
            print(line)
        print(f"{len(chosen)} forms, {len(expected)} files: " + ("all identical" if not problems else f"{len(problems)} problems"))
        return 1 if problems else 0
    OUT.mkdir(parents=True, exist_ok=True)
    if not args.forms:
        for path in OUT.iterdir():
            if path.name not in expected:
                path.unlink()
    for name, text in expected.items():
        (OUT / name).write_text(text)
    print(f"wrote {len(expected)} files for {len(chosen)} forms into {OUT.relative_to(ROOT)}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
