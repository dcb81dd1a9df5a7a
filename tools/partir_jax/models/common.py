"""Shared pieces of the model zoo: deterministic init, optimizers, small layers.

Everything is f32 (i32 for integer inputs). Weights come from fixed PRNG seeds; nothing is downloaded.
Gathers and segment sums are written as one-hot matmuls so that IREE's pipeline produces only
upstream linalg (no iree_linalg_ext.gather/scatter), see tools/README.md.
"""
import jax
import jax.numpy as jnp
import numpy as np


class KeyGen:
    def __init__(self, seed):
        self.key = jax.random.PRNGKey(seed)

    def __call__(self):
        self.key, k = jax.random.split(self.key)
        return k


def dense_init(kg, fan_in, fan_out):
    return jax.random.normal(kg(), (fan_in, fan_out), jnp.float32) * (1.0 / np.sqrt(fan_in))


def normal(kg, shape, scale=1.0):
    return jax.random.normal(kg(), shape, jnp.float32) * scale


def one_hot(idx, n):
    """One-hot as an iota comparison (lowers to a linalg.generic, not a gather).

    A select, not `.astype(f32)`: IREE folds an i1->f32 convert into a following matmul
    (`linalg.matmul ins(tensor<..xi1>, tensor<..xf32>)`), and MLIR 22 reads that implicit cast as
    signed (true -> -1.0), unlike IREE. The importer rejects such mixed-type contractions."""
    hit = idx[..., None] == jnp.arange(n, dtype=idx.dtype)
    return jnp.where(hit, jnp.float32(1.0), jnp.float32(0.0))


def layer_norm(x, scale, bias, eps=1e-5):
    mean = jnp.mean(x, axis=-1, keepdims=True)
    var = jnp.mean(jnp.square(x - mean), axis=-1, keepdims=True)
    return (x - mean) * jax.lax.rsqrt(var + eps) * scale + bias


def gelu(x):
    return 0.5 * x * (1.0 + jnp.tanh(0.7978845608 * (x + 0.044715 * x * x * x)))


def softmax_xent(logits, labels, n):
    logp = jax.nn.log_softmax(logits, axis=-1)
    return -jnp.mean(jnp.sum(one_hot(labels, n) * logp, axis=-1))


# ---- optimizers -------------------------------------------------------------------------------

def sgd_momentum_init(params):
    return {"momentum": jax.tree.map(jnp.zeros_like, params)}


def sgd_momentum_update(params, opt, grads, lr=0.05, beta=0.9):
    mom = jax.tree.map(lambda m, g: beta * m + g, opt["momentum"], grads)
    new = jax.tree.map(lambda p, m: p - lr * m, params, mom)
    return new, {"momentum": mom}


def adam_init(params, kg=None):
    # Non-zero moments (as after some steps) make the fixture data a more useful check.
    if kg is None:
        z = jax.tree.map(jnp.zeros_like, params)
        return {"count": jnp.zeros((), jnp.int32), "m": z, "v": z}
    m = jax.tree.map(lambda p: normal(kg, p.shape, 1e-3), params)
    v = jax.tree.map(lambda p: jnp.abs(normal(kg, p.shape, 1e-6)), params)
    return {"count": jnp.array(3, jnp.int32), "m": m, "v": v}


def adam_update(params, opt, grads, lr=1e-3, b1=0.9, b2=0.999, eps=1e-8):
    count = opt["count"] + 1
    t = count.astype(jnp.float32)
    m = jax.tree.map(lambda m, g: b1 * m + (1 - b1) * g, opt["m"], grads)
    v = jax.tree.map(lambda v, g: b2 * v + (1 - b2) * g * g, opt["v"], grads)
    c1 = 1 - b1 ** t
    c2 = 1 - b2 ** t
    new = jax.tree.map(lambda p, m, v: p - lr * (m / c1) / (jnp.sqrt(v / c2) + eps), params, m, v)
    return new, {"count": count, "m": m, "v": v}
